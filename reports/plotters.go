package reports

import (
	"bytes"
	"fmt"
	"image/color"
	"image/png"
	"math"
	"sort"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/shardbench/shardbench/internal/units"
)

var nan = math.NaN()

// Chart geometry: 9 × 5 inches at 120 dpi = 1080 × 600 pixels, fonts 11–15 pt so that
// the text stays legible when a phone shrinks the image to its width (tap to zoom).
const (
	chartW   = 9 * vg.Inch
	chartH   = 5 * vg.Inch
	chartDPI = 120
)

// ChartWidth and ChartHeight are the pixel size of every PNG chart.
var (
	ChartWidth  = int(math.Round(float64(chartW/vg.Inch) * chartDPI))
	ChartHeight = int(math.Round(float64(chartH/vg.Inch) * chartDPI))
)

// Font sizes in points (at 120 dpi a point is 1.67 px).
const (
	titleSize  = 16.5
	labelSize  = 14
	tickSize   = 13
	legendSize = 13
	noteSize   = 12 // marks, bar values
)

var (
	sans     = font.Font{Typeface: "Liberation", Variant: "Sans"}
	sansBold = font.Font{Typeface: "Liberation", Variant: "Sans", Weight: xfont.WeightBold}
)

// Tableau 10: distinct, colour-blind-friendlier than plotutil's defaults.
var tableau = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, // blue
	{0xff, 0x7f, 0x0e, 0xff}, // orange
	{0x2c, 0xa0, 0x2c, 0xff}, // green
	{0xd6, 0x27, 0x28, 0xff}, // red
	{0x94, 0x67, 0xbd, 0xff}, // purple
	{0x8c, 0x56, 0x4b, 0xff}, // brown
	{0xe3, 0x77, 0xc2, 0xff}, // pink
	{0x7f, 0x7f, 0x7f, 0xff}, // grey
	{0xbc, 0xbd, 0x22, 0xff}, // olive
	{0x17, 0xbe, 0xcf, 0xff}, // cyan
}

func palette(i int) color.RGBA { return tableau[i%len(tableau)] }

// dashesFor varies the dash pattern once the colours run out, so the 11th series does not
// look like the first.
func dashesFor(i int) []vg.Length {
	switch (i / len(tableau)) % 3 {
	case 1:
		return []vg.Length{vg.Points(8), vg.Points(3)}
	case 2:
		return []vg.Length{vg.Points(2), vg.Points(2)}
	}
	return nil
}

var (
	black     = color.RGBA{0, 0, 0, 0xff}
	grey      = color.RGBA{0x60, 0x60, 0x60, 0xff}
	lightGrey = color.RGBA{0xf0, 0xf0, 0xf0, 0xff}
	bandGreen = color.NRGBA{0x2c, 0xa0, 0x2c, 0x38}
	hotRed    = color.RGBA{0xd6, 0x27, 0x28, 0xff}
	coolBlue  = color.RGBA{0x1f, 0x77, 0xb4, 0xff}
	calmGrey  = color.RGBA{0x8d, 0xa0, 0xb3, 0xff}
	eventRed  = color.RGBA{0xc0, 0x10, 0x10, 0xff}
)

func textStyle(f font.Font, size vg.Length, c color.Color) text.Style {
	return text.Style{Color: c, Font: font.From(f, size), Handler: plot.DefaultTextHandler}
}

// newPlot returns a plot with the report's fonts, a title and axis labels.
func newPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sansBold, titleSize)
	p.Title.Padding = vg.Points(8)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, labelSize)
		a.Tick.Label.Font = font.From(sans, tickSize)
	}
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Legend.TextStyle.Font = font.From(sans, legendSize)
	return p
}

// grid adds light grid lines at the major ticks of both axes, under the data.
func grid(p *plot.Plot) { p.Add(gridLines{X: true, Y: true}) }

// gridOnly adds grid lines for one axis (bar charts: along the values only).
func gridOnly(p *plot.Plot, x, y bool) { p.Add(gridLines{X: x, Y: y}) }

// legendEntry is one line of a legend drawn beside the plot.
type legendEntry struct {
	Label string
	Thumb plot.Thumbnailer
}

// chartImage draws p (and a legend to its right, outside the data) into a PNG.
func chartImage(p *plot.Plot, legend []legendEntry) ([]byte, error) {
	c := vgimg.NewWith(vgimg.UseWH(chartW, chartH), vgimg.UseDPI(chartDPI))
	dc := draw.New(c)
	// White margin around everything.
	dc = draw.Crop(dc, vg.Points(6), -vg.Points(10), vg.Points(4), -vg.Points(4))
	// The title spans the whole image (the plot's own would centre over the plot area
	// beside the legend, and get clipped when long).
	if title := p.Title.Text; title != "" {
		sty := p.Title.TextStyle
		for sty.Width(title) > dc.Max.X-dc.Min.X && len([]rune(title)) > 10 {
			title = Truncate(title, len([]rune(title))-2)
		}
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		dc.FillText(sty, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: dc.Max.Y}, title)
		dc = draw.Crop(dc, 0, 0, 0, -(sty.Height(title) + p.Title.Padding))
		defer func(t string) { p.Title.Text = t }(p.Title.Text)
		p.Title.Text = ""
	}
	if len(legend) > 0 {
		l := plot.NewLegend()
		size := vg.Length(legendSize)
		if len(legend) > 12 {
			size = 10.5
		}
		l.TextStyle = textStyle(sans, size, black)
		l.Top, l.Left = true, true
		l.ThumbnailWidth = vg.Points(22)
		var w vg.Length
		for _, e := range legend {
			lab := Truncate(e.Label, 34)
			l.Add(lab, e.Thumb)
			w = max(w, l.TextStyle.Width(lab))
		}
		w += l.ThumbnailWidth + vg.Points(14)
		w = min(w, chartW*0.38)
		left := draw.Crop(dc, 0, -w, 0, 0)
		p.Draw(left)
		l.Draw(draw.Crop(dc, dc.Max.X-dc.Min.X-w+vg.Points(8), 0, 0, -vg.Points(4)))
	} else {
		p.Draw(dc)
	}
	// BestSpeed: at the default level deflate is over half of a chart's encoding; Black
	// Friday's 48 charts then take 0.6 s less CPU (5.9 against 5.3 s for the whole
	// report) for files 4% larger, with the same pixels.
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, c.Image()); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// lineThumb is a legend thumbnail: a short line in a style.
type lineThumb draw.LineStyle

func (t lineThumb) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(draw.LineStyle(t), c.Min.X, y, c.Max.X, y)
}

// boxThumb is a legend thumbnail: a filled box.
type boxThumb struct{ Color color.Color }

func (t boxThumb) Thumbnail(c *draw.Canvas) {
	r := c.Rectangle
	pad := (r.Max.Y - r.Min.Y) * 0.15
	c.FillPolygon(t.Color, []vg.Point{{X: r.Min.X, Y: r.Min.Y + pad}, {X: r.Max.X, Y: r.Min.Y + pad}, {X: r.Max.X, Y: r.Max.Y - pad}, {X: r.Min.X, Y: r.Max.Y - pad}})
}

func lineStyle(c color.Color, width float64, dashes []vg.Length) draw.LineStyle {
	return draw.LineStyle{Color: c, Width: vg.Points(width), Dashes: dashes}
}

// gridLines draws light horizontal and vertical lines at the major ticks.
type gridLines struct{ X, Y bool }

func (g gridLines) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	ls := lineStyle(color.RGBA{0xdd, 0xdd, 0xdd, 0xff}, 0.6, nil)
	for _, t := range p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max) {
		if !g.X || t.IsMinor() || t.Value < p.X.Min || t.Value > p.X.Max {
			continue
		}
		x := trX(t.Value)
		c.StrokeLine2(ls, x, c.Min.Y, x, c.Max.Y)
	}
	for _, t := range p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max) {
		if !g.Y || t.IsMinor() || t.Value < p.Y.Min || t.Value > p.Y.Max {
			continue
		}
		y := trY(t.Value)
		c.StrokeLine2(ls, c.Min.X, y, c.Max.X, y)
	}
}

// vmark is a vertical line across the data area with a label: a phase boundary or an
// event.
type vmark struct {
	X     float64
	Label string
	Color color.Color
	Dash  []vg.Length
	Width float64
	// Bottom puts the label in rows from the bottom of the data area, else from the top.
	Bottom bool
}

type vmarks []vmark

// Plot draws the lines, then the labels: each in the first row (from the top, or from
// the bottom) where it does not overlap a label already placed, on a white backing so
// it stays legible over the data.
func (m vmarks) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	type placed struct{ x0, x1 vg.Length }
	rows := map[bool][][]placed{}
	order := make([]int, len(m))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return m[order[a]].X < m[order[b]].X })
	for _, i := range order {
		mk := m[i]
		x := trX(mk.X)
		if x < c.Min.X-0.5 || x > c.Max.X+0.5 {
			continue
		}
		w := mk.Width
		if w == 0 {
			w = 1
		}
		c.StrokeLine2(lineStyle(mk.Color, w, mk.Dash), x, c.Min.Y, x, c.Max.Y)
	}
	for _, i := range order {
		mk := m[i]
		x := trX(mk.X)
		if mk.Label == "" || x < c.Min.X-0.5 || x > c.Max.X+0.5 {
			continue
		}
		sty := textStyle(sans, noteSize, mk.Color)
		sty.XAlign = draw.XLeft
		tw := sty.Width(mk.Label)
		h := sty.Height(mk.Label) + vg.Points(3)
		x0 := x + vg.Points(3)
		if x0+tw > c.Max.X {
			// No room right of the line: write it to the left.
			x0 = max(c.Min.X, x-vg.Points(3)-tw)
		}
		x1 := x0 + tw
		rs := rows[mk.Bottom]
		row := 0
		for ; row < len(rs); row++ {
			free := true
			for _, pl := range rs[row] {
				if x0 < pl.x1+vg.Points(4) && x1+vg.Points(4) > pl.x0 {
					free = false
					break
				}
			}
			if free {
				break
			}
		}
		if row == len(rs) {
			rs = append(rs, nil)
		}
		rs[row] = append(rs[row], placed{x0, x1})
		rows[mk.Bottom] = rs
		var y0 vg.Length
		if mk.Bottom {
			y0 = c.Min.Y + vg.Points(3) + vg.Length(row)*h
		} else {
			y0 = c.Max.Y - vg.Points(3) - vg.Length(row+1)*h
		}
		c.FillPolygon(color.NRGBA{0xff, 0xff, 0xff, 0xd0}, []vg.Point{{X: x0 - 1, Y: y0}, {X: x1 + 1, Y: y0}, {X: x1 + 1, Y: y0 + h}, {X: x0 - 1, Y: y0 + h}})
		sty.YAlign = draw.YBottom
		c.FillText(sty, vg.Point{X: x0, Y: y0 + vg.Points(1.5)}, mk.Label)
	}
}

// xshade fills vertical stripes (alternate phases) behind the data.
type xshade struct {
	Spans [][2]float64
	Color color.Color
}

func (s xshade) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	for _, sp := range s.Spans {
		x0, x1 := max(trX(sp[0]), c.Min.X), min(trX(sp[1]), c.Max.X)
		if x1 <= x0 {
			continue
		}
		c.FillPolygon(s.Color, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
	}
}

// hband is a horizontal band [Lo, Hi] with a line at Mid: the mean and the ±30% rule.
type hband struct {
	Lo, Mid, Hi float64
	Fill        color.Color
	Line        draw.LineStyle
	Label       string
}

func (b hband) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	y0, y1 := max(trY(b.Lo), c.Min.Y), min(trY(b.Hi), c.Max.Y)
	if y1 > y0 {
		c.FillPolygon(b.Fill, []vg.Point{{X: c.Min.X, Y: y0}, {X: c.Max.X, Y: y0}, {X: c.Max.X, Y: y1}, {X: c.Min.X, Y: y1}})
	}
	ym := trY(b.Mid)
	c.StrokeLine2(b.Line, c.Min.X, ym, c.Max.X, ym)
	if b.Label != "" {
		sty := textStyle(sans, noteSize, b.Line.Color)
		sty.XAlign, sty.YAlign = draw.XRight, draw.YBottom
		c.FillText(sty, vg.Point{X: c.Max.X - vg.Points(4), Y: ym + vg.Points(2)}, b.Label)
	}
}

func (b hband) DataRange() (xmin, xmax, ymin, ymax float64) {
	return math.Inf(1), math.Inf(-1), b.Lo, b.Hi
}

// bars draws one bar per category, each with its own colour and an optional text at its
// end. Horizontal bars stack top to bottom in order; vertical bars go left to right.
// Bars start at Base, or at the axis minimum on a log scale.
type bars struct {
	Values     []float64
	Colors     []color.Color
	Texts      []string
	Horizontal bool
	Base       float64
	LogScale   bool
	Width      float64 // fraction of the category slot, default 0.7
}

func (b *bars) pos(i int) float64 {
	if b.Horizontal {
		return float64(len(b.Values) - 1 - i)
	}
	return float64(i)
}

func (b *bars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	w := b.Width
	if w == 0 {
		w = 0.7
	}
	base := b.Base
	for i, v := range b.Values {
		if math.IsNaN(v) {
			continue
		}
		col := b.Colors[min(i, len(b.Colors)-1)]
		cpos := b.pos(i)
		var r vg.Rectangle
		if b.Horizontal {
			x0 := c.Min.X
			if !b.LogScale {
				x0 = trX(base)
			}
			r = vg.Rectangle{Min: vg.Point{X: x0, Y: trY(cpos - w/2)}, Max: vg.Point{X: trX(v), Y: trY(cpos + w/2)}}
		} else {
			y0 := c.Min.Y
			if !b.LogScale {
				y0 = trY(base)
			}
			r = vg.Rectangle{Min: vg.Point{X: trX(cpos - w/2), Y: y0}, Max: vg.Point{X: trX(cpos + w/2), Y: trY(v)}}
		}
		c.FillPolygon(col, c.ClipPolygonXY([]vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}}))
		if i < len(b.Texts) && b.Texts[i] != "" {
			sty := textStyle(sans, noteSize, black)
			var pt vg.Point
			if b.Horizontal {
				sty.XAlign, sty.YAlign = draw.XLeft, draw.YCenter
				pt = vg.Point{X: r.Max.X + vg.Points(4), Y: (r.Min.Y + r.Max.Y) / 2}
				if w := sty.Width(b.Texts[i]); pt.X+w > c.Max.X && r.Max.X-r.Min.X > w+vg.Points(8) {
					// No room right of the bar but inside it: write it there, in white.
					sty.XAlign, sty.Color = draw.XRight, color.White
					pt.X = r.Max.X - vg.Points(4)
				}
			} else {
				sty.XAlign, sty.YAlign = draw.XCenter, draw.YBottom
				pt = vg.Point{X: (r.Min.X + r.Max.X) / 2, Y: r.Max.Y + vg.Points(2)}
			}
			c.FillText(sty, pt, b.Texts[i])
		}
	}
}

func (b *bars) DataRange() (xmin, xmax, ymin, ymax float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range b.Values {
		if !math.IsNaN(v) {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	if !b.LogScale {
		lo = min(lo, b.Base)
	}
	clo, chi := -0.6, float64(len(b.Values))-0.4
	if b.Horizontal {
		return lo, hi, clo, chi
	}
	return clo, chi, lo, hi
}

// categoryTicks labels bar positions.
func categoryTicks(labels []string, horizontal bool) plot.ConstantTicks {
	ticks := make(plot.ConstantTicks, len(labels))
	for i, l := range labels {
		pos := float64(i)
		if horizontal {
			pos = float64(len(labels) - 1 - i)
		}
		ticks[i] = plot.Tick{Value: pos, Label: l}
	}
	return ticks
}

// Log axes: gonum's LogScale places a centred axis label at the linear midpoint of the
// range, which squeezes the data area; the charts instead plot log10 of their values on
// a linear axis and label the ticks with the real values (log10Ticks).

// log10Ticks labels an axis holding log10(value) at 1-2-5 steps of each decade (only the
// powers of ten when the range spans many decades), minor ticks at the other integers.
type log10Ticks struct{ format func(float64) string }

func (t log10Ticks) Ticks(lo, hi float64) []plot.Tick {
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) || math.IsNaN(lo) || math.IsNaN(hi) || hi < lo {
		return nil
	}
	decades := hi - lo
	var ticks []plot.Tick
	for e := math.Floor(lo); e <= math.Ceil(hi); e++ {
		d := math.Pow(10, e)
		for m := 1.0; m < 10; m++ {
			lv := math.Log10(d * m)
			if lv < lo-1e-9 || lv > hi+1e-9 {
				continue
			}
			label := ""
			if m == 1 || (decades < 2.5 && (m == 2 || m == 5)) {
				label = t.format(d * m)
			}
			ticks = append(ticks, plot.Tick{Value: lv, Label: label})
		}
	}
	return ticks
}

// bytesLog10Ticks labels an axis holding log10(bytes) at 1, 10 and 100 of each binary
// unit (1 KiB, 10 KiB, 100 KiB, 1 MiB, ...).
type bytesLog10Ticks struct{}

func (bytesLog10Ticks) Ticks(lo, hi float64) []plot.Tick {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	var ticks []plot.Tick
	for k, u := range units {
		for _, m := range []float64{1, 10, 100} {
			v := m * math.Pow(1024, float64(k))
			if lv := math.Log10(v); lv >= lo-1e-9 && lv <= hi+1e-9 {
				ticks = append(ticks, plot.Tick{Value: lv, Label: fmt.Sprintf("%g %s", m, u)})
			}
		}
	}
	return ticks
}

// tickMs prints a round latency for an axis: 100µs, 2ms, 50ms, 1s.
func tickMs(ms float64) string {
	switch {
	case ms >= 1000:
		return fmt.Sprintf("%gs", round3(ms/1000))
	case ms >= 1:
		return fmt.Sprintf("%gms", round3(ms))
	default:
		return fmt.Sprintf("%gµs", round3(ms*1000))
	}
}

func round3(v float64) float64 {
	if v == 0 {
		return 0
	}
	p := math.Pow(10, 2-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*p) / p
}

// tickCount prints a round count for an axis: 500, 1.5k, 2M.
func tickCount(v float64) string {
	switch {
	case math.Abs(v) >= 1e6:
		return fmt.Sprintf("%gM", round3(v/1e6))
	case math.Abs(v) >= 1e3:
		return fmt.Sprintf("%gk", round3(v/1e3))
	}
	return fmt.Sprintf("%g", round3(v))
}

func tickPct(f float64) string { return fmt.Sprintf("%g%%", round3(f*100)) }

// niceTicks places about n labelled ticks at round steps (1, 2, 2.5, 5 × 10^k) with
// unlabelled minor ticks between them; label formats the values.
func niceTicks(lo, hi float64, n int, label func(float64) string) []plot.Tick {
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) || math.IsNaN(lo) || math.IsNaN(hi) || hi <= lo {
		return nil
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	minor := step / 5
	if step/mag == 2.5 || step/mag == 5 {
		minor = step / 5
	}
	var ticks []plot.Tick
	for v := math.Ceil(lo/minor-1e-9) * minor; v <= hi+1e-9*step; v += minor {
		v := math.Round(v/minor) * minor
		if v == 0 {
			v = 0 // not -0
		}
		t := plot.Tick{Value: v}
		if r := v / step; math.Abs(r-math.Round(r)) < 1e-6 {
			t.Label = label(v)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// pctTicks labels an axis of fractions 0..1 as percentages.
type pctTicks struct{}

func (pctTicks) Ticks(lo, hi float64) []plot.Tick { return niceTicks(lo, hi, 5, tickPct) }

// countTicks labels a linear axis with compact counts (12k, 1.5M).
type countTicks struct{}

func (countTicks) Ticks(lo, hi float64) []plot.Tick { return niceTicks(lo, hi, 5, tickCount) }

// bytesTicks labels a linear axis of bytes at round steps of one binary unit.
type bytesTicks struct{}

func (bytesTicks) Ticks(lo, hi float64) []plot.Tick {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	u, scale := 0, 1.0
	for u < len(units)-1 && hi/scale >= 1024 {
		u++
		scale *= 1024
	}
	ts := niceTicks(lo/scale, hi/scale, 5, func(v float64) string { return fmt.Sprintf("%g %s", round3(v), units[u]) })
	for i := range ts {
		ts[i].Value *= scale
	}
	return ts
}

// secondsTicks labels a time axis in seconds as 0s, 30s, 1m00s...
type secondsTicks struct{}

func (secondsTicks) Ticks(lo, hi float64) []plot.Tick {
	if hi-lo > 120 {
		// Whole minutes when the axis spans minutes.
		ts := niceTicks(lo/60, hi/60, 6, func(v float64) string { return tickSeconds(v * 60) })
		for i := range ts {
			ts[i].Value *= 60
		}
		return ts
	}
	return niceTicks(lo, hi, 6, tickSeconds)
}

// tickSeconds prints a time axis label: 45s, 1m, 1m30s, 2h.
func tickSeconds(s float64) string {
	switch {
	case s >= 3600 && math.Mod(s, 3600) == 0:
		return fmt.Sprintf("%.0fh", s/3600)
	case s >= 60 && math.Mod(s, 60) == 0:
		return fmt.Sprintf("%.0fm", s/60)
	}
	return units.Seconds(s)
}
