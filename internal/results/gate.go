package results

import (
	"time"

	"github.com/shardbench/shardbench/internal/inputfile"
)

// GateFile holds the verdict of the last `shardbench gate` (or `run --gate`) on a results
// directory: one entry per check, in the order they were printed. Reports render it in
// their verdict section; CI reads the exit code or the JUnit file instead.
const GateFile = "gate.json"

// GateSchema identifies gate.json.
const GateSchema = "shardbench/gate"

// Check statuses.
const (
	GatePass = "pass"
	GateFail = "fail"
	GateSkip = "skip" // not judged: insufficient sample, or nothing to compare with
)

// Check kinds.
const (
	GateThreshold = "threshold" // a rule from an slo section or a --gate file
	GateBaseline  = "baseline"  // a comparison with an older results directory
)

// GateReport is gate.json.
type GateReport struct {
	Schema  string `json:"schema"`
	Version int    `json:"version"`
	// Results is the directory that was gated, Baseline the one it was compared with.
	Results  string `json:"results"`
	Baseline string `json:"baseline,omitempty"`
	// Tolerance is the relative regression allowed against the baseline (0.1 = 10%).
	Tolerance float64 `json:"tolerance,omitempty"`
	// Sources are where the threshold rules came from ("scenario.yaml (slo)", a --gate file).
	Sources     []string  `json:"sources,omitempty"`
	EvaluatedAt time.Time `json:"evaluated_at"`
	// Strict: skipped checks count as failures.
	Strict bool `json:"strict,omitempty"`
	// Verdict is "pass" when no check failed (and, when Strict, none was skipped).
	Verdict string      `json:"verdict"`
	Passed  int         `json:"passed"`
	Failed  int         `json:"failed"`
	Skipped int         `json:"skipped"`
	Checks  []GateCheck `json:"checks"`
}

// GateCheck is one evaluated check.
type GateCheck struct {
	// Name is unique within the report and reads as the check, e.g.
	// "[cassandra-by-user] carts.add_item p99 < 15ms".
	Name    string `json:"name"`
	Kind    string `json:"kind"`    // threshold | baseline
	Variant string `json:"variant"` // the variant checked ("" when none matched)
	// Subject is the operation ("all" = the variant's totals), "table:<name>" or "nodes".
	Subject string `json:"subject"`
	Metric  string `json:"metric"` // e.g. p99, service.p99.9, error_rate, hottest_share
	Status  string `json:"status"` // pass | fail | skip
	// Value is what was measured and Threshold what it was compared with, in Unit
	// (ms for latencies, "ratio" for shares and rates as fractions, bytes, rows, count, ops/s).
	// For baseline checks Threshold is the baseline's value stretched by the tolerance.
	Value      float64 `json:"value"`
	Comparator string  `json:"comparator,omitempty"` // < <= > >= ==
	Threshold  float64 `json:"threshold"`
	Unit       string  `json:"unit"`
	// BaselineValue is the old run's value (baseline checks only).
	BaselineValue *float64 `json:"baseline_value,omitempty"`
	// ValueText and ThresholdText are the same figures formatted for people ("12.3ms",
	// "< 15ms", "0.12%").
	ValueText     string `json:"value_text"`
	ThresholdText string `json:"threshold_text"`
	// Detail explains the verdict: the sample size when skipped, confidence intervals and
	// the test's p-value for baselines, what was missing when a subject was absent.
	Detail string `json:"detail,omitempty"`
	// Rule is the rule as written and Source where (file:line:col); empty for baselines.
	Rule   string `json:"rule,omitempty"`
	Source string `json:"source,omitempty"`
}

// Tally recounts Passed, Failed, Skipped and the Verdict from the checks.
func (r *GateReport) Tally() {
	r.Passed, r.Failed, r.Skipped = 0, 0, 0
	for _, c := range r.Checks {
		switch c.Status {
		case GatePass:
			r.Passed++
		case GateFail:
			r.Failed++
		default:
			r.Skipped++
		}
	}
	r.Verdict = GatePass
	if r.Failed > 0 || (r.Strict && r.Skipped > 0) {
		r.Verdict = GateFail
	}
}

// WriteGate writes gate.json atomically.
func (d *Dir) WriteGate(r *GateReport) error {
	r.Schema, r.Version = GateSchema, 1
	return d.WriteJSON(GateFile, r)
}

// ReadGate loads gate.json; it returns (nil, nil) when the directory was never gated.
func ReadGate(dir string) (*GateReport, error) { return readDoc[GateReport](dir, gateDoc) }

var gateDoc = docKind{file: GateFile, schema: GateSchema, input: inputfile.Report}
