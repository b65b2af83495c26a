package results

import "github.com/shardbench/shardbench/internal/inputfile"

// VerdictFile holds the verdict of a run: the designs ranked for the scenario, overall
// and per entity, on every criterion the results measure, and each seed claim the
// scenario exercises, confirmed or refuted with the measured figure. The report opens
// with it and `run` prints it. The rules are in docs/verdict.md.
const VerdictFile = "verdict.json"

// VerdictSchema identifies verdict.json.
const VerdictSchema = "shardbench/verdict"

// VerdictVersion changes when a reader would misread the file.
const VerdictVersion = 1

// Criterion statuses, best first.
const (
	VerdictPass    = "pass"    // within the rule's good range
	VerdictWarn    = "warn"    // a caution: within the rule's caution range
	VerdictFail    = "fail"    // outside it: this design does not hold here
	VerdictUnknown = "unknown" // not measured (no capacity.json, no analysis.json, a table the run never touched)
)

// Criterion names, in the order a verdict weighs them.
const (
	CriterionCapacity  = "capacity"       // the largest multiple of the load within the SLO
	CriterionSize      = "partition_size" // largest projected partition against its limit
	CriterionHotShare  = "hottest_share"  // the heaviest partition's share of its table
	CriterionImbalance = "imbalance"      // busiest node or shard against the mean
	CriterionKeys      = "key_analysis"   // the key analysis's verdict (good, caution, avoid)
	CriterionCoverage  = "coverage"       // the share of the offered traffic the design serves
)

// Claim statuses.
const (
	ClaimConfirmed = "confirmed" // every check of the claim passed
	ClaimRefuted   = "refuted"   // at least one failed
	ClaimUntested  = "untested"  // a check could not be judged (small sample, no capacity search)
)

// Verdict is verdict.json.
type Verdict struct {
	Schema   string `json:"schema"`
	Version  int    `json:"version"`
	Scenario string `json:"scenario"`
	// Sources names the files the verdict read, each with its directory (relative to
	// the run when inside it); Missing the inputs it had none of, with what gives them.
	Sources []string `json:"sources"`
	Missing []string `json:"missing,omitempty"`
	// Overall ranks every variant on all its criteria; Entities ranks the variants that
	// serve each entity on that entity's tables and operations.
	Overall  []VerdictRank   `json:"overall"`
	Entities []EntityVerdict `json:"entities"`
	// Claims are the seed claims the scenario exercises.
	Claims []ClaimVerdict `json:"claims,omitempty"`
}

// EntityVerdict ranks the variants for one entity (sessions, carts, views, orders,
// products).
type EntityVerdict struct {
	Entity string        `json:"entity"`
	Ranks  []VerdictRank `json:"ranks"`
	// NotServed lists the variants whose designs do not serve the entity.
	NotServed []string `json:"not_served,omitempty"`
}

// VerdictRank is one variant's place: its status (the worst of its criteria), the reason
// in one line (the worst criterion's), and every criterion.
type VerdictRank struct {
	Rank     int         `json:"rank"`
	Variant  string      `json:"variant"`
	Status   string      `json:"status"`
	Reason   string      `json:"reason"`
	Criteria []Criterion `json:"criteria"`
}

// Criterion is one figure a verdict weighs: its value in numbers and words, its status
// under the documented rule, the reason in one line, and where the evidence is (a file
// and, for the report, the section's anchor).
type Criterion struct {
	Name   string  `json:"name"`
	Status string  `json:"status"`
	Value  float64 `json:"value"`
	Text   string  `json:"text"`
	Reason string  `json:"reason"`
	// Evidence is the file the figure is read from; Anchor the report section showing it.
	Evidence string `json:"evidence,omitempty"`
	Anchor   string `json:"anchor,omitempty"`
}

// ClaimVerdict is one seed claim under test.
type ClaimVerdict struct {
	ID     string `json:"id"`
	Seed   string `json:"seed"`
	Claim  string `json:"claim"`
	Status string `json:"status"`
	// Measured is the figures in words ("busiest bucket 4.5% of sessions; busiest node
	// 1.09× the mean"); Checks the checks behind them, per variant.
	Measured string       `json:"measured"`
	Checks   []ClaimCheck `json:"checks"`
	Variants []string     `json:"variants"`
	Anchor   string       `json:"anchor,omitempty"`
}

// ClaimCheck is one judged check of a claim.
type ClaimCheck struct {
	Variant   string `json:"variant"`
	Check     string `json:"check"`
	Status    string `json:"status"` // pass | fail | skip
	Value     string `json:"value"`
	Threshold string `json:"threshold"`
	Detail    string `json:"detail,omitempty"`
}

// Criterion returns the named criterion of a rank, or nil.
func (r *VerdictRank) Criterion(name string) *Criterion {
	for i := range r.Criteria {
		if r.Criteria[i].Name == name {
			return &r.Criteria[i]
		}
	}
	return nil
}

// ReadVerdict loads verdict.json; it returns (nil, nil) when the directory has none.
func ReadVerdict(dir string) (*Verdict, error) { return readDoc[Verdict](dir, verdictDoc) }

var verdictDoc = docKind{file: VerdictFile, schema: VerdictSchema, version: VerdictVersion, input: inputfile.Report}

// WriteVerdict writes verdict.json atomically.
func (d *Dir) WriteVerdict(v *Verdict) error {
	v.Schema, v.Version = VerdictSchema, VerdictVersion
	return d.WriteJSON(VerdictFile, v)
}
