package reports

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/units"
)

// ---- the capacity curve ----

// capacityChart draws p99 against the offered peak rate, one line per variant through its
// probes of the window (simulated) or steps (real), the whole-schedule probes that
// confirmed each answer as squares (filled: the SLO held), the steps set aside as rings
// off the line, the SLO's p99 bound, and the scenario's own peak.
func capacityChart(c *results.Capacity) (*figure, error) {
	p := newPlot("Capacity curve: worst p99 of the served operations against the offered rate",
		"offered rate at the peak, all operations (log scale)", "p99 response time (log scale)")
	p.X.Tick.Marker = log10Ticks{tickCount}
	p.Y.Tick.Marker = log10Ticks{tickMs}
	grid(p)
	var legend []legendEntry
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	span := func(x, y float64) {
		xlo, xhi, ylo, yhi = math.Min(xlo, x), math.Max(xhi, x), math.Min(ylo, y), math.Max(yhi, y)
	}
	full, setAside := false, false
	labels := variantLabels(c.Variants)
	for i, v := range c.Variants {
		pts := append([]results.CapacityPoint(nil), v.Curve...)
		sort.SliceStable(pts, func(a, b int) bool { return pts[a].Multiple < pts[b].Multiple })
		var line, pass, fail, aside plotter.XYs
		for _, pt := range pts {
			if pt.OfferedRate <= 0 || pt.P99Ms <= 0 {
				continue
			}
			xy := plotter.XY{X: math.Log10(pt.OfferedRate), Y: math.Log10(math.Max(pt.P99Ms, 0.01))}
			span(xy.X, xy.Y)
			switch {
			case pt.SetAside:
				aside = append(aside, xy)
			case pt.Kind != results.ProbeFull:
				line = append(line, xy)
			case pt.Pass:
				pass = append(pass, xy)
			default:
				fail = append(fail, xy)
			}
		}
		col := palette(i)
		style := lineStyle(col, 1.8, dashesFor(i))
		if len(line) > 0 {
			ln, sc, err := plotter.NewLinePoints(line)
			if err != nil {
				return nil, err
			}
			ln.LineStyle = style
			sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
			p.Add(ln, sc)
		}
		for k, set := range []plotter.XYs{pass, fail} {
			if len(set) == 0 {
				continue
			}
			full = true
			sc, err := plotter.NewScatter(set)
			if err != nil {
				return nil, err
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(4.5), Shape: draw.BoxGlyph{}}
			if k == 1 {
				sc.GlyphStyle.Shape = draw.SquareGlyph{}
			}
			p.Add(sc)
		}
		if len(aside) > 0 {
			setAside = true
			sc, err := plotter.NewScatter(aside)
			if err != nil {
				return nil, err
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(3.5), Shape: draw.RingGlyph{}}
			p.Add(sc)
		}
		if len(line)+len(pass)+len(fail)+len(aside) > 0 {
			legend = append(legend, legendEntry{labels[i], lineThumb(style)})
		}
	}
	if len(legend) == 0 {
		return nil, nil
	}
	if c.PeakRate > 0 {
		x := math.Log10(c.PeakRate)
		span(x, ylo)
		p.Add(vmarks{{X: x, Label: "scenario peak " + units.Count(c.PeakRate) + "/s", Color: grey, Dash: []vg.Length{vg.Points(4), vg.Points(3)}}})
	}
	if b := c.SLO.P99BoundMs; b > 0 {
		y := math.Log10(b)
		span(xlo, y)
		sty := lineStyle(eventRed, 1.4, []vg.Length{vg.Points(7), vg.Points(4)})
		p.Add(hline{Y: y, Line: sty, Label: "SLO p99 " + units.Ms(b)})
		legend = append(legend, legendEntry{"SLO: p99 < " + units.Ms(b), lineThumb(sty)})
	}
	if full {
		legend = append(legend, legendEntry{"from the start, SLO held", boxThumb{Color: grey}}, legendEntry{"from the start, SLO failed", squareThumb{}})
	}
	if setAside {
		legend = append(legend, legendEntry{"failed, held when run again", ringThumb{}})
	}
	p.X.Min, p.X.Max = xlo-0.08, xhi+0.08
	p.Y.Min, p.Y.Max = ylo-0.15, yhi+0.3
	return &figure{p, legend}, nil
}

// variantLabels are the variants' names for a legend: a sweep's variants share a long
// prefix ("seed002[products.partition_key="), which is left out so their differences fit.
func variantLabels(vs []results.CapacityVariant) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Variant
	}
	if len(vs) < 2 {
		return out
	}
	prefix := out[0]
	for _, n := range out[1:] {
		for !strings.HasPrefix(n, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	cut := strings.LastIndexByte(prefix, '=') + 1 // a sweep: keep the parameter's value whole
	if cut == 0 {
		cut = strings.LastIndexByte(prefix, '[') + 1
	}
	if cut < 8 { // too little in common to be worth it
		return out
	}
	for i := range out {
		out[i] = "…" + out[i][cut:]
	}
	return out
}

// hline is a horizontal line across the data area with a label at its right end.
type hline struct {
	Y     float64
	Line  draw.LineStyle
	Label string
}

func (h hline) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	y := trY(h.Y)
	if y < c.Min.Y || y > c.Max.Y {
		return
	}
	c.StrokeLine2(h.Line, c.Min.X, y, c.Max.X, y)
	sty := textStyle(sans, noteSize, h.Line.Color)
	sty.XAlign, sty.YAlign = draw.XRight, draw.YBottom
	c.FillText(sty, vg.Point{X: c.Max.X - vg.Points(4), Y: y + vg.Points(2)}, h.Label)
}

// squareThumb is an outlined square legend thumbnail.
type squareThumb struct{}

// ringThumb is the legend's mark for a step set aside (drawn as a ring off the line).
type ringThumb struct{}

func (ringThumb) Thumbnail(c *draw.Canvas) {
	c.DrawGlyph(draw.GlyphStyle{Color: grey, Radius: vg.Points(3.5), Shape: draw.RingGlyph{}}, c.Center())
}

func (squareThumb) Thumbnail(c *draw.Canvas) {
	ctr := c.Center()
	c.DrawGlyph(draw.GlyphStyle{Color: grey, Radius: vg.Points(4.5), Shape: draw.SquareGlyph{}}, ctr)
}

// ---- the terminal table ----

// WriteCapacityText prints a capacity search's answer for a terminal: a row per variant,
// best first (capacityOrder), then what breaks first for each in a sentence.
func WriteCapacityText(w io.Writer, c *results.Capacity) error {
	fmt.Fprintf(w, "capacity of %s on %s (%s): SLO %s [%s] on the operations each design serves; precision %s; scenario peak %s/s (%s)\n",
		c.Scenario.Name, c.Backend.Name, capacityMethod(c), c.SLO.Source, strings.Join(c.SLO.Rules, "; "), units.Pct(c.Precision), units.Count(c.PeakRate), c.PeakPhase)
	order := c.Ranking()
	width := len("variant")
	for _, i := range order {
		width = max(width, len([]rune(c.Variants[i].Variant)))
	}
	pad := func(s string) string { return s + strings.Repeat(" ", width-len([]rune(s))) }
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, pad("variant")+"\tsustains\tserved/s at peak\toffered/s at peak\theadroom\tbreaks at\tconfirmed\t  what breaks first")
	for _, i := range order {
		v := &c.Variants[i]
		cause := "-"
		if v.BreaksFirst != nil {
			cause = v.BreaksFirst.Kind + " " + Truncate(v.BreaksFirst.Subject, 60)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t  %s\n", pad(v.Variant), sustainsText(v), countOrDash(v.ServedPeakRate), countOrDash(v.SustainedPeakRate),
			headroomText(v), breaksText(v), yesNo(v.Confirmed), cause)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, i := range order {
		v := &c.Variants[i]
		if v.BreaksFirst != nil {
			fmt.Fprintf(w, "  %s breaks first at ×%s: %s\n", v.Variant, multipleText(v.Breaks), v.BreaksFirst.Summary)
		} else if v.Outcome == results.CapacityAboveRange {
			fmt.Fprintf(w, "  %s held its SLO at ×%s, the largest multiple tried (--max-multiple)\n", v.Variant, multipleText(v.Sustains))
		}
	}
	for _, n := range c.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if c.Interrupted != "" {
		fmt.Fprintf(w, "search stopped early: %s\n", c.Interrupted)
	}
	return nil
}

func capacityMethod(c *results.Capacity) string {
	switch {
	case c.Method == results.CapacitySimulated && c.Window != nil:
		return fmt.Sprintf("windows %s–%s of the %s schedule, confirmed on its first %s judged over the window", units.Seconds(c.Window.FromS), units.Seconds(c.Window.ToS), units.Seconds(c.Window.ScheduleS), units.Seconds(c.Window.ToS))
	case c.Stepping != nil:
		return fmt.Sprintf("steps of %s after %s warm-up", units.Seconds(c.Stepping.StepS), units.Seconds(c.Stepping.WarmupS))
	}
	return c.Method
}

func multipleText(m float64) string { return fmt.Sprintf("%.4g", m) }

func sustainsText(v *results.CapacityVariant) string {
	switch {
	case v.Outcome == results.CapacityAboveRange:
		return "≥ ×" + multipleText(v.Sustains)
	case v.Sustains == 0:
		return "none"
	}
	return "×" + multipleText(v.Sustains)
}

func breaksText(v *results.CapacityVariant) string {
	if v.Breaks == 0 {
		return "-"
	}
	return "×" + multipleText(v.Breaks)
}

func headroomText(v *results.CapacityVariant) string {
	if v.Sustains == 0 {
		if v.Breaks > 0 {
			return "< " + FormatDeviation(v.Breaks-1)
		}
		return "-"
	}
	s := FormatDeviation(v.Headroom)
	if v.Outcome == results.CapacityAboveRange {
		s = "≥ " + s
	}
	return s
}

func countOrDash(v float64) string {
	if v <= 0 {
		return "-"
	}
	return units.Count(v)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// ---- the capacity page ----

//go:embed capacity.html.tmpl
var capacityTemplate string

// capacityPage is the HTML page of a capacity directory.
type capacityPage struct {
	Title, Subtitle, Version, Generated string
	Style                               template.CSS
	Banners                             []banner
	Answer                              *table
	Charts                              []*chartView
	Causes                              []causeView
	Search, Probes                      *table
	Notes                               []string
	Source                              string
}

type causeView struct {
	Label, Summary, Steps string
	Color                 int
	Evidence              *table
}

// RenderCapacity writes the report of a capacity directory (capacity.json and its steps):
// the answer per variant, the capacity curve, what breaks first with its evidence, and the
// probes the search ran.
func RenderCapacity(dir string, opts Options) (*Output, error) {
	if opts.Out == "" {
		opts.Out = dir
	}
	c, err := results.ReadCapacity(dir)
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, fmt.Errorf("%s holds no %s", dir, results.CapacityFile)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if err := os.MkdirAll(opts.Out, 0o755); err != nil {
		return nil, err
	}
	if err := clearCharts(opts.Out); err != nil {
		return nil, err
	}
	r := &renderer{opts: opts, ids: newNamer()}
	pg := &capacityPage{Title: "Capacity: " + c.Scenario.Name, Subtitle: c.Scenario.Description, Version: opts.Version,
		Generated: opts.Now().UTC().Format("2006-01-02 15:04:05 UTC"), Style: sharedStyle(), Source: dir}
	if c.Backend.Simulated {
		pg.Banners = append(pg.Banners, banner{"info", "Simulated.", "Every probe ran on the cluster model of the sim backend in virtual time, not on a real server."})
	}
	if !c.Complete {
		why := c.Interrupted
		if why == "" {
			why = "capacity.json is not marked complete (the search was killed or is still running)"
		}
		pg.Banners = append(pg.Banners, banner{"bad", "Incomplete.", "The search stopped early (" + why + "); variants it had not bracketed say so."})
	}
	pg.Answer = capacityAnswerTable(c)
	f, err := capacityChart(c)
	if err != nil {
		return nil, err
	}
	cv, err := r.draw("capacity-curve", capacityCaption(c), f)
	if ferr := r.finish(); err == nil {
		err = ferr
	}
	if err != nil {
		return nil, err
	}
	if cv != nil {
		pg.Charts = append(pg.Charts, cv)
	}
	for _, i := range c.Ranking() {
		pg.Causes = append(pg.Causes, causeOf(&c.Variants[i], i))
	}
	pg.Search, pg.Probes = capacitySearchTables(c)
	pg.Notes = append(pg.Notes, c.Notes...)
	pg.Notes = append(pg.Notes,
		"A multiple scales every rate of the scenario's schedule; the offered rate counts every operation type, the served rate only those the variant's design serves.",
		"Each probe is a results directory of its own under steps/: shardbench report, gate and compare read it like any run.")
	var buf bytes.Buffer
	t, err := template.New("capacity").Parse(capacityTemplate)
	if err != nil {
		return nil, err
	}
	if _, err := t.AddParseTree("table", tmpl.Lookup("table").Tree); err != nil {
		return nil, err
	}
	if _, err := t.AddParseTree("charts", tmpl.Lookup("charts").Tree); err != nil {
		return nil, err
	}
	if err := t.Execute(&buf, pg); err != nil {
		return nil, fmt.Errorf("rendering the capacity report: %w", err)
	}
	path := filepath.Join(opts.Out, HTMLFile)
	if err := writeFile(path, buf.Bytes()); err != nil {
		return nil, err
	}
	return &Output{HTML: path, Charts: r.charts}, nil
}

// isCapacityDir: a capacity search's directory (capacity.json, no summary.json of its own).
func isCapacityDir(dir string) bool {
	_, errC := os.Stat(filepath.Join(dir, results.CapacityFile))
	_, errS := os.Stat(filepath.Join(dir, results.SummaryFile))
	return errC == nil && errS != nil
}

// sharedStyle is the run report's stylesheet, so both pages look alike.
func sharedStyle() template.CSS {
	_, rest, _ := strings.Cut(pageTemplate, "<style>")
	css, _, _ := strings.Cut(rest, "</style>")
	return template.CSS(css) // the project's own stylesheet, embedded at build time
}

func capacityCaption(c *results.Capacity) string {
	s := "One line per variant through its probes; the p99 is the worst of its served operations. Where a line crosses the SLO is where the variant stops holding it"
	if c.Method == results.CapacitySimulated {
		s += "; squares are the runs from the schedule's start that confirmed each answer (filled: the SLO held), judged over the same window around the peak"
	}
	for _, v := range c.Variants {
		if slices.ContainsFunc(v.Curve, func(p results.CapacityPoint) bool { return p.SetAside }) {
			s += "; rings, off the line, are steps that failed and held when run again at the same rate (a cold or briefly disturbed cluster): set aside, not part of the answer"
			break
		}
	}
	return s + "."
}

func capacityAnswerTable(c *results.Capacity) *table {
	t := &table{Caption: fmt.Sprintf("Ranked by the multiple of the scenario's load each variant "+
		"sustains within its SLO (precision %s). Headroom is against the scenario's own peak "+
		"of %s/s.",
		units.Pct(c.Precision), units.Count(c.PeakRate)),
		Head: heads("variant", "sustains", "served/s at peak", "offered/s at peak", "headroom", "breaks at", "confirmed", "what breaks first")}
	for _, k := range []int{1, 2, 3, 4, 5, 6} {
		t.Head[k].Class = "num"
	}
	for _, i := range c.Ranking() {
		v := &c.Variants[i]
		cause := "—"
		if v.BreaksFirst != nil {
			cause = v.BreaksFirst.Kind + ": " + v.BreaksFirst.Subject
		}
		hr := cell{Text: headroomText(v), Class: "num"}
		if v.Sustains > 0 && v.Headroom < 0 || v.Sustains == 0 && v.Breaks > 0 {
			hr.Class = "num bad"
		}
		conf := yesNo(v.Confirmed)
		t.Rows = append(t.Rows, row{Cells: []cell{{Text: v.Variant, Swatch: true, Color: i % 10}, {Text: sustainsText(v), Class: "num"}, {Text: countOrDash(v.ServedPeakRate), Class: "num"},
			{Text: countOrDash(v.SustainedPeakRate), Class: "num"}, hr, {Text: breaksText(v), Class: "num"}, {Text: conf}, {Text: cause, Class: "wrap"}}})
	}
	return t
}

func causeOf(v *results.CapacityVariant, i int) causeView {
	cv := causeView{Label: v.Variant, Color: i % 10}
	switch {
	case v.BreaksFirst != nil:
		cv.Summary = fmt.Sprintf("Breaks first at ×%s: %s.", multipleText(v.Breaks), v.BreaksFirst.Summary)
		t := &table{Head: heads("source", "figure", "value", "detail")}
		for _, e := range v.BreaksFirst.Evidence {
			t.Rows = append(t.Rows, row{Cells: []cell{{Text: e.Source}, {Text: e.Figure, Class: "wrap"}, {Text: e.Value, Class: "num"}, {Text: e.Detail, Class: "wrap"}}})
		}
		cv.Evidence = t
	case v.Outcome == results.CapacityAboveRange:
		cv.Summary = fmt.Sprintf("Held its SLO at ×%s, the largest multiple tried: nothing broke.", multipleText(v.Sustains))
	default:
		cv.Summary = "Not bracketed: the search stopped before this variant failed its SLO."
	}
	if v.Confirmation != "" {
		cv.Summary += " Confirmation: " + v.Confirmation + "."
	}
	var steps []string
	if v.PassStep != "" {
		steps = append(steps, "held at "+v.PassStep)
	}
	if v.FailStep != "" {
		steps = append(steps, "failed at "+v.FailStep)
	}
	cv.Steps = strings.Join(steps, "; ")
	return cv
}

func capacitySearchTables(c *results.Capacity) (*table, *table) {
	rows := [][2]string{
		{"scenario", c.Scenario.Name + " (" + c.Scenario.Source + ", seed " + fmt.Sprint(c.Scenario.Seed) + ")"},
		{"backend", strings.TrimSpace(c.Backend.Name + " " + c.Backend.Target + " " + c.Backend.Server)},
		{"method", capacityMethod(c)},
		{"SLO", c.SLO.Source + ": " + strings.Join(c.SLO.Rules, "; ") + " (operations each design serves)"},
		{"precision", units.Pct(c.Precision) + " between the last multiple that held and the first that failed"},
		{"multiples tried", "×" + multipleText(c.MinMultiple) + " to ×" + multipleText(c.MaxMultiple)},
		{"scenario peak", units.Count(c.PeakRate) + "/s in " + c.PeakPhase},
		{"wall time", units.Seconds(c.EndedAt.Sub(c.StartedAt).Seconds()) + fmt.Sprintf(" for %d probes", len(c.Probes))},
	}
	probes := &table{Caption: "Every run of the search, in order; each is a results directory under steps/.", Head: heads("step", "kind", "multiple", "variants", "failed", "wall")}
	probes.Head[2].Class, probes.Head[5].Class = "num", "num"
	for _, p := range c.Probes {
		failed := strings.Join(p.Failed, ", ")
		if p.Error != "" {
			failed = "error: " + p.Error
		}
		probes.Rows = append(probes.Rows, row{Cells: []cell{{Text: p.Step}, {Text: p.Kind}, {Text: "×" + multipleText(p.Multiple), Class: "num"},
			{Text: fmt.Sprint(len(p.Variants)), Class: "num"}, {Text: failed, Class: "wrap"}, {Text: units.Seconds(p.WallS), Class: "num"}}})
	}
	return kv(rows...), probes
}
