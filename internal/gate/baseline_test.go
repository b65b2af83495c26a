package gate

import (
	"strings"
	"testing"

	"github.com/shardbench/shardbench/internal/results"
)

const baseN = 50_000

// runOf is one variant "v" with one operation "x" whose latencies are lognormal (median
// 2 ms, log-sd 0.6) drawn with seed and multiplied by factor.
func runOf(t *testing.T, seed uint64, n int, factor float64, errors int64) *Run {
	return memRun(t, map[string][]opSpec{"v": {{name: "x", values: lognormal(seed, n, 2e6, 0.6, factor), errors: errors}}}, "v")
}

func failures(cs []results.GateCheck) []string {
	var out []string
	for _, c := range cs {
		if c.Status == results.GateFail {
			out = append(out, Line(c))
		}
	}
	return out
}

// Two runs of the same system (another seed) must not fail the gate, across many seeds.
func TestBaselineNoiseIsNotFlagged(t *testing.T) {
	opt := BaselineOptions{Tolerance: 0.10}
	for seed := uint64(1); seed <= 8; seed++ {
		old, cur := runOf(t, seed, baseN, 1, 50), runOf(t, seed+100, baseN, 1, 50)
		cs := CompareBaseline(cur, old, opt)
		if f := failures(cs); len(f) > 0 {
			t.Errorf("seed %d: noise flagged as a regression:\n%s", seed, strings.Join(f, "\n"))
		}
	}
	// Even with no tolerance at all, the statistics alone keep noise from failing.
	old, cur := runOf(t, 1, baseN, 1, 0), runOf(t, 2, baseN, 1, 0)
	if f := failures(CompareBaseline(cur, old, BaselineOptions{Tolerance: 0})); len(f) > 0 {
		t.Errorf("zero tolerance, same distribution:\n%s", strings.Join(f, "\n"))
	}
}

// A 30% slowdown is caught, on the whole distribution and across the spectrum.
func TestBaselineRegressionIsCaught(t *testing.T) {
	old, cur := runOf(t, 1, baseN, 1, 0), runOf(t, 2, baseN, 1.3, 0)
	cs := CompareBaseline(cur, old, BaselineOptions{Tolerance: 0.10})
	got := byName(cs)
	for _, name := range []string{"[v] x p50 vs baseline", "[v] x p90 vs baseline", "[v] x p99 vs baseline", "[v] x distribution vs baseline", "[v] all distribution vs baseline"} {
		c, ok := got[name]
		if !ok || c.Status != results.GateFail || !strings.HasPrefix(c.Detail, "regression") {
			t.Errorf("%s: want FAIL regression, got %s", name, Line(c))
		}
	}
	if c := got["[v] x distribution vs baseline"]; c.Value < 1.25 || c.Value > 1.35 {
		t.Errorf("Hodges–Lehmann slowdown ×%.3f, want ≈ ×1.3", c.Value)
	}
	// The same slowdown within a 50% tolerance passes.
	if f := failures(CompareBaseline(cur, old, BaselineOptions{Tolerance: 0.5})); len(f) > 0 {
		t.Errorf("within tolerance:\n%s", strings.Join(f, "\n"))
	}
	// A faster run is never a regression.
	if f := failures(CompareBaseline(old, cur, BaselineOptions{Tolerance: 0})); len(f) > 0 {
		t.Errorf("improvement flagged:\n%s", strings.Join(f, "\n"))
	}
}

// A regression in the tail only (2% of requests ten times slower) leaves the median and
// the rank test alone but fails p99: the spectrum is what catches it.
func TestBaselineTailRegression(t *testing.T) {
	old := runOf(t, 1, baseN, 1, 0)
	vals := lognormal(2, baseN, 2e6, 0.6, 1)
	for i := 0; i < len(vals); i += 50 {
		vals[i] *= 10
	}
	cur := memRun(t, map[string][]opSpec{"v": {{name: "x", values: vals}}}, "v")
	got := byName(CompareBaseline(cur, old, BaselineOptions{Tolerance: 0.10}))
	if c := got["[v] x p99 vs baseline"]; c.Status != results.GateFail {
		t.Errorf("p99: %s", Line(c))
	}
	for _, name := range []string{"[v] x p50 vs baseline", "[v] x distribution vs baseline"} {
		if c := got[name]; c.Status != results.GatePass {
			t.Errorf("%s: %s", name, Line(c))
		}
	}
}

// Percentiles the sample cannot support are SKIP "insufficient sample", never pass/fail.
func TestBaselineInsufficientSample(t *testing.T) {
	old, cur := runOf(t, 1, 3000, 1, 0), runOf(t, 2, 3000, 2, 0)
	got := byName(CompareBaseline(cur, old, BaselineOptions{Tolerance: 0.10}))
	for _, p := range []string{"p99.9", "p99.99"} {
		c := got["[v] x "+p+" vs baseline"]
		if c.Status != results.GateSkip || !strings.Contains(c.Detail, "insufficient sample") || !strings.Contains(c.Detail, "3,000") {
			t.Errorf("%s on 3,000 values: %s", p, Line(c))
		}
	}
	if c := got["[v] x p99 vs baseline"]; c.Status != results.GateFail {
		t.Errorf("p99 on 3,000 values of a ×2 slowdown is judged and fails: %s", Line(c))
	}
	tiny, tiny2 := runOf(t, 1, 10, 1, 0), runOf(t, 2, 10, 5, 0)
	for _, c := range CompareBaseline(tiny2, tiny, BaselineOptions{Tolerance: 0.1}) {
		if c.Metric != "error_rate" && c.Metric != "achieved_ratio" && c.Status != results.GateSkip {
			t.Errorf("10 values: %s", Line(c))
		}
	}
}

func TestBaselineErrorRate(t *testing.T) {
	old := runOf(t, 1, baseN, 1, 50)  // 0.1%
	cur := runOf(t, 2, baseN, 1, 500) // 1%
	if c := byName(CompareBaseline(cur, old, BaselineOptions{Tolerance: 0.1}))["[v] x error_rate vs baseline"]; c.Status != results.GateFail {
		t.Errorf("0.1%% → 1%% errors: %s", Line(c))
	}
	// 0 → 2 errors out of 50,000: above the tolerance, but not evidence.
	old, cur = runOf(t, 1, baseN, 1, 0), runOf(t, 2, baseN, 1, 2)
	if c := byName(CompareBaseline(cur, old, BaselineOptions{Tolerance: 0.1}))["[v] x error_rate vs baseline"]; c.Status != results.GatePass {
		t.Errorf("0 → 2 errors: %s", Line(c))
	}
}

func TestBaselineMissingAndNew(t *testing.T) {
	old := memRun(t, map[string][]opSpec{"v": {{name: "x", values: constant(100, ms(1))}, {name: "y", values: constant(100, ms(1))}}, "gone": {{name: "x", values: constant(100, ms(1))}}}, "v", "gone")
	cur := memRun(t, map[string][]opSpec{"v": {{name: "x", values: constant(100, ms(1))}, {name: "z", values: constant(100, ms(1))}}, "new": {{name: "x", values: constant(100, ms(1))}}}, "v", "new")
	got := byName(CompareBaseline(cur, old, BaselineOptions{Tolerance: 0.1}))
	for name, status := range map[string]string{
		"[v] y operation vs baseline":  results.GateFail,
		"[v] z operation vs baseline":  results.GateSkip,
		"[gone] * variant vs baseline": results.GateFail,
		"[new] * variant vs baseline":  results.GateSkip,
	} {
		if c, ok := got[name]; !ok || c.Status != status {
			t.Errorf("%s: %+v, want %s", name, c, status)
		}
	}
}

func TestBaselineHotspots(t *testing.T) {
	old := hotRun(t)
	cur := hotRun(t)
	cur.Hotspots.Variants[0].Tables[0].Top[0].Ops = 500 // hottest share 30% → 50%
	cur.Hotspots.Variants[0].Nodes[0].Ops = 1200        // imbalance 1.8 → 2.25
	got := byName(CompareBaseline(cur, old, BaselineOptions{Tolerance: 0.1}))
	if c := got["[cass] table:shop.orders_by_period hottest_share vs baseline"]; c.Status != results.GateFail {
		t.Errorf("hottest share: %s", Line(c))
	}
	if c := got["[cass] nodes imbalance vs baseline"]; c.Status != results.GateFail {
		t.Errorf("imbalance: %s", Line(c))
	}
	same := byName(CompareBaseline(hotRun(t), hotRun(t), BaselineOptions{Tolerance: 0.1}))
	for _, c := range same {
		if c.Status == results.GateFail {
			t.Errorf("identical analyses: %s", Line(c))
		}
	}
}
