package analyze

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/plan"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/schedule"
	"github.com/shardbench/shardbench/workloads"
	_ "github.com/shardbench/shardbench/workloads/all"
)

// benchOps is the slice of the Black Friday stream the benchmark analyses: the first
// 500K operations (10 s of the plateau's traffic), held in memory so that generating
// them is not measured.
const benchOps = 500_000

type benchVariant struct {
	name string
	pl   *plan.Placer
	ops  []workloads.Op
	keys int64 // accesses per pass
}

func loadBench(b *testing.B) []benchVariant {
	b.Helper()
	sc, err := scenario.ReadFile("../../scenarios/black-friday.yaml")
	if err != nil {
		b.Fatal(err)
	}
	prep, err := design.Prepare(sc)
	if err != nil {
		b.Fatal(err)
	}
	sch := schedule.New(sc)
	s := prep.Model.NewStream(sch)
	ops := make([]workloads.Op, 0, benchOps)
	var op workloads.Op
	for len(ops) < benchOps && s.Next(&op) {
		ops = append(ops, op)
	}
	var out []benchVariant
	for i, v := range prep.Variants {
		pl, err := plan.NewPlacer(prep.Compiled[i], &plan.Cluster{Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		bv := benchVariant{name: v.Name, pl: pl, ops: ops}
		var accs []design.Access
		for j := range ops {
			accs = prep.Compiled[i].Accesses(&ops[j], accs[:0])
			bv.keys += int64(len(accs))
		}
		out = append(out, bv)
	}
	return out
}

// BenchmarkAnalyze: the whole analysis of a Black Friday stream slice per variant —
// placement (tokens, chunk routing) plus key statistics, targeting and ranges — in keys
// (accesses) per second on one core. Run: go test -run XXX -bench Analyze ./internal/analyze/
func BenchmarkAnalyze(b *testing.B) {
	for _, bv := range loadBench(b) {
		b.Run(bv.name, func(b *testing.B) {
			b.ReportAllocs()
			var elapsed time.Duration
			for b.Loop() {
				start := time.Now()
				v := NewAnalyzer(bv.name, bv.pl, 1)
				for j := range bv.ops {
					v.Op(&bv.ops[j])
				}
				v.Result()
				elapsed += time.Since(start)
			}
			b.ReportMetric(float64(bv.keys)*float64(b.N)/elapsed.Seconds(), "keys/s")
		})
	}
}

// BenchmarkAnalyzeKeyStats: the key statistics alone (distinct count past the exact
// limit, Space-Saving, reservoir) over 4M distinct keys, so the sketch phase and its
// bounded memory are what is measured.
func BenchmarkAnalyzeKeyStats(b *testing.B) {
	const distinct = 1 << 22
	// One flat buffer: 4M separately allocated keys would make the benchmark measure the
	// garbage collector scanning them.
	buf := make([]byte, 0, 8*distinct)
	for i := range distinct {
		buf = binary.BigEndian.AppendUint64(buf, uint64(i)*0x9e3779b97f4a7c15)
	}
	k := NewKeyStats(1)
	b.ReportAllocs()
	start := time.Now()
	for i := 0; b.Loop(); i++ {
		j := 8 * (i & (distinct - 1))
		key := buf[j : j+8 : j+8]
		if k.Add(key, 100) {
			k.Keep(key, 0)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "keys/s")
}

// BenchmarkAnalyzePlacementOnly: the same slice through placement alone (Plan.Accesses and
// Placer.Place, no statistics), the floor under BenchmarkAnalyze: the difference is what
// the key analysis costs.
func BenchmarkAnalyzePlacementOnly(b *testing.B) {
	for _, bv := range loadBench(b) {
		b.Run(bv.name, func(b *testing.B) {
			var elapsed time.Duration
			var accs []design.Access
			for b.Loop() {
				start := time.Now()
				for j := range bv.ops {
					op := &bv.ops[j]
					accs = bv.pl.Compiled.Accesses(op, accs[:0])
					for k := range accs {
						bv.pl.Place(&accs[k], op)
					}
				}
				elapsed += time.Since(start)
			}
			b.ReportMetric(float64(bv.keys)*float64(b.N)/elapsed.Seconds(), "keys/s")
		})
	}
}
