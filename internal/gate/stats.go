package gate

import (
	"math"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// bins is a histogram's non-empty buckets in ascending order: every value recorded in
// bucket i lies in [lo[i], hi[i]].
type bins struct {
	lo, hi, count []int64
	n             int64
}

func binsOf(h *hdr.Histogram) bins {
	var b bins
	if h == nil {
		return b
	}
	for _, bar := range h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		b.lo = append(b.lo, bar.From)
		b.hi = append(b.hi, bar.To)
		b.count = append(b.count, bar.Count)
		b.n += bar.Count
	}
	return b
}

// mid is the representative value of bucket i (for rank tests: values in the same bucket
// are ties).
func (b bins) mid(i int) float64 { return (float64(b.lo[i]) + float64(b.hi[i])) / 2 }

// atRank returns the bucket holding the r-th smallest value (1-based, clamped to [1, n]).
func (b bins) atRank(r int64) int {
	r = min(max(r, 1), b.n)
	var cum int64
	for i, c := range b.count {
		cum += c
		if cum >= r {
			return i
		}
	}
	return len(b.count) - 1
}

// countAtLeast counts values that certainly are >= v (their whole bucket is).
func (b bins) countAtLeast(v int64) int64 {
	var k int64
	for i := range b.count {
		if b.lo[i] >= v {
			k += b.count[i]
		}
	}
	return k
}

// countAbove counts values that certainly are > v.
func (b bins) countAbove(v int64) int64 { return b.countAtLeast(v + 1) }

// need is the smallest sample on which percentile p (0 < p < 100) is judged: 10 values
// expected beyond it.
func need(p float64) int64 {
	q := 1 - p/100
	if q <= 0 {
		return math.MaxInt64
	}
	return int64(math.Ceil(10/q - 1e-6))
}

// z99 is the two-sided 99% normal quantile.
const z99 = 2.5758293035489004

// quantileCI is a distribution-free confidence interval for percentile p from order
// statistics: the ranks np ± z·√(np(1−p)), read off the histogram at the outer edges of
// their buckets (so bucketing only widens it).
func quantileCI(b bins, p, z float64) (lo, hi int64) {
	n := float64(b.n)
	f := p / 100
	sd := math.Sqrt(n * f * (1 - f))
	rl := int64(math.Floor(n*f - z*sd))
	ru := int64(math.Ceil(n*f+z*sd)) + 1
	return b.lo[b.atRank(rl)], b.hi[b.atRank(ru)]
}

// mannWhitney tests whether values of y tend to be larger than values of x (one-sided),
// with ties corrected for. It returns the normal-approximation z and p-value, and the
// probability of superiority P(Y > X) + ½P(Y = X).
func mannWhitney(x, y bins) (z, p, sup float64) {
	n1, n2 := float64(x.n), float64(y.n)
	if x.n == 0 || y.n == 0 {
		return 0, 1, 0.5
	}
	var u, below, tieSum float64
	i, j := 0, 0
	for i < len(x.count) || j < len(y.count) {
		var v float64
		switch {
		case j >= len(y.count):
			v = x.mid(i)
		case i >= len(x.count):
			v = y.mid(j)
		default:
			v = math.Min(x.mid(i), y.mid(j))
		}
		var a, b float64
		for i < len(x.count) && x.mid(i) == v {
			a += float64(x.count[i])
			i++
		}
		for j < len(y.count) && y.mid(j) == v {
			b += float64(y.count[j])
			j++
		}
		u += b * (below + a/2)
		below += a
		t := a + b
		tieSum += t*t*t - t
	}
	n := n1 + n2
	mu := n1 * n2 / 2
	sigma2 := n1 * n2 / 12 * ((n + 1) - tieSum/(n*(n-1)))
	sup = u / (n1 * n2)
	if sigma2 <= 0 {
		return 0, 1, sup
	}
	z = (u - mu - 0.5) / math.Sqrt(sigma2)
	return z, normalSF(z), sup
}

// normalSF is P(Z > z) for a standard normal Z.
func normalSF(z float64) float64 { return 0.5 * math.Erfc(z/math.Sqrt2) }

// hodgesLehmannRatio is the median of all pairwise ratios y/x (the Hodges–Lehmann shift
// estimate on log values), found by bisection on the shift with a linear-time pair count.
func hodgesLehmannRatio(x, y bins) float64 {
	if x.n == 0 || y.n == 0 {
		return 1
	}
	lx := make([]float64, len(x.count))
	for i := range lx {
		lx[i] = math.Log(math.Max(x.mid(i), 1))
	}
	ly := make([]float64, len(y.count))
	for j := range ly {
		ly[j] = math.Log(math.Max(y.mid(j), 1))
	}
	half := float64(x.n) * float64(y.n) / 2
	// pairsAtMost counts pairs with ly - lx <= d, i.e. lx >= ly - d.
	pairsAtMost := func(d float64) float64 {
		var total float64
		// xAtLeast[i] = count of x values in buckets i.. ; walk i as ly - d grows.
		var suffix float64 = float64(x.n)
		i := 0
		for j := range ly {
			t := ly[j] - d
			for i < len(lx) && lx[i] < t {
				suffix -= float64(x.count[i])
				i++
			}
			total += float64(y.count[j]) * suffix
		}
		return total
	}
	lo := ly[0] - lx[len(lx)-1] - 1e-9
	hi := ly[len(ly)-1] - lx[0] + 1e-9
	for range 64 {
		m := (lo + hi) / 2
		if pairsAtMost(m) >= half {
			hi = m
		} else {
			lo = m
		}
	}
	return math.Exp(hi)
}

// binomialSF is P(X >= k) for X ~ Binomial(n, q).
func binomialSF(n, k int64, q float64) float64 {
	switch {
	case k <= 0:
		return 1
	case k > n:
		return 0
	case q <= 0:
		return 0
	case q >= 1:
		return 1
	}
	lq, lr := math.Log(q), math.Log1p(-q)
	lg := func(x int64) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	ln := lg(n)
	mode := float64(n) * q
	var sum float64
	for i := k; i <= n; i++ {
		t := math.Exp(ln - lg(i) - lg(n-i) + float64(i)*lq + float64(n-i)*lr)
		sum += t
		if float64(i) > mode && t < sum*1e-17 {
			break
		}
	}
	return math.Min(sum, 1)
}
