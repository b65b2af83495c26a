package gate

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/shardbench/shardbench/internal/metrics"
)

func binsFrom(values []int64) bins {
	h := metrics.NewHistogram()
	for _, v := range values {
		_ = h.RecordValue(metrics.Clamp(v))
	}
	return binsOf(h)
}

// The bucketed Mann–Whitney U equals the textbook statistic computed pair by pair on the
// bucket representatives (ties count half), and its p-value follows the normal tail.
func TestMannWhitneyMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var xs, ys []int64
	for range 300 {
		xs = append(xs, int64(1e6*(1+r.ExpFloat64())))
	}
	for range 200 {
		ys = append(ys, int64(1.2e6*(1+r.ExpFloat64())))
	}
	// Some exact ties across the samples.
	xs = append(xs, 5e6, 5e6, 5e6)
	ys = append(ys, 5e6, 5e6)
	bx, by := binsFrom(xs), binsFrom(ys)
	var ux []float64
	for i := range bx.count {
		for range bx.count[i] {
			ux = append(ux, bx.mid(i))
		}
	}
	var uy []float64
	for j := range by.count {
		for range by.count[j] {
			uy = append(uy, by.mid(j))
		}
	}
	var u float64
	for _, y := range uy {
		for _, x := range ux {
			switch {
			case y > x:
				u++
			case y == x:
				u += 0.5
			}
		}
	}
	z, p, sup := mannWhitney(bx, by)
	if want := u / float64(len(ux)*len(uy)); math.Abs(sup-want) > 1e-12 {
		t.Errorf("probability of superiority %g, brute force %g", sup, want)
	}
	if z < 2 || p > 0.03 || math.Abs(p-normalSF(z)) > 1e-15 {
		t.Errorf("a 20%% shift on 500 values: z=%.2f p=%.3g", z, p)
	}
	// Identical samples: U = n1n2/2, no evidence.
	if z, p, _ := mannWhitney(bx, bx); p < 0.4 || math.Abs(z) > 0.1 {
		t.Errorf("identical samples: z=%.3f p=%.3f", z, p)
	}
}

// Hodges–Lehmann by bisection equals the median of all pairwise ratios.
func TestHodgesLehmannMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var xs, ys []int64
	for range 250 {
		xs = append(xs, int64(2e6*math.Exp(0.4*r.NormFloat64())))
		ys = append(ys, int64(1.25*2e6*math.Exp(0.4*r.NormFloat64())))
	}
	bx, by := binsFrom(xs), binsFrom(ys)
	var ratios []float64
	for i := range bx.count {
		for j := range by.count {
			for range bx.count[i] * by.count[j] {
				ratios = append(ratios, math.Log(by.mid(j))-math.Log(bx.mid(i)))
			}
		}
	}
	sort.Float64s(ratios)
	// The lower median: the smallest shift with at least half the pairs at or below it.
	want := math.Exp(ratios[(len(ratios)+1)/2-1])
	got := hodgesLehmannRatio(bx, by)
	if math.Abs(got/want-1) > 1e-6 {
		t.Errorf("Hodges–Lehmann %.6f, brute force %.6f", got, want)
	}
	if got < 1.15 || got > 1.35 {
		t.Errorf("a ×1.25 shift estimated as ×%.3f", got)
	}
}

// The order-statistic interval covers the true percentile about 99% of the time.
func TestQuantileCICoverage(t *testing.T) {
	const trials = 400
	miss := 0
	// Exponential with mean 1 ms: the true p99 is ln(100) ms.
	truth := math.Log(100) * 1e6
	r := rand.New(rand.NewPCG(7, 8))
	for range trials {
		xs := make([]int64, 5000)
		for i := range xs {
			xs[i] = int64(1e6 * r.ExpFloat64())
		}
		lo, hi := quantileCI(binsFrom(xs), 99, z99)
		if float64(lo) > truth || float64(hi) < truth {
			miss++
		}
	}
	if miss > 12 { // expected ≈ 4 of 400
		t.Errorf("99%% interval missed the true p99 in %d of %d trials", miss, trials)
	}
}

func TestBinomialSF(t *testing.T) {
	cases := []struct {
		n, k int64
		q    float64
		want float64
	}{
		{10, 0, 0.3, 1},
		{10, 11, 0.3, 0},
		{10, 10, 0.5, 1.0 / 1024},
		{10, 9, 0.5, 11.0 / 1024},
		{4, 2, 0.5, 11.0 / 16},
		{5000, 250, 0.001, 0}, // astronomically small
	}
	for _, c := range cases {
		got := binomialSF(c.n, c.k, c.q)
		if math.Abs(got-c.want) > 1e-12 && !(c.want == 0 && got < 1e-100) {
			t.Errorf("P(Bin(%d,%g) >= %d) = %g, want %g", c.n, c.q, c.k, got, c.want)
		}
	}
	// Poisson limit: P(X >= 6) for mean 5 ≈ 0.384.
	if p := binomialSF(5000, 6, 0.001); math.Abs(p-0.3840) > 0.002 {
		t.Errorf("P(Bin(5000,0.001) >= 6) = %.4f, want ≈ 0.384", p)
	}
}

func TestNeed(t *testing.T) {
	for p, want := range map[float64]int64{50: 20, 90: 100, 99: 1000, 99.9: 10000, 99.99: 100000} {
		if got := need(p); got != want {
			t.Errorf("need(p%g) = %d, want %d", p, got, want)
		}
	}
}
