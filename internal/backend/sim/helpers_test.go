package sim

import (
	"testing"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/schedule"
	"github.com/shardbench/shardbench/workloads"
	_ "github.com/shardbench/shardbench/workloads/all"
)

// loadVariant reads a shipped scenario and returns the backend config of one variant and
// up to n operations of its stream.
func loadVariant(tb testing.TB, path, variant string, n int) (backend.Config, []workloads.Op) {
	tb.Helper()
	sc, err := scenario.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return configFor(tb, sc, variant, n)
}

func configFor(tb testing.TB, sc *scenario.Scenario, variant string, n int) (backend.Config, []workloads.Op) {
	tb.Helper()
	prep, err := design.Prepare(sc)
	if err != nil {
		tb.Fatal(err)
	}
	for i, v := range prep.Variants {
		if v.Name != variant {
			continue
		}
		cfg := backend.Config{Scenario: sc, Model: prep.Model, Variant: v, Compiled: prep.Compiled[i], VariantIndex: i}
		st := prep.Model.NewStream(schedule.New(sc))
		var ops []workloads.Op
		var op workloads.Op
		for len(ops) < n && st.Next(&op) {
			ops = append(ops, op)
		}
		return cfg, ops
	}
	tb.Fatalf("%s has no variant %s", sc.File, variant)
	return backend.Config{}, nil
}
