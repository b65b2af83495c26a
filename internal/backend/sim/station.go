// Package sim simulates Cassandra clusters and sharded MongoDB clusters in virtual time.
package sim

import "math"

// Station is one server process with a fixed number of workers and an unbounded queue
// (a database node's request stage, a shard member). Jobs are served in the order they are
// submitted, which the simulator keeps close to arrival order: it submits the requests of
// each operation in the operation's intended-time order. The start of a job is then the
// Lindley recursion for c servers:
//
//	start = max(arrival, the earliest time a worker is free)
//
// so no global event queue is needed, which is what makes the simulator fast. With
// submissions in arrival order this is exactly a FIFO G/G/c queue.
//
// A job that would wait longer than its queue timeout is dropped before service, as
// Cassandra drops messages that waited past their timeout and a mongod's operation with an
// expired maxTimeMS fails: it consumes no worker.
type Station struct {
	free []int64 // min-heap of the times each worker becomes free (virtual ns)
	down bool

	// Accumulated since the last Take: for utilisation and mean queue length.
	busy    int64 // worker-ns of service started
	waiting int64 // ns spent queued by jobs that started
	jobs    int64
	drops   int64
}

// NewStation returns a station with the given number of workers, all free at time 0.
func NewStation(workers int) *Station {
	if workers < 1 {
		workers = 1
	}
	return &Station{free: make([]int64, workers)}
}

// Workers is the number of workers.
func (s *Station) Workers() int { return len(s.free) }

// Serve submits a job arriving at arrival that needs service ns of work. It returns when
// the job starts and ends, or ok=false when the job waited past queueTimeout (≤ 0: never)
// and was dropped.
func (s *Station) Serve(arrival, service, queueTimeout int64) (start, end int64, ok bool) {
	start = arrival
	if f := s.free[0]; f > start {
		start = f
	}
	if queueTimeout > 0 && start-arrival > queueTimeout {
		s.drops++
		return arrival + queueTimeout, arrival + queueTimeout, false
	}
	end = start + service
	s.free[0] = end
	s.siftDown()
	s.busy += service
	s.waiting += start - arrival
	s.jobs++
	return start, end, true
}

// Backlog is how long a job arriving at t would wait.
func (s *Station) Backlog(t int64) int64 {
	if w := s.free[0] - t; w > 0 {
		return w
	}
	return 0
}

// Stats are a station's figures over an interval.
type Stats struct {
	Jobs        int64
	Drops       int64
	Utilisation float64 // share of worker time busy
	MeanQueue   float64 // mean number of jobs waiting (Little's law: total wait / interval)
}

// Take returns the figures accumulated over an interval of length ns and resets them.
// Work is counted when it starts, so a busy interval can show utilisation slightly above 1
// when long jobs straddle its end; it is clamped.
func (s *Station) Take(ns int64) Stats {
	st := Stats{Jobs: s.jobs, Drops: s.drops}
	if ns > 0 {
		st.Utilisation = math.Min(1, float64(s.busy)/float64(ns*int64(len(s.free))))
		st.MeanQueue = float64(s.waiting) / float64(ns)
	}
	s.busy, s.waiting, s.jobs, s.drops = 0, 0, 0, 0
	return st
}

func (s *Station) siftDown() { siftFrom(s.free, 0) }

// Reserve takes k of the workers away from t for d: background work such as streaming to
// a joining node or a chunk migration, which leaves the other workers serving.
func (s *Station) Reserve(t, d int64, k int) {
	k = min(k, len(s.free))
	for i := len(s.free) - k; i < len(s.free); i++ {
		s.free[i] = max(s.free[i], t) + d
	}
	for i := len(s.free)/2 - 1; i >= 0; i-- {
		siftFrom(s.free, i)
	}
	s.busy += d * int64(k)
}
