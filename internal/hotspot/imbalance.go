package hotspot

import (
	"math"
	"slices"
)

// AlertDeviation is the seed documents' alert rule: a node or shard whose load deviates
// from the mean by more than 30% (either way).
const AlertDeviation = 0.30

// Imbalance describes how evenly load spreads over nodes or shards.
type Imbalance struct {
	Mean, Max   float64
	MaxOverMean float64 // 1 = perfectly even
	// CV is the coefficient of variation: population standard deviation / mean.
	CV float64
	// Gini is the Gini coefficient normalised by n/(n-1), so that 0 is perfectly even
	// and 1 is one node taking everything whatever the node count (the unnormalised
	// value, Σ|xi-xj| / (2 n² mean), is Gini × (n-1)/n).
	Gini float64
	// Deviation is, per entry, (load - mean) / mean: +0.42 is 42% above the mean.
	Deviation []float64
	// Over30 lists the entries with |Deviation| > AlertDeviation.
	Over30 []int
}

// Measure computes the imbalance of per-node (or per-shard) loads: operations, replica
// operations, bytes — any non-negative measure. Zero total load gives zeros.
func Measure(loads []float64) Imbalance {
	n := len(loads)
	im := Imbalance{Deviation: make([]float64, n)}
	if n == 0 {
		return im
	}
	sum := 0.0
	for _, x := range loads {
		sum += x
		im.Max = max(im.Max, x)
	}
	im.Mean = sum / float64(n)
	if im.Mean <= 0 {
		return im
	}
	im.MaxOverMean = im.Max / im.Mean
	// The products are rounded before they are summed (float64(...)): where the compiler
	// may fuse a*b+c into one FMA instruction (GOAMD64=v3), it then does not, and the
	// figures are the same whichever level the binary was built for.
	ss := 0.0
	for i, x := range loads {
		d := x - im.Mean
		ss += float64(d * d)
		im.Deviation[i] = d / im.Mean
		if math.Abs(im.Deviation[i]) > AlertDeviation {
			im.Over30 = append(im.Over30, i)
		}
	}
	im.CV = math.Sqrt(ss/float64(n)) / im.Mean
	if n > 1 {
		s := slices.Clone(loads)
		slices.Sort(s)
		// Σ_i (2i - n - 1) x_(i) / (n Σx), i from 1, is the Gini of sorted values.
		acc := 0.0
		for i, x := range s {
			acc += float64(float64(2*(i+1)-n-1) * x)
		}
		g := acc / (float64(n) * sum)
		im.Gini = g * float64(n) / float64(n-1)
	}
	return im
}

// Loads converts integer counts to the float loads Measure takes.
func Loads[T ~int | ~int32 | ~int64 | ~uint64](counts []T) []float64 {
	out := make([]float64, len(counts))
	for i, c := range counts {
		out[i] = float64(c)
	}
	return out
}
