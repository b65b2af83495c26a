package reports

import (
	_ "embed"
	"fmt"
	"html/template"
	"math"
	"strings"

	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/units"
)

// The fidelity section: a real run held against its simulated twin (shardbench
// fidelity, fidelity.json). Its template is its own file, added to the page's.

//go:embed fidelity.html.tmpl
var fidelityTemplate string

var _ = template.Must(tmpl.New("fidelity").Parse(fidelityTemplate))

type fidelityView struct {
	Badge, Class string
	Lines        []string
	Intro        string
	Calibration  *table
	Placement    *table
	Coordinators *table
	Latency      *table
	Rankings     *table
	Notes        []string
}

// loadFidelity reads fidelity.json into the run (absent: no section).
func loadFidelity(r *run) {
	f, err := results.ReadFidelity(r.Dir)
	if err != nil {
		r.Warnings = append(r.Warnings, err.Error())
	}
	r.Fidelity = f
}

// fidelity is the section of a single run's report that holds fidelity.json (nil when
// absent, and in a comparison of several runs).
func (r *renderer) fidelity() *fidelityView {
	if len(r.runs) != 1 || r.runs[0].Fidelity == nil {
		return nil
	}
	f := r.runs[0].Fidelity
	v := &fidelityView{Badge: "PASS", Class: "pass", Lines: f.Verdict.Lines, Notes: f.Notes}
	if !f.Verdict.Pass() {
		v.Badge, v.Class = "MISS", "fail"
	}
	v.Intro = fmt.Sprintf("This run on %s, beside its simulation (%s/, the same operation stream "+
		"on the cluster's ring, racks and replication). Placement compares each node's share "+
		"of the requests it served as a replica, from the servers' own counters; latency "+
		"compares service times; rankings order the variants on both sides.",
		f.Target, f.Simulated)
	cal := f.Calibration.File
	if cal == "" {
		cal = "fitted to " + f.Calibration.Variant + "'s real run (its latency rows are in-sample)"
	}
	v.Calibration = kv(
		[2]string{"service times", cal},
		[2]string{"node model", f.Calibration.Model},
		[2]string{"round trip", FormatFloat(f.Calibration.NetworkMS) + " ms"},
		[2]string{"parameter file", f.Calibration.Written},
		[2]string{"tolerance", fmt.Sprintf("node share ±%s pp; p50 and p99 ±%s, judged at simulated utilisation ≤ %s on operations measured ≥ %d times",
			FormatFloat(f.Tolerance.SharePP), units.Pct(f.Tolerance.Latency), units.Pct(f.Tolerance.Utilisation), f.Tolerance.MinOps)},
	)
	v.Placement = fidelityShares(f,
		"Each node's share of the replica requests (reads asked of it, mutations applied), all tables.",
		func(fv *results.FidelityVariant) []results.FidelityShare { return fv.Nodes }, true)
	v.Coordinators = fidelityShares(f,
		"Each node's share of the requests it coordinated (not judged: the driver picks among replicas at random).",
		func(fv *results.FidelityVariant) []results.FidelityShare { return fv.Coordinators }, false)
	v.Latency = fidelityLatency(f)
	v.Rankings = fidelityRankings(f)
	return v
}

func fidelityShares(f *results.Fidelity, caption string, rows func(*results.FidelityVariant) []results.FidelityShare, judged bool) *table {
	t := &table{Caption: caption, Head: heads("node", "real", "simulated", "difference", "real requests", "simulated requests")}
	for i := 1; i < len(t.Head); i++ {
		t.Head[i].Class = "num"
	}
	for i := range f.Variants {
		fv := &f.Variants[i]
		t.Rows = append(t.Rows, row{Group: fv.Name})
		for _, s := range rows(fv) {
			diff := cell{Text: fmt.Sprintf("%+.2f pp", s.DiffPP), Class: "num"}
			if judged && math.Abs(s.DiffPP) > f.Tolerance.SharePP {
				diff.Class = "num bad"
			}
			t.Rows = append(t.Rows, row{Cells: []cell{{Text: s.Node}, num(units.Pct(s.Real)), num(units.Pct(s.Sim)), diff,
				num(units.Count(float64(s.RealCount))), num(units.Count(float64(s.SimCount)))}})
		}
	}
	return t
}

func fidelityLatency(f *results.Fidelity) *table {
	t := &table{Caption: "Service time in ms: measured | simulated (error). Judged rows are predictions: not the calibration variant, enough operations, simulated utilisation within the tolerance.",
		Head: heads("operation", "count", "mean", "p50", "p99", "judged")}
	for i := 1; i < 5; i++ {
		t.Head[i].Class = "num"
	}
	pair := func(real, sim, err float64, bad bool) cell {
		c := num(fmt.Sprintf("%s | %s (%+.0f%%)", FormatFloat(real), FormatFloat(sim), 100*err))
		if bad {
			c.Class = "num bad"
		}
		return c
	}
	for i := range f.Variants {
		fv := &f.Variants[i]
		t.Rows = append(t.Rows, row{Group: fmt.Sprintf("%s (simulated busiest node at %s utilisation)", fv.Name, units.Pct(fv.Utilisation))})
		for _, l := range append(append([]results.FidelityLatency(nil), fv.Ops...), fv.All) {
			judged := cell{Text: "ok", Class: "pass"}
			switch {
			case !l.Judged:
				judged = cell{Text: "not judged: " + l.Why, Class: "muted wrap"}
			case !l.Within:
				judged = cell{Text: "MISS", Class: "fail"}
			}
			miss := func(e float64) bool { return l.Judged && math.Abs(e) > f.Tolerance.Latency }
			t.Rows = append(t.Rows, row{Cells: []cell{{Text: l.Op}, num(units.Count(float64(l.Count))),
				pair(l.Real.Mean, l.Sim.Mean, l.Error.Mean, false), pair(l.Real.P50, l.Sim.P50, l.Error.P50, miss(l.Error.P50)),
				pair(l.Real.P99, l.Sim.P99, l.Error.P99, miss(l.Error.P99)), judged}})
		}
	}
	return t
}

func fidelityRankings(f *results.Fidelity) *table {
	if len(f.Rankings) == 0 {
		return nil
	}
	t := &table{Caption: "Best first. Two variants the cluster puts within the tie of each other have no order to reproduce.",
		Head: heads("by", "variants", "real", "simulated", "agree")}
	for _, r := range f.Rankings {
		agree := cell{Text: "same order", Class: "pass"}
		if !r.Agree {
			agree = cell{Text: "different: " + strings.Join(r.Discordant, "; "), Class: "fail wrap"}
		}
		t.Rows = append(t.Rows, row{Cells: []cell{{Text: r.By}, {Text: r.Group}, {Text: strings.Join(r.Real, " < "), Class: "wrap"},
			{Text: strings.Join(r.Sim, " < "), Class: "wrap"}, agree}})
	}
	return t
}
