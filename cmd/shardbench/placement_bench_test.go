package main

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/backend/sim"
	"github.com/shardbench/shardbench/internal/results"
)

// The whole-scenario benchmarks measure what `shardbench plan` and `shardbench analyze`
// do with scenarios/black-friday.yaml: every variant, the stream generated once and
// shared, all cores. keys/s counts every key placed (one access of an operation to one
// table or collection, summed over the variants) per second of wall time; peak-heap-MB
// is the largest live heap seen while it ran. They take about half a minute per
// iteration: go test -run XXX -bench Scenario -benchtime 1x ./cmd/shardbench/

// benchPlacementRun loads black-friday.yaml as plan and analyze load it.
func benchPlacementRun(b *testing.B) *placementRun {
	b.Helper()
	in, err := loadRun("../../scenarios/black-friday.yaml", runOverrides{})
	if err != nil {
		b.Fatal(err)
	}
	cluster, err := sim.Layout(in.Scenario)
	if err != nil {
		b.Fatal(err)
	}
	return &placementRun{in: in, cluster: cluster}
}

// peakHeap samples the live heap every 50 ms until stop is called, which returns the
// largest value seen in MB.
func peakHeap() (stop func() float64) {
	var mu sync.Mutex
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			mu.Lock()
			peak = max(peak, ms.HeapAlloc)
			mu.Unlock()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() float64 {
		close(done)
		wg.Wait()
		return float64(peak) / (1 << 20)
	}
}

func BenchmarkPlanScenario(b *testing.B) {
	r := benchPlacementRun(b)
	var keys int64
	var elapsed time.Duration
	var peak float64
	for b.Loop() {
		stop := peakHeap()
		start := time.Now()
		variants, _, err := r.placeVariants(context.Background(), 0)
		elapsed += time.Since(start)
		peak = max(peak, stop())
		if err != nil {
			b.Fatal(err)
		}
		keys += placedKeys(variants)
	}
	b.ReportMetric(float64(keys)/elapsed.Seconds(), "keys/s")
	b.ReportMetric(float64(keys)/float64(b.N), "keys/op")
	b.ReportMetric(peak, "peak-heap-MB")
}

func BenchmarkAnalyzeScenario(b *testing.B) {
	r := benchPlacementRun(b)
	in := r.in
	n := len(in.Variants)
	var keys int64
	var elapsed time.Duration
	var peak float64
	for b.Loop() {
		out := make([]results.AnalysisVariant, n)
		counts := make([]int64, n)
		errs := make([]error, n)
		stop := peakHeap()
		start := time.Now()
		keys += analyzeVariants(context.Background(), in.Variants, &r.cluster, r.newStream, 0, uint64(in.Scenario.Seed), out, counts, errs)
		elapsed += time.Since(start)
		peak = max(peak, stop())
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(keys)/elapsed.Seconds(), "keys/s")
	b.ReportMetric(float64(keys)/float64(b.N), "keys/op")
	b.ReportMetric(peak, "peak-heap-MB")
}

// BenchmarkSimulateScenario is `shardbench run scenarios/black-friday.yaml` on the
// default simulated backend, every variant, the report left out: simulated operations
// (summed over the variants, dropped ones included) per second of wall time, everything
// a run does included (the stream, placement, the hot-partition analysis, histograms,
// interval logs, the results directory). served-ops/s leaves out the operations a
// variant's design does not serve (counted unserved, never simulated), more than half of
// Black Friday's. The whole scenario takes most of a minute per
// iteration; SHARDBENCH_BENCH_DURATION (e.g. 2m) scales its schedule down for a quicker
// figure of the same rate.
func BenchmarkSimulateScenario(b *testing.B) {
	var dur time.Duration
	if s := os.Getenv("SHARDBENCH_BENCH_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			b.Fatalf("SHARDBENCH_BENCH_DURATION: %v", err)
		}
		dur = d
	}
	var ops, served int64
	var elapsed time.Duration
	for b.Loop() {
		io, _, stderr := testIO()
		out := filepath.Join(b.TempDir(), "res")
		opts := &RunOptions{IO: io, ScenarioPath: "../../scenarios/black-friday.yaml", Backend: "sim", Out: out, Duration: dur, Quiet: true, NoReport: true}
		start := time.Now()
		if err := runRun(context.Background(), opts); err != nil {
			b.Fatalf("run: %v\n%s", err, stderr)
		}
		elapsed += time.Since(start)
		sum, err := results.Read(out)
		if err != nil {
			b.Fatal(err)
		}
		for _, v := range sum.Variants {
			ops += v.Totals.Completed + v.Totals.Dropped + v.Totals.Unserved
			served += v.Totals.Completed + v.Totals.Dropped
		}
	}
	b.ReportMetric(float64(ops)/elapsed.Seconds(), "ops/s")
	b.ReportMetric(float64(served)/elapsed.Seconds(), "served-ops/s")
	b.ReportMetric(float64(ops)/float64(b.N), "ops/op")
}
