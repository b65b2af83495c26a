package scenario

import (
	"strings"
	"testing"
	"time"
)

const minimal = "name: m\nload:\n  phases:\n    - {name: a, type: constant, rate: 1000, duration: 1m}\n    - {name: b, type: spike, rate: 1000, peak: 50000, spike_at: 10s, spike_for: 5s, duration: 1m}\nmix: {x: 1}\n"

// A section that is not a mapping, or a default checked against a bad value, still
// names its line and field.
func TestErrorsOfAbsentOrBadSectionsHaveLocations(t *testing.T) {
	for name, c := range map[string]struct{ src, want string }{
		"load is a number": {"name: x\nload: 7\nmix: {a: 1}\n",
			"s.yaml:2:7: load: expected a mapping, got an integer\ns.yaml:2:7: load.phases: must list at least one phase"},
		"users is negative": {minimal + "population:\n  users: -5\n",
			"s.yaml:8:10: population.users: must be between 1 and 1e12, got -5"},
		"bots count over users": {minimal + "population:\n  users: 3\n  bots: {count: 5}\n",
			"s.yaml:9:17: population.bots.count: cannot exceed population.users (3)"},
		"absent section": {minimal + "population:\n  products: 10\n  hot_products: {count: 20}\n",
			"s.yaml:9:25: population.hot_products.count: must be between 0 and population.products"},
		"absent bots": {minimal + "population:\n  bots: {share: 0.1}\n",
			"s.yaml:8:9: population.bots.count: must be at least 1 when share is set"},
		"no load section": {"name: x\nmix: {a: 1}\n",
			"s.yaml:1:1: load.phases: must list at least one phase"},
		"null section": {"name: x\nload:\nmix: {a: 1}\n",
			"s.yaml:2:6: load.phases: must list at least one phase"},
	} {
		_, err := Parse("s.yaml", []byte(c.src))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n got %v\nwant %s", name, err, c.want)
		}
	}
}

func TestScheduleCeiling(t *testing.T) {
	src := strings.Replace(minimal, "duration: 1m}\n    - {name: b", "duration: 8d}\n    - {name: b", 1)
	_, err := Parse("s.yaml", []byte(src))
	want := "s.yaml:4:5: load.phases: the schedule lasts 192h1m, over the 7d one run may last"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
}

func TestApplyRefusesOverridesPastCeilings(t *testing.T) {
	for _, c := range []struct {
		o    Overrides
		want string
	}{
		{Overrides{RateScale: 0, RateScaleSet: true}, "--rate-scale must be a positive number, got 0"},
		{Overrides{RateScale: -1}, "--rate-scale must be a positive number, got -1"},
		{Overrides{RateScale: 1e9}, "--rate-scale 1e+09 would schedule 5e+13 ops/s at the scenario's peak of 50000, over the 1e+07 ops/s one run can schedule: at most --rate-scale 200"},
		{Overrides{Duration: 0, DurationSet: true}, "--duration must be positive, got 0s"},
		{Overrides{Duration: -time.Second}, "--duration must be positive, got -1s"},
		{Overrides{Duration: 1000000 * time.Hour}, "--duration 1000000h is over the 7d one run may last"},
		{Overrides{Duration: time.Nanosecond}, "--duration 1ns is too short for the scenario's 2 phases"},
	} {
		s, err := Parse("s.yaml", []byte(minimal))
		if err != nil {
			t.Fatal(err)
		}
		err = s.Apply(c.o)
		if err == nil || err.Error() != c.want {
			t.Errorf("%+v: err = %v\nwant %s", c.o, err, c.want)
		}
	}
}

func TestApplyWithinCeilings(t *testing.T) {
	s, err := Parse("s.yaml", []byte(minimal))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(Overrides{RateScale: 200, RateScaleSet: true, Duration: 7 * time.Second, DurationSet: true}); err != nil {
		t.Fatal(err)
	}
	if s.Duration() != 7*time.Second || s.Load.Phases[1].Peak != 1e7 {
		t.Fatalf("duration %s, peak %g", s.Duration(), float64(s.Load.Phases[1].Peak))
	}
	p := s.Load.Phases[1]
	if p.SpikeAt+p.SpikeFor > p.Duration {
		t.Fatalf("spike past its phase: %+v", p)
	}
}
