package reports

import (
	"bytes"
	_ "embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/shardbench/shardbench/internal/results"
)

// File names a report writes.
const (
	HTMLFile  = "report.html"
	ChartsDir = "charts"
)

// Defaults for Options.
const (
	DefaultMaxOpCharts      = 8
	DefaultMaxVariantCharts = 6
)

// Options control a report.
type Options struct {
	// Out is the directory report.html and charts/ go to. Render defaults to the results
	// directory; Compare needs it.
	Out string
	// Embed puts the charts into the page as data: URIs (one file, no charts/ directory).
	Embed bool
	// MaxOpCharts caps the per-operation latency charts (busiest operations first);
	// MaxVariantCharts caps the variants that get their own hot-partition charts (worst node
	// imbalance first). Zero means the default; tables always list everything.
	MaxOpCharts      int
	MaxVariantCharts int
	// Title overrides the page title.
	Title string
	// Version is the shardbench version writing the report.
	Version string
	// Now is the clock for the "generated" line (tests fix it).
	Now func() time.Time
}

// Output lists what a report wrote.
type Output struct {
	HTML   string  // path of report.html
	Charts []Chart // every chart, in page order
	// Warnings are input files that could not be read (the report renders without them
	// and shows the same warnings at its top).
	Warnings []string
}

//go:embed report.html.tmpl
var pageTemplate string

var tmpl = template.Must(template.New("report").Parse(pageTemplate))

// Render writes the report of one results directory (a run, a merged run or a plan).
func Render(dir string, opts Options) (*Output, error) {
	if opts.Out == "" {
		opts.Out = dir
	}
	r, err := loadRun(dir)
	if err != nil {
		return nil, err
	}
	labelRuns([]*run{r})
	return render([]*run{r}, false, opts)
}

// Compare writes a comparison report: every variant of every directory side by side, the
// same charts overlaid, and a table of every figure with the difference and the winner.
// One directory with several variants compares its variants.
func Compare(dirs []string, opts Options) (*Output, error) {
	if len(dirs) == 0 {
		return nil, errors.New("compare needs at least one results directory")
	}
	if opts.Out == "" {
		return nil, errors.New("compare needs an output directory")
	}
	seen := map[string]bool{}
	var runs []*run
	for _, d := range dirs {
		abs, _ := filepath.Abs(d)
		if seen[abs] {
			return nil, fmt.Errorf("%s is given twice", d)
		}
		seen[abs] = true
		r, err := loadRun(d)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	labelRuns(runs)
	out, err := render(runs, true, opts)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// renderer builds one page.
type renderer struct {
	opts     Options
	runs     []*run
	sides    []*side
	compare  bool
	ids      *namer
	charts   []Chart
	notes    []string
	warnings []string
}

func render(runs []*run, compare bool, opts Options) (*Output, error) {
	if opts.MaxOpCharts <= 0 {
		opts.MaxOpCharts = DefaultMaxOpCharts
	}
	if opts.MaxVariantCharts <= 0 {
		opts.MaxVariantCharts = DefaultMaxVariantCharts
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
	r := &renderer{opts: opts, runs: runs, sides: sidesOf(runs), compare: compare, ids: newNamer()}
	for _, run := range runs {
		for _, w := range run.Warnings {
			r.warnings = append(r.warnings, w)
		}
		r.notes = append(r.notes, run.Notes...)
	}
	if len(r.sides) == 0 {
		r.notes = append(r.notes, "The results hold no variant: nothing ran.")
	}
	pg, err := r.page()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, pg); err != nil {
		return nil, fmt.Errorf("rendering the report: %w", err)
	}
	path := filepath.Join(opts.Out, HTMLFile)
	if err := writeFile(path, buf.Bytes()); err != nil {
		return nil, err
	}
	return &Output{HTML: path, Charts: r.charts, Warnings: r.warnings}, nil
}

// writeFile writes atomically and leaves the file readable by all (CI archives and web
// servers serve reports).
func writeFile(path string, data []byte) error {
	if err := results.WriteFileAtomic(path, data); err != nil {
		return err
	}
	return os.Chmod(path, 0o644)
}

// clearCharts removes the PNGs of an earlier report in out/charts, so a re-rendered
// report never links a stale chart.
func clearCharts(out string) error {
	dir := filepath.Join(out, ChartsDir)
	old, err := filepath.Glob(filepath.Join(dir, "*.png"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	if len(old) > 0 {
		os.Remove(dir) // only when empty
	}
	return nil
}

// chartView is a chart as the template shows it.
type chartView struct {
	ID, Title, Caption string
	URL, Link          template.URL
	W, H               int
}

// draw renders a figure to PNG and returns its view; nil figures give nil.
func (r *renderer) draw(id, caption string, f *figure) (*chartView, error) {
	if f == nil {
		return nil, nil
	}
	png, err := chartImage(f.plot, f.legend)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", id, err)
	}
	id = r.ids.name(id)
	c := Chart{ID: id, Title: f.plot.Title.Text, Caption: caption}
	v := &chartView{ID: id, Title: c.Title, Caption: caption, W: ChartWidth, H: ChartHeight}
	if r.opts.Embed {
		c.Src = "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)
		v.URL = template.URL(c.Src) // our own PNG bytes, base64: safe
	} else {
		dir := filepath.Join(r.opts.Out, ChartsDir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		c.File = filepath.Join(dir, id+".png")
		if err := writeFile(c.File, png); err != nil {
			return nil, err
		}
		c.Src = ChartsDir + "/" + id + ".png"
		v.URL, v.Link = template.URL(c.Src), template.URL(c.Src)
	}
	r.charts = append(r.charts, c)
	return v, nil
}

// ---- page model ----

type cell struct {
	Text, Class, Title string
	Swatch             bool
	Color              int
	Span               int // columns the cell spans (0: one)
}

type row struct {
	Cells  []cell
	Class  string
	Group  string // a group heading row instead of cells
	Swatch bool
	Color  int
}

type table struct {
	Caption string
	Class   string
	Head    []cell
	Rows    []row
}

// Cols is the column count (for group rows).
func (t *table) Cols() int { return len(t.Head) }

type banner struct{ Class, Strong, Text string }

type tocEntry struct{ ID, Text string }

type swatch struct {
	Label string
	Color int
}

type verdictView struct {
	Run, Dir string
	Present  bool
	Verdict  string
	Class    string
	Summary  string
	Details  string
	Checks   *table
}

type hotTableView struct {
	Name, Key, Summary string
	Top, TopMore       *table
	MoreLabel          string
	Projections        *table
}

type hotSideView struct {
	ID, Label   string
	Color       int
	NodeWord    string
	Summary     string
	Charts      []*chartView
	Nodes       *table
	ServerNodes []*table
	Tables      []hotTableView
	Notes       []string
}

type hotView struct {
	Intro  string
	Glance *table
	Note   string
	Charts []*chartView
	Sides  []hotSideView
}

type serverView struct {
	Source        string
	Tables        []*table
	Charts        []*chartView
	Disagreements []string
	Notes         []string
}

type variantView struct {
	ID, Label string
	Color     int
	Facts     *table
	Ops       *table
	Events    *table
	Errors    *table
	Server    *serverView
	Notes     []string
}

type compareView struct {
	Intro string
	Score *table
	Table *table
}

type page struct {
	Title, Subtitle, KindLabel string
	Version, Generated         string
	Compare, Multi             bool
	Banners                    []banner
	TOC                        []tocEntry
	Verdicts                   []verdictView
	Meta, Phases               *table
	Legend                     []swatch
	Glance                     *table
	OverviewNote               string
	OverviewCharts             []*chartView
	Comparison                 *compareView
	HasLatency                 bool
	LatencyNote                string
	LatencyCharts              []*chartView
	LatencyTable               *table
	Fidelity                   *fidelityView
	Hot                        *hotView
	Keys                       *keysView
	Variants                   []variantView
	Notes                      []string
	Sources                    []string
}

func (r *renderer) page() (*page, error) {
	pg := &page{Version: r.opts.Version, Compare: r.compare, Multi: len(r.runs) > 1}
	pg.Generated = r.opts.Now().UTC().Format("2006-01-02 15:04:05 UTC")
	r.titles(pg)
	r.banners(pg)
	pg.Verdicts = r.verdicts()
	pg.Meta = r.metaTable()
	pg.Phases = r.phasesTable()
	for _, s := range r.sides {
		pg.Legend = append(pg.Legend, swatch{s.Label, s.Index % 10})
	}
	if len(pg.Legend) < 2 {
		pg.Legend = nil
	}
	pg.Glance = r.glanceTable()
	for _, s := range r.sides {
		pg.HasLatency = pg.HasLatency || s.hasLatency()
	}
	var err error
	if pg.OverviewCharts, pg.OverviewNote, err = r.overviewCharts(); err != nil {
		return nil, err
	}
	if r.compare {
		pg.Comparison = r.comparison()
	}
	if pg.HasLatency {
		if pg.LatencyCharts, pg.LatencyNote, err = r.latencyCharts(); err != nil {
			return nil, err
		}
		if len(r.sides) > 1 {
			pg.LatencyTable = r.latencyTable()
		}
	}
	pg.Fidelity = r.fidelity()
	if pg.Hot, err = r.hot(); err != nil {
		return nil, err
	}
	pg.Keys = r.keys()
	if pg.Variants, err = r.variants(); err != nil {
		return nil, err
	}
	pg.TOC = []tocEntry{{"verdict", "Verdict"}, {"run", "Run"}, {"overview", map[bool]string{true: "Side by side", false: "Overview"}[r.compare]}}
	if pg.Comparison != nil {
		pg.TOC = append(pg.TOC, tocEntry{"compare", "Comparison"})
	}
	if pg.Fidelity != nil {
		pg.TOC = append(pg.TOC, tocEntry{"fidelity", "Fidelity"})
	}
	if pg.HasLatency {
		pg.TOC = append(pg.TOC, tocEntry{"latency", "Latency"})
	}
	pg.TOC = append(pg.TOC, tocEntry{"hot", "Hot partitions"})
	if pg.Keys != nil {
		pg.TOC = append(pg.TOC, tocEntry{"keys", "Key analysis"})
	}
	pg.TOC = append(pg.TOC, tocEntry{"variants", "Variants"}, tocEntry{"notes", "Notes"})
	pg.Notes = r.pageNotes(pg)
	for _, run := range r.runs {
		pg.Sources = append(pg.Sources, run.Dir)
	}
	return pg, nil
}

func (r *renderer) titles(pg *page) {
	kinds := map[string]bool{}
	for _, run := range r.runs {
		kinds[run.Kind] = true
	}
	first := r.runs[0]
	switch {
	case r.compare:
		pg.KindLabel = "comparison report"
	case first.Kind == KindPlan && first.Hot == nil && first.Analysis != nil:
		pg.KindLabel = "key analysis report"
	case first.Kind == KindPlan:
		pg.KindLabel = "placement plan report"
	case first.Kind == KindSimulated:
		pg.KindLabel = "simulated run report"
	default:
		pg.KindLabel = "real run report"
	}
	if r.opts.Title != "" {
		pg.Title = r.opts.Title
	} else if r.compare {
		var labels []string
		for _, s := range r.sides {
			labels = append(labels, s.Label)
		}
		pg.Title = "Comparison: " + strings.Join(labels, " vs ")
		if len(labels) > 4 {
			pg.Title = fmt.Sprintf("Comparison of %d variants", len(labels))
		}
	} else {
		pg.Title = first.Sum.Scenario.Name
		if pg.Title == "" {
			pg.Title = first.Label
		}
	}
	if !r.compare || len(r.runs) == 1 {
		pg.Subtitle = first.Sum.Scenario.Description
	} else {
		var names []string
		for _, run := range r.runs {
			names = append(names, run.Label+" ("+run.Sum.Scenario.Name+", "+run.Kind+")")
		}
		pg.Subtitle = strings.Join(names, " · ")
	}
}

func (r *renderer) banners(pg *page) {
	for _, run := range r.runs {
		prefix := ""
		if len(r.runs) > 1 {
			prefix = run.Label + ": "
		}
		switch run.Kind {
		case KindPlan:
			if run.Hot == nil && run.Analysis != nil {
				pg.Banners = append(pg.Banners, banner{"info", prefix + "Key analysis.", "No operation was measured, so there is no latency or throughput: the key figures come from running the scenario's operation stream through every variant's placement (shardbench analyze)."})
				break
			}
			pg.Banners = append(pg.Banners, banner{"info", prefix + "Placement plan.", "No operation was executed, so there is no latency or throughput: the hot-partition figures come from running the scenario's operation stream through every variant's placement code."})
		case KindSimulated:
			what := "the cluster model of the sim backend in virtual time"
			if n := run.Sum.Backend.Name; n == "null" || n == "delay" {
				what = "the " + n + " test backend (no database at all)"
			}
			pg.Banners = append(pg.Banners, banner{"info", prefix + "Simulated.", "Latency and errors come from " + what + ", not from a real server."})
		}
		switch run.status() {
		case "interrupted":
			why := run.Sum.Interrupted
			if why == "" {
				why = "a variant stopped early"
			}
			pg.Banners = append(pg.Banners, banner{"bad", prefix + "Interrupted.", fmt.Sprintf("The run stopped early (%s). Every figure covers only what was measured before it stopped%s.", why, coverage(run))})
		case "incomplete":
			pg.Banners = append(pg.Banners, banner{"warn", prefix + "Incomplete.", "summary.json says the run had not finished when it was written (still running, or killed before it could record an interrupt). Figures cover what was recorded until then" + coverage(run) + "."})
		}
	}
	for _, w := range r.warnings {
		pg.Banners = append(pg.Banners, banner{"warn", "Could not read:", w})
	}
}

// coverage says how much of the schedule the variants ran: ": 42s of 10m00s".
func coverage(run *run) string {
	want := run.Sum.Scenario.DurationS
	if want <= 0 || len(run.Sum.Variants) == 0 {
		return ""
	}
	var parts []string
	for _, v := range run.Sum.Variants {
		if v.DurationS < want*0.999 {
			parts = append(parts, fmt.Sprintf("%s ran %s of %s", v.Name, FormatSeconds(v.DurationS), FormatSeconds(want)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, "; ")
}

func (r *renderer) verdicts() []verdictView {
	var out []verdictView
	for _, run := range r.runs {
		v := verdictView{Run: run.Label, Dir: run.Dir}
		g := run.Gate
		if g == nil {
			out = append(out, v)
			continue
		}
		v.Present = true
		passed, failed, skipped := 0, 0, 0
		for _, c := range g.Checks {
			switch c.Status {
			case results.GatePass:
				passed++
			case results.GateFail:
				failed++
			default:
				skipped++
			}
		}
		verdict := g.Verdict
		if verdict == "" {
			verdict = results.GatePass
			if failed > 0 {
				verdict = results.GateFail
			}
		}
		v.Verdict = strings.ToUpper(verdict)
		v.Class = verdict
		if len(g.Checks) == 0 {
			v.Summary = "gate.json holds no checks."
		} else {
			v.Summary = fmt.Sprintf("%d check(s): %d passed, %d failed, %d skipped.", len(g.Checks), passed, failed, skipped)
		}
		var det []string
		if len(g.Sources) > 0 {
			det = append(det, "Rules from "+strings.Join(g.Sources, ", ")+".")
		}
		if g.Baseline != "" {
			det = append(det, fmt.Sprintf("Baseline %s, tolerance %s.", g.Baseline, FormatPct(g.Tolerance)))
		}
		if g.Strict {
			det = append(det, "Strict: skipped checks count as failures.")
		}
		if !g.EvaluatedAt.IsZero() {
			det = append(det, "Evaluated "+g.EvaluatedAt.UTC().Format("2006-01-02 15:04:05 UTC")+".")
		}
		v.Details = strings.Join(det, " ")
		checks := append([]results.GateCheck(nil), g.Checks...)
		rank := map[string]int{results.GateFail: 0, results.GateSkip: 1, results.GatePass: 2}
		sort.SliceStable(checks, func(i, j int) bool { return rank[checks[i].Status] < rank[checks[j].Status] })
		t := &table{Caption: "Failed checks first, then skipped, then passed.", Head: heads("check", "status", "value", "threshold", "kind", "detail", "source")}
		for _, c := range checks {
			val := c.ValueText
			if val == "" {
				val = FormatFloat(c.Value) + " " + c.Unit
			}
			thr := c.ThresholdText
			if thr == "" {
				thr = strings.TrimSpace(c.Comparator + " " + FormatFloat(c.Threshold) + " " + c.Unit)
			}
			src := c.Source
			if c.Rule != "" && src != "" {
				src = c.Rule + " (" + src + ")"
			} else if c.Rule != "" {
				src = c.Rule
			}
			t.Rows = append(t.Rows, row{Cells: []cell{{Text: c.Name}, {Text: strings.ToUpper(c.Status), Class: c.Status}, {Text: val, Class: "num"}, {Text: thr, Class: "num"}, {Text: c.Kind}, {Text: c.Detail, Class: "wrap"}, {Text: src, Class: "wrap"}}})
		}
		v.Checks = t
		out = append(out, v)
	}
	return out
}

func heads(names ...string) []cell {
	out := make([]cell, len(names))
	for i, n := range names {
		out[i] = cell{Text: n}
		if i > 0 && isNumHead(n) {
			out[i].Class = "num"
		}
	}
	return out
}

var numHeads = map[string]bool{}

func init() {
	for _, h := range []string{"value", "threshold", "ops", "ops/s", "target/s", "achieved/s", "achieved", "p50", "p90", "p99", "p99.9", "p99.99", "max", "errors", "error rate", "late", "dropped", "scheduled", "completed", "serves", "share", "reads", "writes", "rows", "bytes", "bytes written", "rows written", "projected", "projected size", "projected rows", "deviation", "max/mean", "CV", "Gini", "start", "end", "duration", "expected ops", "count", "at", "service p50", "service p99", "service p99.9", "lag p99", "top 1%", "top 10%", "observed", "limit", "± bound", "partitions", "Δ", "change", "#"} {
		numHeads[h] = true
	}
}

func isNumHead(h string) bool { return numHeads[h] }

func kv(rows ...[2]string) *table {
	t := &table{Class: "kv"}
	for _, r := range rows {
		if r[1] == "" {
			continue
		}
		t.Rows = append(t.Rows, row{Cells: []cell{{Text: r[0]}, {Text: r[1], Class: "wrap"}}})
	}
	return t
}

func (r *renderer) metaTable() *table {
	type field struct {
		name string
		get  func(*run) string
	}
	fields := []field{
		{"scenario", func(x *run) string { return x.Sum.Scenario.Name }},
		{"description", func(x *run) string {
			if len(r.runs) == 1 {
				return ""
			}
			return x.Sum.Scenario.Description
		}},
		{"scenario file", func(x *run) string { return x.Sum.Scenario.Source }},
		{"seed", func(x *run) string {
			if x.NoSummary {
				return ""
			}
			return fmt.Sprint(x.Sum.Scenario.Seed)
		}},
		{"kind", func(x *run) string {
			switch x.Kind {
			case KindPlan:
				return "plan (placement only, nothing executed)"
			case KindSimulated:
				return "simulated"
			}
			return "real cluster"
		}},
		{"backend", func(x *run) string { return x.Sum.Backend.Name }},
		{"target", func(x *run) string { return x.Sum.Backend.Target }},
		{"server version", func(x *run) string { return x.Sum.Backend.Server }},
		{"backend settings", func(x *run) string { return joinMap(x.Sum.Backend.Details) }},
		{"status", func(x *run) string {
			switch x.status() {
			case "interrupted":
				if x.Sum.Interrupted != "" {
					return "interrupted: " + x.Sum.Interrupted
				}
				return "interrupted"
			case "incomplete":
				return "incomplete (not finished when written)"
			}
			return "complete"
		}},
		{"started", func(x *run) string { return fmtTime(x.Sum.StartedAt) }},
		{"ended", func(x *run) string { return fmtTime(x.Sum.EndedAt) }},
		{"wall time", func(x *run) string {
			if x.Sum.StartedAt.IsZero() || x.Sum.EndedAt.IsZero() {
				return ""
			}
			return FormatSeconds(x.Sum.EndedAt.Sub(x.Sum.StartedAt).Seconds())
		}},
		{"schedule", func(x *run) string {
			sc := x.Sum.Scenario
			if sc.DurationS == 0 {
				return ""
			}
			s := fmt.Sprintf("%s, about %s operations per variant", FormatSeconds(sc.DurationS), FormatCount(sc.ExpectedOps))
			if sc.Arrival != "" {
				s += ", " + sc.Arrival + " arrivals"
			}
			if sc.MaxInFlight > 0 {
				s += fmt.Sprintf(", at most %d in flight", sc.MaxInFlight)
			}
			return s
		}},
		{"variants", func(x *run) string {
			var names []string
			for _, s := range r.sides {
				if s.Run == x {
					names = append(names, s.V.Name)
				}
			}
			return fmt.Sprintf("%d: %s", len(names), strings.Join(names, ", "))
		}},
		{"merged from", func(x *run) string { return strings.Join(x.Sum.MergedFrom, ", ") }},
		{"written by", func(x *run) string {
			t := x.Sum.Tool
			if t.Name == "" {
				return ""
			}
			s := t.Name + " " + t.Version
			if t.GoVersion != "" {
				s += " (" + t.GoVersion + ")"
			}
			if t.Host != "" {
				s += " on " + t.Host
			}
			return s
		}},
		{"directory", func(x *run) string { return x.Dir }},
		{"files", func(x *run) string { return filesPresent(x) }},
	}
	if len(r.runs) == 1 {
		var rows [][2]string
		for _, f := range fields {
			rows = append(rows, [2]string{f.name, f.get(r.runs[0])})
		}
		return kv(rows...)
	}
	t := &table{Head: []cell{{Text: ""}}}
	for _, x := range r.runs {
		t.Head = append(t.Head, cell{Text: x.Label})
	}
	for _, f := range fields {
		rw := row{Cells: []cell{{Text: f.name}}}
		any := false
		for _, x := range r.runs {
			v := f.get(x)
			any = any || v != ""
			rw.Cells = append(rw.Cells, cell{Text: v, Class: "wrap"})
		}
		if any {
			t.Rows = append(t.Rows, rw)
		}
	}
	return t
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func joinMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ", ")
}

func filesPresent(x *run) string {
	var parts []string
	add := func(name string, ok bool, extra string) {
		if ok {
			parts = append(parts, name+extra)
		}
	}
	add(results.SummaryFile, !x.NoSummary, "")
	n := 0
	for _, p := range x.Points {
		n += len(p)
	}
	add(results.TimeseriesFile, n > 0, fmt.Sprintf(" (%d points)", n))
	add(results.HotspotsFile, x.Hot != nil, "")
	add(results.GateFile, x.Gate != nil, "")
	add(results.ServerFile, x.Server != nil, "")
	add(results.AnalysisFile, x.Analysis != nil, "")
	add(results.ScenarioFile, x.Scenario, "")
	return strings.Join(parts, ", ")
}

func (r *renderer) phasesTable() *table {
	var t *table
	for _, x := range r.runs {
		if len(x.Sum.Phases) == 0 {
			continue
		}
		if t == nil {
			t = &table{Head: heads("phase", "type", "start", "end", "duration", "expected ops")}
		}
		if len(r.runs) > 1 {
			t.Rows = append(t.Rows, row{Group: x.Label})
		}
		for _, p := range x.Sum.Phases {
			t.Rows = append(t.Rows, row{Cells: []cell{{Text: p.Name}, {Text: p.Type}, num(FormatSeconds(p.StartS)), num(FormatSeconds(p.EndS)), num(FormatSeconds(p.EndS - p.StartS)), num(FormatCount(p.ExpectedOps))}})
		}
	}
	return t
}

func num(s string) cell { return cell{Text: s, Class: "num"} }

func sideCell(s *side) cell { return cell{Text: s.Label, Swatch: true, Color: s.Index % 10} }

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
				c = append(c, num(FormatCount(t.AchievedRate)), num(FormatCount(t.TargetRate)), num(FormatMs(t.Response.P50)), num(FormatMs(t.Response.P99)), num(FormatMs(t.Response.P999)), num(FormatMs(t.Response.Max)), errCell(t.ErrorRate), num(FormatCount(float64(t.Late))), num(FormatCount(float64(t.Dropped))))
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
	c := num(FormatPct(rate))
	if rate > 0 {
		c.Class += " bad"
	}
	return c
}

func shareCell(share float64) cell {
	c := num(FormatPct(share))
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
	if err := add("throughput", "Per-second achieved rate against the target (dashed black): the schedule's rate less the operations the variant does not serve; phases shaded and labelled at the top, events marked at the bottom.", f, err); err != nil {
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
	t := &table{Caption: "Every operation, every variant (response time unless marked service).", Head: heads("variant", "ops", "achieved/s", "p50", "p90", "p99", "p99.9", "p99.99", "max", "service p99", "error rate")}
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
			t.Rows = append(t.Rows, row{Cells: []cell{sideCell(s), num(FormatCount(float64(o.Completed))), num(FormatCount(o.AchievedRate)), msCell(l.P50, l.Count), msCell(l.P90, l.Count), msCell(l.P99, l.Count), msCell(l.P999, l.Count), msCell(l.P9999, l.Count), msCell(l.Max, l.Count), msCell(o.Service.P99, o.Service.Count), errCell(o.ErrorRate)}})
		}
	}
	return t
}

// notServedCell fills the rest of an operation's row (span columns) for a variant that
// does not serve it: no latency, rate or error, only the design's reason.
func notServedCell(o *results.OpStats, span int) cell {
	return cell{Text: fmt.Sprintf("not served by this design (%s offered): %s", FormatCount(float64(o.Unserved)), o.UnservedReason), Class: "wrap muted", Span: span}
}

func msCell(ms float64, count int64) cell {
	if count == 0 {
		return cell{Text: "—", Class: "num muted"}
	}
	return num(FormatMs(ms))
}
