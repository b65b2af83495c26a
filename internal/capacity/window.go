package capacity

import (
	"fmt"
	"slices"
	"time"

	"github.com/shardbench/shardbench/internal/scenario"
)

// piece is a stretch of the schedule whose rate changes linearly from a to b: a phase,
// a spike's base or peak, a stair (the schedule package's segments).
type piece struct {
	phase      int
	start, end time.Duration
	a, b       float64
}

// pieces lays the phases out on the time line.
func pieces(phases []scenario.Phase) []piece {
	var out []piece
	var at time.Duration
	add := func(i int, d time.Duration, a, b float64) {
		if d > 0 {
			out = append(out, piece{phase: i, start: at, end: at + d, a: a, b: b})
			at += d
		}
	}
	for i, p := range phases {
		start := at
		switch p.Type {
		case scenario.PhaseConstant:
			add(i, p.Duration, float64(p.Rate), float64(p.Rate))
		case scenario.PhaseRamp:
			add(i, p.Duration, float64(p.From), float64(p.To))
		case scenario.PhaseStep:
			for j, d := range stairs(p) {
				r := stairRate(p, j)
				add(i, d, r, r)
			}
		case scenario.PhaseSpike:
			add(i, p.SpikeAt, float64(p.Rate), float64(p.Rate))
			add(i, p.SpikeFor, float64(p.Peak), float64(p.Peak))
			add(i, p.Duration-p.SpikeAt-p.SpikeFor, float64(p.Rate), float64(p.Rate))
		}
		at = start + p.Duration // as the schedule does, whatever the pieces add up to
	}
	return out
}

// stairs are a step phase's stairs' durations, the last taking the rounding (as
// internal/schedule lays them out).
func stairs(p scenario.Phase) []time.Duration {
	n := max(p.Steps, 1)
	out := make([]time.Duration, n)
	var used time.Duration
	for j := range out {
		d := p.Duration / time.Duration(n)
		if j == n-1 {
			d = p.Duration - used
		}
		out[j] = d
		used += d
	}
	return out
}

func stairRate(p scenario.Phase, j int) float64 {
	n := max(p.Steps, 1)
	r := float64(p.From)
	if n > 1 {
		r += float64(p.To-p.From) * float64(j) / float64(n-1)
	}
	return r
}

// Peak is where the schedule offers its highest rate: the rate, the phase it is in and the
// first stretch that reaches it (a constant or spike's peak, a stair, or a ramp that ends
// at it).
type Peak struct {
	Rate     float64
	Phase    string
	From, To time.Duration
	// Schedule is the whole schedule's length.
	Schedule time.Duration
}

// FindPeak finds the schedule's peak.
func FindPeak(phases []scenario.Phase) Peak {
	var pk Peak
	best := -1
	ps := pieces(phases)
	for i, p := range ps {
		if r := max(p.a, p.b); best < 0 || r > pk.Rate {
			best, pk.Rate = i, r
		}
	}
	for _, p := range phases {
		pk.Schedule += p.Duration
	}
	if best >= 0 {
		p := ps[best]
		pk.Phase, pk.From, pk.To = phases[p.phase].Name, p.start, p.end
	}
	return pk
}

// Window is the stretch of the schedule a simulated probe runs: the peak with a lead-in
// before it, in which queues build up as they would have by the time the peak arrives.
type Window struct {
	From, To time.Duration
	// PeakFrom is where the peak starts, from the schedule's start.
	PeakFrom time.Duration
}

// PeakWindow is the peak of the schedule with lead before it (less at the start).
func PeakWindow(pk Peak, lead time.Duration) Window {
	return Window{From: max(0, pk.From-lead), To: pk.To, PeakFrom: pk.From}
}

// Length is the window's duration.
func (w Window) Length() time.Duration { return w.To - w.From }

// Cut returns the phases of [from, to) of the schedule: each phase that overlaps it,
// clipped, under its own name (a ramp cut part-way starts and ends at the rates it has
// there; a spike keeps the part of its spike inside; a step phase becomes its stairs).
func Cut(phases []scenario.Phase, from, to time.Duration) []scenario.Phase {
	var out []scenario.Phase
	names := map[string]bool{}
	emit := func(p scenario.Phase) {
		base, n := p.Name, 2
		for names[p.Name] {
			p.Name = fmt.Sprintf("%s#%d", base, n)
			n++
		}
		names[p.Name] = true
		out = append(out, p)
	}
	var at time.Duration
	for _, p := range phases {
		start, end := at, at+p.Duration
		at = end
		lo, hi := max(from, start)-start, min(to, end)-start
		if hi <= lo {
			continue
		}
		c := scenario.Phase{Loc: p.Loc, Name: p.Name, Type: scenario.PhaseConstant, Duration: hi - lo}
		switch p.Type {
		case scenario.PhaseConstant:
			c.Rate = p.Rate
		case scenario.PhaseRamp:
			rate := func(x time.Duration) scenario.Rate {
				return p.From + (p.To-p.From)*scenario.Rate(float64(x)/float64(p.Duration))
			}
			c.Type, c.From, c.To = scenario.PhaseRamp, rate(lo), rate(hi)
		case scenario.PhaseSpike:
			sa := min(max(p.SpikeAt-lo, 0), hi-lo)
			se := min(max(p.SpikeAt+p.SpikeFor-lo, 0), hi-lo)
			c.Rate = p.Rate
			if se > sa {
				c.Type, c.Peak, c.SpikeAt, c.SpikeFor = scenario.PhaseSpike, p.Peak, sa, se-sa
			}
		case scenario.PhaseStep:
			var s time.Duration
			var parts []scenario.Phase
			for j, d := range stairs(p) {
				a, b := max(lo, s), min(hi, s+d)
				s += d
				if b > a {
					parts = append(parts, scenario.Phase{Loc: p.Loc, Name: fmt.Sprintf("%s-%d", p.Name, j+1), Type: scenario.PhaseConstant,
						Rate: scenario.Rate(stairRate(p, j)), Duration: b - a})
				}
			}
			if len(parts) == 1 {
				parts[0].Name = p.Name
			}
			for _, q := range parts {
				emit(q)
			}
			continue
		}
		emit(c)
	}
	return out
}

// Probe returns a copy of sc for one probe: every rate times multiple, and, when window
// is not nil, only that stretch of the schedule. A window keeps the store's calendar (the
// clock starts where the window does) and the events (those before the window happen at
// its start, in their order).
func Probe(sc *scenario.Scenario, multiple float64, window *Window) *scenario.Scenario {
	c := *sc
	c.Load.Phases = slices.Clone(sc.Load.Phases)
	c.Events = slices.Clone(sc.Events)
	if window != nil {
		c.Load.Phases = Cut(sc.Load.Phases, window.From, window.To)
		c.Clock.Start = sc.Clock.Start.Add(time.Duration(float64(window.From) * sc.Clock.Scale))
		c.Events = c.Events[:0]
		for _, e := range sc.Events {
			if e.At >= window.To {
				continue
			}
			e.At = max(0, e.At-window.From)
			c.Events = append(c.Events, e)
		}
	}
	k := scenario.Rate(multiple)
	for i := range c.Load.Phases {
		p := &c.Load.Phases[i]
		p.Rate, p.From, p.To, p.Peak = p.Rate*k, p.From*k, p.To*k, p.Peak*k
	}
	return &c
}

// Steady returns a copy of sc that offers rate for d, its mix unchanged: one step of a
// search on a real database. Events are left out (a step is not the scenario's timeline).
func Steady(sc *scenario.Scenario, name string, rate float64, d time.Duration) *scenario.Scenario {
	c := *sc
	c.Load.Phases = []scenario.Phase{{Loc: sc.Load.Loc, Name: name, Type: scenario.PhaseConstant, Rate: scenario.Rate(rate), Duration: d}}
	c.Events = nil
	return &c
}
