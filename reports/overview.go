package reports

import (
	"fmt"
	"strings"

	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/units"
)

// The Overview and Latency sections: every variant at a glance, the overview charts,
// the per-operation latency charts and table.

func sideCell(s *side) cell { return cell{Text: s.Label, Swatch: true, Color: s.Index % 10} }

// glanceHeadTitles say what the overview's counts count, on hover: late is more than a
// wait for a slot, dropped more than on_full: drop's skipped operations.
var glanceHeadTitles = map[string]string{
	"late": "operations that started more than late_after after their intended time (waiting " +
		"for a client slot, or a client too busy to send on time); their response time counts the wait",
	"dropped": "operations that never started: every client slot busy with on_full: drop, " +
		"still waiting for a slot when the schedule ended, or cut off by an interrupt",
}

func (r *renderer) glanceTable() *table {
	anyLat, anyHot, anyKeys := false, false, false
	for _, s := range r.sides {
		anyLat = anyLat || s.hasLatency()
		anyHot = anyHot || s.Hot != nil
		anyKeys = anyKeys || s.Keys != nil
	}
	h := []string{"variant"}
	if len(r.runs) > 1 {
		h = append(h, "run")
	}
	h = append(h, "design", "database")
	anyCov := false
	for _, s := range r.sides {
		anyCov = anyCov || s.V.Coverage.Ops > 0
	}
	if anyCov {
		h = append(h, "serves")
	}
	if anyLat {
		h = append(h, "achieved/s", "target/s", "p50", "p99", "p99.9", "max", "error rate", "late", "dropped")
	}
	if anyHot {
		h = append(h, "hottest partition", "share", "busiest node", "max/mean", "over 30%")
	}
	if anyKeys {
		h = append(h, "key verdict")
	}
	t := &table{Head: heads(h...)}
	for i := range t.Head {
		t.Head[i].Title = glanceHeadTitles[t.Head[i].Text]
	}
	for _, s := range r.sides {
		c := []cell{sideCell(s)}
		if len(r.runs) > 1 {
			c = append(c, cell{Text: s.Run.Label})
		}
		c = append(c, cell{Text: s.V.Design}, cell{Text: firstNonEmpty(s.V.Database, hotDB(s))})
		if anyCov {
			c = append(c, coverageCell(s.V.Coverage))
		}
		if anyLat {
			t := s.V.Totals
			if s.hasLatency() {
				c = append(c, num(units.Count(t.AchievedRate)), num(units.Count(t.TargetRate)),
					num(units.Ms(t.Response.P50)), num(units.Ms(t.Response.P99)),
					num(units.Ms(t.Response.P999)), num(units.Ms(t.Response.Max)),
					errCell(t.ErrorRate), num(units.Count(float64(t.Late))),
					num(units.Count(float64(t.Dropped))))
			} else {
				for range 9 {
					c = append(c, cell{Text: "—", Class: "num muted"})
				}
			}
		}
		if anyHot {
			p, tb := hottest(s.Hot)
			bn := busiestNode(s.Hot)
			if p != nil {
				c = append(c, cell{Text: shortTable(tb.Table) + " " + Truncate(p.Key, 48), Class: "wrap"}, shareCell(p.Share))
			} else {
				c = append(c, cell{Text: "—"}, num("—"))
			}
			if bn != nil {
				c = append(c, cell{Text: bn.Node}, ratioCell(maxOverMean(s.Hot)), overCell(s.Hot))
			} else {
				c = append(c, cell{Text: "—"}, num("—"), num("—"))
			}
		}
		if anyKeys {
			text, cls := keyVerdict(s.Keys)
			c = append(c, cell{Text: text, Class: cls})
		}
		t.Rows = append(t.Rows, row{Cells: c})
	}
	return t
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func hotDB(s *side) string {
	if s.Hot != nil {
		return s.Hot.Database
	}
	return ""
}

// coverageCell is a variant's coverage in a table: the operations it serves and their
// share of the offered traffic, the full sentence and the operations left out on hover.
func coverageCell(c results.Coverage) cell {
	cl := num(CoverageShort(c))
	cl.Title = CoverageText(c)
	if !c.Full() {
		cl.Class += " warn"
		cl.Title += "; not served: " + strings.Join(c.UnservedOps, ", ")
	}
	return cl
}

func errCell(rate float64) cell {
	c := num(units.Pct(rate))
	if rate > 0 {
		c.Class += " bad"
	}
	return c
}

func shareCell(share float64) cell {
	c := num(units.Pct(share))
	if share >= 0.1 {
		c.Class += " bad"
	}
	return c
}

// maxOverMean is the stored imbalance, or computed from the node loads.
func maxOverMean(h *results.HotspotsVariant) float64 {
	if h == nil || len(h.Nodes) == 0 {
		return nan
	}
	if h.Balance.MaxOverMean > 0 {
		return h.Balance.MaxOverMean
	}
	var sum, mx float64
	for _, n := range h.Nodes {
		sum += float64(n.Ops)
		mx = max(mx, float64(n.Ops))
	}
	if sum == 0 {
		return nan
	}
	return mx / (sum / float64(len(h.Nodes)))
}

func ratioCell(v float64) cell {
	c := num(FormatRatio(v))
	if v > 1.3 {
		c.Class += " bad"
	}
	return c
}

func overList(h *results.HotspotsVariant) []string {
	if len(h.Balance.Over30) > 0 {
		return h.Balance.Over30
	}
	var out []string
	for _, n := range h.Nodes {
		if n.Over30 {
			out = append(out, n.Node)
		}
	}
	return out
}

func overCell(h *results.HotspotsVariant) cell {
	o := overList(h)
	if len(o) == 0 {
		return cell{Text: "none", Class: "good"}
	}
	return cell{Text: strings.Join(o, ", "), Class: "bad wrap"}
}

// ---- overview charts ----

func (r *renderer) overviewCharts() ([]*chartView, string, error) {
	var out []*chartView
	var notes []string
	add := func(id, caption string, f *figure, err error) error {
		if err != nil {
			return err
		}
		cv, err := r.draw(id, caption, f)
		if err != nil {
			return err
		}
		if cv != nil {
			out = append(out, cv)
		}
		return nil
	}
	withService := len(r.sides) <= 6
	f, err := latencyChart("All operations: latency percentile spectrum", r.sides, func(s *side) (*results.Latency, *results.Latency) {
		return &s.V.Totals.Response, &s.V.Totals.Service
	}, withService)
	cap := "Every operation each variant serves, merged: read right to see the tail. A gap between solid (response) and dashed (service) lines is time spent queued in the harness or behind a stall."
	if !withService {
		cap = "Every operation each variant serves, merged, response time only (service time left out with more than 6 variants)."
	}
	if err := add("latency-all", cap, f, err); err != nil {
		return nil, "", err
	}
	f, err = throughputChart(r.sides)
	if err := add("throughput",
		"Per-second achieved rate against the target (dashed black): the schedule's rate less "+
			"the operations the variant does not serve; phases shaded and labelled at the top, "+
			"events marked at the bottom.",
		f, err); err != nil {
		return nil, "", err
	}
	f, err = p99Chart(r.sides)
	if err := add("p99-over-time", "Per-second p99 of response time (solid) and service time (dashed), log scale; look for spikes at phase changes and events.", f, err); err != nil {
		return nil, "", err
	}
	f, omitted, err := errorsChart(r.sides, 10)
	if err := add("errors", "Errors per second by class (dropped = never started), with the total in the legend.", f, err); err != nil {
		return nil, "", err
	}
	if omitted > 0 {
		notes = append(notes, fmt.Sprintf("The errors chart shows the 10 largest variant/class series; %d smaller ones are in the tables.", omitted))
	}
	anyPoints := false
	for _, s := range r.sides {
		anyPoints = anyPoints || len(s.Points) > 0
	}
	if anyPoints && f == nil {
		notes = append(notes, "No errors and no dropped operations were recorded.")
	}
	return out, strings.Join(notes, " "), nil
}

func (r *renderer) latencyCharts() ([]*chartView, string, error) {
	ops := opNames(r.sides)
	var withLat []string
	for _, op := range ops {
		for _, s := range r.sides {
			if o := s.V.Op(op); o != nil && o.Response.Count > 0 {
				withLat = append(withLat, op)
				break
			}
		}
	}
	note := ""
	shown := withLat
	if len(shown) > r.opts.MaxOpCharts {
		shown = shown[:r.opts.MaxOpCharts]
		note = fmt.Sprintf("Charts for the %d busiest of %d operations; every operation's percentiles are in the tables.", len(shown), len(withLat))
	}
	withService := len(r.sides) <= 6
	if !withService {
		note = strings.TrimSpace(note + " With more than 6 variants the charts show response time only.")
	}
	var out []*chartView
	for _, op := range shown {
		op := op
		f, err := latencyChart(op+": latency percentile spectrum", r.sides, func(s *side) (*results.Latency, *results.Latency) {
			o := s.V.Op(op)
			if o == nil {
				return nil, nil
			}
			return &o.Response, &o.Service
		}, withService)
		if err != nil {
			return nil, "", err
		}
		cv, err := r.draw("latency-"+op, op+": response (solid) and service (dashed) time by percentile.", f)
		if err != nil {
			return nil, "", err
		}
		if cv != nil {
			out = append(out, cv)
		}
	}
	return out, note, nil
}

func (r *renderer) latencyTable() *table {
	t := &table{Caption: "Every operation, every variant (response time unless marked service).",
		Head: heads("variant", "ops", "achieved/s", "p50", "p90", "p99", "p99.9", "p99.99", "max",
			"service p99", "error rate")}
	for _, op := range opNames(r.sides) {
		t.Rows = append(t.Rows, row{Group: op})
		for _, s := range r.sides {
			o := s.V.Op(op)
			if o == nil {
				continue
			}
			if !o.Served() {
				t.Rows = append(t.Rows, row{Cells: []cell{sideCell(s), notServedCell(o, len(t.Head)-1)}})
				continue
			}
			l := o.Response
			t.Rows = append(t.Rows, row{Cells: []cell{sideCell(s),
				num(units.Count(float64(o.Completed))), num(units.Count(o.AchievedRate)),
				msCell(l.P50, l.Count), msCell(l.P90, l.Count), msCell(l.P99, l.Count),
				msCell(l.P999, l.Count), msCell(l.P9999, l.Count), msCell(l.Max, l.Count),
				msCell(o.Service.P99, o.Service.Count), errCell(o.ErrorRate)}})
		}
	}
	return t
}

// notServedCell fills the rest of an operation's row (span columns) for a variant that
// does not serve it: no latency, rate or error, only the design's reason.
func notServedCell(o *results.OpStats, span int) cell {
	return cell{Text: fmt.Sprintf("not served by this design (%s offered): %s", units.Count(float64(o.Unserved)), o.UnservedReason), Class: "wrap muted", Span: span}
}

func msCell(ms float64, count int64) cell {
	if count == 0 {
		return cell{Text: "—", Class: "num muted"}
	}
	return num(units.Ms(ms))
}
