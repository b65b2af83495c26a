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
func runVirtual(ctx context.Context, cfg *Config, vi int, src Source) (results.Variant, error) {
	v := &cfg.Variants[vi]
	started := time.Now()
	vw := cfg.Dir.Variant(v.Name, opNames(cfg.Ops), started, timeline(cfg.Schedule))
	defer vw.Close()
	col := metrics.NewCollector(len(cfg.Ops), cfg.Scenario.Load.LateAfter, cfg.Tick, progressSink(cfg, vi, true, vw.Sink))

	interrupted := false
	n := 0
	next := func(op *workloads.Op) bool {
		// Checking the context every operation would cost more than the simulation step.
		if n++; n&4095 == 0 && ctx.Err() != nil {
			interrupted = true
			return false
		}
		if src.Next(op) {
			return true
		}
		// The shared stream also ends early when the run is interrupted.
		interrupted = ctx.Err() != nil
		return false
	}
	var last time.Duration
	record := func(s *metrics.Sample) {
		col.AddVirtual(s)
		if t := time.Duration(s.End); t > last {
			last = t
		}
	}
	simErr := v.Virtual.Simulate(ctx, next, record)
	span, due := max(last, cfg.Schedule.Duration()), cfg.Schedule.Duration()
	if interrupted {
		span, due = max(last, col.Now()), min(col.Now(), due)
	}
	col.Flush(span, 0)
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

// sharedStream generates the operation stream once for every simulated variant (every
// call to NewSource yields the same operations): blocks of operations go to each
// variant's channel, and the variants, running concurrently, read them in turn. For a
// scenario with many designs this saves generating the stream once per variant, a fifth
// of a simulated run's work; the slowest variant paces the generator.
type sharedStream struct {
	outs []chan []workloads.Op
	done []chan struct{}
	err  error
}

// streamBlock is how many operations go in one block: enough to make channel operations
// rare, few enough that the blocks in flight stay a few MB.
const streamBlock = 4096

// streamLead is how many blocks a variant may fall behind the generator. Variants run at
// different speeds (a broadcast-heavy design costs more per operation); with too short a
// lead the fast ones wait for the slowest and the CPUs idle. 64 blocks are about 30 MB,
// shared by every variant.
const streamLead = 64

func startSharedStream(ctx context.Context, newSource func() (Source, error), n int) *sharedStream {
	ss := &sharedStream{outs: make([]chan []workloads.Op, n), done: make([]chan struct{}, n)}
	for i := range ss.outs {
		ss.outs[i] = make(chan []workloads.Op, streamLead)
		ss.done[i] = make(chan struct{})
	}
	src, err := newSource()
	if err != nil {
		ss.err = err
		for _, c := range ss.outs {
			close(c)
		}
		return ss
	}
	go func() {
		defer func() {
			for _, c := range ss.outs {
				close(c)
			}
		}()
		for ctx.Err() == nil {
			blk := make([]workloads.Op, streamBlock)
			k := 0
			for k < len(blk) && src.Next(&blk[k]) {
				k++
			}
			if k == 0 {
				return
			}
			// Blocks are shared read-only: every reader copies an operation out.
			for i, c := range ss.outs {
				select {
				case c <- blk[:k]:
				case <-ss.done[i]: // that variant stopped reading
				case <-ctx.Done():
					return
				}
			}
			if k < len(blk) {
				return
			}
		}
	}()
	return ss
}

// reader is variant i's view of the shared stream, as a Source; Close tells the generator
// it stopped reading.
func (ss *sharedStream) reader(i int) *blockReader {
	return &blockReader{in: ss.outs[i], done: ss.done[i]}
}

type blockReader struct {
	in   <-chan []workloads.Op
	done chan struct{}
	blk  []workloads.Op
	pos  int
}

func (r *blockReader) Next(op *workloads.Op) bool {
	if r.pos == len(r.blk) {
		blk, ok := <-r.in
		if !ok {
			return false
		}
		r.blk, r.pos = blk, 0
	}
	*op = r.blk[r.pos]
	r.pos++
	return true
}

func (r *blockReader) Close() { close(r.done) }
