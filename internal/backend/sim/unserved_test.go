package sim

import (
	"context"
	"slices"
	"testing"

	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/workloads"
)

// An operation the design does not serve is reported at its intended time as unserved
// and nothing else: never simulated, it takes no client slot, so on an overloaded cluster
// whose client drops served operations (on_full: drop) it is never dropped, never late
// and never failed, and the served operations alone fill the slots.
func TestUnservedNeverSimulated(t *testing.T) {
	sc := writeScenario(t, overloadScenario)
	dropped := 0
	for _, c := range []struct {
		variant  string
		unserved map[string]bool
	}{
		{"seed000", map[string]bool{"catalog.product_read": true}},
		{"seed001-mongo", map[string]bool{"sessions.create": true, "sessions.read": true}},
	} {
		s, samples := simulate(t, sc, c.variant, 60_000)
		var unserved, served int
		for _, smp := range samples {
			name := s.cfg.Model.Ops[smp.Op].Name
			if !c.unserved[name] {
				served++
				if smp.Flags&metrics.FlagUnserved != 0 {
					t.Fatalf("%s: %s, which the design serves, reported unserved", c.variant, name)
				}
				if smp.Flags&metrics.FlagDropped != 0 {
					dropped++
				}
				continue
			}
			unserved++
			if smp.Flags != metrics.FlagUnserved || smp.Class != 0 || smp.Start != smp.Intended || smp.End != smp.Intended {
				t.Fatalf("%s: %s reported %+v, want unserved at its intended time and nothing else", c.variant, name, smp)
			}
		}
		if unserved == 0 || unserved+served != 60_000 {
			t.Errorf("%s: %d unserved, %d served", c.variant, unserved, served)
		}
	}
	if dropped == 0 {
		t.Error("the client dropped nothing: the scenario must overload it for the test to mean anything")
	}
}

// A simulator given a count (backend.UnservedCounter) reports each own operation it does
// not serve through it, where it recorded a Sample, and nothing else changes: counted as
// unserved Samples, the reports are the recording simulator's, in the same order; another
// shard's unserved operation still goes to record, flagged foreign.
func TestCountedUnservedAreRecordedOnes(t *testing.T) {
	sc := writeScenario(t, overloadScenario)
	run := func(count bool) (reports []metrics.Sample, counted, foreign int) {
		cfg, ops := configFor(t, sc, "seed001-mongo", 30_000)
		s, err := Open(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		s.RecordOnly(func(op *workloads.Op) bool { return op.Seq%3 != 0 })
		if count {
			s.CountUnserved(func(op uint16, t int64) {
				counted++
				reports = append(reports, metrics.Sample{Intended: t, Start: t, End: t, Op: op, Flags: metrics.FlagUnserved})
			})
		}
		err = s.Simulate(context.Background(), each(ops), func(smp *metrics.Sample) {
			if smp.Flags == metrics.FlagForeign|metrics.FlagUnserved {
				foreign++
			}
			reports = append(reports, *smp)
		})
		if err != nil {
			t.Fatal(err)
		}
		return reports, counted, foreign
	}
	got, counted, foreign := run(true)
	want, _, _ := run(false)
	if counted < 1000 || foreign < 500 {
		t.Fatalf("%d counted, %d foreign unserved recorded: the test needs both", counted, foreign)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%d reports, want %d: they differ", len(got), len(want))
	}
}
