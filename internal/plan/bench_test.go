package plan

import (
	"testing"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/workloads"
)

// benchVariant prepares one variant of black-friday.yaml and a pre-generated slice of its
// operations, so the benchmark times placement and observation only (stream generation
// has its own benchmark in workloads).
func benchVariant(b testing.TB, design_ string) (*design.Compiled, []workloads.Op) {
	b.Helper()
	prep, sch := prepare(b, "../../scenarios/black-friday.yaml")
	for i, v := range prep.Variants {
		if v.Name != design_ {
			continue
		}
		st := prep.Model.NewStream(sch)
		ops := make([]workloads.Op, 200_000)
		for j := range ops {
			if !st.Next(&ops[j]) {
				b.Fatal("stream ended")
			}
		}
		return prep.Compiled[i], ops
	}
	b.Fatalf("no variant %s", design_)
	return nil, nil
}

// BenchmarkPlan: keys placed and observed per second (one key = one access of an
// operation to one table or collection: token + replicas or hashed value + chunk +
// targeting, then the top-K, distinct and per-node counters).
func BenchmarkPlan(b *testing.B) {
	for _, name := range []string{"seed000", "seed001-mongo"} {
		b.Run(name, func(b *testing.B) {
			p, ops := benchVariant(b, name)
			pl, err := NewPlacer(p, &Cluster{Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			obs := NewObserver(pl)
			// Keys are counted over the operations actually observed (b.N of them, cycling
			// through the slice), not estimated from a prefix of the slice.
			keysBefore := make([]int64, len(ops)+1) // keysBefore[i]: keys of ops[:i]
			var acc []design.Access
			for i := range ops {
				acc = p.Accesses(&ops[i], acc[:0])
				keysBefore[i+1] = keysBefore[i] + int64(len(acc))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				obs.Op(&ops[i%len(ops)])
			}
			keys := int64(b.N/len(ops))*keysBefore[len(ops)] + keysBefore[b.N%len(ops)]
			b.ReportMetric(float64(keys)/b.Elapsed().Seconds(), "keys/s")
			b.ReportMetric(float64(keys)/float64(b.N), "keys/op")
		})
	}
}

// BenchmarkPopulation: the data every table of black-friday's 14 variants starts with
// (Population.Prepare: each distinct table once, one goroutine per CPU), from a fresh
// model each time. It is part of every `plan` and simulated run's start.
func BenchmarkPopulation(b *testing.B) {
	sc, err := scenario.ReadFile("../../scenarios/black-friday.yaml")
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		prep, err := design.Prepare(sc)
		if err != nil {
			b.Fatal(err)
		}
		if err := PopulationOf(prep.Model).Prepare(prep.Compiled); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkObserveVariants: every variant of black-friday.yaml places and observes the
// same operations, in turns of 256 operations each as a simulated run's variants do, so
// their summaries compete for the CPU's caches as in a run. cpu-ns/op is the process's
// CPU time per operation (all variants), steadier than wall time on a busy machine.
func BenchmarkObserveVariants(b *testing.B) {
	prep, sch := prepare(b, "../../scenarios/black-friday.yaml")
	st := prep.Model.NewStream(sch)
	ops := make([]workloads.Op, 1<<18)
	for j := range ops {
		if !st.Next(&ops[j]) {
			b.Fatal("stream ended")
		}
	}
	var obs []*Observer
	for i := range prep.Variants {
		pl, err := NewPlacer(prep.Compiled[i], &Cluster{Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		obs = append(obs, NewObserver(pl))
	}
	const turn = 256
	b.ReportAllocs()
	cpu := metrics.ProcessCPU()
	b.ResetTimer()
	for n := 0; n < b.N; n += turn {
		blk := ops[n%len(ops):][:min(turn, b.N-n)]
		for _, o := range obs {
			for i := range blk {
				o.Op(&blk[i])
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(metrics.ProcessCPU()-cpu)/float64(b.N), "cpu-ns/op")
}
