package gate

import (
	"strings"
	"testing"

	"github.com/shardbench/shardbench/internal/results"
)

// v1 does not serve catalog.read (3,000 offered); v2 serves it.
func coverageRun(t *testing.T) *Run {
	return memRun(t, map[string][]opSpec{
		"v1": {{name: "carts.add_item", values: constant(2000, ms(2))}, {name: "catalog.read", unserved: 3000, reason: "the design keeps the catalog elsewhere"}},
		"v2": {{name: "carts.add_item", values: constant(2000, ms(2))}, {name: "catalog.read", values: constant(3000, ms(4))}},
	}, "v1", "v2")
}

// A rule on an operation the design does not serve is not judged: SKIP with the design's
// reason (--strict fails it). A pattern judges the operations the variant serves, and
// is skipped only when it matches none of them. "all" is the served operations, and says
// so; served_share gates coverage itself.
func TestRulesOnUnservedOperations(t *testing.T) {
	run := coverageRun(t)
	rs := mustRules(t, `
- catalog.read p99 < 10ms
- "catalog.* p99 < 10ms"
- "* p99 < 50ms"
- all error_rate < 1%
- all p50 < 3ms
- all served_share == 1
- catalog.read served_share >= 1
`)
	want := map[string]string{
		"[v1] catalog.read p99 < 10ms":        "skip",
		"[v2] catalog.read p99 < 10ms":        "pass",
		"[v1] catalog.* p99 < 10ms":           "skip",
		"[v2] catalog.read p99 < 10ms #2":     "pass",
		"[v1] carts.add_item p99 < 50ms":      "pass",
		"[v2] carts.add_item p99 < 50ms":      "pass",
		"[v2] catalog.read p99 < 50ms":        "pass",
		"[v1] all error_rate < 1%":            "pass",
		"[v2] all error_rate < 1%":            "pass",
		"[v1] all p50 < 3ms":                  "pass",
		"[v2] all p50 < 3ms":                  "fail", // v2's catalog reads at 4 ms count
		"[v1] all served_share == 1":          "fail",
		"[v2] all served_share == 1":          "pass",
		"[v1] catalog.read served_share >= 1": "fail",
		"[v2] catalog.read served_share >= 1": "pass",
	}
	checks := uniqueNames(Evaluate(rs, run))
	got := byName(checks)
	for name, status := range want {
		if c, ok := got[name]; !ok || c.Status != status {
			t.Errorf("%s: %q, want %s\n%s", name, c.Status, status, statuses(checks))
		}
	}
	if len(checks) != len(want) {
		t.Errorf("%d checks, want %d (no check on v1's catalog.read for the \"*\" pattern)\n%s", len(checks), len(want), statuses(checks))
	}
	skip := got["[v1] catalog.read p99 < 10ms"]
	if skip.ValueText != "not served" || !strings.Contains(skip.Detail, "not served by this design") || !strings.Contains(skip.Detail, "the design keeps the catalog elsewhere") {
		t.Errorf("skip: %+v", skip)
	}
	if d := got["[v1] catalog.* p99 < 10ms"].Detail; !strings.Contains(d, "matches only operations this design does not serve: catalog.read") {
		t.Errorf("pattern skip: %q", d)
	}
	if d := got["[v1] all error_rate < 1%"].Detail; !strings.Contains(d, "served operations only: this design serves 1 of 2 operations, 40% of the offered traffic (not served: catalog.read)") {
		t.Errorf("all on a partial variant: %q", d)
	}
	if d := got["[v2] all p50 < 3ms"].Detail; strings.Contains(d, "served operations only") {
		t.Errorf("all on a full variant: %q", d)
	}
	if v := got["[v1] all served_share == 1"].Value; v != 0.4 {
		t.Errorf("v1 served share %v, want 0.4", v)
	}
	if rep := NewReport("mem", checks, false); rep.Verdict != results.GateFail || rep.Skipped != 2 {
		t.Errorf("report: %+v", rep)
	}
	only := mustRules(t, "- catalog.read p99 < 10ms\n")
	if rep := NewReport("mem", Evaluate(only, run), false); rep.Verdict != results.GatePass {
		t.Errorf("a skipped rule passes without --strict: %+v", rep)
	}
	if rep := NewReport("mem", Evaluate(only, run), true); rep.Verdict != results.GateFail {
		t.Errorf("--strict fails a rule on an unserved operation: %+v", rep)
	}
}

// Against a baseline: an operation served before and not now fails (coverage lost); one
// served now and not before has no baseline; "all" compares the operations both serve.
func TestBaselineCoverage(t *testing.T) {
	full := memRun(t, map[string][]opSpec{"v": {{name: "carts.add_item", values: constant(2000, ms(2))}, {name: "catalog.read", values: constant(3000, ms(40))}}}, "v")
	part := memRun(t, map[string][]opSpec{"v": {{name: "carts.add_item", values: constant(2000, ms(2))}, {name: "catalog.read", unserved: 3000, reason: "elsewhere"}}}, "v")
	cs := CompareBaseline(part, full, BaselineOptions{Tolerance: 0.1})
	m := byName(cs)
	if c := m["[v] catalog.read coverage vs baseline"]; c.Status != results.GateFail || !strings.Contains(c.Detail, "served in the baseline, not served in these results: elsewhere") {
		t.Errorf("lost coverage: %+v\n%s", c, statuses(cs))
	}
	// The totals compare carts.add_item alone in both: the same, so no regression, and
	// the dropped 40 ms catalog reads make no improvement either.
	common := 0
	for _, c := range cs {
		if c.Subject == "all served by both" && c.Metric == "p50" {
			common++
			if c.Status != results.GatePass || c.BaselineValue == nil || *c.BaselineValue != c.Value {
				t.Errorf("totals: %+v", c)
			}
		}
		if c.Subject == "all" {
			t.Errorf("totals of different operations compared: %s", Line(c))
		}
	}
	if common != 1 {
		t.Errorf("%d p50 checks of the operations both serve, want 1\n%s", common, statuses(cs))
	}
	back := byName(CompareBaseline(full, part, BaselineOptions{Tolerance: 0.1}))
	if c := back["[v] catalog.read coverage vs baseline"]; c.Status != results.GateSkip || !strings.Contains(c.Detail, "no baseline") {
		t.Errorf("new coverage: %+v", c)
	}
}
