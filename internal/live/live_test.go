package live

import (
	"bytes"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/shardbench/shardbench/internal/metrics"
)

// feed runs samples through a real collector whose sink is the registry, as the engine
// does, and returns the collector's cumulative totals.
func feed(t *testing.T, reg *Registry, vi int, nOps int, seed uint64) []*metrics.Set {
	t.Helper()
	sink := func(iv *metrics.Interval) error {
		reg.Observe(vi, 1000, iv)
		return nil
	}
	col := metrics.NewCollector(nOps, time.Millisecond, time.Second, sink)
	r := rand.New(rand.NewPCG(seed, 1))
	for sec := 0; sec < 3; sec++ {
		var batch []metrics.Sample
		for i := 0; i < 2000; i++ {
			at := int64(sec)*int64(time.Second) + int64(i)*int64(time.Millisecond)/2
			s := metrics.Sample{Intended: at, Op: uint16(r.IntN(nOps))}
			switch x := r.IntN(100); {
			case x < 2 && s.Op == 0:
				s.Flags = metrics.FlagUnserved
			case x < 3:
				s.Flags = metrics.FlagDropped
			case x < 4:
				s.Flags = metrics.FlagAbandoned
			default:
				lag := int64(0)
				if r.IntN(4) == 0 {
					lag = int64(r.ExpFloat64() * 3e6) // some late starts
				}
				s.Start = at + lag
				// log-uniform service times from 20 µs to 20 s: every bucket gets some
				s.End = s.Start + int64(math.Exp(math.Log(2e4)+r.Float64()*math.Log(1e6)))
				if r.IntN(10) == 0 {
					s.Class = uint8(1 + r.IntN(metrics.NumClasses-1))
				}
			}
			batch = append(batch, s)
		}
		col.Add(batch)
		col.Flush(time.Duration(sec+1)*time.Second, int64(sec))
	}
	return col.Totals()
}

// classic is the expected cumulative bucket counts of an HdrHistogram, computed from the
// library's own distribution: a bucket's values count at or below le when its highest
// equivalent value is.
func classic(h *hdr.Histogram) []int64 {
	out := make([]int64, len(Bounds)+1)
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		for i, le := range Bounds {
			if float64(b.To) <= le*1e9 {
				out[i] += b.Count
			}
		}
		out[len(Bounds)] += b.Count
	}
	return out
}

func parseText(t *testing.T, b []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the Prometheus text parser rejects the output: %v\n%s", err, b)
	}
	return fams
}

func parseOpenMetrics(t *testing.T, b []byte) map[string]*dto.MetricFamily {
	t.Helper()
	dec := expfmt.NewDecoder(bytes.NewReader(b), expfmt.NewFormat(expfmt.TypeOpenMetrics))
	out := map[string]*dto.MetricFamily{}
	for {
		var mf dto.MetricFamily
		err := dec.Decode(&mf)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("the OpenMetrics parser rejects the output: %v\n%s", err, b)
		}
		out[mf.GetName()] = &mf
	}
}

// find is the metric of a family with the given labels.
func find(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels ...string) *dto.Metric {
	t.Helper()
	f := fams[name]
	if f == nil {
		keys := []string{}
		for k := range fams {
			keys = append(keys, k)
		}
		t.Fatalf("no family %s in %v", name, keys)
	}
next:
	for _, m := range f.Metric {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, l := range m.Label {
				if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		return m
	}
	t.Fatalf("family %s has no metric %v", name, labels)
	return nil
}

// checkAgainst compares a parsed scrape with the collector's cumulative totals: every
// counter exactly, every histogram bucket exactly, each sum within HdrHistogram's
// precision. counterName maps a counter family's base name to its name in the parsed
// output.
func checkAgainst(t *testing.T, fams map[string]*dto.MetricFamily, variant string, ops []string, totals []*metrics.Set, counterName func(string) string) {
	t.Helper()
	for op, set := range totals {
		if set == nil {
			continue
		}
		l := []string{"variant", variant, "op", ops[op]}
		c := &set.Counters
		for name, want := range map[string]int64{
			"shardbench_operations_scheduled": c.Scheduled(), "shardbench_operations_dropped": c.Dropped,
			"shardbench_operations_late": c.Late, "shardbench_operations_abandoned": c.Abandoned,
			"shardbench_operations_unserved": c.Unserved,
		} {
			if got := find(t, fams, counterName(name), l...).GetCounter().GetValue(); got != float64(want) {
				t.Errorf("%s %v = %v, want %d", name, l, got, want)
			}
		}
		var completed float64
		for cls := 0; cls < metrics.NumClasses; cls++ {
			want := c.Errors[cls]
			if cls == 0 {
				want = c.OK
			}
			got := find(t, fams, counterName("shardbench_operations"), append(l, "class", metrics.Class(cls).String())...).GetCounter().GetValue()
			if got != float64(want) {
				t.Errorf("operations %v class %s = %v, want %d", l, metrics.Class(cls), got, want)
			}
			completed += got
		}
		if completed != float64(c.Completed) {
			t.Errorf("%v: classes add up to %v, want completed %d", l, completed, c.Completed)
		}
		for name, h := range map[string]*hdr.Histogram{"shardbench_response_seconds": set.Response, "shardbench_service_seconds": set.Service, "shardbench_schedule_lag_seconds": set.Lag} {
			hm := find(t, fams, name, l...).GetHistogram()
			if hm.GetSampleCount() != uint64(h.TotalCount()) || h.TotalCount() != c.Completed {
				t.Errorf("%s %v: count %d, histogram %d, completed %d", name, l, hm.GetSampleCount(), h.TotalCount(), c.Completed)
			}
			want := classic(h)
			if len(hm.Bucket) != len(Bounds)+1 {
				t.Fatalf("%s: %d buckets, want %d and +Inf", name, len(hm.Bucket), len(Bounds))
			}
			for i, b := range hm.Bucket {
				le := math.Inf(1)
				if i < len(Bounds) {
					le = Bounds[i]
				}
				if b.GetUpperBound() != le || b.GetCumulativeCount() != uint64(want[i]) {
					t.Errorf("%s %v bucket le=%v: %d, want le=%v %d", name, l, b.GetUpperBound(), b.GetCumulativeCount(), le, want[i])
				}
			}
			mean := h.Mean() * float64(h.TotalCount()) / 1e9
			if got := hm.GetSampleSum(); math.Abs(got-mean) > 0.002*mean {
				t.Errorf("%s %v: sum %v s, HdrHistogram's mean × count %v s", name, l, got, mean)
			}
		}
	}
}

func TestScrapeMatchesTheMeasurements(t *testing.T) {
	ops := []string{"carts.add", "orders.read"}
	reg := New(Info{Version: "test", Scenario: "s", Backend: "null"}, []string{"a", "b"}, ops)
	reg.SetDispatch(2 * time.Millisecond)
	reg.SetSequential(true)
	totalsA := feed(t, reg, 0, len(ops), 1)
	totalsB := feed(t, reg, 1, len(ops), 2)

	var text, om bytes.Buffer
	if err := reg.Write(&text, Text); err != nil {
		t.Fatal(err)
	}
	if err := reg.Write(&om, OpenMetrics); err != nil {
		t.Fatal(err)
	}
	tf := parseText(t, text.Bytes())
	checkAgainst(t, tf, "a", ops, totalsA, func(n string) string { return n + "_total" })
	checkAgainst(t, tf, "b", ops, totalsB, func(n string) string { return n + "_total" })

	if !strings.HasSuffix(om.String(), "# EOF\n") {
		t.Errorf("OpenMetrics output does not end with # EOF")
	}
	of := parseOpenMetrics(t, om.Bytes())
	// The OpenMetrics parser names counter families with their samples' _total, as the text
	// format does.
	checkAgainst(t, of, "a", ops, totalsA, func(n string) string { return n + "_total" })
	checkAgainst(t, of, "b", ops, totalsB, func(n string) string { return n + "_total" })
	if !strings.Contains(om.String(), "# TYPE shardbench_operations_scheduled counter\n") || !strings.Contains(text.String(), "# TYPE shardbench_operations_scheduled_total counter\n") {
		t.Errorf("counter families: OpenMetrics names them without _total, the text format with it")
	}

	// Per-variant gauges: b ran last and is running; a ended when b started.
	for v, want := range map[string]float64{"a": 0, "b": 1} {
		if got := find(t, tf, "shardbench_variant_running", "variant", v).GetGauge().GetValue(); got != want {
			t.Errorf("variant_running{%s} = %v, want %v", v, got, want)
		}
	}
	if got := find(t, tf, "shardbench_in_flight", "variant", "b").GetGauge().GetValue(); got != 2 {
		t.Errorf("in_flight{b} = %v, want 2 (the last interval's)", got)
	}
	if got := find(t, tf, "shardbench_target_rate", "variant", "b").GetGauge().GetValue(); got != 1000 {
		t.Errorf("target_rate{b} = %v, want 1000 (1000 expected in a 1 s interval)", got)
	}
	if got := find(t, tf, "shardbench_dispatch_spin_seconds").GetGauge().GetValue(); got != 0.002 {
		t.Errorf("dispatch_spin_seconds = %v", got)
	}
	find(t, tf, "shardbench_run_info", "scenario", "s", "backend", "null", "version", "test")
	find(t, of, "shardbench_run_info", "scenario", "s", "backend", "null", "version", "test")
	reg.Finish()
	text.Reset()
	reg.Write(&text, Text)
	if got := find(t, parseText(t, text.Bytes()), "shardbench_variant_running", "variant", "b").GetGauge().GetValue(); got != 0 {
		t.Errorf("after Finish, variant_running{b} = %v", got)
	}
}

// Label values with quotes, backslashes and newlines are escaped so parsers read them back.
func TestLabelEscaping(t *testing.T) {
	name := "we\"ird\\variant\nname"
	reg := New(Info{Version: "v", Scenario: `a "b"`, Backend: "null"}, []string{name}, []string{"op"})
	feed(t, reg, 0, 1, 3)
	var text bytes.Buffer
	reg.Write(&text, Text)
	find(t, parseText(t, text.Bytes()), "shardbench_operations_scheduled_total", "variant", name)
	var om bytes.Buffer
	reg.Write(&om, OpenMetrics)
	find(t, parseOpenMetrics(t, om.Bytes()), "shardbench_operations_scheduled_total", "variant", name)
}

func TestServeNegotiatesTheFormat(t *testing.T) {
	reg := New(Info{Version: "v", Scenario: "s", Backend: "null"}, []string{"a"}, []string{"op"})
	feed(t, reg, 0, 1, 4)
	srv := httptest.NewServer(reg)
	defer srv.Close()
	for accept, want := range map[string]string{
		"": TextContentType,
		"text/plain;version=0.0.4;q=0.5,*/*;q=0.1":                                  TextContentType,
		"application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5": OpenMetricsContentType,
	} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req.Header.Set("Accept", accept)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := resp.Header.Get("Content-Type"); got != want {
			t.Errorf("Accept %q: Content-Type %q, want %q", accept, got, want)
		}
		format := expfmt.NewFormat(expfmt.TypeTextPlain)
		if want == OpenMetricsContentType {
			format = expfmt.NewFormat(expfmt.TypeOpenMetrics)
		}
		var mf dto.MetricFamily
		if err := expfmt.NewDecoder(bytes.NewReader(body), format).Decode(&mf); err != nil {
			t.Errorf("Accept %q: %v", accept, err)
		}
	}
	resp, err := http.Post(srv.URL, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", resp.StatusCode)
	}
}

func TestListenBindsAtOnce(t *testing.T) {
	reg := New(Info{}, nil, nil)
	s, err := Listen("127.0.0.1:0", reg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := Listen(s.Addr(), reg); err == nil || !strings.Contains(err.Error(), "--metrics-addr") {
		t.Errorf("a busy address: %v", err)
	}
	resp, err := http.Get("http://" + s.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /metrics: %d", resp.StatusCode)
	}
}

// Simulated variants run at once: each stays running until the run finishes.
func TestConcurrentVariantsStayRunning(t *testing.T) {
	reg := New(Info{Version: "v", Scenario: "s", Backend: "sim"}, []string{"a", "b"}, []string{"op"})
	feed(t, reg, 0, 1, 6)
	feed(t, reg, 1, 1, 7)
	var text bytes.Buffer
	reg.Write(&text, Text)
	f := parseText(t, text.Bytes())
	for _, v := range []string{"a", "b"} {
		if got := find(t, f, "shardbench_variant_running", "variant", v).GetGauge().GetValue(); got != 1 {
			t.Errorf("variant_running{%s} = %v, want 1", v, got)
		}
		if got := find(t, f, "shardbench_in_flight", "variant", v).GetGauge().GetValue(); got != 2 {
			t.Errorf("in_flight{%s} = %v, want 2", v, got)
		}
	}
	if f["shardbench_dispatch_spin_seconds"] != nil {
		t.Errorf("a simulated run shows a dispatch spin")
	}
}
