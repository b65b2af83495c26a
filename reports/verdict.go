package reports

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/verdict"
)

// The verdict section opens a run's report: the designs ranked for the scenario,
// overall and per entity, every criterion's figure linked to its evidence below, and the
// seed claims the scenario exercises (verdict.json, internal/verdict; rules in
// docs/verdict.md).

type rankingView struct {
	Intro    string
	Overall  *table
	Why      []whyView
	Entities []*table
	Claims   *table
	Missing  []string
}

// whyView is one variant's criteria in words, each with its evidence.
type whyView struct {
	ID, Label, Status string
	Color             int
	Lines             []whyLine
}

type whyLine struct {
	Name, Status, Text, Reason, Link, Evidence string
}

// criteria in the order the verdict weighs them, with their column headings.
var verdictColumns = []struct{ name, head string }{
	{results.CriterionCapacity, "capacity"},
	{results.CriterionSize, "size / limit"},
	{results.CriterionHotShare, "hottest"},
	{results.CriterionImbalance, "imbalance"},
	{results.CriterionKeys, "key analysis"},
	{results.CriterionCoverage, "coverage"},
}

// statusClass maps a criterion status to the report's cell classes.
func statusClass(s string) string {
	switch s {
	case results.VerdictPass:
		return "pass"
	case results.VerdictWarn:
		return "warn"
	case results.VerdictFail:
		return "fail"
	}
	return "muted"
}

// judgeRun builds a run's verdict from its directory (and the key analysis and capacity
// search of opts), writes it to opts.Out as verdict.json, and shows a given key analysis
// in the report. A verdict that cannot be built is a warning: the report renders without.
func judgeRun(r *run, opts Options) {
	if r.NoSummary {
		return
	}
	if opts.AnalysisDir != "" {
		if a, err := results.ReadAnalysis(opts.AnalysisDir); err == nil && a != nil {
			r.Analysis = a
		}
	}
	v, err := verdict.FromDirs(r.Dir, opts.AnalysisDir, opts.CapacityDir)
	if err == nil {
		err = results.At(opts.Out).WriteVerdict(v)
	}
	if err != nil {
		for _, w := range r.Warnings {
			if strings.Contains(err.Error(), w) {
				return // the file's own warning says it
			}
		}
		r.Warnings = append(r.Warnings, "verdict: "+err.Error())
		return
	}
	r.Verdict = v
}

// ranking renders a verdict; capLink is the capacity search's report (relative to the
// page), or "".
func (r *renderer) ranking(v *results.Verdict, run *run, capLink string) *rankingView {
	if v == nil || len(v.Overall) == 0 {
		return nil
	}
	rv := &rankingView{Missing: v.Missing}
	rv.Intro = fmt.Sprintf("The designs of %s ranked: those that hold on every criterion "+
		"measured first, then those with cautions, then those that fail; within each, the "+
		"fewest failed criteria, the fewest cautions, the most capacity at the SLO, the most "+
		"coverage, the coolest hottest partition. Each figure links to its evidence and "+
		"gives its reason on hover; every reason is in the list below the table. Rules: "+
		"docs/verdict.md.",
		v.Scenario)
	link := func(variant string, c *results.Criterion) string { return r.evidenceLink(run, variant, c, capLink) }
	rv.Overall = r.rankTable(v.Overall, link, "Overall: every operation and table of each design.", true)
	for _, rk := range v.Overall {
		s := r.findSide(run, rk.Variant)
		w := whyView{Label: rk.Variant, Status: statusClass(rk.Status)}
		if s != nil {
			w.ID, w.Label, w.Color = "why-"+s.ID, s.Label, s.Index%10
		}
		for i := range rk.Criteria {
			c := &rk.Criteria[i]
			w.Lines = append(w.Lines, whyLine{Name: c.Name, Status: statusClass(c.Status), Text: c.Text, Reason: c.Reason, Link: link(rk.Variant, c), Evidence: c.Evidence})
		}
		rv.Why = append(rv.Why, w)
	}
	for _, e := range v.Entities {
		caption := fmt.Sprintf("%s: the variants that serve it, on its operations and tables.", e.Entity)
		if len(e.NotServed) > 0 {
			caption += fmt.Sprintf(" Not served by %d: %s.", len(e.NotServed), strings.Join(e.NotServed, ", "))
		}
		t := r.rankTable(e.Ranks, link, caption, false)
		rv.Entities = append(rv.Entities, t)
	}
	if len(v.Claims) > 0 {
		t := &table{Caption: "Each seed claim the scenario exercises, judged on the variants that carry it.", Head: heads("claim", "seed", "status", "measured")}
		for _, c := range v.Claims {
			class := map[string]string{results.ClaimConfirmed: "pass", results.ClaimRefuted: "fail"}[c.Status]
			if class == "" {
				class = "skip"
			}
			t.Rows = append(t.Rows, row{Cells: []cell{{Text: c.Claim}, {Text: c.Seed}, {Text: strings.ToUpper(c.Status), Class: class}, {Text: c.Measured, Class: "wrap"}}})
		}
		rv.Claims = t
	}
	return rv
}

// rankTable is one ranking: rank, variant, status, a figure per criterion (its status as
// the cell's colour, its reason as the cell's title, a link to its evidence) and the
// deciding reason.
func (r *renderer) rankTable(ranks []results.VerdictRank, link func(string, *results.Criterion) string, caption string, overall bool) *table {
	h := []string{"variant", "#", "status"}
	var cols []string
	for _, c := range verdictColumns {
		if !overall && c.name == results.CriterionImbalance {
			continue
		}
		h = append(h, c.head)
		cols = append(cols, c.name)
	}
	h = append(h, "reason")
	t := &table{Caption: caption, Class: "verdict", Head: heads(h...)}
	for _, rk := range ranks {
		label, color, swatch := rk.Variant, 0, false
		if s := r.findSideByName(rk.Variant); s != nil {
			label, color, swatch = s.Label, s.Index%10, true
		}
		cells := []cell{{Text: label, Swatch: swatch, Color: color}, num(fmt.Sprint(rk.Rank)), {Text: verdict.StatusWord(rk.Status), Class: statusClass(rk.Status)}}
		for _, name := range cols {
			c := rk.Criterion(name)
			if c == nil {
				cells = append(cells, cell{Text: "—", Class: "muted"})
				continue
			}
			cells = append(cells, cell{Text: c.Text, Class: "num " + statusClass(c.Status), Title: c.Reason, Link: link(rk.Variant, c)})
		}
		cells = append(cells, cell{Text: rk.Reason, Class: "wrap"})
		t.Rows = append(t.Rows, row{Cells: cells})
	}
	return t
}

// evidenceLink is where a criterion's figure is shown: the variant's hot-partition or
// key-analysis section, the overview, or the capacity search's own report.
func (r *renderer) evidenceLink(run *run, variant string, c *results.Criterion, capLink string) string {
	s := r.findSide(run, variant)
	switch c.Anchor {
	case "capacity":
		return capLink
	case "hot":
		if s != nil && s.Hot != nil {
			return "#hot-" + s.ID
		}
		return "#hot"
	case "keys":
		if s != nil && s.Keys != nil {
			return "#keys-" + s.ID
		}
		return "#keys"
	case "overview":
		if s != nil {
			return "#v-" + s.ID
		}
		return "#overview"
	}
	return ""
}

func (r *renderer) findSideByName(name string) *side {
	for _, s := range r.sides {
		if s.V.Name == name {
			return s
		}
	}
	return nil
}

// capacityLink is the capacity search's report relative to the page, or "" when the
// verdict had no capacity search or it has no report.
func capacityLink(out, capDir string) string {
	if capDir == "" {
		return ""
	}
	abs, err := filepath.Abs(filepath.Join(capDir, HTMLFile))
	if err != nil {
		return ""
	}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return ""
	}
	rel, err := filepath.Rel(absOut, abs)
	if err != nil {
		return ""
	}
	return filepath.ToSlash(rel)
}
