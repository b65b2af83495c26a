package capacity

import (
	"math"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/schedule"
)

func phasesScenario(t *testing.T, body string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Parse("w.yaml", []byte("name: w\nload:\n  phases:\n"+body+"mix: {sessions.read: 1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

const allPhaseTypes = `    - {name: ramp, type: ramp, from: 1k, to: 5k, duration: 40s}
    - {name: flat, type: constant, rate: 5k, duration: 30s}
    - {name: stairs, type: step, from: 2k, to: 8k, steps: 4, duration: 20s}
    - {name: sale, type: spike, rate: 4k, peak: 12k, spike_at: 10s, spike_for: 15s, duration: 40s}
    - {name: down, type: ramp, from: 4k, to: 500, duration: 30s}
`

func TestFindPeak(t *testing.T) {
	sc := phasesScenario(t, allPhaseTypes)
	pk := FindPeak(sc.Load.Phases)
	if pk.Rate != 12000 || pk.Phase != "sale" || pk.From != 100*time.Second || pk.To != 115*time.Second || pk.Schedule != 160*time.Second {
		t.Errorf("peak %+v, want 12k in sale from 100s to 115s of 160s", pk)
	}
	w := PeakWindow(pk, 30*time.Second)
	if w.From != 70*time.Second || w.To != 115*time.Second || w.PeakFrom != 100*time.Second {
		t.Errorf("window %+v", w)
	}
	if w := PeakWindow(pk, time.Hour); w.From != 0 {
		t.Errorf("a lead-in longer than the schedule starts at 0: %+v", w)
	}
	// A ramp that ends at the top: the ramp is the peak stretch.
	ramp := FindPeak(phasesScenario(t, "    - {name: up, type: ramp, from: 1k, to: 9k, duration: 60s}\n    - {name: rest, type: constant, rate: 2k, duration: 60s}\n").Load.Phases)
	if ramp.Rate != 9000 || ramp.Phase != "up" || ramp.From != 0 || ramp.To != time.Minute {
		t.Errorf("ramp peak %+v", ramp)
	}
}

// A window of the schedule offers exactly what the schedule offers in that stretch: the
// same rate at every moment (shifted by the window's start) and the same expected count.
func TestCutKeepsTheRateOfEveryMoment(t *testing.T) {
	sc := phasesScenario(t, allPhaseTypes)
	full := schedule.New(sc)
	for _, w := range [][2]time.Duration{
		{0, 160 * time.Second}, {10 * time.Second, 50 * time.Second}, {75 * time.Second, 82 * time.Second},
		{73 * time.Second, 135 * time.Second}, {100 * time.Second, 115 * time.Second}, {108 * time.Second, 150 * time.Second},
		{95 * time.Second, 105 * time.Second}, {150 * time.Second, 160 * time.Second},
	} {
		c := *sc
		c.Load.Phases = Cut(sc.Load.Phases, w[0], w[1])
		cut := schedule.New(&c)
		if cut.Duration() != w[1]-w[0] {
			t.Errorf("window %v: %v long", w, cut.Duration())
		}
		names := map[string]bool{}
		for _, p := range c.Load.Phases {
			if names[p.Name] {
				t.Errorf("window %v: phase name %q twice", w, p.Name)
			}
			names[p.Name] = true
		}
		want := full.CountAt(w[1]) - full.CountAt(w[0])
		if got := cut.Expected(); math.Abs(got-want) > 1e-6*want {
			t.Errorf("window %v: %.3f operations expected, the schedule has %.3f there", w, got, want)
		}
		for x := time.Duration(0); x < w[1]-w[0]; x += 250 * time.Millisecond {
			if a, b := cut.RateAt(x), full.RateAt(w[0]+x); math.Abs(a-b) > 1e-6*b {
				t.Fatalf("window %v at +%v: rate %.3f, the schedule's %.3f", w, x, a, b)
			}
		}
	}
}

func TestProbeScalesAndShifts(t *testing.T) {
	sc := phasesScenario(t, allPhaseTypes)
	sc.Events = []scenario.Event{{At: 20 * time.Second, Action: scenario.EventNodeDown, Node: "n1"}, {At: 110 * time.Second, Action: scenario.EventNodeUp, Node: "n1"}, {At: 150 * time.Second, Action: scenario.EventNodeDown, Node: "n2"}}
	w := Window{From: 90 * time.Second, To: 140 * time.Second}
	p := Probe(sc, 2.5, &w)
	if got := schedule.New(p).Expected(); math.Abs(got-2.5*(schedule.New(sc).CountAt(w.To)-schedule.New(sc).CountAt(w.From))) > 1e-3 {
		t.Errorf("scaled window offers %.1f operations", got)
	}
	if len(p.Events) != 2 || p.Events[0].At != 0 || p.Events[1].At != 20*time.Second {
		t.Errorf("events %+v: the one before the window at its start, the one inside shifted, the one after dropped", p.Events)
	}
	if d := p.Clock.Start.Sub(sc.Clock.Start); d != 90*time.Second {
		t.Errorf("store clock starts %v later, want 90s", d)
	}
	if sc.Load.Phases[0].From != 1000 || len(sc.Events) != 3 {
		t.Error("Probe changed the scenario it was given")
	}
	whole := Probe(sc, 0.5, nil)
	if got, want := schedule.New(whole).Expected(), 0.5*schedule.New(sc).Expected(); math.Abs(got-want) > 1e-6*want || len(whole.Events) != 3 {
		t.Errorf("whole schedule at 0.5: %.1f operations (want %.1f), %d events", got, want, len(whole.Events))
	}
}
