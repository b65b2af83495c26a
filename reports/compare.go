package reports

import (
	"fmt"
	"math"
	"strings"

	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/units"
)

// Direction of a figure: which value wins.
const (
	lowerWins  = -1
	higherWins = +1
)

// tieTolerance: values within 1% of the best value (relative) tie with it.
const tieTolerance = 0.01

// metric is one comparable figure, evaluated for every side.
type metric struct {
	Group  string
	Name   string
	Better int
	Format func(float64) string
	Values []float64 // per side; NaN = not measured
}

// winners returns the indexes of the sides that win (several on a tie) and whether the
// figure is a tie among every side that has it. Fewer than two values: no winner.
func (m *metric) winners() (win []int, allTie bool) {
	if m.Better == 0 {
		return nil, false // shown, never won
	}
	best := nan
	n := 0
	for _, v := range m.Values {
		if math.IsNaN(v) {
			continue
		}
		n++
		if math.IsNaN(best) || float64(m.Better)*(v-best) > 0 {
			best = v
		}
	}
	if n < 2 {
		return nil, false
	}
	for i, v := range m.Values {
		if !math.IsNaN(v) && near(v, best) {
			win = append(win, i)
		}
	}
	return win, len(win) == n
}

func near(a, b float64) bool {
	if a == b {
		return true
	}
	scale := math.Max(math.Abs(a), math.Abs(b))
	return math.Abs(a-b) <= tieTolerance*scale
}

// comparison is what the sides can be compared on: the operations at least two of them
// serve, and the operations every one serves, whose merge stands for "all operations".
type comparison struct {
	ops      []string           // operations two or more sides serve, busiest first
	common   []string           // operations every side serves
	totals   []*results.OpStats // per side: its served operations in common merged (its Totals when that is all it serves)
	leftOut  []string           // operations fewer than two sides serve, with who does
	partial  bool               // the sides do not all serve the same operations
	mergeErr error
}

// compareOps works out which operations the sides can be compared on.
func compareOps(sides []*side) *comparison {
	c := &comparison{}
	for _, op := range opNames(sides) {
		var by []string
		for _, s := range sides {
			if o := s.V.Op(op); o != nil && o.Served() {
				by = append(by, s.Label)
			}
		}
		switch {
		case len(by) == len(sides):
			c.common = append(c.common, op)
			c.ops = append(c.ops, op)
		case len(by) >= 2:
			c.partial = true
			c.ops = append(c.ops, op)
		case len(by) == 1:
			c.partial = true
			c.leftOut = append(c.leftOut, op+" (served by "+by[0]+" only)")
		default:
			c.leftOut = append(c.leftOut, op+" (served by none)")
		}
	}
	for _, s := range sides {
		if !c.partial { // every side serves the same operations: its totals hold them
			c.totals = append(c.totals, &s.V.Totals)
			continue
		}
		m, err := results.MergeOps(s.V, "common", c.common)
		if err != nil {
			c.mergeErr = err
		}
		c.totals = append(c.totals, &m)
	}
	return c
}

// comparisonMetrics lists every comparable figure of the sides: coverage, latency of
// all the operations they have in common, nodes and shards, partitions, each entity,
// then latency per operation.
func comparisonMetrics(sides []*side, cmp *comparison) []*metric {
	ms := &metricSet{sides: sides}
	ms.coverage()
	allGroup := "all operations"
	if cmp.partial {
		allGroup = fmt.Sprintf("the %d operations every variant serves", len(cmp.common))
	}
	if len(cmp.common) > 0 || !cmp.partial {
		ms.latency(allGroup, func(s *side) *results.OpStats { return cmp.totals[s.Index] })
	}
	ms.nodes()
	ms.partitions()
	for _, e := range entities(sides) {
		ms.entity(e)
	}
	for _, op := range cmp.ops {
		ms.latency("operation "+op, func(s *side) *results.OpStats {
			if o := s.V.Op(op); o != nil && o.Served() {
				return o
			}
			return nil // not served: no figure, never a win
		})
	}
	return ms.out
}

// metricSet collects the metrics of a comparison, in the order the table shows them.
type metricSet struct {
	sides []*side
	out   []*metric
}

// add evaluates one figure for every side; a figure no side has is left out.
func (ms *metricSet) add(group, name string, better int, format func(float64) string, get func(*side) float64) {
	m := &metric{Group: group, Name: name, Better: better, Format: format}
	measured := false
	for _, s := range ms.sides {
		v := get(s)
		m.Values = append(m.Values, v)
		measured = measured || !math.IsNaN(v)
	}
	if measured {
		ms.out = append(ms.out, m)
	}
}

// coverage is how much of the offered stream each side serves: shown, never won.
func (ms *metricSet) coverage() {
	ms.add("coverage", "operations served", 0, func(v float64) string { return fmt.Sprintf("%.0f", v) }, func(s *side) float64 {
		if s.V.Coverage.Ops == 0 {
			return nan
		}
		return float64(s.V.Coverage.ServedOps)
	})
	ms.add("coverage", "offered traffic served", 0, units.Pct, func(s *side) float64 {
		if s.V.Coverage.Ops == 0 {
			return nan
		}
		return s.V.Coverage.ServedShare
	})
}

// latency is the throughput, latency, error, late and dropped figures of the operations
// get returns for a side (nil or nothing done: no figure).
func (ms *metricSet) latency(group string, get func(*side) *results.OpStats) {
	op := func(s *side) *results.OpStats {
		o := get(s)
		if o == nil || (o.Completed == 0 && o.Response.Count == 0) {
			return nil
		}
		return o
	}
	// of is a figure of a side's operations; nan where it has none.
	of := func(f func(o *results.OpStats) float64) func(*side) float64 {
		return func(s *side) float64 {
			if o := op(s); o != nil {
				return f(o)
			}
			return nan
		}
	}
	lat := func(f func(o *results.OpStats) float64) func(*side) float64 {
		return of(func(o *results.OpStats) float64 {
			if o.Response.Count == 0 {
				return nan
			}
			return f(o)
		})
	}
	ms.add(group, "achieved/s", higherWins, units.Count, of(func(o *results.OpStats) float64 { return o.AchievedRate }))
	ms.add(group, "achieved / target", higherWins, units.Pct, of(func(o *results.OpStats) float64 {
		if o.TargetRate > 0 {
			return o.AchievedRate / o.TargetRate
		}
		return nan
	}))
	ms.add(group, "p50", lowerWins, units.Ms, lat(func(o *results.OpStats) float64 { return o.Response.P50 }))
	ms.add(group, "p90", lowerWins, units.Ms, lat(func(o *results.OpStats) float64 { return o.Response.P90 }))
	ms.add(group, "p99", lowerWins, units.Ms, lat(func(o *results.OpStats) float64 { return o.Response.P99 }))
	ms.add(group, "p99.9", lowerWins, units.Ms, lat(func(o *results.OpStats) float64 { return o.Response.P999 }))
	ms.add(group, "p99.99", lowerWins, units.Ms, lat(func(o *results.OpStats) float64 { return o.Response.P9999 }))
	ms.add(group, "max", lowerWins, units.Ms, lat(func(o *results.OpStats) float64 { return o.Response.Max }))
	ms.add(group, "service p99", lowerWins, units.Ms, of(func(o *results.OpStats) float64 {
		if o.Service.Count > 0 {
			return o.Service.P99
		}
		return nan
	}))
	ms.add(group, "error rate", lowerWins, units.Pct, of(func(o *results.OpStats) float64 { return o.ErrorRate }))
	ms.add(group, "late share", lowerWins, units.Pct, of(func(o *results.OpStats) float64 {
		if o.Scheduled > 0 {
			return float64(o.Late) / float64(o.Scheduled)
		}
		return nan
	}))
	ms.add(group, "dropped", lowerWins, func(v float64) string { return units.Count(v) }, of(func(o *results.OpStats) float64 { return float64(o.Dropped) }))
}

// hot is a hot-partition figure of a side; nan where the side has no hotspots.
func hot(f func(h *results.HotspotsVariant) float64) func(*side) float64 {
	return func(s *side) float64 {
		if s.Hot == nil {
			return nan
		}
		return f(s.Hot)
	}
}

// nodes is how evenly the load spreads over the nodes or shards.
func (ms *metricSet) nodes() {
	const group = "nodes / shards"
	// spread is a figure of the node loads; nan without any.
	spread := func(f func(h *results.HotspotsVariant) float64) func(*side) float64 {
		return hot(func(h *results.HotspotsVariant) float64 {
			if len(h.Nodes) == 0 {
				return nan
			}
			return f(h)
		})
	}
	ms.add(group, "max/mean load", lowerWins, FormatRatio, hot(maxOverMean))
	ms.add(group, "CV of load", lowerWins, FormatFloat, spread(func(h *results.HotspotsVariant) float64 { return h.Balance.CV }))
	ms.add(group, "Gini of load", lowerWins, FormatFloat, spread(func(h *results.HotspotsVariant) float64 { return h.Balance.Gini }))
	ms.add(group, "nodes over 30%", lowerWins, func(v float64) string { return fmt.Sprintf("%.0f", v) }, spread(func(h *results.HotspotsVariant) float64 {
		return float64(len(overList(h)))
	}))
}

// partitions is the hottest partition and the largest projected partition of a side.
func (ms *metricSet) partitions() {
	ms.add("partitions", "hottest partition share", lowerWins, units.Pct, hot(func(h *results.HotspotsVariant) float64 {
		p, _ := hottest(h)
		if p == nil {
			return nan
		}
		return p.Share
	}))
	ms.add("partitions", "largest projected size", lowerWins, units.Bytes, hot(func(h *results.HotspotsVariant) float64 {
		big, _ := largestProjection(h)
		if big == nil {
			return nan
		}
		return float64(big.ProjectedBytes)
	}))
	ms.add("partitions", "projections over limit", lowerWins, func(v float64) string { return fmt.Sprintf("%.0f", v) }, hot(func(h *results.HotspotsVariant) float64 {
		big, over := largestProjection(h)
		if big == nil {
			return nan
		}
		return float64(over)
	}))
}

// entity is entity e's hot partitions; a side's busiest table of the entity stands for it.
func (ms *metricSet) entity(e string) {
	group := "entity " + e
	// busiest is a figure of the side's busiest table of e; nan where it has none.
	busiest := func(f func(t *results.TableHotspots) float64) func(*side) float64 {
		return hot(func(h *results.HotspotsVariant) float64 {
			var best *results.TableHotspots
			for i := range h.Tables {
				t := &h.Tables[i]
				if entityOf(*t) == e && (best == nil || t.Ops > best.Ops) {
					best = t
				}
			}
			if best == nil {
				return nan
			}
			return f(best)
		})
	}
	ms.add(group, "hottest partition share", lowerWins, units.Pct, busiest(func(t *results.TableHotspots) float64 {
		if p := t.Hottest(); p != nil {
			return p.Share
		}
		return nan
	}))
	ms.add(group, "top 1% of partitions take", lowerWins, units.Pct, busiest(func(t *results.TableHotspots) float64 { return topShare(t, 0.01) }))
	ms.add(group, "largest projected size", lowerWins, units.Bytes, busiest(func(t *results.TableHotspots) float64 {
		var mx float64 = nan
		for _, pr := range t.Projections {
			if math.IsNaN(mx) || float64(pr.ProjectedBytes) > mx {
				mx = float64(pr.ProjectedBytes)
			}
		}
		return mx
	}))
}

func (r *renderer) comparison() *compareView {
	sides := r.sides
	cv := &compareView{}
	if len(sides) < 2 {
		cv.Intro = "Only one variant: nothing to compare. Give several results directories, or one with several variants."
		return cv
	}
	cmp := compareOps(sides)
	ms := comparisonMetrics(sides, cmp)
	base := sides[0]
	cv.Intro = fmt.Sprintf("Every figure of every variant. Lower wins for latency, error rates, "+
		"late and dropped operations, hot-partition shares, node imbalance and projected "+
		"sizes; higher wins for achieved throughput. Values within %g%% of the best tie. "+
		"Changes are against %s (the first variant given): a percentage, or a factor (×, ÷) "+
		"beyond twice.",
		tieTolerance*100, base.Label)
	if cmp.partial {
		cv.Intro += fmt.Sprintf(" The variants do not serve the same operations: an operation is "+
			"compared among the variants that serve it (“—” where one does not), coverage is "+
			"shown but wins nothing, and “all operations” is replaced by the %d operations "+
			"every variant serves (%s).",
			len(cmp.common), orNone(cmp.common))
	}
	if len(cmp.leftOut) > 0 {
		cv.Intro += " Left out, fewer than two variants serve them: " + strings.Join(cmp.leftOut, ", ") + "."
	}
	if cmp.mergeErr != nil {
		cv.Intro += " Could not merge the common operations: " + cmp.mergeErr.Error() + "."
	}
	two := len(sides) == 2
	h := []string{"figure"}
	for _, s := range sides {
		h = append(h, s.Label)
	}
	if two {
		h = append(h, "Δ", "change")
	}
	h = append(h, "better")
	t := &table{Head: heads(h...)}
	for i := 1; i <= len(sides); i++ {
		t.Head[i].Class = "num"
	}
	if two {
		t.Head[3].Class, t.Head[4].Class = "num", "num"
	}
	wins := make([]int, len(sides))
	ties := 0
	group := ""
	for _, m := range ms {
		if m.Group != group {
			group = m.Group
			t.Rows = append(t.Rows, row{Group: group})
		}
		win, allTie := m.winners()
		isWin := map[int]bool{}
		for _, w := range win {
			isWin[w] = true
		}
		cells := []cell{{Text: m.Name}}
		for i, v := range m.Values {
			c := num(m.Format(v))
			if math.IsNaN(v) {
				c.Class += " muted"
			} else if isWin[i] && !allTie {
				c.Class += " best"
			}
			if !two && i > 0 && !math.IsNaN(v) && !math.IsNaN(m.Values[0]) {
				ch := FormatChange(m.Values[0], v)
				c.Title = ch + " vs " + base.Label
				c.Text += " (" + ch + ")"
			}
			cells = append(cells, c)
		}
		if two {
			a, b := m.Values[0], m.Values[1]
			d, dp := num("—"), num("—")
			if !math.IsNaN(a) && !math.IsNaN(b) {
				d = num(signed(m.Format, b-a))
				dp = num(FormatChange(a, b))
				if !near(a, b) {
					cls := " better"
					if float64(m.Better)*(b-a) < 0 {
						cls = " worse"
					}
					d.Class += cls
					dp.Class += cls
				}
			}
			cells = append(cells, d, dp)
		}
		verdict := cell{Text: "—", Class: "muted"}
		switch {
		case allTie:
			verdict = cell{Text: "tie"}
			ties++
		case len(win) > 0:
			var names []string
			for _, w := range win {
				names = append(names, sides[w].Label)
				wins[w]++
			}
			verdict = cell{Text: strings.Join(names, ", "), Class: "good"}
			if len(win) > 1 {
				verdict.Text = "tie: " + verdict.Text
			}
		}
		cells = append(cells, verdict)
		t.Rows = append(t.Rows, row{Cells: cells})
	}
	cv.Table = t
	score := &table{Caption: "How many figures each variant wins (a figure shared by several " +
		"variants within 1% counts for each; a tie among all counts for none). A count, not " +
		"a verdict: one p99.9 can matter more than ten medians.",
		Head: heads("variant", "figures won", "figures measured")}
	score.Head[1].Class, score.Head[2].Class = "num", "num"
	for i, s := range sides {
		measured := 0
		for _, m := range ms {
			if !math.IsNaN(m.Values[i]) {
				measured++
			}
		}
		score.Rows = append(score.Rows, row{Cells: []cell{sideCell(s), num(fmt.Sprint(wins[i])), num(fmt.Sprint(measured))}})
	}
	score.Rows = append(score.Rows, row{Cells: []cell{{Text: "ties among all"}, num(fmt.Sprint(ties)), num(fmt.Sprint(len(ms)))}})
	cv.Score = score
	return cv
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// signed formats a difference with an explicit sign.
func signed(format func(float64) string, d float64) string {
	if d > 0 {
		return "+" + format(d)
	}
	if d == 0 {
		return "0"
	}
	return format(d) // the formatters print the minus sign
}
