// Package schedule turns load phases into the intended start time of every operation.
//
// The phases define a piecewise-linear arrival intensity λ(t) with cumulative count Λ(t).
// Operation i is intended to start at t_i = Λ⁻¹(s_i), where s_i = i for uniform arrivals
// and s_i = s_{i-1} + Exp(1) for Poisson arrivals (time rescaling of a unit-rate Poisson
// process gives exactly a non-homogeneous Poisson process with intensity λ). The intended
// times do not depend on how fast anything runs: that is what makes the measurement open
// model and coordinated-omission correct.
package schedule

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/shardbench/shardbench/internal/scenario"
)

// segment is a stretch with linearly changing rate a -> b (ops/s) over dur seconds.
type segment struct {
	phase int     // index of the scenario phase it belongs to
	start float64 // seconds from run start
	dur   float64 // seconds
	a, b  float64 // rate at start and end
	count float64 // cumulative expected count at segment start
}

func (g *segment) total() float64 { return (g.a + g.b) / 2 * g.dur }

// rateAt is the intensity at tau seconds into the segment.
func (g *segment) rateAt(tau float64) float64 { return g.a + (g.b-g.a)*tau/g.dur }

// countAt is the expected count from segment start to tau.
func (g *segment) countAt(tau float64) float64 {
	return g.a*tau + (g.b-g.a)*tau*tau/(2*g.dur)
}

// invert returns tau with countAt(tau) = s, for 0 <= s <= total().
func (g *segment) invert(s float64) float64 {
	if s <= 0 {
		return 0
	}
	k := (g.b - g.a) / g.dur
	if k == 0 {
		return s / g.a
	}
	// tau = 2s / (a + sqrt(a^2 + 2ks)): the stable root of k/2 tau^2 + a tau - s = 0.
	disc := g.a*g.a + 2*k*s
	if disc < 0 {
		disc = 0
	}
	den := g.a + math.Sqrt(disc)
	if den <= 0 {
		return g.dur
	}
	return min(2*s/den, g.dur)
}

// Phase describes one scenario phase on the run's time line.
type Phase struct {
	Name     string
	Type     string
	Start    time.Duration
	End      time.Duration
	Expected float64 // expected number of operations
}

// Schedule is the compiled arrival intensity of a scenario.
type Schedule struct {
	segs     []segment
	phases   []Phase
	total    float64 // expected operations
	duration time.Duration
	poisson  bool
	seed     int64
}

// New compiles the scenario's phases.
func New(s *scenario.Scenario) *Schedule {
	sch := &Schedule{poisson: s.Load.Arrival == scenario.ArrivalPoisson, seed: s.Seed}
	var at time.Duration
	add := func(phase int, dur time.Duration, a, b float64) {
		if dur <= 0 {
			return
		}
		start := 0.0
		if n := len(sch.segs); n > 0 {
			start = sch.segs[n-1].start + sch.segs[n-1].dur
		}
		g := segment{phase: phase, start: start, dur: dur.Seconds(), a: a, b: b, count: sch.total}
		sch.segs = append(sch.segs, g)
		sch.total += g.total()
	}
	for i, p := range s.Load.Phases {
		phaseStart, before := at, sch.total
		switch p.Type {
		case scenario.PhaseConstant:
			add(i, p.Duration, float64(p.Rate), float64(p.Rate))
		case scenario.PhaseRamp:
			add(i, p.Duration, float64(p.From), float64(p.To))
		case scenario.PhaseStep:
			n := max(p.Steps, 1)
			var used time.Duration
			for j := 0; j < n; j++ {
				d := p.Duration / time.Duration(n)
				if j == n-1 {
					d = p.Duration - used
				}
				r := float64(p.From)
				if n > 1 {
					r += float64(p.To-p.From) * float64(j) / float64(n-1)
				}
				add(i, d, r, r)
				used += d
			}
		case scenario.PhaseSpike:
			base, peak := float64(p.Rate), float64(p.Peak)
			add(i, p.SpikeAt, base, base)
			add(i, p.SpikeFor, peak, peak)
			add(i, p.Duration-p.SpikeAt-p.SpikeFor, base, base)
		}
		at = phaseStart + p.Duration
		sch.phases = append(sch.phases, Phase{Name: p.Name, Type: p.Type, Start: phaseStart, End: at, Expected: sch.total - before})
	}
	sch.duration = at
	return sch
}

// Duration is the length of the schedule.
func (s *Schedule) Duration() time.Duration { return s.duration }

// Expected is the expected number of operations (exact for uniform arrivals, up to rounding).
func (s *Schedule) Expected() float64 { return s.total }

// Phases lists the phases on the time line.
func (s *Schedule) Phases() []Phase { return s.phases }

// PhaseAt returns the index of the phase running at t (the last one after the end).
func (s *Schedule) PhaseAt(t time.Duration) int {
	for i, p := range s.phases {
		if t < p.End {
			return i
		}
	}
	return len(s.phases) - 1
}

// RateAt is the target arrival rate at t, in operations per second.
func (s *Schedule) RateAt(t time.Duration) float64 {
	x := t.Seconds()
	for i := range s.segs {
		g := &s.segs[i]
		if x < g.start+g.dur {
			if x < g.start {
				return 0
			}
			return g.rateAt(x - g.start)
		}
	}
	return 0
}

// CountAt is the expected number of operations intended to start before t.
func (s *Schedule) CountAt(t time.Duration) float64 {
	x := t.Seconds()
	for i := range s.segs {
		g := &s.segs[i]
		if x < g.start+g.dur {
			if x <= g.start {
				return g.count
			}
			return g.count + g.countAt(x-g.start)
		}
	}
	return s.total
}

// Arrivals iterates over intended start times. It is not safe for concurrent use; the
// engine drives it from one goroutine so the stream is the same for any worker count.
type Arrivals struct {
	s    *Schedule
	seg  int
	next float64 // cumulative count position of the next arrival
	rng  *rand.Rand
	n    uint64
}

// Arrivals starts a fresh iteration (deterministic from the scenario seed).
func (s *Schedule) Arrivals() *Arrivals {
	a := &Arrivals{s: s}
	if s.poisson {
		// A stream of its own, so the arrival times do not depend on how many random
		// numbers the workload draws per operation.
		a.rng = rand.New(rand.NewPCG(uint64(s.seed), 0x5ced_a1e5_a771_7a15))
		a.next = a.rng.ExpFloat64()
	}
	return a
}

// Next returns the intended start time of the next operation, or false at the end.
func (a *Arrivals) Next() (time.Duration, bool) {
	segs := a.s.segs
	for a.seg < len(segs) {
		g := &segs[a.seg]
		if local := a.next - g.count; local < g.total() {
			t := g.start + g.invert(local)
			if a.rng != nil {
				a.next += a.rng.ExpFloat64()
			} else {
				a.next++
			}
			a.n++
			return time.Duration(t * 1e9), true
		}
		a.seg++
	}
	return 0, false
}

// Count is how many arrivals Next has returned.
func (a *Arrivals) Count() uint64 { return a.n }
