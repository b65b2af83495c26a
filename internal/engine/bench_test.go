package engine

import (
	"context"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/scenario"
)

// BenchmarkEngineNull measures how many operations per second the real-time engine can
// schedule, dispatch, execute (null backend) and record: the ceiling the harness puts on
// any measurement. The schedule's rate is far above what can be served, so every operation
// is due as soon as the dispatcher reaches it.
func BenchmarkEngineNull(b *testing.B) {
	for _, workers := range []int{4, 64, 1024} {
		b.Run(map[int]string{4: "workers=4", 64: "workers=64", 1024: "workers=1024"}[workers], func(b *testing.B) {
			const rate = 1e9
			dur := time.Duration(float64(b.N) / rate * 1e9)
			if dur < time.Microsecond {
				dur = time.Microsecond
			}
			sc := testScenario("uniform", workers, scenario.Phase{Name: "c", Type: "constant", Rate: rate, Duration: dur})
			cfg := testConfig(b, sc, 4, VariantBackend{Name: "v", Backend: backend.Null()})
			cfg.SpinBelow = 0
			b.ResetTimer()
			start := time.Now()
			sum, err := Run(context.Background(), cfg)
			elapsed := time.Since(start)
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			n := sum.Variants[0].Totals.Completed
			b.ReportMetric(float64(n)/elapsed.Seconds(), "ops/s")
		})
	}
}
