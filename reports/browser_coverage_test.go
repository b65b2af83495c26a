package reports

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/units"
)

// coverageProbe reads, from the rendered page, the overview table and every table row
// that says an operation is not served.
const coverageProbe = `JSON.stringify({
  overview: Array.from(document.querySelector('#overview table').rows).map(r => Array.from(r.cells).map(c => c.innerText.trim())),
  notServed: Array.from(document.querySelectorAll('tr')).filter(r => r.innerText.includes('not served by this design')).map(r => Array.from(r.cells).map(c => c.innerText.trim())),
  opRows: Array.from(document.querySelectorAll('#variants tr')).map(r => Array.from(r.cells).map(c => c.innerText.trim()))
})`

// aLatencyOrRate is what a latency or an error rate looks like in a cell.
var aLatencyOrRate = regexp.MustCompile(`^[0-9.,]+\s?(µs|ms|s|%)$`)

// TestBrowserCoverage opens rendered reports in headless Chromium and reads what a person
// sees: each variant's overview p50 is its served operations' response histograms merged
// (never an operation it does not serve), its "serves" cell is its coverage, and every row
// of an operation a variant does not serve shows the design's reason and no latency or
// error rate. It checks the fixtures (a variant leaving views.append to another store, a
// version-1 run converted on reading) and, when SHARDBENCH_COVERAGE_REPORT names results
// directories (comma-separated, e.g. the demo's), those too.
func TestBrowserCoverage(t *testing.T) {
	bin := chromiumBin(t)
	dirs := []string{fixture(t, "sim"), "../internal/results/testdata/v1-sim"}
	if extra := os.Getenv("SHARDBENCH_COVERAGE_REPORT"); extra != "" {
		dirs = append(dirs, strings.Split(extra, ",")...)
	}
	br := startBrowser(t, bin)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			sum, err := results.Read(dir)
			if err != nil {
				t.Fatal(err)
			}
			out, err := Render(dir, Options{Out: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			raw, err := br.evaluate(ctx, out.HTML, coverageProbe)
			if err != nil {
				t.Fatalf("%v\n%s", err, br.stderr.String())
			}
			var page struct {
				Overview  [][]string `json:"overview"`
				NotServed [][]string `json:"notServed"`
				OpRows    [][]string `json:"opRows"`
			}
			if err := json.Unmarshal([]byte(raw), &page); err != nil {
				t.Fatal(err)
			}
			checkOverview(t, sum, page.Overview)
			want := 0
			for _, v := range sum.Variants {
				want += len(v.Coverage.UnservedOps)
			}
			// Each unserved operation has its row in the variant's operation table (and,
			// with several variants, in the latency table).
			if len(page.NotServed) < want || want == 0 {
				t.Errorf("%d rows say an operation is not served, want at least %d", len(page.NotServed), want)
			}
			for _, r := range page.NotServed {
				for _, c := range r[1:] {
					if aLatencyOrRate.MatchString(c) || (strings.Contains(c, "not served by this design") && !strings.Contains(c, "): ")) {
						t.Errorf("a not-served row shows %q: %q", c, r)
					}
				}
			}
			t.Logf("%s: %d variants, %d not-served rows, overview checked", dir, len(sum.Variants), len(page.NotServed))
		})
	}
}

// checkOverview compares the overview's serves and p50 cells with the summary: p50 of
// the served operations merged, computed here from their embedded histograms.
func checkOverview(t *testing.T, sum *results.Summary, rows [][]string) {
	t.Helper()
	if len(rows) < 2 {
		t.Fatalf("overview table: %q", rows)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	if _, ok := col["serves"]; !ok {
		t.Fatalf("overview has no serves column: %q", rows[0])
	}
	for _, r := range rows[1:] {
		v := sum.Variant(r[0])
		if v == nil {
			t.Errorf("overview row %q names no variant", r[0])
			continue
		}
		merged := metrics.NewHistogram()
		for _, st := range v.Ops {
			if !st.Served() {
				continue
			}
			h, err := st.Response.DecodeHistogram()
			if err != nil {
				t.Fatal(err)
			}
			merged.Merge(h)
		}
		if got, want := r[col["serves"]], CoverageShort(v.Coverage); got != want {
			t.Errorf("%s: serves %q, want %q", v.Name, got, want)
		}
		if merged.TotalCount() == 0 {
			continue
		}
		want := units.Ms(float64(merged.ValueAtPercentile(50)) / 1e6)
		if got := r[col["p50"]]; got != want {
			t.Errorf("%s: overview p50 %s, the served operations merged give %s", v.Name, got, want)
		}
	}
}

// evaluate opens path in a new tab, waits for the load event and returns the string
// value of expr evaluated in the page.
func (b *browser) evaluate(ctx context.Context, path, expr string) (string, error) {
	res, err := b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"})
	if err != nil {
		return "", err
	}
	var tgt struct {
		TargetID string `json:"targetId"`
	}
	json.Unmarshal(res, &tgt)
	defer b.call(context.Background(), "", "Target.closeTarget", map[string]any{"targetId": tgt.TargetID})
	res, err = b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": tgt.TargetID, "flatten": true})
	if err != nil {
		return "", err
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(res, &att)
	s := att.SessionID
	if _, err := b.call(ctx, s, "Page.enable", nil); err != nil {
		return "", err
	}
	for len(b.events) > 0 {
		<-b.events
	}
	u := (&url.URL{Scheme: "file", Path: path}).String()
	if _, err := b.call(ctx, s, "Page.navigate", map[string]any{"url": u}); err != nil {
		return "", err
	}
	for loaded := false; !loaded; {
		select {
		case ev := <-b.events:
			loaded = ev.SessionID == s && ev.Method == "Page.loadEventFired"
		case <-ctx.Done():
			return "", fmt.Errorf("waiting for the load event: %w", ctx.Err())
		}
	}
	res, err = b.call(ctx, s, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true})
	if err != nil {
		return "", err
	}
	var ev struct {
		Result struct {
			Value string `json:"value"`
		} `json:"result"`
		ExceptionDetails any `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(res, &ev); err != nil {
		return "", err
	}
	if ev.ExceptionDetails != nil {
		return "", fmt.Errorf("the probe failed in the page: %v", ev.ExceptionDetails)
	}
	return ev.Result.Value, nil
}

// The per-operation latency chart of an operation draws only the variants that serve it.
func TestLatencyChartLeavesOutUnserved(t *testing.T) {
	r, err := loadRun(fixture(t, "sim"), true)
	if err != nil {
		t.Fatal(err)
	}
	sides := sidesOf([]*run{r})
	f, err := latencyChart("views.append", sides, func(s *side) (*results.Latency, *results.Latency) {
		o := s.V.Op("views.append")
		return &o.Response, &o.Service
	}, true)
	if err != nil || f == nil {
		t.Fatalf("chart: %v", err)
	}
	var labels []string
	for _, l := range f.legend {
		labels = append(labels, l.Label)
	}
	if got := strings.Join(labels, ", "); strings.Contains(got, "mongo-hashed-user") || !strings.Contains(got, "cass-day-bucket") {
		t.Errorf("legend %q: mongo-hashed-user does not serve views.append", got)
	}
}
