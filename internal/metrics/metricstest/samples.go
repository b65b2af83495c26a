// Package metricstest makes samples for tests and benchmarks of the packages that record
// and write them.
package metricstest

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/shardbench/shardbench/internal/metrics"
)

// PlateauOps is how many operation types PlateauSecond's samples have.
const PlateauOps = 25

// PlateauSecond is one second of a simulated run like Black Friday's plateau: 50,000
// operations over PlateauOps operation types of uneven weights. Like the run's interval
// logs, an operation type populates up to several hundred buckets over a few pages
// (medians from 0.25 to 1.4 ms, narrowly spread, a 2% tail at 1.5 times), and a third of
// them fail at once (all in one bucket). lateShare of the samples start late (up to a few
// ms), which makes an interval's OnTime false.
func PlateauSecond(rng *rand.Rand, lateShare float64) []metrics.Sample {
	const n = 50_000
	ms := float64(time.Millisecond)
	out := make([]metrics.Sample, 0, n)
	for i := 0; i < n; i++ {
		op := min(int(rng.ExpFloat64()*6), PlateauOps-1)
		at := int64(i) * int64(time.Second) / n
		s := metrics.Sample{Intended: at, Start: at, Op: uint16(op)}
		if rng.Float64() < lateShare {
			s.Start += int64(rng.ExpFloat64() * ms)
		}
		lat := (0.25 + 1.15*float64(op*7%PlateauOps)/PlateauOps) * ms * math.Exp(0.06*rng.NormFloat64())
		if rng.IntN(50) == 0 {
			lat *= 1.5
		}
		if op%3 == 1 {
			lat = 1000
		}
		s.End = s.Start + int64(lat)
		out = append(out, s)
	}
	return out
}
