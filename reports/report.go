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
	"runtime"
	"sync"
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
	// AnalysisDir and CapacityDir are a key analysis's and a capacity search's results
	// directories for the verdict of a run (default: the run's own analysis.json and
	// capacity.json, if any). Render writes the verdict to Out as verdict.json.
	AnalysisDir, CapacityDir string
	// LogsWritten says this process wrote the run's interval logs a moment ago and
	// reported every write error (run's own report): they are not read back to check
	// their integrity, which is for directories read later, perhaps damaged or cut short
	// by a kill (Black Friday writes 235 logs, 99 MB).
	LogsWritten bool
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
	if isCapacityDir(dir) {
		return RenderCapacity(dir, opts)
	}
	if opts.Out == "" {
		opts.Out = dir
	}
	r, err := loadRun(dir, !opts.LogsWritten)
	if err != nil {
		return nil, err
	}
	judgeRun(r, opts)
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
		r, err := loadRun(d, true)
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
	// Charts being drawn (draw, finish).
	jobs    []*chartJob
	slots   chan struct{}
	drawing sync.WaitGroup
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
	if ferr := r.finish(); err == nil {
		err = ferr
	}
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

// draw starts rendering a figure to PNG and returns its view; nil figures give nil. The
// PNG is drawn by one of GOMAXPROCS goroutines (rasterising is most of a report's time),
// so the page must be built with finish called before its template runs. The view's ID,
// title and file name are set here, in page order; for an embedded chart its data URI is
// set by finish.
func (r *renderer) draw(id, caption string, f *figure) (*chartView, error) {
	if f == nil {
		return nil, nil
	}
	name := r.ids.name(id)
	c := Chart{ID: name, Title: f.plot.Title.Text, Caption: caption}
	v := &chartView{ID: name, Title: c.Title, Caption: caption, W: ChartWidth, H: ChartHeight}
	if !r.opts.Embed {
		if err := os.MkdirAll(filepath.Join(r.opts.Out, ChartsDir), 0o755); err != nil {
			return nil, err
		}
		c.File = filepath.Join(r.opts.Out, ChartsDir, name+".png")
		c.Src = ChartsDir + "/" + name + ".png"
		v.URL, v.Link = template.URL(c.Src), template.URL(c.Src)
	}
	r.charts = append(r.charts, c)
	job := &chartJob{id: id, chart: len(r.charts) - 1, view: v}
	r.jobs = append(r.jobs, job)
	if r.slots == nil {
		r.slots = make(chan struct{}, runtime.GOMAXPROCS(0))
	}
	r.slots <- struct{}{}
	r.drawing.Add(1)
	go func(file string) {
		defer func() { <-r.slots; r.drawing.Done() }()
		job.png, job.err = chartImage(f.plot, f.legend)
		if job.err == nil && file != "" {
			job.err = writeFile(file, job.png)
			job.png = nil
		}
	}(c.File)
	return v, nil
}

// chartJob is a chart draw has started: finish waits for its PNG.
type chartJob struct {
	id    string // as draw was given it, for errors
	chart int    // its index in renderer.charts
	view  *chartView
	png   []byte // an embedded chart's PNG (a written one's is dropped)
	err   error
}

// finish waits for every chart draw started and returns the first error in page order;
// it sets embedded charts' data URIs.
func (r *renderer) finish() error {
	r.drawing.Wait()
	jobs := r.jobs
	r.jobs = nil
	for _, j := range jobs {
		if j.err != nil {
			return fmt.Errorf("chart %s: %w", j.id, j.err)
		}
		if r.opts.Embed {
			src := "data:image/png;base64," + base64.StdEncoding.EncodeToString(j.png)
			r.charts[j.chart].Src = src
			j.view.URL = template.URL(src) // our own PNG bytes, base64: safe
		}
	}
	return nil
}

// ---- page model ----

type banner struct{ Class, Strong, Text string }

type tocEntry struct{ ID, Text string }

type swatch struct {
	Label string
	Color int
}

type gateView struct {
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
	Gates                      []gateView
	Ranking                    *rankingView
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
	pg.Gates = r.gates()
	if !r.compare && r.runs[0].Verdict != nil {
		pg.Ranking = r.ranking(r.runs[0].Verdict, r.runs[0], capacityLink(r.opts.Out, r.opts.CapacityDir))
	}
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
