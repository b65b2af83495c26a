package verdict

import (
	"cmp"
	"fmt"
	"path/filepath"

	"github.com/shardbench/shardbench/internal/capacity"
	"github.com/shardbench/shardbench/internal/gate"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/scenario"
)

// RunSLO is what a run says of capacity without a capacity search. The run is one probe
// at ×1 of the scenario as run, and each variant's served operations are judged by the
// SLO a capacity search would hold them to: the scenario's slo section, or capacity's
// default. A variant that broke it there sustains less than ×1. One that held has some
// headroom, and only a search can say how much.
type RunSLO struct {
	Source string // "default" or "scenario's slo"
	// Failed lists, by variant, the checks that failed (none: it held).
	Failed map[string][]results.GateCheck
	// Unfinished says why the run did not finish ("": it did): a run stopped early is no
	// probe, so nothing is judged.
	Unfinished string
	// PeakRate is the peak offered rate of the scenario as run, in ops/s (0: unknown).
	PeakRate float64
}

// JudgeRun judges a run's results directory by the scenario's SLO (capacity.DefaultSLO
// when the scenario has none), on the operations each variant serves, as
// capacity.Judge judges a probe. Unlike capacity.Judge, it writes nothing.
func JudgeRun(dir string, s *results.Summary, hot *results.Hotspots) (*RunSLO, error) {
	if !s.Complete {
		return &RunSLO{Unfinished: cmp.Or(s.Interrupted, "summary.json is not marked complete")}, nil
	}
	rs, err := gate.ScenarioRules(dir)
	if err != nil {
		return nil, err
	}
	var slo *capacity.SLO
	source := "default"
	if rs != nil && len(rs.Rules) > 0 {
		slo, source = capacity.RulesSLO(rs), "scenario's slo"
	} else if slo, err = capacity.DefaultSLO(capacity.Defaults); err != nil {
		return nil, err
	}
	view, err := capacity.ServedView(s, servedIn(s))
	if err != nil {
		return nil, err
	}
	run := &gate.Run{Dir: dir, Summary: view, Hotspots: hot}
	out := &RunSLO{Source: source, Failed: map[string][]results.GateCheck{}}
	if sc, err := scenario.ReadFile(filepath.Join(dir, results.ScenarioFile)); err == nil {
		out.PeakRate = sc.PeakRate() // a directory without it (or an older one) leaves 0
	}
	for _, c := range gate.Evaluate(slo.Rules, run) {
		if c.Status != results.GateFail || c.ValueText == gate.Absent {
			continue // passed, skipped, or nothing measured
		}
		for _, v := range s.Variants {
			if c.Variant == v.Name || c.Variant == "" {
				out.Failed[v.Name] = append(out.Failed[v.Name], c)
			}
		}
	}
	return out, nil
}

// servedIn says from the summary which operations each variant's design serves.
func servedIn(s *results.Summary) capacity.Served {
	return func(variant, op string) bool {
		v := s.Variant(variant)
		if v == nil {
			return false
		}
		o := v.Op(op)
		return o != nil && o.Served()
	}
}

// runCapacityCriterion is the capacity criterion from the run alone: failed when the run
// broke the SLO (on the entity's operations, for an entity), unknown with what held
// otherwise.
func runCapacityCriterion(r *RunSLO, sv *results.SummaryVariant, entity string) results.Criterion {
	const name = results.CriterionCapacity
	if r.Unfinished != "" {
		return unknown(name, "the run did not finish ("+r.Unfinished+"), so it is no measure of capacity; no capacity search was given (shardbench capacity)")
	}
	var failed []results.GateCheck
	for _, c := range r.Failed[sv.Name] {
		if entity == "" || entityOfOp(c.Subject) == entity {
			failed = append(failed, c)
		}
	}
	if len(failed) == 0 {
		cr := unknown(name, fmt.Sprintf("held its SLO (%s) at this run's load; shardbench capacity finds how far above it breaks", r.Source))
		if len(r.Failed[sv.Name]) > 0 {
			cr.Reason = fmt.Sprintf("its operations held their SLO checks (%s) at this run's load, though other operations did not; shardbench capacity finds where they break", r.Source)
		}
		cr.Text, cr.Value = "≥ ×1", 1 // ranks above a design that broke
		return cr
	}
	c := failed[0]
	why := fmt.Sprintf("%s %s %s (%s)", c.Subject, c.Metric, c.ValueText, c.ThresholdText)
	if len(failed) > 1 {
		why += fmt.Sprintf(", and %d more check(s) failed", len(failed)-1)
	}
	return results.Criterion{Name: name, Status: results.VerdictFail, Text: "< ×1", Evidence: results.SummaryFile, Anchor: "overview",
		Reason: fmt.Sprintf("broke its SLO (%s) at this run's own load: %s; shardbench capacity finds where it breaks", r.Source, why)}
}
