package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/workloads"
)

// An operation the variant does not serve is never dispatched: the backend never sees
// it, it takes no worker (the served operations are not held up behind it even when it
// is most of the stream and there is one worker), and it is counted unserved with its
// reason: no latency, no error, not in the totals' rates or histograms, no interval log.
func TestUnservedOperationsAreNeverDispatched(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := testScenario("uniform", 1, scenario.Phase{Name: "c", Type: "constant", Rate: 1000, Duration: 4 * time.Second})
		var sent, sentUnserved atomic.Int64
		// 1 ms per operation at 1000/s with one worker: if the two unserved operations of
		// every three took the worker, the served ones would queue and run late.
		be := backend.Func(func(ctx context.Context, op *workloads.Op) backend.Outcome {
			sent.Add(1)
			if op.Type != 0 {
				sentUnserved.Add(1)
			}
			time.Sleep(time.Millisecond)
			return backend.Outcome{}
		})
		cfg := testConfig(t, sc, 3, VariantBackend{Name: "v", Backend: be, Unserved: []string{"", "the design keeps op1 elsewhere", "the design keeps op2 elsewhere"}})
		sum, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if sentUnserved.Load() != 0 {
			t.Fatalf("%d unserved operations reached the backend", sentUnserved.Load())
		}
		v := sum.Variants[0]
		served := v.Op("op0")
		if served == nil || served.Completed != sent.Load() || served.Completed < 1300 || served.Late != 0 {
			t.Fatalf("op0: %+v (sent %d): every served operation completes on time", served, sent.Load())
		}
		for _, name := range []string{"op1", "op2"} {
			st := v.Op(name)
			if st == nil || st.Served() || st.Unserved < 1300 || st.Scheduled != 0 || st.Completed != 0 || st.Response.Count != 0 || len(st.Errors) != 0 || st.TargetRate != 0 || st.HistogramLog != "" {
				t.Errorf("%s: %+v", name, st)
			}
			if st != nil && st.UnservedReason != "the design keeps "+name+" elsewhere" {
				t.Errorf("%s: reason %q", name, st.UnservedReason)
			}
			if _, err := os.Stat(filepath.Join(cfg.Dir.Path, results.HistogramLogPath("v", name))); err == nil {
				t.Errorf("%s has an interval log", name)
			}
		}
		tot := v.Totals
		if tot.Scheduled != served.Scheduled || tot.Completed != served.Completed || tot.Response.Count != served.Response.Count || tot.Response.P50 != served.Response.P50 || tot.ErrorRate != 0 {
			t.Errorf("totals are not the served operation's: %+v vs %+v", tot, served)
		}
		if tot.Unserved != v.Op("op1").Unserved+v.Op("op2").Unserved || tot.Scheduled+tot.Unserved != 4000 {
			t.Errorf("totals: scheduled %d unserved %d, want 4000 offered", tot.Scheduled, tot.Unserved)
		}
		c := v.Coverage
		if c.Ops != 3 || c.ServedOps != 1 || c.Offered != 4000 || c.ServedShare < 0.33 || c.ServedShare > 0.34 || strings.Join(c.UnservedOps, ",") != "op1,op2" {
			t.Errorf("coverage %+v", c)
		}
		// The time series: unserved apart, the target rate of the served operations only.
		cfg.Dir.Close()
		pts, err := results.ReadTimeseries(cfg.Dir.Path)
		if err != nil || len(pts) < 4 {
			t.Fatalf("timeseries: %d points, %v", len(pts), err)
		}
		p := pts[1]
		if p.Unserved < 600 || p.Completed < 300 || p.Completed > 380 || p.TargetRate < 300 || p.TargetRate > 380 || len(p.Errors) != 0 {
			t.Errorf("point %+v: unserved apart, target and achieved about 333/s", p)
		}
	})
}

// A design that serves nothing on this backend sends nothing, and an interrupt while the
// dispatcher waits for an unserved operation's time still stops the run as interrupted.
func TestUnservedEverythingAndInterrupt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := testScenario("uniform", 4, scenario.Phase{Name: "c", Type: "constant", Rate: 100, Duration: 10 * time.Second})
		be := backend.Func(func(context.Context, *workloads.Op) backend.Outcome {
			t.Error("an unserved operation was dispatched")
			return backend.Outcome{}
		})
		cfg := testConfig(t, sc, 2, VariantBackend{Name: "v", Backend: be, Unserved: []string{"no section", "no section"}})
		ctx, cancel := context.WithTimeout(context.Background(), 3500*time.Millisecond)
		defer cancel()
		sum, err := Run(ctx, cfg)
		if err == nil || !sum.Variants[0].Interrupted {
			t.Fatalf("err %v, interrupted %v: the run was stopped at 3.5s", err, sum.Variants[0].Interrupted)
		}
		v := sum.Variants[0]
		if v.Totals.Scheduled != 0 || v.Totals.Unserved < 340 || v.Totals.Unserved > 360 || v.Coverage.ServedOps != 0 || v.Coverage.ServedShare != 0 {
			t.Errorf("totals %+v coverage %+v: about 350 unserved, nothing scheduled", v.Totals, v.Coverage)
		}
	})
}

// unservingSim answers op0 in 1 ms and does not serve the other operations: it reports
// them as Samples, or through the engine's count when it is a backend.UnservedCounter.
type unservingSim struct {
	count   func(op uint16, intended int64)
	counted int
}

func (f *unservingSim) Simulate(_ context.Context, next func() *workloads.Op, record func(*metrics.Sample)) error {
	for op := next(); op != nil; op = next() {
		t := int64(op.Intended)
		switch {
		case op.Type == 0:
			record(&metrics.Sample{Intended: t, Start: t, End: t + 1e6})
		case f.count != nil:
			f.count(op.Type, t)
			f.counted++
		default:
			record(&metrics.Sample{Intended: t, Start: t, End: t, Op: op.Type, Flags: metrics.FlagUnserved})
		}
	}
	return nil
}

func (f *unservingSim) Close() error { return nil }

type countingSim struct{ unservingSim }

func (f *countingSim) CountUnserved(count func(op uint16, intended int64)) { f.count = count }

// A simulator that counts its unserved operations (backend.UnservedCounter) gets the
// results of one that records a Sample for each: the same summary and time series.
func TestCountedUnservedAreRecordedUnserved(t *testing.T) {
	sc := testScenario(scenario.ArrivalPoisson, 64, scenario.Phase{Name: "p", Type: scenario.PhaseConstant, Duration: 5 * time.Second, Rate: 20000})
	counting := &countingSim{}
	cfg := testConfig(t, sc, 3, VariantBackend{Name: "rec", Virtual: &unservingSim{}}, VariantBackend{Name: "count", Virtual: counting})
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if counting.counted < 50000 {
		t.Fatalf("%d operations counted: the engine did not hand the simulator its count", counting.counted)
	}
	rec, cnt := sum.Variants[0], sum.Variants[1]
	if rec.Totals.Unserved < 50000 || cnt.Totals.Unserved != rec.Totals.Unserved {
		t.Fatalf("unserved %d, want %d (at least 50000)", cnt.Totals.Unserved, rec.Totals.Unserved)
	}
	digest := func(v results.SummaryVariant) string {
		v.Name, v.StartedAt = "", time.Time{}
		v.Ops = slices.Clone(v.Ops)
		for i := range v.Ops {
			v.Ops[i].HistogramLog = "" // under the variant's name
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	if g, w := digest(cnt), digest(rec); g != w {
		t.Errorf("summary:\n%s\nwant:\n%s", g, w)
	}
	cfg.Dir.Close()
	pts, err := results.ReadTimeseries(cfg.Dir.Path)
	if err != nil {
		t.Fatal(err)
	}
	byVariant := map[string][]string{}
	for _, p := range pts {
		name := p.Variant
		p.Variant = ""
		b, _ := json.Marshal(p)
		byVariant[name] = append(byVariant[name], string(b))
	}
	if g, w := byVariant["count"], byVariant["rec"]; len(w) < 5 || !slices.Equal(g, w) {
		t.Errorf("time series:\n%v\nwant:\n%v", g, w)
	}
}
