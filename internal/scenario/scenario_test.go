package scenario

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestParseValidFileAppliesDefaults(t *testing.T) {
	s, err := ReadFile("testdata/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "unit" || s.Seed != 42 || len(s.Load.Phases) != 4 {
		t.Fatalf("decoded %+v", s)
	}
	if s.Load.Phases[0].Rate != 1000 || s.Load.Phases[3].Peak != 10000 {
		t.Errorf("rates with suffixes: %v %v", s.Load.Phases[0].Rate, s.Load.Phases[3].Peak)
	}
	if s.Load.OnFull != OnFullQueue || s.Load.LateAfter != time.Millisecond || s.Load.Timeout != 5*time.Second {
		t.Errorf("load defaults not applied: %+v", s.Load)
	}
	if s.Population.Products != 100_000 || len(s.Population.GeoZones) != 5 || s.Population.GuestShare != 0.3 {
		t.Errorf("population defaults not applied: %+v", s.Population)
	}
	if got := s.Population.Categories.Names(); strings.Join(got, ",") != "electronics,books" {
		t.Errorf("weights must keep file order, got %v", got)
	}
	if s.Duration() != 80*time.Second {
		t.Errorf("duration = %s", s.Duration())
	}
	if s.SLO.IsZero() || s.Backends["sim"].IsZero() {
		t.Error("raw sections must be kept for their owners")
	}
	if s.Clock.Start != DefaultClockStart || s.Clock.Scale != 1 {
		t.Errorf("clock defaults: %+v", s.Clock)
	}
}

func TestParseReportsAllErrorsWithPositions(t *testing.T) {
	src := `name: bad
load:
  arrival: sometimes
  max_in_flight: 0
  phases:
    - {type: constant, duration: 10s}
    - {type: ramp, from: 1, to: -5, duration: 0s}
    - {type: spike, rate: 1, peak: 2, spike_at: 8s, spike_for: 5s, duration: 10s}
    - {type: constant, rate: 1, from: 3, duration: 1s}
    - {type: step, from: 1, to: 2, steps: 1, duration: 1s}
    - {type: wave, duration: 1s}
population:
  guest_share: 1.5
  user_activity: {distribution: zipf, s: 0}
  categories: {a: -1}
mix: {}
events:
  - {at: 1h, action: explode}
`
	_, err := Parse("bad.yaml", []byte(src))
	if err == nil {
		t.Fatal("want errors")
	}
	for _, want := range []string{
		"bad.yaml:3:12: load.arrival: must be \"uniform\" or \"poisson\"",
		"bad.yaml:4:18: load.max_in_flight: must be between 1 and 1000000",
		"bad.yaml:6:7: load.phases[0].rate: is required",
		"bad.yaml:7:33: load.phases[1].to: must not be negative",
		"bad.yaml:7:47: load.phases[1].duration: must be positive",
		"bad.yaml:8:64: load.phases[2].spike_for: spike (5s at 8s) ends after the phase (10s)",
		"bad.yaml:9:39: load.phases[3].from: does not apply to a constant phase",
		"bad.yaml:10:43: load.phases[4].steps: must be at least 2",
		"bad.yaml:11:14: load.phases[5].type: must be constant, ramp, step or spike, got \"wave\"",
		"bad.yaml:13:16: population.guest_share: must be between 0 and 1",
		"bad.yaml:14:42: population.user_activity.s: Zipf exponent must be in (0, 10]",
		"bad.yaml:15:19: population.categories.a: weight must not be negative",
		"bad.yaml:16:6: mix: must list at least one operation",
		"bad.yaml:18:10: events[0].at: must be within the run",
		"bad.yaml:18:22: events[0].action: must be one of",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing error %q", want)
		}
	}
	if t.Failed() {
		t.Logf("all errors:\n%s", err)
	}
}

func TestOverrides(t *testing.T) {
	s, err := ReadFile("testdata/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	seed := int64(9)
	if err := s.Apply(Overrides{Seed: &seed, Duration: 8 * time.Second, RateScale: 2}); err != nil {
		t.Fatal(err)
	}
	if s.Seed != 9 || s.Duration() != 8*time.Second {
		t.Errorf("seed %d duration %s", s.Seed, s.Duration())
	}
	spike := s.Load.Phases[3]
	if spike.Rate != 4000 || spike.Peak != 20000 || spike.SpikeAt != 500*time.Millisecond || spike.SpikeFor != 200*time.Millisecond {
		t.Errorf("spike scaled wrong: %+v", spike)
	}
	if s.Events[0].At != 1500*time.Millisecond {
		t.Errorf("event time scaled wrong: %s", s.Events[0].At)
	}
	if errs := s.Validate(); len(errs) != 0 {
		t.Errorf("overridden scenario must stay valid: %v", errs)
	}
	if err := s.Apply(Overrides{RateScale: -1}); err == nil {
		t.Error("negative rate scale must be rejected")
	}
}

func TestAsRunRoundTrips(t *testing.T) {
	s, err := ReadFile("testdata/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.AsRun()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"on_full: queue", "late_after: 1ms", "guest_share: 0.3", "carts.add_item: 1", "nodes: 3", "carts.add_item p99 < 15ms"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("as-run scenario lacks %q:\n%s", want, out)
		}
	}
	back, err := Parse("as-run.yaml", out)
	if err != nil {
		t.Fatalf("as-run scenario must parse: %v\n%s", err, out)
	}
	if back.Duration() != s.Duration() || back.Seed != s.Seed || back.Population.Categories[0].Weight != 70 {
		t.Errorf("round trip changed the scenario")
	}
}

func FuzzParse(f *testing.F) {
	seed, _ := os.ReadFile("testdata/valid.yaml")
	f.Add(seed)
	f.Add([]byte("name: x\nload: {phases: [{type: constant, rate: 1, duration: 1s}]}\nmix: {a: 1}\n"))
	f.Add([]byte("load: {phases: [{type: spike, rate: 1, peak: 1e9, spike_at: 1s, spike_for: 1d, duration: 1s}]}\n"))
	f.Add([]byte("population: {categories: {a: 1, a: 2}, bots: {count: -1}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", data)
		if err != nil {
			return
		}
		if _, err := s.AsRun(); err != nil {
			t.Fatalf("valid scenario must re-encode: %v", err)
		}
		_ = s.Duration()
	})
}

// The projection's steady rate is the declared one, else the slowest constant phase (or a
// spike's base), never a ramp's start; daily operations must be in the mix, and positive.
func TestProjection(t *testing.T) {
	src := `name: p
load:
  phases:
    - {name: warm, type: ramp, from: 2k, to: 20k, duration: 1m}
    - {name: steady, type: constant, rate: 20k, duration: 3m}
    - {name: sale, type: spike, rate: 30k, peak: 80k, spike_at: 10s, spike_for: 10s, duration: 1m}
population: {users: 10, sessions: 10, products: 10}
mix: {orders.place: 1, orders.read: 1}
`
	s, err := Parse("p.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if r, from := s.SteadyRate(); r != 20_000 || from != `phase "steady"` {
		t.Fatalf("steady rate %g from %s, want 20000 from the steady phase", r, from)
	}
	s, err = Parse("p.yaml", []byte(src+"projection:\n  steady_rate: 7.2k\n  daily: {orders.place: 1e6}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r, from := s.SteadyRate(); r != 7_200 || from != "projection.steady_rate" || s.DailyOps("orders.place") != 1e6 || s.DailyOps("orders.read") != 0 {
		t.Fatalf("declared: %g from %s, daily %g", r, from, s.DailyOps("orders.place"))
	}
	// A results directory's copy of the scenario keeps the projection.
	out, err := s.AsRun()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse("as-run.yaml", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if r, _ := back.SteadyRate(); r != 7_200 || back.DailyOps("orders.place") != 1e6 {
		t.Errorf("as-run projection: %g, %g\n%s", r, back.DailyOps("orders.place"), out)
	}
	// No projection: none in the copy either.
	plain, _ := Parse("p.yaml", []byte(src))
	if out, _ := plain.AsRun(); strings.Contains(string(out), "projection") {
		t.Errorf("as-run writes an empty projection:\n%s", out)
	}
	_, err = Parse("p.yaml", []byte(src+"projection:\n  steady_rate: -1\n  daily: {views.append: 1e6, orders.read: 0}\n"))
	for _, want := range []string{"p.yaml:10:16: projection.steady_rate", "projection.daily.views.append: operation \"views.append\" is not in the mix", "projection.daily.orders.read: operations a day must be positive"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want %q", err, want)
		}
	}
}
