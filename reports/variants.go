package reports

import (
	"fmt"
	"sort"
	"strings"

	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/units"
)

// maxServerMetrics caps the server-side series charts per variant.
const maxServerMetrics = 3

func (r *renderer) variants() ([]variantView, error) {
	picked, _ := chartedSides(r.sides, r.opts.MaxVariantCharts)
	// Without hot-partition data every variant may chart its server series (up to the cap).
	if len(picked) == 0 {
		for i, s := range r.sides {
			if i < r.opts.MaxVariantCharts {
				picked[s] = true
			}
		}
	}
	var out []variantView
	for _, s := range r.sides {
		vv := variantView{ID: s.ID, Label: s.Label, Color: s.Index % 10, Notes: s.V.Notes}
		vv.Facts = r.variantFacts(s)
		vv.Ops = opsTable(s)
		vv.Events = eventsTable(s)
		vv.Errors = errorsTable(s)
		if s.Server != nil {
			sv, err := r.serverView(s, picked[s])
			if err != nil {
				return nil, err
			}
			vv.Server = sv
		}
		out = append(out, vv)
	}
	return out, nil
}

func (r *renderer) variantFacts(s *side) *table {
	v := s.V
	rows := [][2]string{
		{"design", v.Design},
		{"database", firstNonEmpty(v.Database, hotDB(s))},
		{"parameters", joinMap(v.Params)},
	}
	if len(r.runs) > 1 {
		rows = append(rows, [2]string{"run", s.Run.Label})
	}
	if !v.StartedAt.IsZero() {
		rows = append(rows, [2]string{"started", fmtTime(v.StartedAt)})
	}
	if v.DurationS > 0 {
		rows = append(rows, [2]string{"measured span", units.Seconds(v.DurationS)})
	}
	if v.Interrupted {
		rows = append(rows, [2]string{"status", "interrupted: figures cover the measured span only"})
	}
	if c := v.Coverage; c.Ops > 0 {
		text := CoverageText(c)
		if !c.Full() {
			text += fmt.Sprintf("; not served: %s (%s operations offered, never sent; every figure is of the served operations)", strings.Join(c.UnservedOps, ", "), units.Count(float64(c.Unserved)))
		}
		rows = append(rows, [2]string{"coverage", text})
	}
	if len(v.Nodes) > 0 {
		var parts []string
		for _, n := range v.Nodes {
			parts = append(parts, fmt.Sprintf("%s %s", n.Node, units.Count(float64(n.Ops))))
		}
		rows = append(rows, [2]string{"operations per coordinator / shard (client view)", strings.Join(parts, ", ")})
	}
	if s.Run.Kind == KindPlan {
		rows = append(rows, [2]string{"latency", "none: a plan executes nothing"})
	}
	return kv(rows...)
}

func opsTable(s *side) *table {
	v := s.V
	if len(v.Ops) == 0 && v.Totals.Scheduled == 0 {
		return nil
	}
	t := &table{Head: heads("operation", "kind", "scheduled", "completed", "error rate", "late",
		"dropped", "target/s", "achieved/s", "p50", "p90", "p99", "p99.9", "p99.99", "max",
		"service p50", "service p99", "service p99.9", "lag p99")}
	t.Caption = "Response time percentiles unless marked service (time from the actual send) or lag (harness delay before sending)."
	add := func(o results.OpStats, name string) {
		l, sv := o.Response, o.Service
		t.Rows = append(t.Rows, row{Cells: []cell{{Text: name}, {Text: o.Kind},
			num(units.Count(float64(o.Scheduled))), num(units.Count(float64(o.Completed))),
			errCell(o.ErrorRate), num(units.Count(float64(o.Late))),
			num(units.Count(float64(o.Dropped))), num(units.Count(o.TargetRate)),
			num(units.Count(o.AchievedRate)),
			msCell(l.P50, l.Count), msCell(l.P90, l.Count), msCell(l.P99, l.Count), msCell(l.P999, l.Count), msCell(l.P9999, l.Count), msCell(l.Max, l.Count),
			msCell(sv.P50, sv.Count), msCell(sv.P99, sv.Count), msCell(sv.P999, sv.Count), msCell(o.Lag.P99, o.Lag.Count)}})
	}
	all := "all operations"
	if !v.Coverage.Full() {
		all = "all served operations"
	}
	add(v.Totals, all)
	t.Rows[0].Class = "total"
	ops := append([]results.OpStats(nil), v.Ops...)
	sort.SliceStable(ops, func(i, j int) bool {
		if ops[i].Scheduled != ops[j].Scheduled {
			return ops[i].Scheduled > ops[j].Scheduled
		}
		return ops[i].Op < ops[j].Op
	})
	for _, o := range ops {
		if !o.Served() {
			t.Rows = append(t.Rows, row{Cells: []cell{{Text: o.Op}, {Text: o.Kind}, notServedCell(&o, len(t.Head)-2)}})
			continue
		}
		add(o, o.Op)
	}
	if !s.hasLatency() {
		dropEmptyColumns(t)
	}
	return t
}

func eventsTable(s *side) *table {
	if len(s.V.Events) == 0 {
		return nil
	}
	t := &table{Head: heads("at", "action", "target", "note", "error")}
	t.Head[0].Class = "num"
	for _, e := range s.V.Events {
		ec := cell{Text: e.Error, Class: "wrap"}
		if e.Error != "" {
			ec.Class += " bad"
		}
		t.Rows = append(t.Rows, row{Cells: []cell{num(units.Seconds(e.AtS)), {Text: e.Action}, {Text: e.Target}, {Text: e.Note, Class: "wrap"}, ec}})
	}
	dropEmptyColumns(t)
	return t
}

func errorsTable(s *side) *table {
	tot := s.V.Totals
	if len(tot.Errors) == 0 && tot.Dropped == 0 && tot.Abandoned == 0 {
		return nil
	}
	t := &table{Head: heads("class", "count", "share", "examples")}
	add := func(class string, n int64, examples []string) {
		share := nan
		if tot.Scheduled > 0 {
			share = float64(n) / float64(tot.Scheduled)
		}
		ex := strings.Join(examples, " · ")
		t.Rows = append(t.Rows, row{Cells: []cell{{Text: class}, num(units.Count(float64(n))), num(units.Pct(share)), {Text: Truncate(ex, 400), Class: "wrap mono"}}})
	}
	for _, c := range results.SortedErrorClasses(tot.Errors) {
		add(c, tot.Errors[c], s.V.ErrorExamples[c])
	}
	if tot.Dropped > 0 {
		add("dropped (never started)", tot.Dropped, nil)
	}
	if tot.Abandoned > 0 {
		add("abandoned (no reply before the drain timeout)", tot.Abandoned, nil)
	}
	t.Caption = "Share of scheduled operations. Failed operations count in the latency histograms with the time they took."
	return t
}

func (r *renderer) serverView(s *side, charts bool) (*serverView, error) {
	sv := &serverView{Source: s.Server.Source, Disagreements: s.Server.Disagreements, Notes: s.Server.Notes}
	if sv.Source == "" {
		sv.Source = "server.json"
	}
	for _, st := range s.Server.Tables {
		if st.Subject == "nodes" && s.Hot != nil {
			continue // shown beside the client-side node table in the hot-partition section
		}
		sv.Tables = append(sv.Tables, serverTable(st))
	}
	if !charts {
		if len(s.Server.Series) > 0 {
			sv.Notes = append(append([]string(nil), sv.Notes...),
				fmt.Sprintf("%d server-side series not charted (charts only for the %d variants "+
					"shown in the hot-partition section).",
					len(s.Server.Series), r.opts.MaxVariantCharts))
		}
		return sv, nil
	}
	// One chart per metric, in order of first appearance.
	var metrics []string
	by := map[string][]results.ServerSeries{}
	for _, sr := range s.Server.Series {
		if _, ok := by[sr.Metric]; !ok {
			metrics = append(metrics, sr.Metric)
		}
		by[sr.Metric] = append(by[sr.Metric], sr)
	}
	if len(metrics) > maxServerMetrics {
		sv.Notes = append(append([]string(nil), sv.Notes...),
			fmt.Sprintf("Charts for the first %d of %d server-side metrics: %s left out.",
				maxServerMetrics, len(metrics), strings.Join(metrics[maxServerMetrics:], ", ")))
		metrics = metrics[:maxServerMetrics]
	}
	for _, m := range metrics {
		f, err := serverSeriesChart(s, m, by[m])
		if err != nil {
			return nil, err
		}
		cv, err := r.draw("server-"+s.ID+"-"+m, fmt.Sprintf("%s per node or shard as the server (or the simulator's model of it) reported it, with the run's phases and events.", m), f)
		if err != nil {
			return nil, err
		}
		if cv != nil {
			sv.Charts = append(sv.Charts, cv)
		}
	}
	return sv, nil
}

func (r *renderer) pageNotes(pg *page) []string {
	var notes []string
	if pg.LatencyNote != "" {
		notes = append(notes, pg.LatencyNote)
	}
	if pg.OverviewNote != "" {
		notes = append(notes, pg.OverviewNote)
	}
	if pg.Hot != nil && pg.Hot.Note != "" {
		notes = append(notes, pg.Hot.Note)
	}
	notes = append(notes, r.notes...)
	notes = append(notes,
		"Latency figures come from the exact cumulative HdrHistograms embedded in summary.json "+
			"(never averaged percentiles); the time lines from timeseries.jsonl (one point "+
			"per second). The per-operation interval logs (histograms/*/*.hlog) are not "+
			"charted here: open them with HdrHistogram's HistogramLogAnalyzer for "+
			"per-operation time lines.",
		"Response time counts from each operation's intended start (coordinated-omission corrected); service time from when it was sent; a failed operation counts with the time it took.",
		"An operation a design does not serve (the design's not_served list, or steps on a "+
			"database the backend does not drive) is never sent: it is in no latency, rate, "+
			"error or chart, and shows as coverage (“serves N of M operations, X% of the "+
			"offered traffic”) and as “not served by this design” in the operation tables. "+
			"“All operations” figures merge the served operations only.",
	)
	for _, run := range r.runs {
		if run.Hot != nil {
			notes = append(notes, "Top-partition counts come from a Space-Saving summary: “± bound” is the largest possible overcount (exact when 0). Shares are of the partition's own table.")
			break
		}
	}
	if r.compare {
		notes = append(notes,
			"Comparison: lower is better for latency, error rates, late and dropped operations, "+
				"hot-partition shares, node imbalance and projected sizes; higher is better for "+
				"achieved throughput. Values within 1% of the best count as a tie.")
	}
	for _, run := range r.runs {
		prefix := ""
		if len(r.runs) > 1 {
			prefix = run.Label + ": "
		}
		if run.Hot != nil {
			for _, hv := range run.Hot.Variants {
				if len(hv.Notes) > 0 && r.findSide(run, hv.Variant) == nil {
					for _, n := range hv.Notes {
						notes = append(notes, prefix+hv.Variant+": "+n)
					}
				}
			}
		}
	}
	return notes
}

func (r *renderer) findSide(run *run, variant string) *side {
	for _, s := range r.sides {
		if s.Run == run && s.V.Name == variant {
			return s
		}
	}
	return nil
}
