package reports

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/shardbench/shardbench/internal/results"
)

// Charts of the server-side figures (server.json series).

func serverSeriesChart(s *side, metric string, series []results.ServerSeries) (*figure, error) {
	unit := series[0].Unit
	ylabel := metric
	if unit != "" && unit != "ratio" {
		ylabel += " (" + unit + ")"
	}
	p := newPlot(fmt.Sprintf("%s: %s per node (server side)", s.Label, metric), "time since the variant started", ylabel)
	p.X.Tick.Marker = secondsTicks{}
	switch unit {
	case "ratio":
		p.Y.Tick.Marker = pctTicks{}
	case "bytes":
		p.Y.Tick.Marker = bytesTicks{}
	default:
		p.Y.Tick.Marker = countTicks{}
	}
	tm := phaseAndEventMarks([]*side{s})
	p.Add(tm.shade)
	grid(p)
	var legend []legendEntry
	for i, sr := range series {
		var pts plotter.XYs
		for _, pt := range sr.Points {
			if !math.IsNaN(pt[1]) && !math.IsInf(pt[1], 0) {
				pts = append(pts, plotter.XY{X: pt[0], Y: pt[1]})
			}
		}
		if len(pts) == 0 {
			continue
		}
		ln, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		ln.LineStyle = lineStyle(palette(i), 1.8, dashesFor(i))
		p.Add(ln)
		name := sr.Node
		if name == "" {
			name = "cluster"
		}
		legend = append(legend, legendEntry{name, lineThumb(ln.LineStyle)})
	}
	if len(legend) == 0 {
		return nil, nil
	}
	p.Add(tm.marks)
	p.Y.Min = math.Min(0, p.Y.Min)
	p.Y.Max *= 1.12
	timeRange(p, []*side{s})
	return &figure{p, legend}, nil
}

// minSlots keeps horizontal bars from growing fat when there are few: the axis always has
// room for at least 5 bars, stacked from the top.
func minSlots(p *plot.Plot, n int) {
	const slots = 5
	if n < slots {
		p.Y.Min = float64(n) - 0.4 - slots
		p.Y.Max = float64(n) - 0.4
	}
}
