package engine

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/workloads"
)

// slowSpellSim answers in 1 ms except for operations intended in [from, to), which take
// 100 ms: a short peak in a long run.
type slowSpellSim struct{ from, to time.Duration }

func (f *slowSpellSim) Simulate(_ context.Context, next func() *workloads.Op, record func(*metrics.Sample)) error {
	for op := next(); op != nil; op = next() {
		t, d := int64(op.Intended), int64(time.Millisecond)
		if op.Intended >= f.from && op.Intended < f.to {
			d = int64(100 * time.Millisecond)
		}
		record(&metrics.Sample{Intended: t, Start: t, End: t + d, Op: op.Type})
	}
	return nil
}

func (f *slowSpellSim) Close() error { return nil }

// A measure window restricts the summary to the operations intended in it, with rates
// over the window, while the time series keeps every operation: a 100 ms spell of 0.5%
// of a 20 s run is under its p99, and half of the window around it.
func TestMeasureWindowRestrictsTheSummary(t *testing.T) {
	sc := testScenario(scenario.ArrivalUniform, 64, scenario.Phase{Name: "p", Type: scenario.PhaseConstant, Duration: 20 * time.Second, Rate: 1000})
	spell := func() VariantBackend {
		return VariantBackend{Name: "v", Virtual: &slowSpellSim{from: 10 * time.Second, to: 10*time.Second + 100*time.Millisecond}}
	}
	whole, err := Run(context.Background(), testConfig(t, sc, 1, spell()))
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, sc, 1, spell())
	cfg.Measure = &results.MeasureWindow{FromS: 9.9, ToS: 10.1}
	win, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	wt, mt := whole.Variants[0].Totals, win.Variants[0].Totals
	if wt.Completed != 20000 || wt.Response.P99 > 2 {
		t.Errorf("whole run: %d completed, p99 %.3f ms; want 20000 and the spell under its p99", wt.Completed, wt.Response.P99)
	}
	if mt.Completed != 200 || mt.Response.P99 < 99 || mt.Response.P50 > 2 {
		t.Errorf("window: %d completed, p50 %.3f p99 %.3f ms; want 200, half of them slow", mt.Completed, mt.Response.P50, mt.Response.P99)
	}
	if math.Abs(mt.TargetRate-1000) > 1 || math.Abs(mt.AchievedRate-200/0.299) > 1 { // the last slow one ends at 10.199 s
		t.Errorf("window rates: target %.1f achieved %.1f, want 1000/s over the window and 200 ops until 10.199 s", mt.TargetRate, mt.AchievedRate)
	}
	if win.Measured == nil || win.Measured.FromS != 9.9 || win.DueS() > 0.2+1e-9 {
		t.Errorf("summary's measured window: %+v", win.Measured)
	}
	cfg.Dir.Close() // flushes the time series
	points, err := results.ReadTimeseries(cfg.Dir.Path)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, p := range points {
		n += p.Completed
	}
	if n != 20000 {
		t.Errorf("the time series holds %d operations, want every one of the 20000", n)
	}

	bad := testConfig(t, sc, 1, spell())
	bad.Measure = &results.MeasureWindow{FromS: 15, ToS: 25}
	if _, err := Run(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "not within the schedule") {
		t.Errorf("a window past the schedule: %v", err)
	}
}
