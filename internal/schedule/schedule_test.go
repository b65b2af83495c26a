package schedule

import (
	"math"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/scenario"
)

func sc(arrival string, phases ...scenario.Phase) *scenario.Scenario {
	return &scenario.Scenario{Seed: 7, Load: scenario.Load{Arrival: arrival, Phases: phases}}
}

func collect(s *Schedule) []time.Duration {
	var out []time.Duration
	a := s.Arrivals()
	for {
		t, ok := a.Next()
		if !ok {
			return out
		}
		out = append(out, t)
	}
}

func TestUniformConstantIsEvenlySpaced(t *testing.T) {
	s := New(sc("uniform", scenario.Phase{Type: "constant", Rate: 1000, Duration: 2 * time.Second}))
	ts := collect(s)
	if len(ts) != 2000 {
		t.Fatalf("got %d arrivals, want 2000", len(ts))
	}
	for i, x := range ts {
		if want := time.Duration(i) * time.Millisecond; absDur(x-want) > time.Nanosecond {
			t.Fatalf("arrival %d at %s, want %s", i, x, want)
		}
	}
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func TestRampCountsFollowTheIntegral(t *testing.T) {
	// 0 -> 1000/s over 10 s: 5000 operations, a quarter of them in the first half.
	s := New(sc("uniform", scenario.Phase{Type: "ramp", From: 0, To: 1000, Duration: 10 * time.Second}))
	ts := collect(s)
	if len(ts) != 5000 {
		t.Fatalf("got %d, want 5000", len(ts))
	}
	firstHalf := 0
	for _, x := range ts {
		if x < 5*time.Second {
			firstHalf++
		}
	}
	if firstHalf != 1250 {
		t.Errorf("first half has %d, want 1250", firstHalf)
	}
	if r := s.RateAt(2500 * time.Millisecond); math.Abs(r-250) > 1e-9 {
		t.Errorf("RateAt(2.5s) = %g, want 250", r)
	}
	if c := s.CountAt(5 * time.Second); math.Abs(c-1250) > 1e-9 {
		t.Errorf("CountAt(5s) = %g", c)
	}
}

func TestDownRampAndStepAndSpike(t *testing.T) {
	s := New(sc("uniform",
		scenario.Phase{Name: "down", Type: "ramp", From: 1000, To: 0, Duration: 2 * time.Second},
		scenario.Phase{Name: "stairs", Type: "step", From: 100, To: 400, Steps: 4, Duration: 4 * time.Second},
		scenario.Phase{Name: "pause", Type: "constant", Rate: 0, Duration: time.Second},
		scenario.Phase{Name: "flash", Type: "spike", Rate: 100, Peak: 2000, SpikeAt: time.Second, SpikeFor: 500 * time.Millisecond, Duration: 3 * time.Second},
	))
	ts := collect(s)
	want := 1000.0 + (100 + 200 + 300 + 400) + 0 + (100*2.5 + 2000*0.5)
	if math.Abs(float64(len(ts))-want) > 1 || math.Abs(s.Expected()-want) > 1e-6 {
		t.Fatalf("got %d arrivals, expected %g (schedule says %g)", len(ts), want, s.Expected())
	}
	for i := 1; i < len(ts); i++ {
		if ts[i] < ts[i-1] {
			t.Fatalf("intended times must not go backwards at %d", i)
		}
	}
	inPause, inSpike := 0, 0
	for _, x := range ts {
		if x >= 6*time.Second && x < 7*time.Second {
			inPause++
		}
		if x >= 8*time.Second && x < 8500*time.Millisecond {
			inSpike++
		}
	}
	if inPause != 0 || inSpike != 1000 {
		t.Errorf("pause has %d (want 0), spike has %d (want 1000)", inPause, inSpike)
	}
	if got := s.Phases()[3]; got.Start != 7*time.Second || got.End != 10*time.Second || got.Name != "flash" {
		t.Errorf("phase time line wrong: %+v", got)
	}
	if s.PhaseAt(6500*time.Millisecond) != 2 || s.RateAt(8200*time.Millisecond) != 2000 {
		t.Error("PhaseAt/RateAt disagree with the phases")
	}
}

func TestPoissonMatchesRateAndIsDeterministic(t *testing.T) {
	s := New(sc("poisson", scenario.Phase{Type: "constant", Rate: 10000, Duration: 10 * time.Second}))
	a, b := collect(s), collect(s)
	if len(a) != len(b) {
		t.Fatal("the same seed must give the same arrivals")
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("the same seed must give the same arrivals")
		}
	}
	// Count ~ Poisson(100000): sd = 316; allow 5 sd.
	if d := math.Abs(float64(len(a)) - 100000); d > 5*316 {
		t.Errorf("got %d arrivals, want about 100000", len(a))
	}
	// Exponential gaps: coefficient of variation 1 (uniform gaps would give 0).
	var sum, sum2 float64
	for i := 1; i < len(a); i++ {
		g := float64(a[i] - a[i-1])
		sum += g
		sum2 += g * g
	}
	n := float64(len(a) - 1)
	mean := sum / n
	cv := math.Sqrt(sum2/n-mean*mean) / mean
	if math.Abs(cv-1) > 0.03 {
		t.Errorf("gap coefficient of variation %.3f, want about 1", cv)
	}
	other := sc("poisson", scenario.Phase{Type: "constant", Rate: 10000, Duration: 10 * time.Second})
	other.Seed = 8
	if c := collect(New(other)); len(c) == len(a) && c[10] == a[10] {
		t.Error("a different seed should give different arrivals")
	}
}

func BenchmarkArrivalsPoissonRamp(b *testing.B) {
	s := New(sc("poisson", scenario.Phase{Type: "ramp", From: 1, To: 1e6, Duration: time.Hour}))
	a := s.Arrivals()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok := a.Next(); !ok {
			a = s.Arrivals()
		}
	}
}
