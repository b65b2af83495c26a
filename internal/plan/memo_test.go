package plan

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

// Every caller of a key gets the one computation's value (or error), however many ask at
// once; each key is computed apart.
func TestMemoComputesOncePerKey(t *testing.T) {
	var m memo[int]
	var calls [2]atomic.Int32
	boom := errors.New("boom")
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := i % 2
			key := []string{"a", "b"}[k]
			v, err := m.get(key, func() (int, error) {
				calls[k].Add(1)
				if k == 1 {
					return 0, boom
				}
				return 42, nil
			})
			switch {
			case k == 0 && (v != 42 || err != nil):
				t.Errorf("a: got %d, %v; want 42, nil", v, err)
			case k == 1 && !errors.Is(err, boom):
				t.Errorf("b: got %d, %v; want the computation's error", v, err)
			}
		}()
	}
	wg.Wait()
	for k := range calls {
		if n := calls[k].Load(); n != 1 {
			t.Errorf("key %d computed %d times, want once", k, n)
		}
	}
}
