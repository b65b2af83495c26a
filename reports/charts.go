package reports

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/units"
)

// Chart is one PNG of a report.
type Chart struct {
	ID      string // file name without .png
	Title   string
	Caption string // one sentence under the image: what to look at
	Src     string // relative path from report.html, or a data: URI
	File    string // absolute path of the PNG written ("" when embedded)
}

// figure is a chart about to be drawn.
type figure struct {
	plot   *plot.Plot
	legend []legendEntry
}

// ---- latency spectrum ----

// nines are the labelled percentiles of the HdrHistogram percentile-spectrum x axis,
// x = log10(1/(1-q)).
var nines = []struct {
	q     float64
	label string
}{{0, ""}, {0.5, "50%"}, {0.9, "90%"}, {0.99, "99%"}, {0.999, "99.9%"}, {0.9999, "99.99%"}, {0.99999, "99.999%"}, {0.999999, "99.9999%"}}

func ninesX(q float64) float64 { return math.Log10(1 / (1 - q)) }

type ninesTicks struct{}

func (ninesTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for _, n := range nines {
		x := ninesX(n.q)
		if x <= hi+1e-9 {
			ts = append(ts, plot.Tick{Value: x, Label: n.label})
		}
	}
	return ts
}

// spectrum samples a histogram's percentile spectrum, log10(milliseconds), on the nines axis,
// up to the last percentile the sample can resolve (1 − 1/count), at most 99.999%.
func spectrum(h *hdr.Histogram) plotter.XYs {
	n := h.TotalCount()
	if n == 0 {
		return nil
	}
	xmax := math.Min(5, math.Log10(float64(n)))
	xmax = math.Max(xmax, 0.3)
	var pts plotter.XYs
	for x := 0.0; ; x += 0.02 {
		if x > xmax {
			x = xmax
		}
		q := 100 * (1 - math.Pow(10, -x))
		v := float64(h.ValueAtQuantile(q)) / 1e6
		pts = append(pts, plotter.XY{X: x, Y: math.Log10(math.Max(v, 0.001))})
		if x >= xmax {
			break
		}
	}
	return pts
}

type latencyPick func(s *side) (resp, svc *results.Latency)

// latencyChart draws response time (solid) and service time (dashed) spectra, one colour
// per side.
func latencyChart(title string, sides []*side, pick latencyPick, withService bool) (*figure, error) {
	p := newPlot(title, "percentile (HdrHistogram nines scale: each step right is ten times rarer)", "latency (log scale)")
	p.X.Tick.Marker = ninesTicks{}
	p.Y.Tick.Marker = log10Ticks{tickMs}
	grid(p)
	var legend []legendEntry
	lo, hi, xmax := math.Inf(1), math.Inf(-1), 0.0
	lines := 0
	for _, s := range sides {
		resp, svc := pick(s)
		if resp == nil || resp.Count == 0 {
			continue
		}
		kinds := []struct {
			l    *results.Latency
			dash []vg.Length
			name string
		}{{resp, dashesFor(s.Index), "response"}}
		if withService && svc != nil && svc.Count > 0 {
			kinds = append(kinds, struct {
				l    *results.Latency
				dash []vg.Length
				name string
			}{svc, []vg.Length{vg.Points(6), vg.Points(4)}, "service"})
		}
		for _, k := range kinds {
			h, err := k.l.DecodeHistogram()
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", s.Label, k.name, err)
			}
			pts := spectrum(h)
			if len(pts) == 0 {
				continue
			}
			ln, err := plotter.NewLine(pts)
			if err != nil {
				return nil, err
			}
			w := 2.2
			if k.name == "service" {
				w = 1.6
			}
			ln.LineStyle = lineStyle(s.Color, w, k.dash)
			p.Add(ln)
			lines++
			for _, pt := range pts {
				lo, hi = math.Min(lo, pt.Y), math.Max(hi, pt.Y)
			}
			xmax = math.Max(xmax, pts[len(pts)-1].X)
		}
		legend = append(legend, legendEntry{s.Label, lineThumb(lineStyle(s.Color, 2.5, dashesFor(s.Index)))})
	}
	if lines == 0 {
		return nil, nil
	}
	if withService {
		legend = append(legend,
			legendEntry{"solid: response time", lineThumb(lineStyle(grey, 2, nil))},
			legendEntry{"dashed: service time", lineThumb(lineStyle(grey, 1.6, []vg.Length{vg.Points(6), vg.Points(4)}))})
	}
	p.X.Min, p.X.Max = 0, math.Max(xmax, 1)
	p.Y.Min, p.Y.Max = lo-0.1, hi+0.1
	return &figure{p, legend}, nil
}

// ---- time line ----

type timeMarks struct {
	shade xshade
	marks vmarks
}

// phaseAndEventMarks builds phase stripes and boundaries (from the first run with phases)
// and every side's events; an event several variants share is marked once.
func phaseAndEventMarks(sides []*side) timeMarks {
	var tm timeMarks
	tm.shade.Color = lightGrey
	for _, s := range sides {
		ph := s.Run.Sum.Phases
		if len(ph) == 0 {
			continue
		}
		for i, p := range ph {
			if i%2 == 1 {
				tm.shade.Spans = append(tm.shade.Spans, [2]float64{p.StartS, p.EndS})
			}
			tm.marks = append(tm.marks, vmark{X: p.StartS, Label: p.Name, Color: grey, Dash: []vg.Length{vg.Points(2), vg.Points(3)}, Width: 0.8})
		}
		break
	}
	type key struct {
		at             float64
		action, target string
	}
	var keys []key
	who := map[key][]*side{}
	failed := map[key]bool{}
	for _, s := range sides {
		for _, e := range s.V.Events {
			k := key{e.AtS, e.Action, e.Target}
			if _, ok := who[k]; !ok {
				keys = append(keys, k)
			}
			who[k] = append(who[k], s)
			failed[k] = failed[k] || e.Error != ""
		}
	}
	for _, k := range keys {
		label := strings.TrimSpace(k.action + " " + k.target)
		if failed[k] {
			label += " (failed)"
		}
		c := color.Color(eventRed)
		if len(sides) > 1 {
			if ws := who[k]; len(ws) == 1 {
				label = ws[0].Label + ": " + label
				c = ws[0].Color
			} else if len(ws) < len(sides) {
				label += fmt.Sprintf(" (%d variants)", len(ws))
			}
		}
		tm.marks = append(tm.marks, vmark{X: k.at, Label: Truncate(label, 44), Color: c, Width: 1.8, Dash: []vg.Length{vg.Points(6), vg.Points(2)}, Bottom: true})
	}
	return tm
}

// timeRange makes a time axis start at 0 and cover the longest schedule or series.
func timeRange(p *plot.Plot, sides []*side) {
	p.X.Min = 0
	for _, s := range sides {
		p.X.Max = math.Max(p.X.Max, s.Run.Sum.Scenario.DurationS)
		if n := len(s.Points); n > 0 {
			p.X.Max = math.Max(p.X.Max, s.Points[n-1].EndS)
		}
	}
}

func hasEvents(sides []*side) bool {
	for _, s := range sides {
		if len(s.V.Events) > 0 {
			return true
		}
	}
	return false
}

func throughputChart(sides []*side) (*figure, error) {
	p := newPlot("Throughput: target vs achieved", "time since the variant started", "operations per second")
	p.X.Tick.Marker = secondsTicks{}
	p.Y.Tick.Marker = countTicks{}
	tm := phaseAndEventMarks(sides)
	p.Add(tm.shade)
	grid(p)
	var legend []legendEntry
	targets := map[*run]bool{}
	n := 0
	for _, s := range sides {
		if len(s.Points) == 0 {
			continue
		}
		if !targets[s.Run] {
			targets[s.Run] = true
			var tpts plotter.XYs
			for _, pt := range s.Points {
				tpts = append(tpts, plotter.XY{X: pt.StartS, Y: pt.TargetRate}, plotter.XY{X: pt.EndS, Y: pt.TargetRate})
			}
			ln, err := plotter.NewLine(tpts)
			if err != nil {
				return nil, err
			}
			ln.LineStyle = lineStyle(black, 1.6, []vg.Length{vg.Points(5), vg.Points(3)})
			p.Add(ln)
			label := "target"
			if countRuns(sides) > 1 {
				label = "target (" + s.Run.Label + ")"
			}
			legend = append(legend, legendEntry{label, lineThumb(ln.LineStyle)})
		}
		var apts plotter.XYs
		for _, pt := range s.Points {
			apts = append(apts, plotter.XY{X: (pt.StartS + pt.EndS) / 2, Y: pt.AchievedRate})
		}
		ln, err := plotter.NewLine(apts)
		if err != nil {
			return nil, err
		}
		ln.LineStyle = lineStyle(s.Color, 1.8, dashesFor(s.Index))
		p.Add(ln)
		legend = append(legend, legendEntry{s.Label + " achieved", lineThumb(ln.LineStyle)})
		n++
	}
	if n == 0 {
		return nil, nil
	}
	p.Add(tm.marks)
	p.Y.Min = 0
	p.Y.Max *= 1.12 // room for the phase labels
	timeRange(p, sides)
	return &figure{p, legend}, nil
}

func countRuns(sides []*side) int {
	m := map[*run]bool{}
	for _, s := range sides {
		m[s.Run] = true
	}
	return len(m)
}

func p99Chart(sides []*side) (*figure, error) {
	p := newPlot("Response time p99 over time (service time p99 dashed)", "time since the variant started", "p99 per second (log scale)")
	p.X.Tick.Marker = secondsTicks{}
	p.Y.Tick.Marker = log10Ticks{tickMs}
	tm := phaseAndEventMarks(sides)
	p.Add(tm.shade)
	grid(p)
	withService := len(sides) <= 5
	var legend []legendEntry
	lo, hi := math.Inf(1), math.Inf(-1)
	n := 0
	for _, s := range sides {
		var rpts, spts plotter.XYs
		for _, pt := range s.Points {
			x := (pt.StartS + pt.EndS) / 2
			if pt.P99 > 0 {
				y := math.Log10(pt.P99)
				rpts = append(rpts, plotter.XY{X: x, Y: y})
				lo, hi = math.Min(lo, y), math.Max(hi, y)
			}
			if pt.ServiceP99 > 0 {
				y := math.Log10(pt.ServiceP99)
				spts = append(spts, plotter.XY{X: x, Y: y})
				lo, hi = math.Min(lo, y), math.Max(hi, y)
			}
		}
		if len(rpts) == 0 {
			continue
		}
		ln, err := plotter.NewLine(rpts)
		if err != nil {
			return nil, err
		}
		ln.LineStyle = lineStyle(s.Color, 1.8, dashesFor(s.Index))
		p.Add(ln)
		legend = append(legend, legendEntry{s.Label, lineThumb(ln.LineStyle)})
		if withService && len(spts) > 0 {
			sl, err := plotter.NewLine(spts)
			if err != nil {
				return nil, err
			}
			sl.LineStyle = lineStyle(s.Color, 1.1, []vg.Length{vg.Points(5), vg.Points(3)})
			p.Add(sl)
		}
		n++
	}
	if n == 0 {
		return nil, nil
	}
	p.Add(tm.marks)
	p.Y.Min, p.Y.Max = lo-0.15, hi+0.35 // headroom above for the phase labels
	timeRange(p, sides)
	return &figure{p, legend}, nil
}

// errorSeries is one line of the errors chart.
type errorSeries struct {
	side  *side
	class string
	total int64
}

func errorsChart(sides []*side, maxSeries int) (*figure, int, error) {
	var all []errorSeries
	for _, s := range sides {
		tot := map[string]int64{}
		for _, pt := range s.Points {
			for c, n := range pt.Errors {
				tot[c] += n
			}
			tot["dropped"] += pt.Dropped
		}
		for c, n := range tot {
			if n > 0 {
				all = append(all, errorSeries{s, c, n})
			}
		}
	}
	if len(all) == 0 {
		return nil, 0, nil
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].total != all[j].total {
			return all[i].total > all[j].total
		}
		if all[i].side.Index != all[j].side.Index {
			return all[i].side.Index < all[j].side.Index
		}
		return all[i].class < all[j].class
	})
	omitted := 0
	if len(all) > maxSeries {
		omitted = len(all) - maxSeries
		all = all[:maxSeries]
	}
	p := newPlot("Errors over time by class", "time since the variant started", "errors per second")
	p.X.Tick.Marker = secondsTicks{}
	tm := phaseAndEventMarks(sides)
	p.Add(tm.shade)
	grid(p)
	// Per-second rates of every series; a log axis when they span decades (then zero
	// seconds break the line instead of dragging it to the axis).
	rates := make([]plotter.XYs, len(all))
	lo, hi := math.Inf(1), 0.0
	for i, es := range all {
		for _, pt := range es.side.Points {
			d := pt.EndS - pt.StartS
			if d <= 0 {
				continue
			}
			n := pt.Errors[es.class]
			if es.class == "dropped" {
				n = pt.Dropped
			}
			r := float64(n) / d
			rates[i] = append(rates[i], plotter.XY{X: (pt.StartS + pt.EndS) / 2, Y: r})
			if r > 0 {
				lo, hi = math.Min(lo, r), math.Max(hi, r)
			}
		}
	}
	logY := hi/lo > 30
	if logY {
		p.Y.Label.Text = "errors per second (log scale)"
		p.Y.Tick.Marker = log10Ticks{tickCount}
	} else {
		p.Y.Tick.Marker = countTicks{}
	}
	var legend []legendEntry
	classIdx := map[string]int{}
	for i, es := range all {
		// One variant: colour by class. Several: colour by variant, dash by class.
		if _, ok := classIdx[es.class]; !ok {
			classIdx[es.class] = len(classIdx)
		}
		var ls = lineStyle(es.side.Color, 1.8, classDash(classIdx[es.class]))
		if len(sides) == 1 {
			ls = lineStyle(classColor(es.class, classIdx[es.class]), 1.8, nil)
		}
		var segments []plotter.XYs
		if logY {
			var cur plotter.XYs
			for _, pt := range rates[i] {
				if pt.Y > 0 {
					cur = append(cur, plotter.XY{X: pt.X, Y: math.Log10(pt.Y)})
					continue
				}
				if len(cur) > 0 {
					segments = append(segments, cur)
				}
				cur = nil
			}
			if len(cur) > 0 {
				segments = append(segments, cur)
			}
		} else {
			segments = []plotter.XYs{rates[i]}
		}
		for _, seg := range segments {
			ln, sc, err := plotter.NewLinePoints(seg)
			if err != nil {
				return nil, 0, err
			}
			ln.LineStyle = ls
			sc.GlyphStyle = draw.GlyphStyle{Color: ls.Color, Radius: vg.Points(1.6), Shape: draw.CircleGlyph{}}
			p.Add(ln)
			if logY {
				p.Add(sc) // single-second bursts stay visible
			}
		}
		label := es.class
		if len(sides) > 1 {
			label = es.side.Label + ": " + es.class
		}
		legend = append(legend, legendEntry{fmt.Sprintf("%s (%s)", label, units.Count(float64(es.total))), lineThumb(ls)})
	}
	p.Add(tm.marks)
	if logY {
		p.Y.Min, p.Y.Max = math.Log10(lo)-0.2, math.Log10(hi)+0.5
	} else {
		p.Y.Min = 0
		p.Y.Max *= 1.15
	}
	timeRange(p, sides)
	return &figure{p, legend}, omitted, nil
}

func classColor(class string, i int) color.RGBA {
	switch class {
	case "timeout":
		return tableau[3]
	case "unavailable":
		return tableau[4]
	case "overloaded":
		return tableau[1]
	case "dropped":
		return tableau[7]
	case "connection":
		return tableau[5]
	}
	return palette(i + 2)
}

func classDash(i int) []vg.Length {
	switch i % 4 {
	case 1:
		return []vg.Length{vg.Points(6), vg.Points(3)}
	case 2:
		return []vg.Length{vg.Points(2), vg.Points(2)}
	case 3:
		return []vg.Length{vg.Points(8), vg.Points(2), vg.Points(2), vg.Points(2)}
	}
	return nil
}
