package reports

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/units"
)

// Charts of the hot-partition section: load per node or shard, cumulative share of the
// partitions, the top partitions, projected partition sizes.

// nodeOverlayChart: every side's nodes sorted by load, as multiples of that side's mean,
// with the ±30% band: designs with different node counts compare on one chart.
func nodeOverlayChart(sides []*side) (*figure, error) {
	p := newPlot("Node / shard load relative to the mean (busiest first)", "node or shard rank (1 = busiest)", "load ÷ mean load")
	var legend []legendEntry
	band := hband{Lo: 0.7, Mid: 1, Hi: 1.3, Fill: bandGreen, Line: lineStyle(grey, 1, []vg.Length{vg.Points(4), vg.Points(3)}), Label: "mean, ±30% band"}
	p.Add(band)
	grid(p)
	n, maxNodes := 0, 0
	for _, s := range sides {
		if s.Hot == nil || len(s.Hot.Nodes) == 0 {
			continue
		}
		loads := make([]float64, 0, len(s.Hot.Nodes))
		var sum float64
		for _, nd := range s.Hot.Nodes {
			loads = append(loads, float64(nd.Ops))
			sum += float64(nd.Ops)
		}
		if sum == 0 {
			continue
		}
		mean := sum / float64(len(loads))
		sort.Sort(sort.Reverse(sort.Float64Slice(loads)))
		var pts plotter.XYs
		for i, l := range loads {
			pts = append(pts, plotter.XY{X: float64(i + 1), Y: l / mean})
		}
		ln, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, err
		}
		ln.LineStyle = lineStyle(s.Color, 1.8, dashesFor(s.Index))
		sc.GlyphStyle = draw.GlyphStyle{Color: s.Color, Radius: vg.Points(3), Shape: draw.CircleGlyph{}}
		p.Add(ln, sc)
		legend = append(legend, legendEntry{fmt.Sprintf("%s (max %s)", s.Label, FormatRatio(loads[0]/mean)), lineThumb(ln.LineStyle)})
		n++
		maxNodes = max(maxNodes, len(loads))
	}
	if n == 0 {
		return nil, nil
	}
	p.X.Min, p.X.Max = 0.5, float64(maxNodes)+0.5
	p.X.Tick.Marker = intTicks{}
	p.Y.Min = 0
	p.Y.Max = math.Max(p.Y.Max*1.08, 1.5)
	return &figure{p, legend}, nil
}

type intTicks struct{}

func (intTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	var out []plot.Tick
	for _, t := range ts {
		if t.Value == math.Trunc(t.Value) && t.Value >= 1 {
			out = append(out, plot.Tick{Value: t.Value, Label: fmt.Sprintf("%.0f", t.Value)})
		}
	}
	return out
}

// cumulativeChart: for one logical entity, the share of operations the top fraction of
// partitions take, one line per side's table, against the even spread.
func cumulativeChart(entity string, sides []*side, maxLines int) (*figure, int, error) {
	p := newPlot(fmt.Sprintf("%s: share of operations taken by the top partitions", entity), "top fraction of partitions (log scale)", "share of the table's operations")
	p.X.Tick.Marker = log10Ticks{tickPct}
	p.Y.Tick.Marker = pctTicks{}
	grid(p)
	var legend []legendEntry
	lo := 1.0
	lines, omitted := 0, 0
	for _, s := range sides {
		if s.Hot == nil {
			continue
		}
		var tables []*results.TableHotspots
		for i := range s.Hot.Tables {
			if entityOf(s.Hot.Tables[i]) == entity {
				tables = append(tables, &s.Hot.Tables[i])
			}
		}
		for ti, t := range tables {
			pts := cumulative(t)
			if len(pts) == 0 {
				continue
			}
			if lines >= maxLines {
				omitted++
				continue
			}
			var xy plotter.XYs
			for _, sp := range pts {
				if sp.Fraction > 0 {
					xy = append(xy, plotter.XY{X: math.Log10(sp.Fraction), Y: sp.Share})
					lo = math.Min(lo, sp.Fraction)
				}
			}
			if len(xy) == 0 {
				continue
			}
			if xy[len(xy)-1].X < 0 {
				xy = append(xy, plotter.XY{X: 0, Y: 1})
			}
			ln, sc, err := plotter.NewLinePoints(xy)
			if err != nil {
				return nil, 0, err
			}
			ln.LineStyle = lineStyle(s.Color, 2.2, classDash(ti))
			sc.GlyphStyle = draw.GlyphStyle{Color: s.Color, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
			p.Add(ln, sc)
			label := s.Label
			if len(tables) > 1 || len(sides) == 1 {
				label += " · " + shortTable(t.Table)
			}
			fig := fmt.Sprintf("top 1%%: %s", units.Pct(topShare(t, 0.01)))
			if p := t.Hottest(); t.Partitions < 100 && p != nil {
				fig = "hottest: " + units.Pct(p.Share)
			}
			legend = append(legend, legendEntry{fmt.Sprintf("%s (%s)", label, fig), lineThumb(ln.LineStyle)})
			lines++
		}
	}
	if lines == 0 {
		return nil, 0, nil
	}
	lo = math.Min(lo, 0.001)
	llo := math.Floor(math.Log10(lo))
	// The even spread: the top x of partitions take x of the operations.
	var even plotter.XYs
	for e := llo; e <= 0.0001; e += 0.05 {
		even = append(even, plotter.XY{X: e, Y: math.Pow(10, e)})
	}
	ln, err := plotter.NewLine(even)
	if err != nil {
		return nil, 0, err
	}
	ln.LineStyle = lineStyle(grey, 1.2, []vg.Length{vg.Points(3), vg.Points(3)})
	p.Add(ln)
	legend = append(legend, legendEntry{"even spread", lineThumb(ln.LineStyle)})
	p.Add(vmarks{
		{X: -2, Label: "top 1%", Color: grey, Dash: []vg.Length{vg.Points(1), vg.Points(3)}, Bottom: false},
		{X: -1, Label: "top 10%", Color: grey, Dash: []vg.Length{vg.Points(1), vg.Points(3)}, Bottom: false},
	})
	p.X.Min, p.X.Max = llo, 0
	p.Y.Min, p.Y.Max = 0, 1.02
	return &figure{p, legend}, omitted, nil
}

func shortTable(t string) string {
	if i := strings.LastIndexByte(t, '.'); i >= 0 && i < len(t)-1 {
		return t[i+1:]
	}
	return t
}

// topPartitionsChart: the side's heaviest partitions (over all its tables) as shares of
// their table's operations.
func topPartitionsChart(s *side, maxBars int) (*figure, error) {
	if s.Hot == nil {
		return nil, nil
	}
	type entry struct {
		p   *results.PartitionLoad
		t   *results.TableHotspots
		idx int
	}
	var all []entry
	for i := range s.Hot.Tables {
		t := &s.Hot.Tables[i]
		for j := range t.Top {
			all = append(all, entry{&t.Top[j], t, i})
		}
	}
	if len(all) == 0 {
		return nil, nil
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].p.Ops != all[j].p.Ops {
			return all[i].p.Ops > all[j].p.Ops
		}
		return all[i].p.Share > all[j].p.Share
	})
	if len(all) > maxBars {
		all = all[:maxBars]
	}
	b := &bars{Horizontal: true}
	var labels []string
	tableColor := map[int]color.RGBA{}
	var legend []legendEntry
	for _, e := range all {
		b.Values = append(b.Values, e.p.Share)
		c, ok := tableColor[e.idx]
		if !ok {
			c = palette(len(tableColor))
			tableColor[e.idx] = c
			legend = append(legend, legendEntry{shortTable(e.t.Table), boxThumb{c}})
		}
		b.Colors = append(b.Colors, c)
		b.Texts = append(b.Texts, fmt.Sprintf("%s · %s ops", units.Pct(e.p.Share), units.Count(float64(e.p.Ops))))
		labels = append(labels, Truncate(e.p.Key, 40))
	}
	p := newPlot(fmt.Sprintf("%s: hottest partitions", s.Label), "share of its table's operations", "")
	p.X.Tick.Marker = pctTicks{}
	p.Y.Tick.Marker = categoryTicks(labels, true)
	p.Y.Tick.Label.Font.Size = noteSize
	p.Y.Padding = 0
	gridOnly(p, false, true)
	p.Add(b)
	p.X.Min = 0
	p.X.Max = math.Min(math.Max(p.X.Max*1.45, 0.05), 1) // room for the value labels
	minSlots(p, len(labels))
	return &figure{p, legend}, nil
}

// nodeLoadChart: one bar per node or shard, its share of the load, the mean line and the
// ±30% band; bars outside the band in red (over) or blue (under).
func nodeLoadChart(s *side) (*figure, error) {
	if s.Hot == nil || len(s.Hot.Nodes) == 0 {
		return nil, nil
	}
	nodes := s.Hot.Nodes
	var sum float64
	for _, n := range nodes {
		sum += float64(n.Ops)
	}
	if sum == 0 {
		return nil, nil
	}
	mean := sum / float64(len(nodes))
	b := &bars{}
	var labels []string
	for _, n := range nodes {
		v := float64(n.Ops)
		b.Values = append(b.Values, v)
		c := color.Color(calmGrey)
		switch {
		case v > mean*1.3:
			c = hotRed
		case v < mean*0.7:
			c = coolBlue
		}
		b.Colors = append(b.Colors, c)
		b.Texts = append(b.Texts, FormatDeviation(v/mean-1))
		labels = append(labels, Truncate(n.Node, 18))
	}
	what := "node"
	if s.Hot.Database == "mongodb" {
		what = "shard"
	}
	p := newPlot(fmt.Sprintf("%s: load per %s (mean and ±30%% band)", s.Label, what), "", "operations ("+opsWhat(s.Hot.Database)+")")
	p.Y.Tick.Marker = countTicks{}
	p.X.Tick.Marker = categoryTicks(labels, false)
	if len(labels) > 8 {
		p.X.Tick.Label.Rotation = math.Pi / 5
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YCenter
	}
	p.Add(hband{Lo: mean * 0.7, Mid: mean, Hi: mean * 1.3, Fill: bandGreen, Line: lineStyle(black, 1.2, []vg.Length{vg.Points(5), vg.Points(3)}), Label: "mean " + units.Count(mean)})
	gridOnly(p, true, false)
	p.Add(b)
	p.Y.Min = 0
	p.Y.Max *= 1.1
	legend := []legendEntry{
		{"> 30% above mean", boxThumb{hotRed}},
		{"within ±30%", boxThumb{calmGrey}},
		{"> 30% below mean", boxThumb{coolBlue}},
		{"±30% band", boxThumb{bandGreen}},
	}
	return &figure{p, legend}, nil
}

func opsWhat(db string) string {
	if db == "mongodb" {
		return "shard operations"
	}
	return "replica operations"
}

// sizeChart: the largest projected partitions against their limit (Cassandra's ~100 MB
// guidance, MongoDB's chunk size).
func sizeChart(s *side, maxBars int) (*figure, error) {
	if s.Hot == nil {
		return nil, nil
	}
	type entry struct {
		pr    results.SizeProjection
		table string
	}
	var all []entry
	for _, t := range s.Hot.Tables {
		for _, pr := range t.Projections {
			if pr.ProjectedBytes > 0 {
				all = append(all, entry{pr, t.Table})
			}
		}
	}
	if len(all) == 0 {
		return nil, nil
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].pr.ProjectedBytes > all[j].pr.ProjectedBytes })
	if len(all) > maxBars {
		all = all[:maxBars]
	}
	b := &bars{Horizontal: true}
	var labels []string
	lo, hi := math.Inf(1), math.Inf(-1)
	limits := map[int64]bool{}
	for _, e := range all {
		v := float64(e.pr.ProjectedBytes)
		b.Values = append(b.Values, v)
		c := color.Color(calmGrey)
		if e.pr.Over() {
			c = hotRed
		}
		b.Colors = append(b.Colors, c)
		text := units.Bytes(v)
		if e.pr.LimitRows > 0 && e.pr.ProjectedRows > e.pr.LimitRows {
			text += fmt.Sprintf(", %s rows > %s", units.Count(float64(e.pr.ProjectedRows)), units.Count(float64(e.pr.LimitRows)))
		}
		b.Texts = append(b.Texts, text)
		labels = append(labels, Truncate(shortTable(e.table)+" "+e.pr.Key, 40))
		lo, hi = math.Min(lo, v), math.Max(hi, v)
		if e.pr.LimitBytes > 0 {
			limits[e.pr.LimitBytes] = true
			lo, hi = math.Min(lo, float64(e.pr.LimitBytes)), math.Max(hi, float64(e.pr.LimitBytes))
		}
	}
	p := newPlot(fmt.Sprintf("%s: projected partition size vs limit", s.Label), "projected size at the design's horizon", "")
	p.Y.Tick.Marker = categoryTicks(labels, true)
	p.Y.Tick.Label.Font.Size = noteSize
	logX := hi/lo > 100
	if logX {
		b.LogScale = true
		for i, v := range b.Values {
			b.Values[i] = math.Log10(v)
		}
		p.X.Tick.Marker = bytesLog10Ticks{}
		p.X.Label.Text += " (log scale)"
	} else {
		p.X.Tick.Marker = bytesTicks{}
	}
	grid(p)
	p.Add(b)
	var marks vmarks
	for l := range limits {
		x := float64(l)
		if logX {
			x = math.Log10(x)
		}
		marks = append(marks, vmark{X: x, Label: "limit " + units.Bytes(float64(l)), Color: hotRed, Width: 1.6, Dash: []vg.Length{vg.Points(6), vg.Points(3)}, Bottom: true})
	}
	p.Add(marks)
	if logX {
		p.X.Min = math.Log10(lo) - 0.3
		p.X.Max = math.Log10(hi) + 1.1 // room for the value labels
	} else {
		p.X.Min = 0
		p.X.Max = hi * 1.9
	}
	minSlots(p, len(labels))
	legend := []legendEntry{{"exceeds the limit", boxThumb{hotRed}}, {"within the limit", boxThumb{calmGrey}}}
	return &figure{p, legend}, nil
}
