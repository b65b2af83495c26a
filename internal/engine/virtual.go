package engine

import (
	"context"
	"time"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/workloads"
)

// runVirtual drives one simulated variant: the simulator consumes the stream in virtual
// time and reports every operation's timing; intervals close as virtual time passes.
func runVirtual(ctx context.Context, cfg *Config, vi int, src Source) (results.SummaryVariant, error) {
	v := &cfg.Variants[vi]
	started := time.Now()
	vw := cfg.Dir.Variant(v.Name, opNames(cfg.Ops), started, timeline(cfg))
	defer vw.Close()
	col := metrics.NewCollector(len(cfg.Ops), cfg.Scenario.Load.LateAfter, cfg.Tick, progressSink(cfg, vi, true, vw.Sink))
	if m := cfg.Measure; m != nil {
		col.Measure(m.From(), m.To())
	}

	interrupted := false
	n := 0
	pull := workloads.Pull(src) // in place: the simulator neither modifies nor keeps it
	// A group's shared stream (every simulated run's source) is read through its concrete
	// type, whose Peek inlines here: an indirect call per operation saved.
	shared, _ := src.(*workloads.SharedReader)
	next := func() *workloads.Op {
		// Checking the context every operation would cost more than the simulation step.
		if n++; n&4095 == 0 && ctx.Err() != nil {
			interrupted = true
			return nil
		}
		var op *workloads.Op
		if shared != nil {
			op = shared.Peek()
		} else {
			op = pull()
		}
		if op != nil {
			return op
		}
		// The shared stream also ends early when the run is interrupted.
		interrupted = ctx.Err() != nil
		return nil
	}
	var last time.Duration
	record := func(s *metrics.Sample) {
		col.AddVirtual(s) // another shard's operation (FlagForeign) only moves the clock on
		if t := time.Duration(s.End); t > last {
			last = t
		}
	}
	if uc, ok := v.Virtual.(backend.UnservedCounter); ok {
		uc.CountUnserved(func(op uint16, t int64) {
			col.AddUnserved(op, t)
			last = max(last, time.Duration(t)) // its end, as record takes it
		})
	}
	simErr := v.Virtual.Simulate(ctx, next, record)
	span, due := max(last, cfg.Schedule.Duration()), cfg.Schedule.Duration()
	if interrupted {
		span, due = max(last, col.Now()), min(col.Now(), due)
	}
	col.Flush(span, 0)
	if m := cfg.Measure; m != nil {
		// The summary's spans are the window's: rates over it, and the measured time
		// until its last operation ended.
		span, due = max(col.MeasuredEnd(), m.To())-m.From(), max(0, min(due, m.To())-m.From())
	}
	out := variantResult(cfg, vi, col, started, span, due)
	out.Interrupted = interrupted
	if r, ok := v.Virtual.(backend.Reporter); ok {
		if err := r.Report(context.Background(), &out, cfg.Dir); err != nil {
			out.Notes = append(out.Notes, "simulator report failed: "+err.Error())
		}
	}
	if simErr != nil {
		return out, simErr
	}
	return out, col.Err()
}
