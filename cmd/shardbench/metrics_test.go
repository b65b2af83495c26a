package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/shardbench/shardbench/internal/itest"
	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/results"
)

// scrape is one GET /metrics, parsed by Prometheus's own parser for the format asked.
func scrape(t *testing.T, addr string, openMetrics bool) map[string]*dto.MetricFamily {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/metrics", nil)
	format := expfmt.NewFormat(expfmt.TypeTextPlain)
	if openMetrics {
		req.Header.Set("Accept", "application/openmetrics-text;version=1.0.0")
		format = expfmt.NewFormat(expfmt.TypeOpenMetrics)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("scrape: %v", err)
		return nil
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	out := map[string]*dto.MetricFamily{}
	if !openMetrics {
		p := expfmt.NewTextParser(model.LegacyValidation)
		fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
		if err != nil {
			t.Errorf("the Prometheus text parser rejects /metrics: %v", err)
		}
		return fams
	}
	dec := expfmt.NewDecoder(bytes.NewReader(body), format)
	for {
		var mf dto.MetricFamily
		err := dec.Decode(&mf)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Errorf("the OpenMetrics parser rejects /metrics: %v", err)
			return out
		}
		out[mf.GetName()] = &mf
	}
}

// metric finds the metric of a family whose labels include the pairs given (nil: none).
func metric(fams map[string]*dto.MetricFamily, name string, labels ...string) *dto.Metric {
next:
	for _, m := range fams[name].GetMetric() {
		for i := 0; i+1 < len(labels); i += 2 {
			ok := false
			for _, l := range m.Label {
				ok = ok || l.GetName() == labels[i] && l.GetValue() == labels[i+1]
			}
			if !ok {
				continue next
			}
		}
		return m
	}
	return nil
}

func counterValue(fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	return metric(fams, name, labels...).GetCounter().GetValue()
}

// scrapes is what a test saw of /metrics during and at the end of a run.
type scrapes struct {
	mid            []map[string]*dto.MetricFamily
	final, finalOM map[string]*dto.MetricFamily
}

// runScraped runs opts with live metrics on a free port, scraping every 200 ms while it
// runs (text format: Prometheus's default, and quick to parse) and once in each format
// when it has ended, and returns the scrapes and the results directory's summary.
func runScraped(t *testing.T, opts *RunOptions) (*scrapes, *results.Summary) {
	t.Helper()
	sc := &scrapes{}
	stop, stopped := make(chan struct{}), make(chan struct{})
	opts.MetricsAddr = "127.0.0.1:0"
	opts.metricsReady = func(addr string) {
		go func() {
			defer close(stopped)
			for {
				select {
				case <-stop:
					return
				case <-time.After(200 * time.Millisecond):
				}
				sc.mid = append(sc.mid, scrape(t, addr, false))
			}
		}()
	}
	opts.metricsDone = func(addr string) {
		close(stop)
		<-stopped
		sc.final = scrape(t, addr, false)
		sc.finalOM = scrape(t, addr, true)
	}
	if err := runRun(context.Background(), opts); err != nil {
		t.Fatalf("run: %v", err)
	}
	sum, err := results.Read(opts.Out)
	if err != nil {
		t.Fatal(err)
	}
	return sc, sum
}

// checkScrapes compares the scrapes with the summary: some mid-run scrape saw part of the
// run and none more than its end; the final scrapes (both formats) equal summary.json per
// variant and operation: every count, every error class, and each latency histogram's
// buckets, computed from the HdrHistogram embedded in summary.json. It returns the
// totals of dropped, late and failed operations the final text scrape shows.
func checkScrapes(t *testing.T, sc *scrapes, sum *results.Summary) (dropped, late, errs float64) {
	t.Helper()
	partial := false
	for _, f := range sc.mid {
		for _, v := range sum.Variants {
			for _, op := range v.Ops {
				got := counterValue(f, "shardbench_operations_scheduled_total", "variant", v.Name, "op", op.Op)
				if got > float64(op.Scheduled) {
					t.Errorf("a mid-run scrape shows %v scheduled %s, more than the run's %d", got, op.Op, op.Scheduled)
				}
				partial = partial || got > 0 && got < float64(op.Scheduled)
			}
		}
	}
	if !partial {
		t.Fatalf("%d mid-run scrapes, partial counts seen: %v", len(sc.mid), partial)
	}
	for _, f := range []struct {
		name string
		fams map[string]*dto.MetricFamily
	}{{"text", sc.final}, {"openmetrics", sc.finalOM}} {
		name, fams := f.name, f.fams
		if got, want := metric(fams, "shardbench_dispatch_spin_seconds").GetGauge().GetValue(), sum.Dispatch.SpinBelowMS/1e3; got != want {
			t.Errorf("%s: dispatch spin %v s, summary.json %v ms", name, got, sum.Dispatch.SpinBelowMS)
		}
		for _, v := range sum.Variants {
			if metric(fams, "shardbench_variant_running", "variant", v.Name).GetGauge().GetValue() != 0 ||
				metric(fams, "shardbench_in_flight", "variant", v.Name).GetGauge().GetValue() != 0 {
				t.Errorf("%s: after the run variant %s still shows running or in flight", name, v.Name)
			}
			for _, op := range v.Ops {
				d, l, e := checkOp(t, name, fams, v.Name, op)
				if name == "text" {
					dropped, late, errs = dropped+d, late+l, errs+e
				}
			}
		}
	}
	return dropped, late, errs
}

// checkOp compares one operation's series with its summary.json stats.
func checkOp(t *testing.T, format string, fams map[string]*dto.MetricFamily, variant string, op results.OpStats) (dropped, late, errs float64) {
	t.Helper()
	name := format + " " + variant + " " + op.Op
	l := []string{"variant", variant, "op", op.Op}
	for fam, want := range map[string]int64{
		"shardbench_operations_scheduled_total": op.Scheduled, "shardbench_operations_dropped_total": op.Dropped,
		"shardbench_operations_late_total": op.Late, "shardbench_operations_abandoned_total": op.Abandoned,
		"shardbench_operations_unserved_total": op.Unserved,
	} {
		if got := counterValue(fams, fam, l...); got != float64(want) {
			t.Errorf("%s %s = %v, summary.json %d", name, fam, got, want)
		}
	}
	var completed float64
	for c := 0; c < metrics.NumClasses; c++ {
		cls := metrics.Class(c).String()
		want := op.Errors[cls]
		if c == 0 {
			want = op.OK
		}
		got := counterValue(fams, "shardbench_operations_total", append(l, "class", cls)...)
		if got != float64(want) {
			t.Errorf("%s class %s = %v, summary.json %d", name, cls, got, want)
		}
		completed += got
		if c > 0 {
			errs += got
		}
	}
	if completed != float64(op.Completed) {
		t.Errorf("%s: completed %v, summary.json %d", name, completed, op.Completed)
	}
	for fam, lat := range map[string]results.Latency{"shardbench_response_seconds": op.Response, "shardbench_service_seconds": op.Service, "shardbench_schedule_lag_seconds": op.Lag} {
		h, err := lat.DecodeHistogram()
		if err != nil {
			t.Fatal(err)
		}
		hm := metric(fams, fam, l...).GetHistogram()
		if hm.GetSampleCount() != uint64(op.Completed) || h.TotalCount() != op.Completed {
			t.Errorf("%s %s: count %d, summary.json histogram %d, completed %d", name, fam, hm.GetSampleCount(), h.TotalCount(), op.Completed)
		}
		for _, b := range hm.Bucket {
			var want int64
			for _, bar := range h.Distribution() {
				if float64(bar.To) <= b.GetUpperBound()*1e9 {
					want += bar.Count
				}
			}
			if b.GetCumulativeCount() != uint64(want) {
				t.Errorf("%s %s le=%v: %d, summary.json's histogram %d", name, fam, b.GetUpperBound(), b.GetCumulativeCount(), want)
			}
		}
		if mean := h.Mean() * float64(h.TotalCount()) / 1e9; math.Abs(hm.GetSampleSum()-mean) > 0.002*mean {
			t.Errorf("%s %s: sum %v s, summary.json mean × count %v s", name, fam, hm.GetSampleSum(), mean)
		}
	}
	return float64(op.Dropped), float64(op.Late), errs
}

// A run serves /metrics while it runs: a scrape mid-run parses and shows part of the run,
// and the scrapes at its end equal what the results directory says.
func TestMetricsEndpointMatchesResults(t *testing.T) {
	path := writeFile(t, "live.yaml", `name: live
seed: 5
load:
  arrival: poisson
  max_in_flight: 4
  on_full: drop
  late_after: 0s
  phases:
    - {name: a, type: constant, rate: 1500, duration: 4s}
mix: {sessions.read: 1, carts.add_item: 1}
backends:
  delay: {latency: 1ms, distribution: exponential, error_rate: 0.05, stalls: [{at: 1500ms, for: 300ms}]}
`)
	io, _, _ := testIO()
	sc, sum := runScraped(t, &RunOptions{IO: io, ScenarioPath: path, Backend: "delay", Out: filepath.Join(t.TempDir(), "res"), Quiet: true, NoReport: true})
	// The scenario makes every kind of count happen, so the comparison means something:
	// drops from the stall, errors from the error rate, and late starts from late_after 0
	// (any start after its intended time; a fast machine's dispatcher is never 2 ms late).
	if dropped, late, errs := checkScrapes(t, sc, sum); dropped == 0 || late == 0 || errs == 0 {
		t.Errorf("dropped %v, late %v, errors %v: the scenario should produce each", dropped, late, errs)
	}
}

// The same against real servers: a run on the Cassandra cluster and one on FerretDB, each
// scraped while it runs and checked against its results directory at the end.
func TestMetricsEndpointRealServers(t *testing.T) {
	seed001c, _ := filepath.Abs("../../scenarios/designs/seed001-cassandra.yaml")
	seed001m, _ := filepath.Abs("../../scenarios/designs/seed001-mongo.yaml")
	for _, tc := range []struct {
		backend, design, mix, options string
		target                        func(t *testing.T) string
	}{
		{"cassandra", seed001c, "{sessions.touch: 1, sessions.read: 1}", "cassandra: {keyspace: sbtest_live, replication: {class: NetworkTopologyStrategy, dc1: 1}}",
			func(t *testing.T) string { return "cassandra://" + itest.Cassandra(t) + ":9042?dc=dc1" }},
		{"mongo", seed001m, "{catalog.stock_decrement: 1, orders.read: 1}", "mongo: {database: sbtest_live}",
			func(t *testing.T) string {
				return itest.Env(t, "SHARDBENCH_MONGODB_URI", "FerretDB (testenv/ferretdb/start.sh)")
			}},
	} {
		t.Run(tc.backend, func(t *testing.T) {
			target := tc.target(t)
			path := writeFile(t, "live.yaml", `name: live-`+tc.backend+`
seed: 5
load:
  arrival: uniform
  max_in_flight: 32
  phases:
    - {name: a, type: constant, rate: 200, duration: 4s}
mix: `+tc.mix+`
population: {users: 2000, sessions: 4000, carts: 1000, products: 1000, orders_per_user: 3}
backends:
  `+tc.options+`
designs:
  - design: `+tc.design+`
`)
			io, _, stderr := testIO()
			sc, sum := runScraped(t, &RunOptions{IO: io, ScenarioPath: path, Backend: tc.backend, Target: target, Recreate: true,
				Out: filepath.Join(t.TempDir(), "res"), Quiet: true, NoReport: true})
			if sum.Variants[0].Totals.Completed == 0 {
				t.Fatalf("nothing completed\n%s", stderr)
			}
			checkScrapes(t, sc, sum)
			if sum.Dispatch.SpinBelowMS != 0 {
				t.Errorf("the server is on this machine, yet the dispatcher spins: %+v", sum.Dispatch)
			}
		})
	}
}
