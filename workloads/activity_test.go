package workloads

import (
	"math"
	"testing"
)

// The truncated skew never gives one index more than the ceiling, keeps the skew's order
// below it and adds up to 1.
func TestActivityShares(t *testing.T) {
	const n = 20_000_000
	for _, s := range []float64{0.9, 1.0, 1.2} {
		c := 2.25e-5 // black-friday's orders.place: 12 an hour against 148/s at the peak
		a, ok := NewActivity(n, "zipf", s, c)
		if !ok {
			t.Fatalf("s=%g: ceiling reported infeasible", s)
		}
		if a.Capped() == 0 || a.Capped() >= n {
			t.Fatalf("s=%g: %d ranks at the ceiling", s, a.Capped())
		}
		for _, i := range []int64{0, a.Capped() - 1, a.Capped(), a.Capped() + 1, n - 1} {
			if p := a.Share(i); p > c*(1+1e-9) {
				t.Errorf("s=%g: index %d has share %g above the ceiling %g", s, i, p, c)
			}
		}
		if a.Share(a.Capped()) > a.Share(a.Capped()-1) || a.Share(a.Capped()+1) > a.Share(a.Capped()) {
			t.Errorf("s=%g: shares not monotone at the ceiling's edge", s)
		}
		// The tail's first rank is close to the ceiling (water-filling, nothing wasted).
		if r := a.Share(a.Capped()) / c; r < 0.99 {
			t.Errorf("s=%g: first rank below the ceiling has %g of it", s, r)
		}
	}
	// Without a ceiling, rank 1 of Zipf(1) over 20M takes 1/H(20M) ≈ 5.75%.
	a, _ := NewActivity(n, "zipf", 1, 0)
	if p := a.Share(0); math.Abs(p-0.0575) > 0.001 {
		t.Errorf("untruncated rank 1 share %g, want about 0.0575", p)
	}
	if _, ok := NewActivity(1000, "zipf", 1, 1e-4); ok {
		t.Error("1000 items under a 1e-4 ceiling (1/10 of the traffic) reported feasible")
	}
}

// Sampled counts: no index drawn more often than the ceiling allows (Binomial allowance
// of 5 standard deviations), and the indexes past the ceiling follow the skew.
func TestActivitySampleCeiling(t *testing.T) {
	const n, c, draws = 20_000_000, 2.25e-5, 20_000_000
	a, _ := NewActivity(n, "zipf", 1, c)
	r := NewRand(42)
	counts := map[int64]int64{}
	for i := 0; i < draws; i++ {
		if k := a.Sample(&r); k < a.Capped()+1000 {
			counts[k]++
		}
	}
	mean := float64(draws) * c
	limit := mean + 5*math.Sqrt(mean)
	var most int64
	for _, v := range counts {
		most = max(most, v)
	}
	if float64(most) > limit {
		t.Errorf("busiest index drawn %d times of %d, the ceiling allows %.0f (mean %.0f)", most, draws, limit, mean)
	}
	// Ranks past the ceiling: rank capped+1 drawn about twice as often as rank
	// 2*(capped+1) (s = 1).
	k := a.Capped()
	var near, far int64
	for i := k; i < k+100; i++ {
		near += counts[i]
	}
	for i := 2 * k; i < 2*k+100 && i < k+1000; i++ {
		far += counts[i]
	}
	if k < 900 && far > 0 {
		if ratio := float64(near) / float64(far); ratio < 1.6 || ratio > 2.5 {
			t.Errorf("tail shape: ranks %d.. drawn %d, ranks %d.. drawn %d (ratio %.2f, want about 2)", k, near, 2*k, far, ratio)
		}
	}
}

// A Zipf over ranks lo..n draws each rank in proportion to 1/k^s.
func TestZipfRange(t *testing.T) {
	const lo, n, s, draws = 5, 40, 1.1, 2_000_000
	z := newZipfRange(lo, n, s)
	r := NewRand(7)
	counts := make([]float64, n+1)
	for i := 0; i < draws; i++ {
		k := z.Sample(&r)
		if k < lo || k > n {
			t.Fatalf("rank %d outside [%d, %d]", k, lo, n)
		}
		counts[k]++
	}
	var norm float64
	for k := lo; k <= n; k++ {
		norm += math.Pow(float64(k), -s)
	}
	for k := lo; k <= n; k++ {
		want := draws * math.Pow(float64(k), -s) / norm
		if d := math.Abs(counts[k] - want); d > 5*math.Sqrt(want) {
			t.Errorf("rank %d drawn %.0f times, want %.0f", k, counts[k], want)
		}
	}
}
