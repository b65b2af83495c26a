package workloads

import (
	"math"
	"sort"
)

// Activity samples indexes 0..n-1 from a scenario skew (Zipf or uniform) truncated at a
// ceiling: no index is drawn with probability above maxShare, and the mass the skew would
// have put above it goes to the rest in proportion to their own weight (water-filling).
// The result keeps the skew's order and shape below the ceiling: the first k ranks sit at
// the ceiling, rank k+1 onwards follow P(i) ∝ 1/i^s scaled up. This is how one human's
// share of an operation stays within what a person can do (see Model.HumanCeiling), while
// popularity among people stays skewed; outsized activity is left to the bots.
//
// Sampling costs one uniform draw more than the plain skew; setup solves the ceiling in
// O(log n) evaluations of the generalized harmonic number.
type Activity struct {
	n      int64
	capped int64   // ranks 0..capped-1 are at the ceiling
	pCap   float64 // their total probability: capped × maxShare
	tail   Zipf    // ranks capped+1..n (1-based), when Zipf
	unif   bool
}

// NewActivity prepares a sampler over n items; maxShare <= 0 or >= 1 leaves the skew
// untruncated. ok is false when the ceiling cannot hold: n × maxShare < 1 (even a uniform
// pick gives every item more than maxShare); the sampler is then uniform.
func NewActivity(n int64, distribution string, s, maxShare float64) (a Activity, ok bool) {
	n = max(n, 1)
	a.n = n
	if distribution == "uniform" || s <= 0 {
		a.unif = true
		return a, maxShare <= 0 || maxShare >= 1 || float64(n)*maxShare >= 1
	}
	if maxShare <= 0 || maxShare >= 1 {
		a.tail = NewZipf(n, s)
		return a, true
	}
	if float64(n)*maxShare < 1 {
		a.unif = true
		return a, false
	}
	h := newHarmonic(s)
	total := h.sum(n)
	// The smallest k for which the tail's top rank, scaled so that the whole adds up to
	// 1, is within the ceiling. At k = n-1 the tail is one rank holding 1-(n-1)c >= c.
	k := int64(sort.Search(int(min(n, math.MaxInt)), func(k int) bool {
		rest := 1 - float64(k)*maxShare
		if rest <= 0 {
			return true
		}
		scale := rest / (total - h.sum(int64(k)))
		return scale*math.Pow(float64(k+1), -s) <= maxShare*(1+1e-12)
	}))
	a.capped = k
	a.pCap = float64(k) * maxShare
	a.tail = newZipfRange(k+1, n, s)
	return a, true
}

// Sample returns an index in [0, n).
func (a *Activity) Sample(r *Rand) int64 {
	if a.unif {
		return r.Intn(a.n)
	}
	if a.capped > 0 && r.Float64() < a.pCap {
		return r.Intn(a.capped)
	}
	return a.tail.Sample(r) - 1
}

// N is the number of items.
func (a *Activity) N() int64 { return a.n }

// Capped is the number of items at the ceiling.
func (a *Activity) Capped() int64 { return a.capped }

// Share is the probability of index i (for tests and reports).
func (a *Activity) Share(i int64) float64 {
	if a.unif {
		return 1 / float64(a.n)
	}
	if i < a.capped {
		return a.pCap / float64(a.capped)
	}
	h := newHarmonic(a.tail.s)
	tail := h.sum(a.n) - h.sum(a.capped)
	return (1 - a.pCap) * math.Pow(float64(i+1), -a.tail.s) / tail
}

// harmonic evaluates the generalized harmonic number H(m, s) = Σ_{i=1..m} i^-s: exact
// up to exactTerms, then the midpoint integral of x^-s, whose error past 1000 terms is
// below 1e-8 of the sum.
type harmonic struct {
	s      float64
	prefix []float64
}

const exactTerms = 1000

func newHarmonic(s float64) harmonic {
	h := harmonic{s: s, prefix: make([]float64, exactTerms+1)}
	for i := 1; i <= exactTerms; i++ {
		h.prefix[i] = h.prefix[i-1] + math.Pow(float64(i), -s)
	}
	return h
}

func (h *harmonic) sum(m int64) float64 {
	if m <= exactTerms {
		return h.prefix[max(m, 0)]
	}
	a, b := float64(exactTerms)+0.5, float64(m)+0.5
	var integral float64
	if math.Abs(1-h.s) < 1e-12 {
		integral = math.Log(b / a)
	} else {
		integral = (math.Pow(b, 1-h.s) - math.Pow(a, 1-h.s)) / (1 - h.s)
	}
	return h.prefix[exactTerms] + integral
}
