package sim

import (
	"context"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/metrics"
)

// BenchmarkSimulate measures simulated operations per second for one variant of
// black-friday.yaml (stream generation, placement, the observer and the cluster model;
// one core). b.N operations are pre-generated so only the simulator is timed.
func BenchmarkSimulate(b *testing.B) {
	benchSimulate(b, func(*metrics.Collector, *metrics.Sample) {})
}

// BenchmarkSimulateCollect is BenchmarkSimulate with every sample recorded as a run
// records it (metrics.Collector.AddVirtual, intervals of one second closed as the clock
// passes them, no sink): the simulator's reporting and the collector together.
func BenchmarkSimulateCollect(b *testing.B) {
	benchSimulate(b, (*metrics.Collector).AddVirtual)
}

// benchSimulate simulates b.N operations of seed000 and seed001-mongo, each sample handed
// to record with a collector of the variant's operations.
func benchSimulate(b *testing.B, record func(*metrics.Collector, *metrics.Sample)) {
	for _, name := range []string{"seed000", "seed001-mongo"} {
		b.Run(name, func(b *testing.B) {
			cfg, ops := loadVariant(b, "../../../scenarios/black-friday.yaml", name, b.N)
			s, err := Open(context.Background(), cfg)
			if err != nil {
				b.Fatal(err)
			}
			col := metrics.NewCollector(len(cfg.Model.Ops), cfg.Scenario.Load.LateAfter, time.Second, nil)
			n := 0
			var last int64
			b.ReportAllocs()
			b.ResetTimer()
			err = s.Simulate(context.Background(), each(ops), func(smp *metrics.Sample) {
				record(col, smp)
				last = max(last, smp.End)
				n++
			})
			if err != nil {
				b.Fatal(err)
			}
			col.Flush(time.Duration(last), 0)
			b.StopTimer()
			b.ReportMetric(float64(len(ops))/b.Elapsed().Seconds(), "ops/s")
			if n != len(ops) {
				b.Fatalf("%d samples for %d operations", n, len(ops))
			}
		})
	}
}
