package engine

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/schedule"
	"github.com/shardbench/shardbench/workloads"
)

// testSource yields the schedule's arrivals with op types cycling over n types and a
// field derived from the sequence number, like a workload would.
type testSource struct {
	a   *schedule.Arrivals
	n   int
	seq uint64
}

func (s *testSource) Next(op *workloads.Op) bool {
	t, ok := s.a.Next()
	if !ok {
		return false
	}
	*op = workloads.Op{Seq: s.seq, Type: uint16(s.seq % uint64(s.n)), Intended: t, User: int64(s.seq * 7919 % 1000)}
	s.seq++
	return true
}

func testScenario(arrival string, maxInFlight int, phases ...scenario.Phase) *scenario.Scenario {
	s := &scenario.Scenario{Name: "t", Seed: 3, Load: scenario.Load{
		Arrival: arrival, MaxInFlight: maxInFlight, OnFull: scenario.OnFullQueue,
		LateAfter: time.Millisecond, Timeout: time.Second, DrainTimeout: 5 * time.Second, Phases: phases,
	}}
	return s
}

func testConfig(t testing.TB, sc *scenario.Scenario, nOps int, variants ...VariantBackend) Config {
	t.Helper()
	sch := schedule.New(sc)
	dir, err := results.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dir.Close() })
	ops := make([]OpInfo, nOps)
	for i := range ops {
		ops[i] = OpInfo{Name: fmt.Sprintf("op%d", i), Kind: "read"}
	}
	return Config{
		Scenario: sc, Schedule: sch, Ops: ops, Variants: variants, Dir: dir,
		NewSource: func() (Source, error) { return &testSource{a: sch.Arrivals(), n: nOps}, nil },
		SpinBelow: -1,
	}
}

// The coordinated-omission test: a 1 s server stall during a constant-rate run must show in
// response time (max ≈ 1 s, share above 100 ms ≈ the stall's share of the run) while
// service time, which starts counting only when the harness gets round to sending, must
// not show it.
func TestStallShowsInResponseTimeNotServiceTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := testScenario("uniform", 4, scenario.Phase{Name: "c", Type: "constant", Rate: 1000, Duration: 10 * time.Second})
		be := backend.NewDelay(backend.DelayOptions{Latency: 100 * time.Microsecond, Distribution: "fixed",
			Stalls: []backend.Stall{{At: 4 * time.Second, For: time.Second}}})
		cfg := testConfig(t, sc, 1, VariantBackend{Name: "v", Backend: be})
		sum, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		st := sum.Variants[0].Ops[0]
		if st.Scheduled != 10000 || st.Completed != 10000 {
			t.Fatalf("scheduled %d completed %d, want 10000 each", st.Scheduled, st.Completed)
		}
		resp, _ := st.Response.DecodeHistogram()
		if mx := time.Duration(resp.Max()); mx < 990*time.Millisecond || mx > 1010*time.Millisecond {
			t.Errorf("response max %s, want about 1s", mx)
		}
		// Operations intended in [4.0, 4.9) wait more than 100 ms: 9% of the run.
		shareAbove := func(l results.Latency) float64 {
			h, _ := l.DecodeHistogram()
			var n int64
			for _, b := range h.Distribution() {
				if b.From >= int64(100*time.Millisecond) {
					n += b.Count
				}
			}
			return float64(n) / float64(h.TotalCount())
		}
		if s := shareAbove(st.Response); s < 0.085 || s > 0.095 {
			t.Errorf("response share above 100ms = %.4f, want about 0.09 (the stall's share)", s)
		}
		if s := shareAbove(st.Service); s > 0.001 {
			t.Errorf("service share above 100ms = %.4f, want about 0 (only the 4 operations caught mid-stall)", s)
		}
		if st.Service.P99 > 1 {
			t.Errorf("service p99 %.3f ms should be the backend's 100µs", st.Service.P99)
		}
		t.Logf("response max %s p50 %.3fms p99 %.1fms, service max %.1fms p99 %.3fms, late %d, share>100ms resp %.4f svc %.5f", time.Duration(resp.Max()), st.Response.P50, st.Response.P99, st.Service.Max, st.Service.P99, st.Late, shareAbove(st.Response), shareAbove(st.Service))
		if st.Late < 850 {
			t.Errorf("late = %d: operations queued behind the stall must be counted late", st.Late)
		}
	})
}

// Every operation gets executed exactly once, and the stream does not depend on the number
// of workers.
func TestStreamIndependentOfWorkerCount(t *testing.T) {
	fingerprint := func(workers int) (string, int) {
		var mu sync.Mutex
		var seen []string
		be := backend.Func(func(_ context.Context, op *workloads.Op) backend.Outcome {
			mu.Lock()
			seen = append(seen, fmt.Sprintf("%d/%d/%d/%d", op.Seq, op.Type, op.Intended, op.User))
			mu.Unlock()
			return backend.Outcome{}
		})
		var fp string
		synctest.Test(t, func(t *testing.T) {
			sc := testScenario("poisson", workers, scenario.Phase{Name: "r", Type: "ramp", From: 100, To: 2000, Duration: 3 * time.Second})
			cfg := testConfig(t, sc, 3, VariantBackend{Name: "v", Backend: be})
			if _, err := Run(context.Background(), cfg); err != nil {
				t.Fatal(err)
			}
		})
		sort.Strings(seen)
		h := fnv.New64a()
		for _, s := range seen {
			h.Write([]byte(s))
		}
		fp = fmt.Sprintf("%x", h.Sum64())
		return fp, len(seen)
	}
	a, na := fingerprint(1)
	b, nb := fingerprint(64)
	if a != b || na != nb || na < 2000 {
		t.Errorf("1 worker: %s (%d ops), 64 workers: %s (%d ops)", a, na, b, nb)
	}
}

func TestDropPolicyCountsDroppedOperations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := testScenario("uniform", 2, scenario.Phase{Name: "c", Type: "constant", Rate: 100, Duration: 2 * time.Second})
		sc.Load.OnFull = scenario.OnFullDrop
		// Each operation takes 50 ms; 2 workers serve 40/s of the 100/s offered.
		be := backend.NewDelay(backend.DelayOptions{Latency: 50 * time.Millisecond, Distribution: "fixed"})
		cfg := testConfig(t, sc, 1, VariantBackend{Name: "v", Backend: be})
		sum, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		st := sum.Variants[0].Ops[0]
		if st.Scheduled != 200 || st.Completed+st.Dropped != 200 {
			t.Fatalf("scheduled %d = completed %d + dropped %d must hold", st.Scheduled, st.Completed, st.Dropped)
		}
		if st.Dropped < 100 || st.Completed < 60 {
			t.Errorf("completed %d dropped %d; expected about 80 and 120", st.Completed, st.Dropped)
		}
		if st.Response.Max > 51 {
			t.Errorf("completed operations were never queued: response max %.1f ms", st.Response.Max)
		}
	})
}

// A saturated client reports at most max_in_flight operations in flight: the one the
// dispatcher holds while it waits for a worker has not started.
func TestInFlightNeverExceedsTheWorkers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := testScenario("uniform", 2, scenario.Phase{Name: "c", Type: "constant", Rate: 100, Duration: 3 * time.Second})
		be := backend.NewDelay(backend.DelayOptions{Latency: 50 * time.Millisecond, Distribution: "fixed"})
		cfg := testConfig(t, sc, 1, VariantBackend{Name: "v", Backend: be})
		if _, err := Run(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
		pts, err := results.ReadTimeseries(cfg.Dir.Path)
		if err != nil {
			t.Fatal(err)
		}
		most := int64(0)
		for _, p := range pts {
			most = max(most, p.InFlight)
		}
		if most != 2 {
			t.Errorf("most in flight %d over %d intervals; 2 workers, always busy", most, len(pts))
		}
	})
}

func TestInterruptWritesWhatWasMeasured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := testScenario("uniform", 8, scenario.Phase{Name: "c", Type: "constant", Rate: 200, Duration: 60 * time.Second})
		be := backend.NewDelay(backend.DelayOptions{Latency: 10 * time.Millisecond, Distribution: "fixed"})
		cfg := testConfig(t, sc, 2, VariantBackend{Name: "v", Backend: be}, VariantBackend{Name: "never", Backend: be})
		ctx, cancel := context.WithCancelCause(context.Background())
		time.AfterFunc(5500*time.Millisecond, func() { cancel(fmt.Errorf("received SIGTERM")) })
		sum, err := Run(ctx, cfg)
		if err == nil {
			t.Fatal("an interrupted run must return an error")
		}
		if sum.Complete || sum.Interrupted != "received SIGTERM" {
			t.Errorf("summary must say why it stopped: complete=%v interrupted=%q", sum.Complete, sum.Interrupted)
		}
		v := sum.Variants[0]
		if v.Totals.Completed < 1050 || v.Totals.Completed > 1110 {
			t.Errorf("completed %d, want about 5.5 s × 200/s", v.Totals.Completed)
		}
		if v.Totals.Scheduled != v.Totals.Completed+v.Totals.Dropped+v.Totals.Abandoned {
			t.Error("every due operation must be accounted for")
		}
		if !sum.Variants[1].Interrupted || sum.Variants[1].Totals.Completed != 0 {
			t.Error("the variant that never ran must be marked so")
		}
		back, err := results.Read(cfg.Dir.Path)
		if err != nil {
			t.Fatal(err)
		}
		if back.Variants[0].Totals.Completed != v.Totals.Completed {
			t.Error("summary.json on disk must hold what was measured")
		}
		ts, err := results.ReadTimeseries(cfg.Dir.Path)
		if err != nil || len(ts) < 5 {
			t.Errorf("time series: %d points, %v", len(ts), err)
		}
		logs, err := results.ReadHistogramLog(filepath.Join(cfg.Dir.Path, v.Ops[0].HistogramLog))
		if err != nil || len(logs) < 15 {
			t.Errorf("interval log: %d intervals, %v", len(logs), err)
		}
	})
}

func TestIntervalLogsAddUpToTheSummary(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := testScenario("poisson", 16, scenario.Phase{Name: "c", Type: "constant", Rate: 500, Duration: 4 * time.Second})
		be := backend.NewDelay(backend.DelayOptions{Latency: 2 * time.Millisecond, Distribution: "exponential", ErrorRate: 0.1})
		cfg := testConfig(t, sc, 2, VariantBackend{Name: "v/1", Backend: be})
		sum, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range sum.Variants[0].Ops {
			logs, err := results.ReadHistogramLog(filepath.Join(cfg.Dir.Path, st.HistogramLog))
			if err != nil {
				t.Fatal(err)
			}
			merged := map[string]*int64{"": new(int64), "service": new(int64), "lag": new(int64)}
			for _, iv := range logs {
				*merged[iv.Tag] += iv.Hist.TotalCount()
			}
			for tag, n := range merged {
				if *n != st.Completed {
					t.Errorf("%s tag %q: intervals hold %d values, summary says %d completed", st.Op, tag, *n, st.Completed)
				}
			}
			if st.Errors["server"] == 0 || st.OK+st.Errors["server"] != st.Completed {
				t.Errorf("%s: errors by class must add up: %+v", st.Op, st)
			}
		}
		if _, err := os.Stat(filepath.Join(cfg.Dir.Path, "histograms", "v_1")); err != nil {
			t.Errorf("variant names must become safe directory names: %v", err)
		}
	})
}

// fakeSim is a simulator that answers every operation instantly and fingerprints the
// stream it was given; failAfter > 0 makes it stop reading and fail after that many.
type fakeSim struct {
	failAfter int
	n         int
	hash      uint64
}

func (f *fakeSim) Simulate(_ context.Context, next func() *workloads.Op, record func(*metrics.Sample)) error {
	h := fnv.New64a()
	for op := next(); op != nil; op = next() {
		f.n++
		fmt.Fprintf(h, "%d/%d/%d/%d;", op.Seq, op.Type, op.Intended, op.User)
		t := int64(op.Intended)
		record(&metrics.Sample{Intended: t, Start: t, End: t + 1000, Op: op.Type})
		if f.failAfter > 0 && f.n == f.failAfter {
			return fmt.Errorf("model broke after %d operations", f.n)
		}
	}
	f.hash = h.Sum64()
	return nil
}

func (f *fakeSim) Close() error { return nil }

// Simulated variants share one generated stream: each sees every operation, in order,
// exactly as a stream of its own would give them; the stream is generated once per group; a
// variant that fails early neither blocks the others nor loses what it measured.
func TestSimulatedVariantsShareOneStream(t *testing.T) {
	// More blocks than a reader may lag behind (64 of 4096), so that the failed
	// variant, which stops reading, would block the generator if it waited for it.
	sc := testScenario(scenario.ArrivalPoisson, 64, scenario.Phase{Name: "p", Type: scenario.PhaseConstant, Duration: 20 * time.Second, Rate: 20000})
	sims := []*fakeSim{{}, {}, {failAfter: 1000}, {}, {}}
	var variants []VariantBackend
	for i, s := range sims {
		variants = append(variants, VariantBackend{Name: fmt.Sprintf("v%d", i), Virtual: s})
	}
	cfg := testConfig(t, sc, 3, variants...)
	sources := 0
	newSource := cfg.NewSource
	cfg.NewSource = func() (Source, error) { sources++; return newSource() }

	// What one variant's own stream would be.
	own := &fakeSim{}
	src, _ := newSource()
	if err := own.Simulate(context.Background(), workloads.Pull(src), func(*metrics.Sample) {}); err != nil {
		t.Fatal(err)
	}

	sum, err := Run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "variant v2: model broke after 1000 operations") {
		t.Errorf("the failed variant's error: %v", err)
	}
	if want := (len(sims) + simGroupSize() - 1) / simGroupSize(); sources != want {
		t.Errorf("the stream was generated %d times, want once per group of %d variants: %d", sources, simGroupSize(), want)
	}
	for i, s := range sims {
		if s.failAfter > 0 {
			if got := sum.Variants[i].Totals.Completed; got != 1000 {
				t.Errorf("failed variant kept %d operations, want the 1000 it measured", got)
			}
			continue
		}
		if s.n != own.n || s.hash != own.hash {
			t.Errorf("variant %d saw %d operations (hash %x), its own stream has %d (hash %x)", i, s.n, s.hash, own.n, own.hash)
		}
		if got := sum.Variants[i].Totals.Completed; got != int64(own.n) {
			t.Errorf("variant %d: %d completed, want %d", i, got, own.n)
		}
	}
	if own.n <= 64*4096 { // more than a reader may lag (workloads.shareLead blocks)
		t.Fatalf("the stream has only %d operations", own.n)
	}
}

// sharingSim is a fakeSim whose group shares work (backend.Sharing): Share counts the
// operations of every block it is handed and checks that each block was handled before
// the simulator read it.
type sharingSim struct {
	fakeSim
	group   *sharingGroup
	members int
}

type sharingGroup struct {
	mu      sync.Mutex
	handled uint64 // operations handed to the per-block function, in stream order
	calls   int
	bad     string
}

func (f *sharingSim) Share(_ context.Context, members []backend.Virtual, newSource func() (workloads.Source, error)) func([]workloads.Op) {
	g := &sharingGroup{}
	for _, m := range members {
		m.(*sharingSim).group = g
	}
	f.members = len(members)
	if _, err := newSource(); err != nil {
		g.bad = err.Error()
	}
	return func(blk []workloads.Op) {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.calls++
		if blk[0].Seq != g.handled && g.bad == "" {
			g.bad = fmt.Sprintf("block at %d handed after %d operations", blk[0].Seq, g.handled)
		}
		g.handled += uint64(len(blk))
	}
}

func (f *sharingSim) Simulate(ctx context.Context, next func() *workloads.Op, record func(*metrics.Sample)) error {
	if f.group == nil { // Share was not called: the test says so
		return f.fakeSim.Simulate(ctx, next, record)
	}
	return f.fakeSim.Simulate(ctx, func() *workloads.Op {
		op := next()
		if op == nil {
			return nil
		}
		f.group.mu.Lock()
		defer f.group.mu.Unlock()
		if op.Seq >= f.group.handled && f.group.bad == "" {
			f.group.bad = fmt.Sprintf("operation %d read before its block was handed over", op.Seq)
		}
		return op
	}, record)
}

// A group of simulators that share work is introduced to one another once, and the
// function Share returns sees every block of the group's stream, in order, before any
// member reads it.
func TestSimulatedGroupShares(t *testing.T) {
	sc := testScenario(scenario.ArrivalPoisson, 64, scenario.Phase{Name: "p", Type: scenario.PhaseConstant, Duration: 5 * time.Second, Rate: 20000})
	sims := []*sharingSim{{}, {}, {}}
	var variants []VariantBackend
	for i, s := range sims {
		variants = append(variants, VariantBackend{Name: fmt.Sprintf("v%d", i), Virtual: s})
	}
	if _, err := Run(context.Background(), testConfig(t, sc, 3, variants...)); err != nil {
		t.Fatal(err)
	}
	g := sims[0].group
	if g == nil || sims[0].members != len(sims) || sims[1].group != g || sims[1].members != 0 {
		t.Fatalf("Share must be called once, on the first member, with all %d: %+v", len(sims), sims)
	}
	if g.bad != "" {
		t.Error(g.bad)
	}
	if g.handled != uint64(sims[0].n) || g.calls < 2 {
		t.Errorf("the per-block function handled %d operations in %d calls; the stream has %d", g.handled, g.calls, sims[0].n)
	}
}
