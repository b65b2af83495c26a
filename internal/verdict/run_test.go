package verdict

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/results"
)

// ops records n operations at ms milliseconds.
func ops(name string, n int, ms float64) results.OpStats {
	s := &metrics.Set{Response: metrics.NewHistogram(), Service: metrics.NewHistogram(), Lag: metrics.NewHistogram()}
	for range n {
		s.Response.RecordValue(int64(ms * 1e6))
		s.Service.RecordValue(int64(ms * 1e6))
		s.Lag.RecordValue(0)
	}
	s.Counters.Completed, s.Counters.OK = int64(n), int64(n)
	return results.FromSet(name, "read", s, 10, 10)
}

// writeRun writes a complete run's summary (and, when slo is not empty, a scenario with
// that slo section) to a new results directory.
func writeRun(t *testing.T, slo string, vs ...results.SummaryVariant) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	d, err := results.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.WriteSummary(&results.Summary{Complete: true, Scenario: results.ScenarioInfo{Name: "s", DurationS: 10}, Variants: vs}); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if slo != "" {
		if err := os.WriteFile(filepath.Join(dir, results.ScenarioFile), []byte("name: s\nslo:\n"+slo), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Without a capacity search, the run itself is one probe at ×1: a design that broke its
// SLO there fails on capacity (a saturated design cannot rank first), overall and for the
// entity whose operations broke it; one that held stays unknown (≥ ×1), its headroom
// unmeasured. An operation the design does not serve is not judged.
func TestRunJudgedByItsSLO(t *testing.T) {
	unserved := results.OpStats{Op: "catalog.product_read", Kind: "read", Unserved: 5000, UnservedReason: "no products table"}
	held := results.SummaryVariant{Name: "held", DurationS: 10, Ops: []results.OpStats{ops("sessions.read", 2000, 2), ops("carts.read", 2000, 3), unserved}}
	broke := results.SummaryVariant{Name: "broke", DurationS: 10, Ops: []results.OpStats{ops("sessions.read", 2000, 2), ops("carts.read", 2000, 230_000), unserved}}
	dir := writeRun(t, "", held, broke)
	v, err := FromDirs(dir, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if v.Overall[0].Variant != "held" || v.Overall[1].Status != results.VerdictFail {
		t.Fatalf("ranking %+v", v.Overall)
	}
	c := v.Overall[1].Criteria[0]
	if c.Name != results.CriterionCapacity || c.Status != results.VerdictFail || c.Text != "< ×1" ||
		!strings.Contains(c.Reason, "carts.read p99 230.0") || !strings.Contains(c.Reason, "(default)") {
		t.Errorf("broke: %+v", c)
	}
	if c := v.Overall[0].Criteria[0]; c.Status != results.VerdictUnknown || c.Text != "≥ ×1" {
		t.Errorf("held: %+v", c)
	}
	for _, e := range v.Entities {
		for _, r := range e.Ranks {
			c := r.Criteria[0]
			wantFail := r.Variant == "broke" && e.Entity == "carts"
			if (c.Status == results.VerdictFail) != wantFail {
				t.Errorf("entity %s, %s: capacity %s (%s)", e.Entity, r.Variant, c.Status, c.Reason)
			}
		}
	}
	if !strings.Contains(strings.Join(v.Sources, "; "), "the run's own SLO checks (default)") {
		t.Errorf("sources %q", v.Sources)
	}

	// The scenario's own slo section replaces the default: here carts may take 5 minutes.
	dir = writeRun(t, "  - \"* p99 < 300s\"\n", held, broke)
	if v, err = FromDirs(dir, "", ""); err != nil {
		t.Fatal(err)
	}
	for _, r := range v.Overall {
		if c := r.Criteria[0]; c.Status != results.VerdictUnknown || !strings.Contains(c.Reason, "(scenario's slo)") {
			t.Errorf("%s under the scenario's slo: %+v", r.Variant, c)
		}
	}
}

// A run that did not finish is no probe: its capacity is unknown, whatever it measured.
func TestUnfinishedRunJudgesNoCapacity(t *testing.T) {
	broke := results.SummaryVariant{Name: "broke", DurationS: 10, Ops: []results.OpStats{ops("carts.read", 2000, 230_000)}}
	s := &results.Summary{Complete: false, Interrupted: "received SIGINT", Variants: []results.SummaryVariant{broke}}
	r, err := JudgeRun(t.TempDir(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := runCapacityCriterion(r, &s.Variants[0], "")
	if c.Status != results.VerdictUnknown || !strings.Contains(c.Reason, "received SIGINT") {
		t.Errorf("%+v", c)
	}
}

// Among designs with as many failures, one whose run held ranks above one whose run broke.
func TestRunThatHeldRanksAboveOneThatBroke(t *testing.T) {
	r := &RunSLO{Source: "default", Failed: map[string][]results.GateCheck{"broke": {{Subject: "carts.read", Metric: "p99", ValueText: "230s", ThresholdText: "< 50ms"}}}}
	broke := results.VerdictRank{Variant: "broke", Status: results.VerdictFail, Criteria: []results.Criterion{
		runCapacityCriterion(r, &results.SummaryVariant{Name: "broke"}, ""),
		{Name: results.CriterionImbalance, Status: results.VerdictPass, Value: 1.1},
	}}
	held := results.VerdictRank{Variant: "held", Status: results.VerdictFail, Criteria: []results.Criterion{
		runCapacityCriterion(r, &results.SummaryVariant{Name: "held"}, ""),
		{Name: results.CriterionImbalance, Status: results.VerdictFail, Value: 3},
	}}
	if got := rank([]results.VerdictRank{broke, held}); got[0].Variant != "held" || got[1].Rank != 2 {
		t.Errorf("ranks %s #%d, %s #%d", got[0].Variant, got[0].Rank, got[1].Variant, got[1].Rank)
	}
}

// A capacity claim without a capacity search: the run decides it when its own peak does.
func TestPeakRateClaimFromTheRun(t *testing.T) {
	r := &RunSLO{Source: "default", PeakRate: 100_000, Failed: map[string][]results.GateCheck{"broke": {{Subject: "carts.read"}}}}
	for _, c := range []struct {
		variant string
		want    float64
		status  string
	}{
		{"held", 100_000, results.GatePass},  // held at 100K: ready for 100K
		{"held", 150_000, results.GateSkip},  // held at 100K says nothing of 150K
		{"broke", 100_000, results.GateFail}, // broke at 100K: not ready for it
		{"broke", 50_000, results.GateSkip},  // broke at 100K says nothing of 50K
	} {
		ch := peakRateCheck(nil, r, c.variant, c.want)
		if ch.Status != c.status {
			t.Errorf("%s, claim %g: %s (%s %s), want %s", c.variant, c.want, ch.Status, ch.Value, ch.Detail, c.status)
		}
	}
	unfinished := &RunSLO{PeakRate: 100_000, Unfinished: "received SIGINT"}
	if ch := peakRateCheck(nil, unfinished, "held", 100_000); ch.Status != results.GateSkip {
		t.Errorf("an unfinished run decided a claim: %+v", ch)
	}
}
