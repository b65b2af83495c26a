package metrics_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/metrics/metricstest"
)

// BenchmarkCollectorFlush: closing an interval of metricstest.PlateauSecond (without a
// sink): the interval histograms settled, merged into the interval's All set and into the
// cumulative histograms. The samples are added with the timer stopped.
func BenchmarkCollectorFlush(b *testing.B) {
	for _, late := range []float64{0, 0.1} {
		b.Run(fmt.Sprintf("late=%g", late), func(b *testing.B) {
			batch := metricstest.PlateauSecond(rand.New(rand.NewPCG(1, 2)), late)
			c := metrics.NewCollector(metricstest.PlateauOps, time.Millisecond, time.Second, nil)
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				c.Add(batch)
				b.StartTimer()
				c.Flush(time.Duration(i+1)*time.Second, 0)
			}
		})
	}
}
