// Package sim simulates Cassandra clusters and sharded MongoDB clusters in virtual time.
package sim

import "math"

// Station is one server process with a fixed number of workers and an unbounded queue
// (a database node's cores, a shard member's). Jobs are served in the order they are
// placed, which the simulator keeps close to arrival order: it submits the requests of
// each operation in the operation's intended-time order. The start of a job is then the
// Lindley recursion for c servers:
//
//	start = max(arrival, the earliest time a worker is free)
//
// so no global event queue is needed, which is what makes the simulator fast. With jobs
// placed in arrival order this is exactly a FIFO G/G/c queue.
//
// Some jobs are submitted well ahead of their arrival: a replica in another data center
// (5 ms away), a Paxos round retried after its backoff (up to 100 ms). Placed at once,
// such a job would hold its worker from the worker's last job until its arrival, and the
// requests that arrive meanwhile would queue behind cores doing nothing. So a station
// that follows the simulator's clock (Follow) places a job at once only when it arrives
// within Lookahead of the clock; a job further ahead is held back and placed when the
// clock reaches its arrival (before any job arriving after it), and its own start is
// predicted meanwhile from the queue as it stands (the wait for a worker free by its
// arrival). A job whose response nobody waits for (Post: a write to a replica the
// consistency level does not count) needs no prediction. Each worker also remembers the
// idle gap before its last job, which a job placed later but arriving in it may use.
//
// A job that would wait longer than its queue timeout is dropped before service, as
// Cassandra drops messages that waited past their timeout and a mongod's operation with an
// expired maxTimeMS fails: it consumes no worker.
//
// A node's workers are its cores: the CPU-bound work of a database node (parsing,
// memtable and commit-log writes, reading cached pages, merging) is limited by cores, not
// by its thread pools (Cassandra's concurrent_reads/concurrent_writes, WiredTiger's
// tickets), which hold more threads than cores. Reads and writes share the cores, each
// counted to its stage (Cassandra's ReadStage and MutationStage) for the reader.
type Station struct {
	free  []int64 // per worker: when its last job ends (virtual ns)
	low   int64   // the earliest of free
	lowAt int     // the first worker free at low
	gap   []span  // per worker: an idle gap before its last job (from == to: none)
	// gapEnd bounds every gap's end: a job arriving at or after it fits no gap.
	gapEnd  int64
	clock   *int64 // no job submitted from now on arrives before *clock (nil: no clock)
	pending []job  // held-back jobs, a min-heap by arrival
	down    bool

	// Accumulated since the last Take: for utilisation and mean queue length.
	busy    [stages]int64 // worker-ns of service started, by stage
	waiting int64         // ns spent queued by jobs that started
	jobs    [stages]int64
	drops   int64
}

type span struct{ from, to int64 }

type job struct {
	arrival, service, timeout int64
	stage                     int
}

// The stages a station's work is counted to.
const (
	StageRead  = 0
	StageWrite = 1
	stages     = 2
)

// Lookahead is how far ahead of the simulator's clock a job may arrive and still be
// placed at once: an operation's later steps and requests inside a data center arrive
// within it.
const Lookahead = int64(2e6)

// NewStation returns a station with the given number of workers, all free at time 0.
func NewStation(workers int) *Station {
	if workers < 1 {
		workers = 1
	}
	return &Station{free: make([]int64, workers), gap: make([]span, workers)}
}

// Follow makes the station read the simulator's clock: every job submitted from now on
// arrives at or after *clock.
func (s *Station) Follow(clock *int64) { s.clock = clock }

// Workers is the number of workers.
func (s *Station) Workers() int { return len(s.free) }

// Serve submits a read-stage job arriving at arrival that needs service ns of work. It
// returns when the job starts and ends, or ok=false when the job waited past queueTimeout
// (≤ 0: never) and was dropped.
func (s *Station) Serve(arrival, service, queueTimeout int64) (start, end int64, ok bool) {
	return s.ServeAs(StageRead, arrival, service, queueTimeout)
}

// ServeAs is Serve for a job of the given stage (StageRead, StageWrite).
func (s *Station) ServeAs(stage int, arrival, service, queueTimeout int64) (start, end int64, ok bool) {
	if s.clock != nil {
		now := *s.clock
		if arrival > now+Lookahead {
			// Far ahead: predict its start from the queue as it stands, place it when the
			// clock gets there.
			s.flush(now)
			wait := s.Backlog(arrival)
			if queueTimeout > 0 && wait > queueTimeout {
				s.drops++
				return arrival + queueTimeout, arrival + queueTimeout, false
			}
			s.hold(job{arrival: arrival, service: service, stage: stage})
			return arrival + wait, arrival + wait + service, true
		}
		s.flush(arrival)
	}
	return s.place(stage, arrival, service, queueTimeout)
}

// Post submits a job whose response nobody waits for: placed at once when it arrives
// within Lookahead of the clock (or without a clock), else in arrival order when the
// clock reaches it.
func (s *Station) Post(stage int, arrival, service, queueTimeout int64) {
	if s.clock != nil {
		now := *s.clock
		if arrival > now+Lookahead {
			s.flush(now)
			s.hold(job{arrival: arrival, service: service, timeout: queueTimeout, stage: stage})
			return
		}
		s.flush(arrival)
	}
	s.place(stage, arrival, service, queueTimeout)
}

// place serves a job now: the earliest start a worker's idle gap that fits it or the
// earliest free worker gives.
func (s *Station) place(stage int, arrival, service, queueTimeout int64) (start, end int64, ok bool) {
	best, inGap := 0, false
	start = max(arrival, s.low)
	if arrival >= s.low {
		// A worker is free by the arrival: the first such (no gap can start earlier).
		for i, f := range s.free {
			if f <= arrival {
				best = i
				break
			}
		}
	} else {
		best = s.lowAt
		if arrival < s.gapEnd {
			for i, g := range s.gap {
				if g.to > arrival {
					if st := max(arrival, g.from); st+service <= g.to && st < start {
						best, start, inGap = i, st, true
					}
				}
			}
		}
	}
	if queueTimeout > 0 && start-arrival > queueTimeout {
		s.drops++
		return arrival + queueTimeout, arrival + queueTimeout, false
	}
	end = start + service
	if inGap {
		// Keep the longer of what the job leaves of the gap.
		g := s.gap[best]
		if start-g.from > g.to-end {
			s.gap[best] = span{g.from, start}
		} else {
			s.gap[best] = span{end, g.to}
		}
	} else {
		f := s.free[best]
		if start > f {
			if g := s.gap[best]; start-f > g.to-g.from || s.clock != nil && g.to <= *s.clock {
				s.gap[best] = span{f, start}
				s.gapEnd = max(s.gapEnd, start)
			}
		}
		s.free[best] = end
		if f == s.low {
			s.findLow() // else the worker was free after low, and is later still: low stands
		}
	}
	s.busy[stage] += service
	s.waiting += start - arrival
	s.jobs[stage]++
	return start, end, true
}

// hold adds a job to the held-back heap.
func (s *Station) hold(j job) {
	s.pending = append(s.pending, j)
	h := s.pending
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if h[p].arrival <= h[i].arrival {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

// flush places the held-back jobs that arrive by t, in arrival order. Most calls find
// none, which is checked where flush is called (it is inlined), not in a call.
func (s *Station) flush(t int64) {
	if len(s.pending) > 0 && s.pending[0].arrival <= t {
		s.placeHeld(t)
	}
}

// placeHeld places the held-back jobs that arrive by t, in arrival order.
func (s *Station) placeHeld(t int64) {
	for len(s.pending) > 0 && s.pending[0].arrival <= t {
		j := s.pending[0]
		h := s.pending
		last := len(h) - 1
		h[0] = h[last]
		h = h[:last]
		for i := 0; ; {
			l := 2*i + 1
			if l >= len(h) {
				break
			}
			m := l
			if r := l + 1; r < len(h) && h[r].arrival < h[l].arrival {
				m = r
			}
			if h[i].arrival <= h[m].arrival {
				break
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
		s.pending = h
		s.place(j.stage, j.arrival, j.service, j.timeout)
	}
}

// Backlog is how long a job arriving at t would wait (for a worker free by then).
func (s *Station) Backlog(t int64) int64 {
	if t >= s.low {
		return 0
	}
	if t < s.gapEnd {
		for _, g := range s.gap {
			if g.from <= t && t < g.to {
				return 0
			}
		}
	}
	return s.low - t
}

// Stats are a station's figures over an interval.
type Stats struct {
	Jobs        [stages]int64 // jobs started, by stage
	Drops       int64
	Utilisation float64 // share of worker time busy, all stages together
	// Stage is each stage's share of the worker time (they add up to Utilisation, but
	// for the clamp).
	Stage     [stages]float64
	MeanQueue float64 // mean number of jobs waiting (Little's law: total wait / interval)
}

// Take returns the figures accumulated over an interval of length ns and resets them.
// Work is counted when it starts, so a busy interval can show utilisation slightly above 1
// when long jobs straddle its end; it is clamped. Held-back jobs that arrived by the clock
// are placed first.
func (s *Station) Take(ns int64) Stats {
	if s.clock != nil {
		s.flush(*s.clock)
	}
	st := Stats{Jobs: s.jobs, Drops: s.drops}
	if ns > 0 {
		capa := float64(ns * int64(len(s.free)))
		for i, b := range s.busy {
			st.Stage[i] = math.Min(1, float64(b)/capa)
		}
		st.Utilisation = math.Min(1, float64(s.busy[StageRead]+s.busy[StageWrite])/capa)
		st.MeanQueue = float64(s.waiting) / float64(ns)
	}
	s.busy, s.waiting, s.jobs, s.drops = [stages]int64{}, 0, [stages]int64{}, 0
	return st
}

// Reserve takes k of the workers away from t for d: background work such as streaming to
// a joining node or a chunk migration, which leaves the other workers serving.
func (s *Station) Reserve(t, d int64, k int) {
	k = min(k, len(s.free))
	for i := len(s.free) - k; i < len(s.free); i++ {
		s.free[i] = max(s.free[i], t) + d
		s.gap[i] = span{}
	}
	s.findLow()
	s.busy[StageWrite] += d * int64(k) // streaming and migrations write
}

// findLow sets low and lowAt from free, in one pass: a saturated station takes the job
// after next on the worker it names without looking for it.
func (s *Station) findLow() {
	low, at := s.free[0], 0
	for i, x := range s.free {
		if x < low {
			low, at = x, i
		}
	}
	s.low, s.lowAt = low, at
}
