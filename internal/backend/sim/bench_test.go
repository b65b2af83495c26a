package sim

import (
	"context"
	"testing"
	"time"

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

// BenchmarkSimulateCollect is BenchmarkSimulate with every sample recorded as a run
// records it (metrics.Collector.AddVirtual, intervals of one second closed as the clock
// passes them, no sink): the simulator's reporting and the collector together.
func BenchmarkSimulateCollect(b *testing.B) {
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
			nOps := 0
			for k := range ops {
				nOps = max(nOps, int(ops[k].Type)+1)
			}
			col := metrics.NewCollector(nOps, cfg.Scenario.Load.LateAfter, time.Second, nil)
			var last int64
			b.ResetTimer()
			err = s.Simulate(context.Background(), next, func(smp *metrics.Sample) {
				col.AddVirtual(smp)
				last = max(last, smp.End)
			})
			if err != nil {
				b.Fatal(err)
			}
			col.Flush(time.Duration(last), 0)
			b.StopTimer()
			b.ReportMetric(float64(len(ops))/b.Elapsed().Seconds(), "ops/s")
		})
	}
}
