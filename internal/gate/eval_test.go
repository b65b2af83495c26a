package gate

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/results"
)

func ms(v float64) int64 { return int64(v * float64(time.Millisecond)) }

// 2,000 values: 1,970 at about 2 ms and 30 (1.5%) at about 30 ms; 10 errors (0.5%).
func sampleRun(t *testing.T) *Run {
	vals := append(constant(1970, ms(2)), constant(30, ms(30))...)
	return memRun(t, map[string][]opSpec{
		"v1": {{name: "carts.add_item", values: vals, errors: 10, late: 40}, {name: "carts.view", values: constant(2000, ms(1))}},
		"v2": {{name: "carts.add_item", values: constant(2000, ms(20))}},
	}, "v1", "v2")
}

func TestThresholdsPassFailAndTie(t *testing.T) {
	run := sampleRun(t)
	h, _ := run.Summary.Variants[0].Ops[0].Response.DecodeHistogram()
	p99 := h.ValueAtPercentile(99) // the recorded p99 in ns, for exact ties
	p98 := h.ValueAtPercentile(98)
	rs := mustRules(t, fmt.Sprintf(`
- carts.add_item@v1 p98 < 15ms
- carts.add_item@v1 p99 < 15ms
- carts.add_item@v1 p99 < %[1]dns
- carts.add_item@v1 p99 <= %[1]dns
- carts.add_item@v1 p98 >= %[2]dns
- carts.add_item@v1 p98 > %[2]dns
- carts.add_item@v1 error_rate < 0.5%%
- carts.add_item@v1 error_rate <= 0.5%%
- carts.add_item@v1 error_rate == 0.005
- carts.add_item@v1 late_share <= 2%%
- carts.add_item@v1 error_rate.server < 1%%
- carts.add_item@v1 error_rate.timeout == 0
- carts.add_item@v1 count >= 2k
- carts.add_item@v1 achieved_ratio >= 1
`, p99, p98))
	got := Evaluate(rs, run)
	want := []string{
		"pass", // p98 ≈ 2 ms < 15 ms
		"fail", // p99 ≈ 30 ms
		"fail", // tie under <: fails
		"pass", // tie under <=: passes
		"pass", // tie under >=
		"fail", // tie under >
		"fail", // 10/2000 = 0.5% exactly: < fails
		"pass", // <= passes
		"pass",
		"pass",
		"pass",
		"pass",
		"pass",
		"pass",
	}
	if len(got) != len(want) {
		t.Fatalf("got %d checks:\n%s", len(got), statuses(got))
	}
	for i, w := range want {
		if got[i].Status != w {
			t.Errorf("check %d: %s, want %s", i, Line(got[i]), w)
		}
	}
	c := got[1]
	if c.Variant != "v1" || c.Subject != "carts.add_item" || c.Metric != "p99" || c.Unit != "ms" || c.Threshold != 15 || c.Value < 29.9 || c.Value > 30.1 ||
		c.ValueText == "" || c.ThresholdText != "< 15ms" || c.Source != "gate.yaml:3:3" || c.Kind != results.GateThreshold {
		t.Errorf("check fields: %+v", c)
	}
	if !strings.HasPrefix(Line(c), "FAIL  [v1] carts.add_item p99 < 15ms: 30.") || !strings.Contains(Line(c), "(threshold < 15ms)") {
		t.Errorf("line: %s", Line(c))
	}
}

func TestPatternsExpandPerOperationAndVariant(t *testing.T) {
	run := sampleRun(t)
	got := Evaluate(mustRules(t, `- "carts.* p50 < 10ms"`+"\n- all p50 < 10ms\n"), run)
	names := byName(got)
	for name, status := range map[string]string{
		"[v1] carts.add_item p50 < 10ms": "pass",
		"[v1] carts.view p50 < 10ms":     "pass",
		"[v2] carts.add_item p50 < 10ms": "fail",
		"[v1] all p50 < 10ms":            "pass",
		"[v2] all p50 < 10ms":            "fail",
	} {
		if c, ok := names[name]; !ok || c.Status != status {
			t.Errorf("%s: got %+v, want %s\n%s", name, c, status, statuses(got))
		}
	}
	if len(got) != 5 {
		t.Errorf("want 5 checks, got:\n%s", statuses(got))
	}
}

// A name the results do not hold fails, naming what is there.
func TestAbsentSubjectsFailLoudly(t *testing.T) {
	run := sampleRun(t)
	got := Evaluate(mustRules(t, `
- carts.add_itme p99 < 15ms
- orders.* p99 < 15ms
- carts.view@nosuch p99 < 15ms
- table:orders hottest_share < 30%
- nodes imbalance < 1.3
`), run)
	checks := map[string]string{
		"[v1] carts.add_itme p99 < 15ms":        `operation "carts.add_itme" was not recorded in variant v1 (did you mean "carts.add_item"?)`,
		"[v2] orders.* p99 < 15ms":              `pattern "orders.*" matches no operation recorded in variant v2 (recorded: carts.add_item)`,
		"[nosuch] carts.view@nosuch p99 < 15ms": `no variant matches "nosuch" (variants: v1, v2)`,
		"[v1] table:orders hottest_share < 30%": "the results have no hotspots.json",
		"[v2] nodes imbalance < 1.3":            "no per-node or per-shard load recorded",
	}
	names := byName(got)
	for name, detail := range checks {
		c, ok := names[name]
		if !ok || c.Status != results.GateFail || !strings.Contains(c.Detail, detail) || c.ValueText != "absent" {
			t.Errorf("%s: %+v\nwant FAIL with %q\nall:\n%s", name, c, detail, statuses(got))
		}
	}
	for _, c := range got {
		if c.Status != results.GateFail {
			t.Errorf("every check of an absent subject must fail: %s", Line(c))
		}
	}
	// An operation whose every call was dropped has no latency to judge: fail.
	dropped := memRun(t, map[string][]opSpec{"v": {{name: "x", dropped: 50}}}, "v")
	c := Evaluate(mustRules(t, "- x p50 < 1s\n- x dropped_share <= 0.5\n"), dropped)
	if c[0].Status != results.GateFail || !strings.Contains(c[0].Detail, "no completed operations") || c[1].Status != results.GateFail {
		t.Errorf("all dropped: %s", statuses(c))
	}
}

func TestInsufficientSample(t *testing.T) {
	// 5,000 values: p99 is judged (needs 1,000), p99.9 is not (needs 10,000).
	run := memRun(t, map[string][]opSpec{"v": {{name: "x", values: lognormal(1, 5000, 2e6, 0.5, 1)}}}, "v")
	got := Evaluate(mustRules(t, "- x p99 < 1s\n- x p99.9 < 1s\n- x p99.99 <= 1s\n- x max < 1s\n"), run)
	if got[0].Status != results.GatePass || got[3].Status != results.GatePass {
		t.Errorf("judged checks:\n%s", statuses(got))
	}
	for _, c := range got[1:3] {
		if c.Status != results.GateSkip || !strings.Contains(c.Detail, "insufficient sample: 5,000 values") {
			t.Errorf("want SKIP insufficient sample: %s", Line(c))
		}
	}
	if !strings.Contains(got[1].Detail, "p99.9 needs at least 10,000") || !strings.Contains(got[2].Detail, "p99.99 needs at least 100,000") {
		t.Errorf("details: %s / %s", got[1].Detail, got[2].Detail)
	}

	// A small sample can still prove a violation: 5% of 5,000 values beyond the
	// threshold of a p99.9 rule cannot be a 0.1% tail.
	bad := memRun(t, map[string][]opSpec{"v": {{name: "x", values: append(constant(4750, ms(2)), constant(250, ms(80))...)}}}, "v")
	got = Evaluate(mustRules(t, "- x p99.9 < 50ms\n- x p99.9 < 100ms\n"), bad)
	if got[0].Status != results.GateFail || !strings.Contains(got[0].Detail, "fails even on a small sample: 250 of 5,000 values") {
		t.Errorf("small-sample violation: %s", Line(got[0]))
	}
	if got[1].Status != results.GateSkip {
		t.Errorf("nothing beyond 100ms: must not be judged: %s", Line(got[1]))
	}
	// Six values beyond it out of 5,000 (expected 5 if the SLO just held): not proof.
	edge := memRun(t, map[string][]opSpec{"v": {{name: "x", values: append(constant(4994, ms(2)), constant(6, ms(80))...)}}}, "v")
	if c := Evaluate(mustRules(t, "- x p99.9 < 50ms\n"), edge)[0]; c.Status != results.GateSkip {
		t.Errorf("6 of 5,000 beyond: %s", Line(c))
	}
}

func hotRun(t *testing.T) *Run {
	run := memRun(t, map[string][]opSpec{"cass": {{name: "orders.place", values: constant(100, ms(1))}}}, "cass")
	run.Hotspots = &results.Hotspots{Variants: []results.HotspotsVariant{{
		Variant: "cass",
		Tables: []results.TableHotspots{{
			Table: "shop.orders_by_period", Entity: "orders", Ops: 1000,
			Top: []results.PartitionLoad{{Key: "time_bucket='2025-11-28'", Ops: 300, Share: 0.3}, {Key: "b", Ops: 100, Share: 0.1}},
			Projections: []results.SizeProjection{
				{Key: "time_bucket='2025-11-28'", ProjectedBytes: 250e6, ProjectedRows: 2e6, LimitBytes: 100e6, Exceeds: true, Horizon: "end of day bucket"},
				{Key: "b", ProjectedBytes: 20e6, ProjectedRows: 1e5, LimitBytes: 100e6},
			},
		}},
		Nodes: []results.NodeLoad{{Node: "n1", Ops: 600}, {Node: "n2", Ops: 200}, {Node: "n3", Ops: 200}},
	}}}
	return run
}

func TestHotspotThresholds(t *testing.T) {
	got := Evaluate(mustRules(t, `
- table:orders_by_period hottest_share < 30%
- table:orders_by_period hottest_share <= 30%
- table:orders partition_size < 100MB
- table:* partition_rows <= 2M
- table:shop.* over_limit == 0
- nodes imbalance < 1.3
- nodes imbalance <= 1.8
- nodes over_30pct == 3
- nodes max_share == 0.6
- nodes gini < 0.5
`), hotRun(t))
	want := []string{"fail", "pass", "fail", "pass", "fail", "fail", "pass", "pass", "pass", "pass"}
	if len(got) != len(want) {
		t.Fatalf("checks:\n%s", statuses(got))
	}
	for i, w := range want {
		if got[i].Status != w {
			t.Errorf("check %d: %s, want %s", i, Line(got[i]), w)
		}
	}
	if got[2].ValueText != "250MB" || got[2].Subject != "table:shop.orders_by_period" || !strings.Contains(got[2].Detail, "time_bucket='2025-11-28'") {
		t.Errorf("size check: %+v", got[2])
	}
	if got[5].Value < 1.79 || got[5].Value > 1.81 {
		t.Errorf("imbalance max/mean = %g, want 1.8", got[5].Value)
	}
}

func TestBalance(t *testing.T) {
	b := Balance([]float64{600, 200, 200})
	if b.MaxOverMean < 1.7999 || b.MaxOverMean > 1.8001 {
		t.Errorf("max/mean %g", b.MaxOverMean)
	}
	// Gini of (200, 200, 600): sum_i (2i-n-1) x_i / (n sum) = (-2·200 + 0 + 2·600)/(3·1000)
	if g := b.Gini; g < 0.2666 || g > 0.2667 {
		t.Errorf("gini %g, want 0.2667", g)
	}
	if e := Balance([]float64{5, 5, 5, 5}); e.MaxOverMean != 1 || e.CV != 0 || e.Gini != 0 {
		t.Errorf("even load: %+v", e)
	}
}

func TestIncompleteRunFails(t *testing.T) {
	run := sampleRun(t)
	if cs := Completeness(run); len(cs) != 1 || cs[0].Status != results.GateFail {
		t.Errorf("a summary not marked complete: %v", cs)
	}
	run.Summary.Complete = true
	if cs := Completeness(run); len(cs) != 0 {
		t.Errorf("complete: %v", cs)
	}
	run.Summary.Complete, run.Summary.Interrupted = false, "received SIGTERM"
	if cs := Completeness(run); len(cs) != 1 || !strings.Contains(cs[0].Detail, "received SIGTERM") {
		t.Errorf("interrupted: %v", cs)
	}
}
