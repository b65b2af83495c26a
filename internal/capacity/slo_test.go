package capacity

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/gate"
	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/results"
)

func TestDefaultSLORules(t *testing.T) {
	s, err := DefaultSLO(DefaultBounds{P99: 20 * time.Millisecond, ErrorRate: 0.002, Achieved: 0.95})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"* p99 < 20ms", "all error_rate < 0.2%", "all achieved_ratio >= 0.95", "all dropped_share == 0"}
	got := s.Texts()
	if len(got) != len(want) || s.P99Bound != 20*time.Millisecond || s.Source != "default" {
		t.Fatalf("rules %q bound %v", got, s.P99Bound)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("rule %d: %q, want %q", i, got[i], want[i])
		}
	}
	if _, err := DefaultSLO(DefaultBounds{P99: 0, ErrorRate: 0.1, Achieved: 1}); err == nil {
		t.Error("a zero p99 bound accepted")
	}
	// A rules file: the curve's bound is its tightest p99 on every operation.
	rs, err := gate.ParseBytes("r.yaml", []byte("slo:\n  - \"* p99 < 80ms\"\n  - \"all p99 <= 30ms\"\n  - carts.read p99 < 5ms\n  - \"*@x p99 < 1ms\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if b := RulesSLO(rs).P99Bound; b != 30*time.Millisecond {
		t.Errorf("bound %v, want 30ms (the per-operation and per-variant rules are not for every operation)", b)
	}
}

// set records n operations at ms milliseconds, errs of them failed with class.
func set(n int, ms float64, class metrics.Class, errs int64) *metrics.Set {
	s := &metrics.Set{Response: metrics.NewHistogram(), Service: metrics.NewHistogram(), Lag: metrics.NewHistogram()}
	for i := 0; i < n; i++ {
		v := int64(ms * 1e6)
		s.Response.RecordValue(v)
		s.Service.RecordValue(v)
		s.Lag.RecordValue(1000)
	}
	s.Counters.Completed = int64(n)
	s.Counters.OK = int64(n) - errs
	s.Counters.Errors[class] = errs
	return s
}

// The served view leaves out what a design does not serve (by its plan, or every
// completion refused as not_supported), takes refused requests out of a served
// operation's counts, and recomputes the totals from what is left.
func TestServedView(t *testing.T) {
	read := results.FromSet("carts.read", "read", set(1000, 2, metrics.Timeout, 3), 10, 10)
	unserved := results.FromSet("views.append", "write", set(4000, 0.001, metrics.NotSupported, 4000), 10, 10)
	planned := results.FromSet("sessions.read", "read", set(2000, 0.001, metrics.OK, 0), 10, 10)
	mixed := results.FromSet("orders.place", "write", set(500, 40, metrics.NotSupported, 100), 10, 10)
	sum := &results.Summary{Scenario: results.ScenarioInfo{DurationS: 10}, Variants: []results.SummaryVariant{{Name: "v", DurationS: 10,
		Ops: []results.OpStats{read, unserved, planned, mixed}}}}
	view, err := ServedView(sum, func(v, op string) bool { return op != "sessions.read" })
	if err != nil {
		t.Fatal(err)
	}
	v := view.Variants[0]
	if len(v.Ops) != 2 || v.Ops[0].Op != "carts.read" || v.Ops[1].Op != "orders.place" {
		t.Fatalf("ops %+v", v.Ops)
	}
	if o := v.Ops[1]; o.Scheduled != 400 || o.Completed != 400 || o.Errors["not_supported"] != 0 || o.ErrorRate != 0 {
		t.Errorf("orders.place: %+v", o)
	}
	tot := v.Totals
	if tot.Scheduled != 1400 || tot.Errors["timeout"] != 3 || math.Abs(tot.ErrorRate-3.0/1400) > 1e-12 || tot.Errors["not_supported"] != 0 {
		t.Errorf("totals %+v", tot)
	}
	if tot.Response.P99 < 39 || tot.Response.Count != 1500 {
		t.Errorf("totals response %+v: the served operations' histograms merged", tot.Response)
	}
	if math.Abs(tot.TargetRate-140) > 1e-9 || math.Abs(tot.AchievedRate-140) > 1e-9 {
		t.Errorf("totals rates %g/%g, want 140/s", tot.TargetRate, tot.AchievedRate)
	}
	if sum.Variants[0].Ops[3].Scheduled != 500 {
		t.Error("ServedView changed the summary it was given")
	}
}

// An operation counted unserved (summary v2: offered, never sent) stays in the view
// outside the totals, so a rule naming it is skipped as not served instead of failing as
// an operation never recorded.
func TestServedViewKeepsUnservedRows(t *testing.T) {
	read := results.FromSet("catalog.product_read", "read", set(1000, 2, metrics.OK, 0), 10, 10)
	popular := results.OpStats{Op: "catalog.popular", Kind: "read", Unserved: 600, UnservedReason: "no popularity data"}
	sum := &results.Summary{Scenario: results.ScenarioInfo{DurationS: 10}, Variants: []results.SummaryVariant{{Name: "v", DurationS: 10,
		Ops: []results.OpStats{read, popular}}}}
	view, err := ServedView(sum, func(v, op string) bool { return op != "catalog.popular" })
	if err != nil {
		t.Fatal(err)
	}
	v := view.Variants[0]
	if len(v.Ops) != 2 || v.Totals.Scheduled != 1000 {
		t.Fatalf("ops %+v, totals scheduled %d", v.Ops, v.Totals.Scheduled)
	}
	rs, err := gate.ParseBytes("r.yaml", []byte("slo:\n  - catalog.popular p99 < 50ms\n"))
	if err != nil {
		t.Fatal(err)
	}
	checks := gate.Evaluate(rs, &gate.Run{Summary: view})
	if len(checks) != 1 || checks[0].Status != results.GateSkip {
		t.Errorf("a rule on the unserved operation: %+v", checks)
	}
}

func TestRoundMultiple(t *testing.T) {
	for in, want := range map[float64]float64{11.3137085: 11.31, 0.0707106: 0.07071, 1: 1, 2.5: 2.5, 181.0193: 181.0} {
		if got := roundMultiple(in); math.Abs(got-want) > 1e-9*want {
			t.Errorf("roundMultiple(%g) = %g, want %g", in, got, want)
		}
	}
}

// Judge holds each variant to the rules on what it serves, per workload too, and leaves
// the checks in the step's gate.json.
func TestJudge(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "step")
	d, err := results.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	v := results.SummaryVariant{Name: "v", DurationS: 10, Ops: []results.OpStats{
		results.FromSet("carts.read", "read", set(2000, 100, metrics.OK, 0), 10, 10),
		results.FromSet("sessions.read", "read", set(2000, 2, metrics.OK, 0), 10, 10),
		results.FromSet("views.append", "write", set(2000, 0.001, metrics.NotSupported, 2000), 10, 10),
	}}
	sum := &results.Summary{Complete: true, Scenario: results.ScenarioInfo{DurationS: 10}, Variants: []results.SummaryVariant{v}}
	if err := d.WriteSummary(sum); err != nil {
		t.Fatal(err)
	}
	d.Close()
	slo, err := DefaultSLO(Defaults)
	if err != nil {
		t.Fatal(err)
	}
	vds, err := Judge(dir, slo, func(_, op string) bool { return op != "views.append" }, 0, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	vd := vds["v"]
	if vd.Pass || len(vd.Failed) != 1 || vd.Failed[0].Subject != "carts.read" || vd.WorstOp != "carts.read" || vd.WorstP99Ms < 99 {
		t.Errorf("verdict %+v", vd)
	}
	if c, s := vd.Workloads["carts"], vd.Workloads["sessions"]; c.Pass || !s.Pass || s.P99Ms > 3 || len(vd.Workloads) != 2 {
		t.Errorf("workloads %+v", vd.Workloads)
	}
	g, err := results.ReadGate(dir)
	if err != nil || g == nil || g.Failed != 1 || !strings.Contains(g.Sources[0], "each design serves") {
		t.Errorf("gate.json %+v: %v", g, err)
	}
}
