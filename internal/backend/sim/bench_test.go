package sim

import (
	"context"
	"testing"

	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/workloads"
)

// BenchmarkSimulate measures simulated operations per second for one variant of
// black-friday.yaml (stream generation, placement, the observer and the cluster model;
// one core). b.N operations are pre-generated so only the simulator is timed.
func BenchmarkSimulate(b *testing.B) {
	for _, name := range []string{"seed000", "seed001-mongo"} {
		b.Run(name, func(b *testing.B) {
			cfg, ops := loadVariant(b, "../../../scenarios/black-friday.yaml", name, b.N)
			s, err := Open(context.Background(), cfg)
			if err != nil {
				b.Fatal(err)
			}
			i := 0
			next := func() *workloads.Op {
				if i >= len(ops) {
					return nil
				}
				i++
				return &ops[i-1]
			}
			n := 0
			b.ReportAllocs()
			b.ResetTimer()
			if err := s.Simulate(context.Background(), next, func(*metrics.Sample) { n++ }); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			b.ReportMetric(float64(len(ops))/b.Elapsed().Seconds(), "ops/s")
			if n != len(ops) {
				b.Fatalf("%d samples for %d operations", n, len(ops))
			}
		})
	}
}
