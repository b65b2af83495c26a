package plan

import "sync"

// memo computes a value once per key for every goroutine that asks, however many ask at
// once: the callers waiting for a key block on its computation only, not on each other's.
type memo[V any] struct {
	mu sync.Mutex
	m  map[string]*memoEntry[V]
}

type memoEntry[V any] struct {
	once sync.Once
	v    V
	err  error
}

// get is key's value, computed by f on the first call for key.
func (m *memo[V]) get(key string, f func() (V, error)) (V, error) {
	m.mu.Lock()
	if m.m == nil {
		m.m = map[string]*memoEntry[V]{}
	}
	e := m.m[key]
	if e == nil {
		e = &memoEntry[V]{}
		m.m[key] = e
	}
	m.mu.Unlock()
	e.once.Do(func() { e.v, e.err = f() })
	return e.v, e.err
}
