package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/results"
)

// BenchmarkCapacityBlackFriday is the whole capacity search of scenarios/black-friday.yaml
// on the simulator, with the default settings (precision 5%): every variant bracketed and
// confirmed on the whole schedule. It reports the probes run and the operations
// simulated. SHARDBENCH_BENCH_SCENARIO runs another scenario.
//
//	go test -run XXX -bench CapacityBlackFriday -benchtime 1x -timeout 30m ./cmd/shardbench/
func BenchmarkCapacityBlackFriday(b *testing.B) {
	path := "../../scenarios/black-friday.yaml"
	if s := os.Getenv("SHARDBENCH_BENCH_SCENARIO"); s != "" {
		path = s
	}
	var probes, ops int
	var elapsed time.Duration
	for b.Loop() {
		io, _, stderr := testIO()
		out := filepath.Join(b.TempDir(), "cap")
		opts := &CapacityOptions{IO: io, ScenarioPath: path, Backend: "sim", Out: out, P99: 50 * time.Millisecond, Precision: 0.05,
			LeadIn: 30 * time.Second, Step: time.Second, Quiet: true, NoReport: true}
		start := time.Now()
		if err := runCapacity(context.Background(), opts); err != nil {
			b.Fatalf("capacity: %v\n%s", err, stderr)
		}
		elapsed += time.Since(start)
		c, err := results.ReadCapacity(out)
		if err != nil {
			b.Fatal(err)
		}
		probes += len(c.Probes)
		for _, p := range c.Probes {
			sum, err := results.Read(filepath.Join(out, results.CapacityStepsDir, p.Step))
			if err != nil {
				b.Fatal(err)
			}
			for _, v := range sum.Variants {
				ops += int(v.Totals.Scheduled)
			}
		}
	}
	b.ReportMetric(elapsed.Seconds()/float64(b.N), "s/search")
	b.ReportMetric(float64(probes)/float64(b.N), "probes/search")
	b.ReportMetric(float64(ops)/elapsed.Seconds(), "ops/s")
}
