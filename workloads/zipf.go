package workloads

import "math"

// Zipf samples ranks 1..n with P(k) ∝ 1/k^s by rejection-inversion (W. Hörmann and
// G. Derflinger, "Rejection-inversion to generate variates from monotone discrete
// distributions", 1996; the formulation of Apache Commons RNG). Unlike math/rand's Zipf it
// is valid for any s > 0, including s <= 1 as web popularity usually is; it needs O(1)
// memory and setup, and a sample costs a few transcendental functions with an expected
// number of iterations close to 1. It never allocates.
type Zipf struct {
	lo        float64
	n         float64
	s         float64
	hX1       float64 // hIntegral(lo + 0.5) - h(lo)
	hN        float64 // hIntegral(n + 0.5)
	threshold float64
}

// NewZipf prepares a sampler over 1..n with exponent s > 0.
func NewZipf(n int64, s float64) Zipf { return newZipfRange(1, n, s) }

// newZipfRange samples ranks lo..n with P(k) ∝ 1/k^s: the tail of a Zipf distribution
// over 1..n past its first lo-1 ranks. Rejection-inversion needs only the interval's
// lower end moved (Hörmann and Derflinger's method is stated for any interval of a
// monotone density); the quick-acceptance threshold computed at k = 2 stays valid for
// every larger k, where the hat fits the density more tightly.
func newZipfRange(lo, n int64, s float64) Zipf {
	if n < 1 {
		n = 1
	}
	lo = min(max(lo, 1), n)
	z := Zipf{lo: float64(lo), n: float64(n), s: s}
	z.hX1 = z.hIntegral(z.lo+0.5) - z.h(z.lo)
	z.hN = z.hIntegral(z.n + 0.5)
	z.threshold = 2 - z.hIntegralInverse(z.hIntegral(2.5)-z.h(2))
	return z
}

// N is the number of ranks.
func (z *Zipf) N() int64 { return int64(z.n) }

// Sample returns a rank in [1, n]; rank 1 is the most popular.
func (z *Zipf) Sample(r *Rand) int64 {
	if z.n <= z.lo {
		return int64(z.lo)
	}
	for {
		u := z.hN + r.Float64()*(z.hX1-z.hN)
		x := z.hIntegralInverse(u)
		k := math.Floor(x + 0.5)
		if k < z.lo {
			k = z.lo
		} else if k > z.n {
			k = z.n
		}
		if k-x <= z.threshold || u >= z.hIntegral(k+0.5)-z.h(k) {
			return int64(k)
		}
	}
}

func (z *Zipf) h(x float64) float64 { return math.Exp(-z.s * math.Log(x)) }

func (z *Zipf) hIntegral(x float64) float64 {
	lx := math.Log(x)
	return helper2((1-z.s)*lx) * lx
}

func (z *Zipf) hIntegralInverse(x float64) float64 {
	t := x * (1 - z.s)
	if t < -1 {
		t = -1 // numerical safety near the upper end
	}
	return math.Exp(helper1(t) * x)
}

// helper1 is log1p(x)/x, accurate near 0.
func helper1(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1 - x*(0.5-x*(1.0/3.0-0.25*x))
}

// helper2 is expm1(x)/x, accurate near 0.
func helper2(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + x*0.5*(1+x*(1.0/3.0)*(1+0.25*x))
}

// Popularity samples indexes 0..n-1 from a scenario skew: Zipf (rank 1 -> index 0) or
// uniform.
type Popularity struct {
	zipf    Zipf
	uniform bool
	n       int64
}

// NewPopularity prepares a sampler; s <= 0 or uniform selects uniform sampling.
func NewPopularity(n int64, distribution string, s float64) Popularity {
	if n < 1 {
		n = 1
	}
	if distribution == "uniform" || s <= 0 {
		return Popularity{uniform: true, n: n}
	}
	return Popularity{zipf: NewZipf(n, s), n: n}
}

// Sample returns an index in [0, n).
func (p *Popularity) Sample(r *Rand) int64 {
	if p.uniform {
		return r.Intn(p.n)
	}
	return p.zipf.Sample(r) - 1
}

// N is the number of items.
func (p *Popularity) N() int64 { return p.n }
