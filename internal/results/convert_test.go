package results_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/results"
)

// testdata/v1-sim was written by shardbench at fb9a0b0 (summary version 1):
// `shardbench run scenarios/smoke.yaml --duration 2s` on the simulator, two of its six
// variants kept (seed000 and seed004), hotspots.json and server.json left out. Version 1
// recorded an operation the design does not serve as a not_supported error of zero
// latency, in every histogram and count.
const v1Dir = "testdata/v1-sim"

// mergedServed is the exact merge of a variant's served operations' embedded response
// histograms: what "all" must be.
func mergedServed(t *testing.T, v *results.SummaryVariant) *hdr.Histogram {
	t.Helper()
	h := metrics.NewHistogram()
	for _, st := range v.Ops {
		if !st.Served() {
			continue
		}
		oh, err := st.Response.DecodeHistogram()
		if err != nil {
			t.Fatal(err)
		}
		h.Merge(oh)
	}
	return h
}

// A version-1 directory reads as version 2: each operation the design does not serve
// (seed000: the catalog, views and carts.abandon; seed004: catalog.popular,
// catalog.stock_decrement and the orders) is unserved, with no latency and no error, and
// "all" is the exact merge of the served operations.
func TestReadConvertsVersion1(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(v1Dir, results.SummaryFile))
	if err != nil || !strings.Contains(string(raw), `"version": 1,`) {
		t.Fatalf("the fixture must be a version-1 summary (%v)", err)
	}
	sum, err := results.Read(v1Dir)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Version != results.Version {
		t.Errorf("version %d after reading", sum.Version)
	}
	want := map[string][]string{
		"seed000": {"carts.abandon", "views.append", "views.recent_by_user", "views.by_day", "catalog.product_read", "catalog.category_listing", "catalog.popular", "catalog.stock_decrement"},
		"seed004": {"catalog.popular", "catalog.stock_decrement", "orders.place", "orders.read", "orders.history_by_month", "orders.history_all", "orders.list_by_period", "orders.status_change"},
	}
	for _, v := range sum.Variants {
		var unserved []string
		var offered, served int64
		for _, st := range v.Ops {
			offered += st.Scheduled + st.Unserved
			if st.Served() {
				served += st.Scheduled
				if st.Response.P50 <= 0.002 {
					t.Errorf("%s %s: a served operation at p50 %.4f ms", v.Name, st.Op, st.Response.P50)
				}
				continue
			}
			unserved = append(unserved, st.Op)
			if st.Scheduled != 0 || st.Completed != 0 || len(st.Errors) != 0 || st.Response.Count != 0 || st.HistogramLog != "" || !strings.Contains(st.UnservedReason, "version-1") {
				t.Errorf("%s %s: %+v", v.Name, st.Op, st)
			}
		}
		slices.Sort(unserved)
		w := slices.Clone(want[v.Name])
		slices.Sort(w)
		if !slices.Equal(unserved, w) {
			t.Errorf("%s: unserved %v, want %v", v.Name, unserved, w)
		}
		tot := v.Totals
		if offered != 200 || tot.Scheduled != served || tot.Unserved != offered-served || len(tot.Errors) != 0 || tot.ErrorRate != 0 {
			t.Errorf("%s totals: %+v (offered %d, served %d)", v.Name, tot, offered, served)
		}
		h := mergedServed(t, &v)
		if tot.Response.Count != h.TotalCount() || tot.Response.P50 != float64(h.ValueAtPercentile(50))/1e6 || tot.Response.Max != float64(h.Max())/1e6 {
			t.Errorf("%s: all p50 %.4f ms of %d, the served operations merged p50 %.4f of %d", v.Name, tot.Response.P50, tot.Response.Count, float64(h.ValueAtPercentile(50))/1e6, h.TotalCount())
		}
		c := v.Coverage
		if c.Ops != 25 || c.ServedOps != 17 || c.Offered != 200 || c.Unserved != offered-served {
			t.Errorf("%s coverage %+v", v.Name, c)
		}
		if !strings.Contains(strings.Join(v.Notes, "\n"), "converted on reading (summary version 1): 8 operation type(s)") {
			t.Errorf("%s: no conversion note: %q", v.Name, v.Notes)
		}
	}
}

// The time series of a version-1 directory is rebuilt from the served operations'
// interval logs: counts add up to the converted totals, nothing unserved is an error,
// and each second's percentiles are those of the served operations.
func TestReadTimeseriesConvertsVersion1(t *testing.T) {
	sum, err := results.Read(v1Dir)
	if err != nil {
		t.Fatal(err)
	}
	pts, err := results.ReadTimeseries(v1Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range sum.Variants {
		var completed, unserved int64
		n := 0
		for _, p := range pts {
			if p.Variant != v.Name {
				continue
			}
			n++
			completed += p.Completed
			unserved += p.Unserved
			if p.Errors["not_supported"] != 0 {
				t.Errorf("%s at %gs: %d not_supported errors", v.Name, p.StartS, p.Errors["not_supported"])
			}
			if p.Completed > 0 && p.P50 <= 0.002 {
				t.Errorf("%s at %gs: p50 %.4f ms: the unserved operations' zero latencies are still in it", v.Name, p.StartS, p.P50)
			}
			if exp := p.AchievedRate * (p.EndS - p.StartS); p.Completed > 0 && (exp < float64(p.Completed)-0.5 || exp > float64(p.Completed)+0.5) {
				t.Errorf("%s at %gs: achieved %.1f/s for %d completed", v.Name, p.StartS, p.AchievedRate, p.Completed)
			}
		}
		if n == 0 || completed != v.Totals.Completed || unserved != v.Totals.Unserved {
			t.Errorf("%s: %d points, completed %d unserved %d; totals completed %d unserved %d", v.Name, n, completed, unserved, v.Totals.Completed, v.Totals.Unserved)
		}
	}
	// The first second's p50 is the served operations' interval histograms merged.
	h := metrics.NewHistogram()
	for _, st := range sum.Variant("seed000").Ops {
		if !st.Served() {
			continue
		}
		lines, err := results.ReadHistogramLog(filepath.Join(v1Dir, st.HistogramLog))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			if l.Tag == "" && l.StartS == 0 {
				h.Merge(l.Hist)
			}
		}
	}
	for _, p := range pts {
		if p.Variant == "seed000" && p.StartS == 0 && p.P50 != float64(h.ValueAtPercentile(50))/1e6 {
			t.Errorf("seed000's first second: p50 %.4f ms, served operations merged %.4f", p.P50, float64(h.ValueAtPercentile(50))/1e6)
		}
	}
}

// Merging version-1 directories gives a version-2 directory whose unserved counts add up.
func TestMergeVersion1(t *testing.T) {
	a, b := copyDir(t, v1Dir), copyDir(t, v1Dir)
	out := filepath.Join(t.TempDir(), "merged")
	sum, err := results.Merge([]string{a, b}, out, results.MergeOptions{Tool: results.Tool{Name: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	one, _ := results.Read(v1Dir)
	back, err := results.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range back.Variants {
		o := one.Variants[i]
		if v.Totals.Unserved != 2*o.Totals.Unserved || v.Totals.Completed != 2*o.Totals.Completed || v.Coverage.ServedOps != o.Coverage.ServedOps || len(v.Totals.Errors) != 0 {
			t.Errorf("%s merged: totals %+v, coverage %+v; one input %+v", v.Name, v.Totals, v.Coverage, o.Totals)
		}
		for _, st := range v.Ops {
			if !st.Served() && (st.Unserved != 2*o.Op(st.Op).Unserved || st.UnservedReason == "" || st.HistogramLog != "") {
				t.Errorf("%s %s merged: %+v", v.Name, st.Op, st)
			}
			if _, err := os.Stat(filepath.Join(out, results.HistogramLogPath(v.Name, st.Op))); (err == nil) != st.Served() {
				t.Errorf("%s %s: interval log present %v, served %v", v.Name, st.Op, err == nil, st.Served())
			}
		}
	}
	if sum.Version != results.Version {
		t.Errorf("merged version %d", sum.Version)
	}
}

func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// A version-1 real run: a design without the backend's database (every operation
// refused, the variant's note says so), and a mixed design whose MongoDB steps the
// cassandra backend refused (its error examples name them), beside an operation a real
// server answered not_supported after a round trip, which stays an error.
func TestReadConvertsVersion1RealBackends(t *testing.T) {
	op := func(name string, ok, notSupported int64, svc int64) results.OpStats {
		set := &metrics.Set{Response: metrics.NewHistogram(), Service: metrics.NewHistogram(), Lag: metrics.NewHistogram()}
		for i := int64(0); i < ok+notSupported; i++ {
			set.Response.RecordValue(svc + 5000)
			set.Service.RecordValue(svc)
			set.Lag.RecordValue(5000)
		}
		set.Completed, set.OK = ok+notSupported, ok
		set.Errors[metrics.NotSupported] = notSupported
		st := results.FromSet(name, "read", set, 10, 10)
		st.HistogramLog = results.HistogramLogPath("v", name)
		return st
	}
	variant := func(name string, notes []string, examples []string, ops ...results.OpStats) results.SummaryVariant {
		v := results.SummaryVariant{Name: name, DurationS: 10, Ops: ops, Notes: notes}
		if examples != nil {
			v.ErrorExamples = map[string][]string{"not_supported": examples}
		}
		set := &metrics.Set{Response: metrics.NewHistogram(), Service: metrics.NewHistogram(), Lag: metrics.NewHistogram()}
		for _, st := range ops {
			s, _ := st.ToSet()
			set.Merge(s)
		}
		v.Totals = results.FromSet("all", "", set, 10, 10)
		return v
	}
	v1 := &results.Summary{Backend: results.BackendInfo{Name: "cassandra", Target: "cassandra://127.0.0.1"}, Complete: true, Variants: []results.SummaryVariant{
		variant("mongo-only", []string{"design m has no cassandra section: the cassandra backend ran none of its operations (all counted not_supported); run it with --backend mongo or sim"}, nil,
			op("orders.read", 0, 50, 3000), op("carts.read", 0, 40, 2000)),
		variant("mixed", []string{"2 operation(s) have steps on another database (MongoDB): counted not_supported by the cassandra backend"},
			[]string{"carts.read step 0 runs on mongodb: the cassandra backend runs only the design's Cassandra steps", "hashed index not supported (server)"},
			op("sessions.read", 100, 0, 400_000), op("carts.read", 0, 30, 2000), op("carts.add_item", 0, 20, 4000), op("catalog.popular", 0, 10, 900_000)),
	}}
	dir := t.TempDir()
	d, err := results.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.WriteSummary(v1); err != nil {
		t.Fatal(err)
	}
	d.Close()
	// WriteSummary stamps the current version: make it what version 1 wrote.
	b, _ := os.ReadFile(filepath.Join(dir, results.SummaryFile))
	os.WriteFile(filepath.Join(dir, results.SummaryFile), []byte(strings.Replace(string(b), `"version": 2,`, `"version": 1,`, 1)), 0o644)
	sum, err := results.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	mo, mx := sum.Variant("mongo-only"), sum.Variant("mixed")
	if mo.Coverage.ServedOps != 0 || mo.Totals.Unserved != 90 || mo.Totals.Scheduled != 0 || len(mo.Notes) != 1 || strings.Contains(mo.Notes[0], "counted not_supported") {
		t.Errorf("mongo-only: coverage %+v totals %+v notes %q", mo.Coverage, mo.Totals, mo.Notes)
	}
	for name, served := range map[string]bool{"sessions.read": true, "carts.read": false, "carts.add_item": false, "catalog.popular": true} {
		if st := mx.Op(name); st.Served() != served {
			t.Errorf("mixed %s: served %v, want %v (%+v)", name, st.Served(), served, st)
		}
	}
	if mx.Totals.Errors["not_supported"] != 10 || mx.Totals.Unserved != 50 || mx.Totals.Scheduled != 110 {
		t.Errorf("mixed totals %+v: the server's not_supported stays an error", mx.Totals)
	}
	if ex := mx.ErrorExamples["not_supported"]; len(ex) != 1 || !strings.Contains(ex[0], "hashed") {
		t.Errorf("mixed examples %q: only the server's error stays", ex)
	}
}
