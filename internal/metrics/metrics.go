// Package metrics records operation timings without locks on the hot path and turns them
// into HdrHistograms.
//
// Every operation yields one Sample with three instants: when it was intended to start
// (from the schedule), when it actually started, and when it completed. From those come
// the three histograms the harness reports:
//
//	response time = end − intended   (what a user waiting in line experiences)
//	service time  = end − start      (what the database took once asked)
//	schedule lag  = start − intended (how late the harness itself was)
//
// Reporting service time alone is the coordinated-omission mistake: when the system
// stalls, a closed-loop tester stops sending and the stall vanishes from its numbers.
package metrics

import (
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram range and precision, in nanoseconds: 1 µs to 1 hour at 3 significant digits.
// Nanoseconds are what HdrHistogram's own log tools assume by default (they print ms).
const (
	Lowest  = int64(time.Microsecond)
	Highest = int64(time.Hour)
	SigFigs = 3
)

// NewHistogram returns an empty histogram with the harness's range and precision.
func NewHistogram() *hdr.Histogram { return hdr.New(Lowest, Highest, SigFigs) }

// Clamp keeps a value inside the trackable range (an hour-long operation is recorded as an
// hour; a 0 ns one as 1 µs) so that no sample is ever silently lost.
func Clamp(ns int64) int64 {
	if ns < Lowest {
		return Lowest
	}
	if ns > Highest {
		return Highest
	}
	return ns
}

// Sample flags.
const (
	FlagLate      = 1 << iota // started more than late_after after its intended time
	FlagDropped               // never started (pool full with on_full: drop, or interrupted)
	FlagAbandoned             // started but never completed before the drain timeout
	// FlagUnserved: the variant does not serve the operation (its design has no mapping
	// for it, or its steps run on a database this backend does not drive). It was never
	// dispatched: it is counted apart, at its intended time, and has no timing.
	FlagUnserved
)

// Sample is the record of one operation. Times are nanoseconds since the variant's run
// started (virtual nanoseconds in a simulation).
type Sample struct {
	Intended int64
	Start    int64
	End      int64
	Op       uint16 // index into the run's operation table
	Class    uint8  // 0 = success, else index into the error class table
	Flags    uint8
}

// Response is end − intended.
func (s *Sample) Response() int64 { return s.End - s.Intended }

// Service is end − start.
func (s *Sample) Service() int64 { return s.End - s.Start }

// Lag is start − intended.
func (s *Sample) Lag() int64 { return s.Start - s.Intended }

// phaser is HdrHistogram's WriterReaderPhaser: writers pay two uncontended atomic adds,
// and a reader can wait until every writer that might still touch the old buffer is done.
type phaser struct {
	startEpoch atomic.Int64
	evenEnd    atomic.Int64
	oddEnd     atomic.Int64
}

func newPhaser() *phaser {
	p := &phaser{}
	p.oddEnd.Store(minInt64)
	return p
}

const minInt64 = -1 << 63

func (p *phaser) enter() int64 { return p.startEpoch.Add(1) - 1 }

func (p *phaser) exit(v int64) {
	if v < 0 {
		p.oddEnd.Add(1)
	} else {
		p.evenEnd.Add(1)
	}
}

// flip starts a new phase and waits for writers of the previous one. Only one reader may
// call it at a time.
func (p *phaser) flip() {
	nextIsEven := p.startEpoch.Load() < 0
	var initial int64
	if nextIsEven {
		initial = 0
		p.evenEnd.Store(initial)
	} else {
		initial = minInt64
		p.oddEnd.Store(initial)
	}
	valueAtFlip := p.startEpoch.Swap(initial)
	for {
		var end int64
		if nextIsEven {
			end = p.oddEnd.Load()
		} else {
			end = p.evenEnd.Load()
		}
		if end == valueAtFlip {
			return
		}
		time.Sleep(time.Microsecond)
	}
}

// Recorder is one writer's sample buffer. Record is called by one goroutine (a worker);
// Drain by one collector. Record never blocks on the collector.
type Recorder struct {
	ph     *phaser
	active atomic.Pointer[[]Sample]
	spare  *[]Sample // owned by the collector
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder {
	r := &Recorder{ph: newPhaser()}
	a, b := make([]Sample, 0, 64), make([]Sample, 0, 64)
	r.active.Store(&a)
	r.spare = &b
	return r
}

// Record appends a sample.
func (r *Recorder) Record(s Sample) {
	v := r.ph.enter()
	buf := r.active.Load()
	*buf = append(*buf, s)
	r.ph.exit(v)
}

// Drain hands every sample recorded since the previous Drain to fn. The slice is only
// valid during fn.
func (r *Recorder) Drain(fn func([]Sample)) {
	fresh := r.spare
	*fresh = (*fresh)[:0]
	old := r.active.Swap(fresh)
	r.ph.flip()
	fn(*old)
	r.spare = old
}
