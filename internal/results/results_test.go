package results

import (
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/shardbench/shardbench/internal/itest"
	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/metrics/metricstest"
)

// writeRun records known samples through a collector into a results directory.
func writeRun(t testing.TB) (*Dir, *metrics.Collector) {
	t.Helper()
	dir, err := Create(filepath.Join(t.TempDir(), "r"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dir.Close() })
	vw := dir.Variant("seed000[buckets=10]", []string{"carts.read", "carts.add_item"}, time.Unix(1_700_000_000, 0),
		Timeline{Expected: func(a, b time.Duration) float64 { return 1000 * (b - a).Seconds() }, Phase: func(time.Duration) string { return "plateau" }})
	col := metrics.NewCollector(2, time.Millisecond, time.Second, vw.Sink)
	ms := int64(time.Millisecond)
	for sec := int64(0); sec < 3; sec++ {
		var batch []metrics.Sample
		for i := int64(0); i < 1000; i++ {
			at := sec*1000*ms + i*ms
			// op 0: 1..10 ms; op 1: 1 ms, except 1% at 200 ms
			lat := (1 + i%10) * ms
			op := uint16(i % 2)
			if op == 1 {
				lat = ms
				if i%100 == 1 {
					lat = 200 * ms
				}
			}
			// op 1 waits half its latency before starting, so service time is half of response time
			batch = append(batch, metrics.Sample{Intended: at, Start: at + lat/2*int64(op), End: at + lat, Op: op})
		}
		col.Add(batch)
		col.Flush(time.Duration(sec+1)*time.Second, 3)
	}
	if err := vw.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, col
}

func TestIntervalLogRoundTrip(t *testing.T) {
	dir, col := writeRun(t)
	path := filepath.Join(dir.Path, HistogramLogPath("seed000[buckets=10]", "carts.add_item"))
	if !strings.HasSuffix(path, "histograms/seed000_buckets=10/carts.add_item.hlog") {
		t.Errorf("log path %s", path)
	}
	ivs, err := ReadHistogramLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(ivs) != 9 {
		t.Fatalf("3 intervals × 3 tags, got %d lines", len(ivs))
	}
	// Per tag, the intervals merge into exactly the cumulative histogram, for an operation
	// whose samples start late (carts.add_item) and one whose samples all start on time
	// (carts.read: its service line repeats the response line's encoding).
	for op, name := range []string{"carts.read", "carts.add_item"} {
		ivs, err := ReadHistogramLog(filepath.Join(dir.Path, HistogramLogPath("seed000[buckets=10]", name)))
		if err != nil {
			t.Fatal(err)
		}
		tot := col.Totals()[op]
		for tag, want := range map[string]*hdr.Histogram{"": tot.Response, "service": tot.Service, "lag": tot.Lag} {
			merged := metrics.NewHistogram()
			for _, iv := range ivs {
				if iv.Tag == tag {
					merged.Merge(iv.Hist)
				}
			}
			if merged.TotalCount() != 3000/2 || !merged.Equals(want) {
				t.Errorf("%s: merging the intervals tagged %q (%d values) must give exactly the cumulative histogram", name, tag, merged.TotalCount())
			}
		}
	}
	if ivs[3].StartS != 1 || ivs[3].EndS != 2 {
		t.Errorf("second interval spans %g..%g", ivs[3].StartS, ivs[3].EndS)
	}
}

func TestSummaryStatsAndEmbeddedHistograms(t *testing.T) {
	_, col := writeRun(t)
	st := FromSet("carts.add_item", "write", col.Totals()[1], 3, 3)
	if st.Completed != 1500 || st.AchievedRate != 500 || st.Response.P50 < 0.99 || st.Response.P50 > 1.01 {
		t.Errorf("stats: %+v", st)
	}
	if st.Response.P99 < 199 || st.Response.Max < 199 || st.Response.P90 > 1.01 {
		t.Errorf("the 1%% at 200ms must show at p99 and max, not p90: %+v", st.Response)
	}
	set, err := st.ToSet()
	if err != nil {
		t.Fatal(err)
	}
	if !set.Response.Equals(col.Totals()[1].Response) || set.Completed != 1500 {
		t.Error("the embedded histogram must decode to the exact cumulative histogram")
	}
}

func TestTimeseriesAndTornLastLine(t *testing.T) {
	dir, _ := writeRun(t)
	dir.Close()
	pts, warnings, err := ReadTimeseriesChecked(dir.Path)
	if err != nil || len(pts) != 3 || warnings != nil {
		t.Fatalf("points %d, %v %v", len(pts), warnings, err)
	}
	p := pts[1]
	if p.Variant != "seed000[buckets=10]" || p.Phase != "plateau" || p.TargetRate != 1000 || p.AchievedRate != 1000 || p.InFlight != 3 {
		t.Errorf("point: %+v", p)
	}
	f, _ := os.OpenFile(filepath.Join(dir.Path, TimeseriesFile), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"variant":"x","start_s":3,`)
	f.Close()
	pts, warnings, err = ReadTimeseriesChecked(dir.Path)
	if err != nil || len(pts) != 3 {
		t.Errorf("a torn last line (killed run) must be left out: %d points, %v", len(pts), err)
	}
	want := filepath.Join(dir.Path, TimeseriesFile) + ":4: not a time series point: unexpected end of JSON input (the last line, cut short"
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], want) {
		t.Errorf("a torn last line is reported, not dropped silently: %q", warnings)
	}
	// A bad line that is not the last is an error naming it.
	f, _ = os.OpenFile(filepath.Join(dir.Path, TimeseriesFile), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("\n{\"variant\":\"x\"}\n")
	f.Close()
	if _, err := ReadTimeseries(dir.Path); err == nil || !strings.Contains(err.Error(), TimeseriesFile+":4: not a time series point") || !errors.Is(err, ErrUnreadable) {
		t.Errorf("a bad line before the last: %v", err)
	}
}

func TestReadRejectsForeignAndFutureFiles(t *testing.T) {
	d := t.TempDir()
	os.WriteFile(filepath.Join(d, SummaryFile), []byte(`{"schema":"other","version":1}`), 0o644)
	if _, err := Read(d); err == nil || !strings.Contains(err.Error(), "schema") {
		t.Errorf("foreign schema: %v", err)
	}
	os.WriteFile(filepath.Join(d, SummaryFile), []byte(`{"schema":"shardbench/summary","version":99}`), 0o644)
	if _, err := Read(d); err == nil || !strings.Contains(err.Error(), "upgrade") {
		t.Errorf("future version: %v", err)
	}
	if _, err := Read(t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a results directory") {
		t.Errorf("empty dir: %v", err)
	}
}

// The reference implementation must read our interval logs: untagged intervals (response
// time) by default, and the service tag when asked.
func TestJavaHistogramLogProcessorReadsOurLogs(t *testing.T) {
	jar := itest.Env(t, "SHARDBENCH_HDR_JAR", "the Java HdrHistogram 2.2.2 jar (testenv/hdrhistogram/fetch.sh)")
	dir, col := writeRun(t)
	path := filepath.Join(dir.Path, HistogramLogPath("seed000[buckets=10]", "carts.add_item"))
	tot := col.Totals()[1]
	for _, tc := range []struct {
		tag       string
		want, max int64
	}{{"", tot.Response.ValueAtPercentile(99), tot.Response.Max()}, {"service", tot.Service.ValueAtPercentile(99), tot.Service.Max()}} {
		args := []string{"-cp", jar, "org.HdrHistogram.HistogramLogProcessor", "-i", path, "-csv"}
		if tc.tag != "" {
			args = append(args, "-tag", tc.tag)
		}
		out, err := exec.Command("java", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("HistogramLogProcessor: %v\n%s", err, out)
		}
		// Without -o the tool prints the whole log's percentile distribution in ms:
		// "Value","Percentile","TotalCount","1/(1-Percentile)".
		var body []string
		for _, l := range strings.Split(string(out), "\n") {
			if l != "" && !strings.HasPrefix(l, "#") {
				body = append(body, l)
			}
		}
		rows, err := csv.NewReader(strings.NewReader(strings.Join(body, "\n"))).ReadAll()
		if err != nil || len(rows) < 10 || rows[0][1] != "Percentile" {
			t.Fatalf("csv output (%v):\n%s", err, out)
		}
		var p99ms, maxms float64
		var total int
		for _, r := range rows[1:] {
			v, _ := strconv.ParseFloat(r[0], 64)
			maxms = v
			q, _ := strconv.ParseFloat(r[1], 64)
			total, _ = strconv.Atoi(r[2])
			if q <= 0.99 {
				p99ms = v
			}
		}
		want, wantMax := float64(tc.want)/1e6, float64(tc.max)/1e6
		if total != 1500 || math.Abs(p99ms-want) > 0.01*want+0.001 || math.Abs(maxms-wantMax) > 0.01*wantMax {
			t.Errorf("tag %q: Java read %d values, p99 %.3fms, max %.3fms; we wrote 1500, p99 %.3fms, max %.3fms", tc.tag, total, p99ms, maxms, want, wantMax)
		}
	}
}

// BenchmarkIntervalClose: closing one interval of a simulated run into a results
// directory: the collector's Flush with the variant writer's sink (three log lines per
// operation type and a time-series point). The interval is one second like Black Friday's
// plateau (metricstest.PlateauSecond): 50,000 operations over 25
// operation types of uneven weights, up to several hundred buckets each, a third failing at
// once; late=0.1 starts a tenth of them late (no interval is on time). The samples are added
// with the timer stopped.
func BenchmarkIntervalClose(b *testing.B) {
	for _, late := range []float64{0, 0.1} {
		b.Run(fmt.Sprintf("late=%g", late), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			const ops = metricstest.PlateauOps
			names := make([]string, ops)
			for i := range names {
				names[i] = fmt.Sprintf("op%02d", i)
			}
			batch := metricstest.PlateauSecond(rng, late)
			dir, err := Create(filepath.Join(b.TempDir(), "r"))
			if err != nil {
				b.Fatal(err)
			}
			defer dir.Close()
			vw := dir.Variant("v", names, time.Unix(1_700_000_000, 0), Timeline{})
			defer vw.Close()
			col := metrics.NewCollector(ops, time.Millisecond, time.Second, vw.Sink)
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				col.Add(batch)
				b.StartTimer()
				col.Flush(time.Duration(i+1)*time.Second, 0)
			}
			if err := col.Err(); err != nil {
				b.Fatal(err)
			}
		})
	}
}
