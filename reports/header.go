package reports

import (
	"fmt"
	"sort"
	"strings"

	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/units"
)

// The top of the page: title, subtitle, banners (what kind of results, interruptions,
// unreadable files) and the SLO gates' verdicts (gate.json).

func (r *renderer) titles(pg *page) {
	kinds := map[string]bool{}
	for _, run := range r.runs {
		kinds[run.Kind] = true
	}
	first := r.runs[0]
	switch {
	case r.compare:
		pg.KindLabel = "comparison report"
	case first.Kind == KindPlan && first.Hot == nil && first.Analysis != nil:
		pg.KindLabel = "key analysis report"
	case first.Kind == KindPlan:
		pg.KindLabel = "placement plan report"
	case first.Kind == KindSimulated:
		pg.KindLabel = "simulated run report"
	default:
		pg.KindLabel = "real run report"
	}
	if r.opts.Title != "" {
		pg.Title = r.opts.Title
	} else if r.compare {
		var labels []string
		for _, s := range r.sides {
			labels = append(labels, s.Label)
		}
		pg.Title = "Comparison: " + strings.Join(labels, " vs ")
		if len(labels) > 4 {
			pg.Title = fmt.Sprintf("Comparison of %d variants", len(labels))
		}
	} else {
		pg.Title = first.Sum.Scenario.Name
		if pg.Title == "" {
			pg.Title = first.Label
		}
	}
	if !r.compare || len(r.runs) == 1 {
		pg.Subtitle = first.Sum.Scenario.Description
	} else {
		var names []string
		for _, run := range r.runs {
			names = append(names, run.Label+" ("+run.Sum.Scenario.Name+", "+run.Kind+")")
		}
		pg.Subtitle = strings.Join(names, " · ")
	}
}

func (r *renderer) banners(pg *page) {
	for _, run := range r.runs {
		prefix := ""
		if len(r.runs) > 1 {
			prefix = run.Label + ": "
		}
		switch run.Kind {
		case KindPlan:
			if run.Hot == nil && run.Analysis != nil {
				pg.Banners = append(pg.Banners, banner{"info", prefix + "Key analysis.",
					"No operation was measured, so there is no latency or throughput: the key " +
						"figures come from running the scenario's operation stream through every " +
						"variant's placement (shardbench analyze)."})
				break
			}
			pg.Banners = append(pg.Banners, banner{"info", prefix + "Placement plan.",
				"No operation was executed, so there is no latency or throughput: the " +
					"hot-partition figures come from running the scenario's operation stream " +
					"through every variant's placement code."})
		case KindSimulated:
			what := "the cluster model of the sim backend in virtual time"
			if n := run.Sum.Backend.Name; n == "null" || n == "delay" {
				what = "the " + n + " test backend (no database at all)"
			}
			text := "Latency and errors come from " + what + ", not from a real server."
			if c := simulatedCapacity(run.Sum.Backend.Details); c != "" {
				text += " " + c
			}
			pg.Banners = append(pg.Banners, banner{"info", prefix + "Simulated.", text})
		}
		if t := measuredText(run.Sum); t != "" {
			pg.Banners = append(pg.Banners, banner{"info", prefix + "Measured window.",
				"The tables " + t + " (run --measure-from/--measure-to, as a capacity search judges its " +
					"runs from the schedule's start over the peak); the time series charts show every operation."})
		}
		switch run.status() {
		case "interrupted":
			why := run.Sum.Interrupted
			if why == "" {
				why = "a variant stopped early"
			}
			pg.Banners = append(pg.Banners, banner{"bad", prefix + "Interrupted.",
				fmt.Sprintf("The run stopped early (%s). Every figure covers only what was "+
					"measured before it stopped%s.",
					why, coverage(run))})
		case "incomplete":
			pg.Banners = append(pg.Banners, banner{"warn", prefix + "Incomplete.",
				"summary.json says the run had not finished when it was written (still running, " +
					"or killed before it could record an interrupt). Figures cover what was " +
					"recorded until then" + coverage(run) + "."})
		}
	}
	for _, w := range r.warnings {
		pg.Banners = append(pg.Banners, banner{"warn", "Could not read:", w})
	}
}

// measuredText says which stretch of the schedule a summary's figures cover, "cover the
// operations intended from 6m00s to 7m30s of the 10m00s schedule" ("" for the whole run).
func measuredText(s *results.Summary) string {
	m := s.Measured
	if m == nil {
		return ""
	}
	return fmt.Sprintf("cover the operations intended from %s to %s of the %s schedule",
		units.Seconds(m.FromS), units.Seconds(m.ToS), units.Seconds(s.Scenario.DurationS))
}

// coverage says how much of the schedule the variants ran: ": 42s of 10m00s".
func coverage(run *run) string {
	want := run.Sum.DueS()
	if want <= 0 || len(run.Sum.Variants) == 0 {
		return ""
	}
	var parts []string
	for _, v := range run.Sum.Variants {
		if v.DurationS < want*0.999 {
			parts = append(parts, fmt.Sprintf("%s ran %s of %s", v.Name, units.Seconds(v.DurationS), units.Seconds(want)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, "; ")
}

func (r *renderer) gates() []gateView {
	var out []gateView
	for _, run := range r.runs {
		v := gateView{Run: run.Label, Dir: run.Dir}
		g := run.Gate
		if g == nil {
			out = append(out, v)
			continue
		}
		v.Present = true
		passed, failed, skipped := 0, 0, 0
		for _, c := range g.Checks {
			switch c.Status {
			case results.GatePass:
				passed++
			case results.GateFail:
				failed++
			default:
				skipped++
			}
		}
		verdict := g.Verdict
		if verdict == "" {
			verdict = results.GatePass
			if failed > 0 {
				verdict = results.GateFail
			}
		}
		v.Verdict = strings.ToUpper(verdict)
		v.Class = verdict
		if len(g.Checks) == 0 {
			v.Summary = "gate.json holds no checks."
		} else {
			v.Summary = fmt.Sprintf("%d check(s): %d passed, %d failed, %d skipped.", len(g.Checks), passed, failed, skipped)
		}
		var det []string
		if len(g.Sources) > 0 {
			det = append(det, "Rules from "+strings.Join(g.Sources, ", ")+".")
		}
		if g.Baseline != "" {
			det = append(det, fmt.Sprintf("Baseline %s, tolerance %s.", g.Baseline, units.Pct(g.Tolerance)))
		}
		if g.Strict {
			det = append(det, "Strict: skipped checks count as failures.")
		}
		if !g.EvaluatedAt.IsZero() {
			det = append(det, "Evaluated "+g.EvaluatedAt.UTC().Format("2006-01-02 15:04:05 UTC")+".")
		}
		v.Details = strings.Join(det, " ")
		checks := append([]results.GateCheck(nil), g.Checks...)
		rank := map[string]int{results.GateFail: 0, results.GateSkip: 1, results.GatePass: 2}
		sort.SliceStable(checks, func(i, j int) bool { return rank[checks[i].Status] < rank[checks[j].Status] })
		t := &table{Caption: "Failed checks first, then skipped, then passed.", Head: heads("check", "status", "value", "threshold", "kind", "detail", "source")}
		for _, c := range checks {
			val := c.ValueText
			if val == "" {
				val = FormatFloat(c.Value) + " " + c.Unit
			}
			thr := c.ThresholdText
			if thr == "" {
				thr = strings.TrimSpace(c.Comparator + " " + FormatFloat(c.Threshold) + " " + c.Unit)
			}
			src := c.Source
			if c.Rule != "" && src != "" {
				src = c.Rule + " (" + src + ")"
			} else if c.Rule != "" {
				src = c.Rule
			}
			t.Rows = append(t.Rows, row{Cells: []cell{{Text: c.Name},
				{Text: strings.ToUpper(c.Status), Class: c.Status}, {Text: val, Class: "num"},
				{Text: thr, Class: "num"}, {Text: c.Kind}, {Text: c.Detail, Class: "wrap"},
				{Text: src, Class: "wrap"}}})
		}
		v.Checks = t
		out = append(out, v)
	}
	return out
}

// simulatedCapacity says in one sentence what the simulated servers sustain (the sim
// backend's details; empty for runs written before they were recorded).
func simulatedCapacity(d map[string]string) string {
	var parts []string
	for _, k := range []struct{ key, server string }{{"cassandra_node_capacity", "a Cassandra node"}, {"mongodb_member_capacity", "a MongoDB replica set member"}} {
		if v := d[k.key]; v != "" {
			parts = append(parts, k.server+": "+v)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "The model's servers: " + strings.Join(parts, "; ") + " (docs/simulator.md gives the sources)."
}
