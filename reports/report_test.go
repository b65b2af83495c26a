package reports

import (
	"bytes"
	"flag"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/results"
)

var update = flag.Bool("update", false, "rewrite the golden HTML files in testdata/golden")

var fixedNow = func() time.Time { return time.Date(2025, 11, 28, 12, 0, 0, 0, time.UTC) }

func testOptions(out string) Options {
	return Options{Out: out, Version: "v-test", Now: fixedNow}
}

// fixtures are built once per test binary: generating the latency parts takes a moment.
var fixtureDirs = struct {
	sync.Mutex
	m map[string]string
}{m: map[string]string{}}

type fixtureTB struct {
	testing.TB
	dir string
}

func (f fixtureTB) TempDir() string {
	d, err := os.MkdirTemp(f.dir, "fx")
	if err != nil {
		f.Fatal(err)
	}
	return d
}

var fixtureRoot string

func TestMain(m *testing.M) {
	flag.Parse()
	root, err := os.MkdirTemp("", "shardbench-reports-fixtures")
	if err != nil {
		panic(err)
	}
	fixtureRoot = root
	code := m.Run()
	os.RemoveAll(root)
	os.Exit(code)
}

// fixture returns the directory of a named fixture, building it on first use.
func fixture(t *testing.T, name string) string {
	t.Helper()
	fixtureDirs.Lock()
	defer fixtureDirs.Unlock()
	if d, ok := fixtureDirs.m[name]; ok {
		return d
	}
	mk := map[string]func(testing.TB) string{"plan": planDir, "sim": simDir, "real": realDir, "interrupted": interruptedDir, "hotspots-only": hotspotsOnlyDir,
		"analysis": analysisOnlyDir, "sim-analysis": simAnalysisDir}[name]
	if mk == nil {
		t.Fatalf("no fixture %q", name)
	}
	d := mk(fixtureTB{t, fixtureRoot})
	fixtureDirs.m[name] = d
	return d
}

// ---- golden HTML ----

var (
	reTime    = regexp.MustCompile(`Generated \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC`)
	reGo      = regexp.MustCompile(`go1\.\d+(\.\d+)?(rc\d+)?`)
	reDataURI = regexp.MustCompile(`data:image/png;base64,(?:[A-Za-z0-9+/=]|&#43;)+`)
)

// normalize replaces what changes from one machine or run to the next: the fixture and
// output directories, the generation time, Go and shardbench versions, image bytes.
func normalize(html string, dirs map[string]string) string {
	for dir, name := range dirs {
		html = strings.ReplaceAll(html, dir, name)
	}
	html = reTime.ReplaceAllString(html, "Generated TIME")
	html = reGo.ReplaceAllString(html, "goX")
	html = strings.ReplaceAll(html, "v-test", "VERSION")
	html = reDataURI.ReplaceAllString(html, "data:image/png;base64,PNG")
	return html
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".html")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run: go test ./reports -run Golden -update)", err)
	}
	if string(want) != got {
		wl, gl := strings.Split(string(want), "\n"), strings.Split(got, "\n")
		for i := 0; i < max(len(wl), len(gl)); i++ {
			var w, g string
			if i < len(wl) {
				w = wl[i]
			}
			if i < len(gl) {
				g = gl[i]
			}
			if w != g {
				t.Fatalf("%s differs from the golden file at line %d:\nwant: %s\ngot:  %s\n(if the change is intended: go test ./reports -run Golden -update)", path, i+1, Truncate(w, 400), Truncate(g, 400))
			}
		}
	}
}

func TestGoldenHTML(t *testing.T) {
	cases := []struct {
		name    string
		dirs    []string
		compare bool
		embed   bool
	}{
		{"plan", []string{"plan"}, false, false},
		{"sim", []string{"sim"}, false, false},
		{"real", []string{"real"}, false, false},
		{"interrupted", []string{"interrupted"}, false, true},
		{"compare", []string{"real", "interrupted"}, true, false},
		{"analysis", []string{"analysis"}, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			repl := map[string]string{}
			var dirs []string
			for _, n := range c.dirs {
				d := fixture(t, n)
				dirs = append(dirs, d)
				repl[d] = "RESULTS/" + filepath.Base(d)
			}
			out := t.TempDir()
			repl[out] = "OUT"
			opts := testOptions(out)
			opts.Embed = c.embed
			var res *Output
			var err error
			if c.compare {
				res, err = Compare(dirs, opts)
			} else {
				res, err = Render(dirs[0], opts)
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(res.HTML)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, c.name, normalize(string(b), repl))
		})
	}
}

// ---- what each kind of directory shows ----

func renderHTML(t *testing.T, dir string) (*Output, string) {
	t.Helper()
	out, err := Render(dir, testOptions(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out.HTML)
	if err != nil {
		t.Fatal(err)
	}
	return out, string(b)
}

func mustContain(t *testing.T, html string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(html, w) {
			t.Errorf("report lacks %q", w)
		}
	}
}

func mustNotContain(t *testing.T, html string, bads ...string) {
	t.Helper()
	for _, w := range bads {
		if strings.Contains(html, w) {
			t.Errorf("report must not contain %q", w)
		}
	}
}

func chartIDs(out *Output) []string {
	var ids []string
	for _, c := range out.Charts {
		ids = append(ids, c.ID)
	}
	return ids
}

func sameSet(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	m := map[string]int{}
	for _, g := range got {
		m[g]++
	}
	for _, w := range want {
		m[w]--
	}
	for _, v := range m {
		if v != 0 {
			return false
		}
	}
	return true
}

func TestPlanReport(t *testing.T) {
	for _, name := range []string{"plan", "hotspots-only"} {
		t.Run(name, func(t *testing.T) {
			out, html := renderHTML(t, fixture(t, name))
			mustContain(t, html, "placement plan report", "Placement plan.", "No operation was executed",
				`id="hot"`, "shop.orders_by_period", "time_bucket=&#39;2025-11-28&#39;", "exceeds", "1.2 GiB",
				"No gates", "cass-day-bucket", "mongo-hashed-user", "10.0.0.3, 10.0.0.4, 10.0.0.5")
			mustNotContain(t, html, `id="latency"`, "Simulated.", "Interrupted.")
			want := []string{"hot-node-load", "hot-cumulative-sessions", "hot-cumulative-catalog", "hot-cumulative-carts", "hot-cumulative-orders"}
			for _, v := range []string{"cass-day-bucket", "cass-user-bucket", "mongo-hashed-user"} {
				want = append(want, "hot-top-"+v, "hot-nodes-"+v, "hot-sizes-"+v)
			}
			if !sameSet(chartIDs(out), want) {
				t.Errorf("charts %v, want %v", chartIDs(out), want)
			}
		})
	}
}

func TestSimulatedReport(t *testing.T) {
	out, html := renderHTML(t, fixture(t, "sim"))
	mustContain(t, html, "simulated run report", "Simulated.", "cluster model of the sim backend",
		`<span class="badge fail">FAIL</span> 7 check(s): 4 passed, 2 failed, 1 skipped.`,
		"[cass-day-bucket] orders.place p99 &lt; 50ms", "insufficient sample",
		"Latency by operation", "node_down", "add_shard", "Server-side figures", "simulator model",
		"chunk migrations after shard-04 joined", "flash-sale")
	// Failed checks come first.
	if i, j := strings.Index(html, ">FAIL</td>"), strings.Index(html, ">PASS</td>"); i < 0 || j < 0 || i > j {
		t.Errorf("failed checks must be listed before passed ones")
	}
	want := []string{"latency-all", "throughput", "p99-over-time", "errors"}
	for _, o := range fixOps {
		want = append(want, "latency-"+slug(o.name))
	}
	want = append(want, "hot-node-load", "hot-cumulative-sessions", "hot-cumulative-catalog", "hot-cumulative-carts", "hot-cumulative-orders")
	for _, v := range []string{"cass-day-bucket", "cass-user-bucket", "mongo-hashed-user"} {
		want = append(want, "hot-top-"+v, "hot-nodes-"+v, "hot-sizes-"+v)
	}
	want = append(want, "server-cass-day-bucket-utilisation", "server-cass-day-bucket-queue-length", "server-cass-user-bucket-utilisation", "server-mongo-hashed-user-utilisation", "server-mongo-hashed-user-chunks")
	if !sameSet(chartIDs(out), want) {
		t.Errorf("charts %v\nwant %v", chartIDs(out), want)
	}
}

func TestRealReport(t *testing.T) {
	_, html := renderHTML(t, fixture(t, "real"))
	mustContain(t, html, "real run report", "real cluster", "Apache Cassandra 5.0.4",
		"cassandra://127.0.0.1,127.0.0.2,127.0.0.3:9042?dc=datacenter1",
		`<span class="badge none">NO GATES</span>`, "No gates",
		"placement read from the live cluster", "Client side: load per node", "Server side",
		"per node: local reads and writes", "Server and client disagree", "hints replayed",
		"node_stop", "Cannot achieve consistency level ALL",
		`title="operations that never started: every client slot busy with on_full: drop, still waiting for a slot when the schedule ended`)
	mustNotContain(t, html, "Simulated.", "Placement plan.")
	// The server-side node table sits beside the client-side one (same grid).
	i := strings.Index(html, "Client side: load per node")
	j := strings.Index(html[i:], "per node: local reads and writes")
	if j < 0 || j > 4000 {
		t.Errorf("the server-side node table must follow the client-side one in the same block")
	}
}

func TestInterruptedReport(t *testing.T) {
	_, html := renderHTML(t, fixture(t, "interrupted"))
	mustContain(t, html, "Interrupted.", "received SIGINT", "mongo-hashed-user ran 3", "of 1m20s",
		"interrupted: received SIGINT", "No hot-partition analysis", "No gates")
	sum, err := results.Read(fixture(t, "interrupted"))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Complete || sum.Interrupted == "" || !sum.Variants[0].Interrupted || sum.Variants[0].DurationS > 36 {
		t.Fatalf("fixture is not an interrupted run: complete=%v interrupted=%q span=%v", sum.Complete, sum.Interrupted, sum.Variants[0].DurationS)
	}
}

// ---- PNGs ----

func TestChartsDecodeAtTheExpectedSize(t *testing.T) {
	for _, name := range []string{"sim", "real", "plan", "interrupted"} {
		t.Run(name, func(t *testing.T) {
			out, _ := renderHTML(t, fixture(t, name))
			if len(out.Charts) == 0 {
				t.Fatal("no charts")
			}
			files, _ := filepath.Glob(filepath.Join(filepath.Dir(out.HTML), ChartsDir, "*.png"))
			if len(files) != len(out.Charts) {
				t.Errorf("%d PNG files for %d charts", len(files), len(out.Charts))
			}
			for _, c := range out.Charts {
				b, err := os.ReadFile(c.File)
				if err != nil {
					t.Fatal(err)
				}
				img, err := png.Decode(bytes.NewReader(b))
				if err != nil {
					t.Fatalf("%s: %v", c.ID, err)
				}
				if s := img.Bounds().Size(); s.X != ChartWidth || s.Y != ChartHeight {
					t.Errorf("%s is %dx%d, want %dx%d", c.ID, s.X, s.Y, ChartWidth, ChartHeight)
				}
				// Not blank: lines and text in several colours on white.
				colours := map[uint32]bool{}
				dark := 0
				for y := 0; y < img.Bounds().Dy(); y += 2 {
					for x := 0; x < img.Bounds().Dx(); x += 2 {
						r, g, b, _ := img.At(x, y).RGBA()
						colours[(r>>12)<<8|(g>>12)<<4|b>>12] = true
						if r < 0x8000 && g < 0x8000 && b < 0x8000 {
							dark++
						}
					}
				}
				if len(colours) < 8 || dark < 500 {
					t.Errorf("%s looks blank: %d colours, %d dark pixels", c.ID, len(colours), dark)
				}
				if st, _ := os.Stat(c.File); st.Mode().Perm()&0o044 != 0o044 {
					t.Errorf("%s is not world-readable: %v", c.ID, st.Mode())
				}
				if !strings.Contains(c.Src, ChartsDir+"/") {
					t.Errorf("%s: src %q is not a relative path beside the page", c.ID, c.Src)
				}
			}
		})
	}
}

func TestEmbedWritesOneFileAndRerenderClearsStaleCharts(t *testing.T) {
	dir := fixture(t, "interrupted")
	out := t.TempDir()
	if _, err := Render(dir, testOptions(out)); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(out, ChartsDir, "stale-chart.png")
	os.WriteFile(stale, []byte("x"), 0o644)
	res, err := Render(dir, Options{Out: out, Embed: true, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, ChartsDir)); !os.IsNotExist(err) {
		t.Errorf("embedded report left a charts directory: %v", err)
	}
	b, _ := os.ReadFile(res.HTML)
	if n := strings.Count(string(b), `src="data:image/png;base64,`); n != len(res.Charts) || n == 0 {
		t.Errorf("%d embedded images for %d charts", n, len(res.Charts))
	}
	for _, c := range res.Charts {
		if c.File != "" || !strings.HasPrefix(c.Src, "data:image/png;base64,") {
			t.Errorf("chart %s: file %q src %.40q", c.ID, c.File, c.Src)
		}
	}
}

// A report reads a directory's interval logs back and warns of a damaged one, unless it
// is run's own, rendered by the process that wrote the logs a moment ago (LogsWritten):
// then it does not spend the seconds of reading them.
func TestLogsWrittenSkipsTheLogCheck(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.CopyFS(dir, os.DirFS(fixture(t, "sim"))); err != nil {
		t.Fatal(err)
	}
	sum, err := results.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, filepath.FromSlash(sum.Variants[0].Ops[0].HistogramLog))
	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("garbage\n")
	f.Close()
	for _, written := range []bool{false, true} {
		opts := testOptions(t.TempDir())
		opts.LogsWritten = written
		out, err := Render(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		warned := strings.Contains(strings.Join(out.Warnings, "\n"), log+":")
		if warned == written || len(out.Charts) == 0 {
			t.Errorf("LogsWritten %v: warnings %q, %d charts", written, out.Warnings, len(out.Charts))
		}
	}
}

// ---- big scenarios: chart limits, escaping ----

// bigDir builds a summary with many operations and variants (no time series), and hot
// spots for every variant; one variant's name and notes try to inject markup.
func bigDir(t *testing.T, nOps, nVars int) string {
	dir := t.TempDir()
	d, err := results.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	sum := &results.Summary{Scenario: results.ScenarioInfo{Name: "big", DurationS: 60}, Backend: results.BackendInfo{Name: "sim", Simulated: true}, Complete: true}
	hs := &results.Hotspots{}
	for v := 0; v < nVars; v++ {
		name := fmt.Sprintf("variant-%02d", v)
		if v == 1 {
			name = `evil<script>alert("x")</script>`
		}
		vr := results.SummaryVariant{Name: name, Notes: []string{`note with <b>markup</b> & "quotes"`}}
		all := metrics.NewHistogram()
		for o := 0; o < nOps; o++ {
			h := metrics.NewHistogram()
			for i := 0; i < 200*(nOps-o); i++ {
				h.RecordValue(int64((1 + float64(i%97)*float64(v+1)/10) * 1e6))
			}
			all.Merge(h)
			n := h.TotalCount()
			vr.Ops = append(vr.Ops, results.OpStats{Op: fmt.Sprintf("op%02d.x", o), Scheduled: n, Completed: n, OK: n, AchievedRate: float64(n) / 60, TargetRate: float64(n) / 60, Response: results.Summarize(h, true), Service: results.Summarize(h, true)})
		}
		vr.Totals = results.OpStats{Op: "all", Scheduled: all.TotalCount(), Completed: all.TotalCount(), Response: results.Summarize(all, true), Service: results.Summarize(all, true)}
		sum.Variants = append(sum.Variants, vr)
		loads := []int64{100, 100, 100, int64(100 + 40*v)}
		hv := results.HotspotsVariant{Variant: name, Database: "cassandra",
			Tables: []results.TableHotspots{{Table: "ks.t", Entity: "e", Ops: 1000, Partitions: 500, Top: []results.PartitionLoad{{Key: `k='<img src=x onerror=alert(1)>'`, Ops: 50, Share: 0.05}}}}}
		for i, l := range loads {
			hv.Nodes = append(hv.Nodes, results.NodeLoad{Node: fmt.Sprintf("n%d", i), Ops: l})
		}
		hs.Variants = append(hs.Variants, hv)
	}
	if err := d.WriteSummary(sum); err != nil {
		t.Fatal(err)
	}
	if err := d.WriteHotspots(hs); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestBigScenarioKeepsChartCountSensibleAndEscapes(t *testing.T) {
	dir := bigDir(t, 25, 15)
	opts := testOptions(t.TempDir())
	opts.MaxOpCharts, opts.MaxVariantCharts = 8, 6
	out, err := Compare([]string{dir}, opts)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out.HTML)
	html := string(b)
	// 1 overall spectrum + 8 operations + 1 node overlay + 1 entity + 6 variants × 2 (top,
	// nodes; no projections) = 23; no time series, so no time charts.
	if len(out.Charts) != 23 {
		t.Errorf("%d charts: %v", len(out.Charts), chartIDs(out))
	}
	mustContain(t, html, "Charts for the 8 busiest of 25 operations", "for the 6 variants with the worst node imbalance (of 15)",
		"With more than 6 variants the charts show response time only", "op24.x", // every op is still in the tables
		"evil&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;", "note with &lt;b&gt;markup&lt;/b&gt; &amp; &#34;quotes&#34;",
		"k=&#39;&lt;img src=x onerror=alert(1)&gt;&#39;")
	mustNotContain(t, html, "<script>", "<b>markup</b>", "<img src=x")
	// The worst imbalance is the last variant: it gets charts; the first does not.
	ids := strings.Join(chartIDs(out), " ")
	if !strings.Contains(ids, "hot-nodes-variant-14") || strings.Contains(ids, "hot-nodes-variant-00") {
		t.Errorf("per-variant charts must go to the worst-balanced variants: %s", ids)
	}
}

// ---- comparison semantics ----

func TestComparisonWinners(t *testing.T) {
	cases := []struct {
		better int
		vals   []float64
		win    []int
		tie    bool
	}{
		{lowerWins, []float64{10, 12}, []int{0}, false},
		{lowerWins, []float64{10, 10.05}, []int{0, 1}, true}, // within 1%
		{higherWins, []float64{100, 150, 149}, []int{1, 2}, false},
		{lowerWins, []float64{nan, 5}, nil, false}, // one value: nothing to compare
		{lowerWins, []float64{0, 0.001}, []int{0}, false},
	}
	for _, c := range cases {
		m := &metric{Better: c.better, Values: c.vals}
		win, tie := m.winners()
		if fmt.Sprint(win) != fmt.Sprint(c.win) || tie != c.tie {
			t.Errorf("%v (better %+d): winners %v tie %v, want %v %v", c.vals, c.better, win, tie, c.win, c.tie)
		}
	}
}

func TestCompareTableNamesTheWinner(t *testing.T) {
	out, err := Compare([]string{fixture(t, "sim")}, testOptions(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out.HTML)
	html := string(b)
	// cass-user-bucket has the lowest overall p99 and the best balance; day-bucket the worst.
	row := regexp.MustCompile(`<th scope="row">max/mean load</th>(.*?)</tr>`).FindStringSubmatch(html)
	if row == nil || !strings.Contains(row[1], `class="good">cass-user-bucket</td>`) {
		t.Errorf("max/mean row: %v", row)
	}
	mustContain(t, html, "Lower wins for latency", "figures won", "÷")
}

func TestFormatters(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{FormatChange(10, 11), "+10%"}, {FormatChange(10, 9.5), "-5.0%"}, {FormatChange(3290, 1.82), "÷1.81e+03"}, {FormatChange(2, 7), "×3.5"},
		{tickMs(0.1), "100µs"}, {tickMs(2000), "2s"}, {tickCount(1500), "1.5k"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestSpectrumUsesTheNinesAxis(t *testing.T) {
	h := hdr.New(metrics.Lowest, metrics.Highest, 3)
	for i := 1; i <= 100000; i++ {
		h.RecordValue(int64(i) * 1000) // 1µs … 100ms uniformly
	}
	pts := spectrum(h)
	at := func(q float64) float64 {
		x := ninesX(q)
		for _, p := range pts {
			if math.Abs(p.X-x) < 0.011 {
				return math.Pow(10, p.Y)
			}
		}
		t.Fatalf("no point at q=%v", q)
		return 0
	}
	for _, c := range []struct{ q, ms float64 }{{0.5, 50}, {0.9, 90}, {0.99, 99}} {
		if got := at(c.q); math.Abs(got-c.ms)/c.ms > 0.01 {
			t.Errorf("p%v = %.2fms, want %.0fms", c.q*100, got, c.ms)
		}
	}
	if last := pts[len(pts)-1].X; math.Abs(last-5) > 1e-9 {
		t.Errorf("100k values resolve up to 99.999%% (x=5), curve ends at x=%v", last)
	}
}

func TestWriteText(t *testing.T) {
	sum, err := results.Read(fixture(t, "sim"))
	if err != nil {
		t.Fatal(err)
	}
	hot, err := results.ReadHotspots(fixture(t, "sim"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteText(&buf, sum, hot); err != nil {
		t.Fatal(err)
	}
	s := buf.String()
	for _, want := range []string{"achieved/s", "p99.9", "serves", "cass-day-bucket", "hot spots:",
		// Coverage, not errors: the variant that leaves views.append to another store.
		"  all 7  ", "6/7 · ", "mongo-hashed-user serves 6 of 7 operations, ", "of the offered traffic; not served: views.append",
		"rates, latencies and errors are of the operations a variant serves",
		"cass-day-bucket: hottest partition products_by_category category='electronics' takes 70.0% of its table (8.89k ops)", // most operations on one partition
		"busiest node 10.0.0.3 at 1.50× the mean (+50%); 6 node(s) break the 30% rule",
		"2 partition(s) projected over the size limit (largest 1.2 GiB)",
		"mongo-hashed-user: hottest partition", "busiest shard shard-03",
		"timeout errors"} {
		if !strings.Contains(s, want) {
			t.Errorf("text summary lacks %q:\n%s", want, s)
		}
	}
	// A plan has no latency: no latency table, only the hot spots.
	psum, _ := results.Read(fixture(t, "plan"))
	buf.Reset()
	WriteText(&buf, psum, hot)
	if strings.Contains(buf.String(), "p99.9") || !strings.Contains(buf.String(), "hot spots:") {
		t.Errorf("plan summary:\n%s", buf.String())
	}
}

func TestNotAResultsDirectory(t *testing.T) {
	if _, err := Render(t.TempDir(), testOptions(t.TempDir())); err == nil || !strings.Contains(err.Error(), "not a results directory") {
		t.Errorf("empty dir: %v", err)
	}
	if _, err := Compare(nil, testOptions(t.TempDir())); err == nil {
		t.Error("compare of nothing must fail")
	}
}

// The key analysis of `shardbench analyze` renders on its own (no summary.json): per
// variant a table per table or collection with the prediction and, where --server-check
// ran, analyzeShardKey's numbers beside it; the reasons behind each verdict; the ranking.
func TestKeyAnalysisReport(t *testing.T) {
	dir := analysisOnlyDir(t)
	out, html := renderHTML(t, dir)
	if len(out.Warnings) != 0 {
		t.Errorf("warnings %v", out.Warnings)
	}
	mustContain(t, html,
		"key analysis report", "<strong>Key analysis.</strong>", `<section id="keys">`, `href="#keys"`,
		// A table per collection: prediction and server side by side.
		"shop.orders", "{user_id: hashed, created_at: 1}", `<th scope="col">predicted</th><th scope="col">analyzeShardKey</th>`,
		"<td class=\"wrap\">4210</td><td class=\"wrap\">4187</td>", "not monotonic, r = -0.04", "not monotonic, r = 0.01",
		"one shard 32.0% · several 0% · all shards (scatter-gather) 68.0%, of 9000",
		"one shard 31.5% · several 0% · all shards (scatter-gather) 68.5%, of 517 sampled",
		"of 233 sampled (no inserts)", "412 B", "398 B",
		// Cassandra reads partitions, and has no server column.
		"shop.orders_by_period", "one partition 70.0% · several 30.0% · scan or index 0%, of 700", "time_bucket=&#39;2025-11-28&#39; 100%",
		// Estimates, monotonic direction, hottest range, the server's failure.
		"≈1234567 ±0.810% (HyperLogLog)", "monotonic, r = 1.00 (increasing)", "87.0% of inserts, of 2 ranges",
		"analyzeShardKey failed:</span> (Unauthorized) not authorized",
		// Verdicts with their reasons, the ranking, the server check.
		`<span class="badge fail">avoid</span>`, `<span class="bad">problem</span>: reads by _id must broadcast to all 3 shards`,
		"one partition per period: every row written went to", `<th colspan="5" scope="rowgroup">orders</th>`,
		"<strong>Server check done.</strong> analyzeShardKey ran on mongos-1:27017",
		"server check in database shop_1a2b3c4d_analyze", "predicted from the scenario&#39;s operation stream with no database",
		"mongo-created-at", "key verdict")
	mustNotContain(t, html, `id="latency"`, "Placement plan.", "Could not read")
	// The ranking keeps the analysis' order, best first.
	i, j := strings.Index(html, `<span class="sw c0"></span>mongo-hashed-user</th><td class="num">1</td>`), strings.Index(html, `<span class="sw c2"></span>mongo-created-at</th><td class="num">3</td>`)
	if i < 0 || j < 0 || j < i {
		t.Errorf("ranking rows missing or out of order (%d, %d)", i, j)
	}
	// The Cassandra table has no server column: exactly two tables carry one.
	if n := strings.Count(html, `<th scope="col">analyzeShardKey</th>`); n != 1 {
		t.Errorf("%d tables with a server column, want 1 (the failed check shows its error instead)", n)
	}
}

// A run or plan directory with analysis.json shows the section beside its own, the
// variants keep their colours, and an unreadable analysis.json is a warning, not a failure.
func TestKeyAnalysisBesideAPlan(t *testing.T) {
	dir := planDir(t)
	writeAnalysis(t, dir, analysisDoc())
	_, html := renderHTML(t, dir)
	mustContain(t, html, "placement plan report", `<section id="hot">`, `<section id="keys">`, `id="keys-mongo-hashed-user"`,
		`<h3><span class="sw c2"></span>mongo-hashed-user</h3>`, `<th scope="col">key verdict</th>`, `<td class="bad">avoid</td>`)
	mustNotContain(t, html, "key analysis report")

	bad := planDir(t)
	if err := os.WriteFile(filepath.Join(bad, results.AnalysisFile), []byte(`{"schema":"other"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, html := renderHTML(t, bad)
	if len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0], results.AnalysisFile) {
		t.Errorf("warnings %v", out.Warnings)
	}
	mustContain(t, html, "Could not read:")
	mustNotContain(t, html, `<section id="keys">`)
}

// A simulated run's banner says what the model's servers sustain, from the backend
// details the simulator records.
func TestSimulatedBannerStatesCapacity(t *testing.T) {
	got := simulatedCapacity(map[string]string{"cassandra_node_capacity": "8 cores; at saturation point read 44.4K/s"})
	if !strings.Contains(got, "a Cassandra node: 8 cores; at saturation point read 44.4K/s") || strings.Contains(got, "MongoDB") {
		t.Errorf("banner sentence %q", got)
	}
	if simulatedCapacity(map[string]string{"network_rtt": "200µs"}) != "" {
		t.Error("a run without recorded capacity gets no sentence")
	}
}

// The terminal's hot-partition line names the headline imbalance's busiest node and what
// it is the busiest by: a monotonic shard key's shard0 takes the inserts while broadcast
// reads spread evenly.
func TestHotLineSaysWhatTheImbalanceMeasures(t *testing.T) {
	hv := &results.HotspotsVariant{Database: "mongodb",
		Nodes: []results.NodeLoad{
			{Node: "shard0", Database: "mongodb", Ops: 11_600, Writes: 1_600, Bytes: 249e6},
			{Node: "shard1", Database: "mongodb", Ops: 11_700, Writes: 300, Bytes: 5e5},
			{Node: "shard2", Database: "mongodb", Ops: 10_300, Writes: 300, Bytes: 5e5},
		}}
	hv.Balance, hv.Balances = results.NodeBalances(hv.Nodes)
	line := hotLine(hv)
	if !strings.Contains(line, "busiest shard shard0 at 2.99") || !strings.Contains(line, "by bytes written (99.6% of them)") {
		t.Errorf("hot line %q", line)
	}
}

// A category listing's key over many chunks ({category: electronics} under {category: 1,
// _id: hashed}) is listed with the chunks it reaches, but the hottest partition the
// terminal and the page name is the heaviest key in one chunk.
func TestKeyOverSeveralChunksIsNoHottestPartition(t *testing.T) {
	tb := results.TableHotspots{Table: "shop.products", Ops: 100_000, Partitions: 150_000, Top: []results.PartitionLoad{
		{Key: "{category: electronics}", Ops: 20_600, Share: 0.206, Chunks: 46},
		{Key: "{category: electronics, _id: P0}", Ops: 3_000, Share: 0.03, Shard: "shard1", Range: "[a, b)"},
	}}
	hv := &results.HotspotsVariant{Database: "mongodb", Tables: []results.TableHotspots{tb}}
	if line := hotLine(hv); !strings.Contains(line, "hottest partition products {category: electronics, _id: P0} takes 3.00%") {
		t.Errorf("hot line %q", line)
	}
	view := hotTable(tb, "mongodb")
	if view.Top == nil || len(view.Top.Rows) != 2 {
		t.Fatalf("top table %+v, want both keys", view.Top)
	}
	var cells []string
	for _, c := range view.Top.Rows[0].Cells {
		cells = append(cells, c.Text)
	}
	if !slices.Contains(cells, "46 chunks") || !slices.Contains(cells, "several") {
		t.Errorf("the spread key's row %q should say it reaches 46 chunks on several shards", cells)
	}
}
