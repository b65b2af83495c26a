package backend

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/schedule"
	"github.com/shardbench/shardbench/workloads"
)

// LoadPhase replays the writes of the first Ops operations of the scenario's own stream,
// the write steps Keep selects, unmeasured, on Concurrency workers: what `analyze
// --server-check` runs on a scratch database so that analyzeShardKey has documents and
// sampled queries. (A measured run starts from the population instead: PopulationLoad.)
type LoadPhase struct {
	Ops, Concurrency int
	// Timeout bounds each write.
	Timeout time.Duration
	// Keep selects the steps to run (e.g. a database's inserts and updates).
	Keep func(*design.Step) bool
	// Exec runs one access.
	Exec func(context.Context, *design.Access, *workloads.Op) error
	// Expected, when set, marks errors that are no failure (a duplicate already there);
	// they are counted apart.
	Expected func(error) bool
	// Redact removes secrets from an error message before it is kept.
	Redact func(string) string
}

// ReplayResult counts what a load phase did.
type ReplayResult struct {
	Ops, Writes, Expected, Failed int64
	FirstFailure                  string
	Took                          time.Duration
}

func (r ReplayResult) String() string {
	s := fmt.Sprintf("replay: %d writes of %d operations in %s (%d failed", r.Writes, r.Ops, r.Took.Round(time.Millisecond), r.Failed)
	if r.Expected > 0 {
		s += fmt.Sprintf(", %d already there", r.Expected)
	}
	s += ")"
	if r.FirstFailure != "" {
		s += "; first failure: " + r.FirstFailure
	}
	return s
}

// Run runs the load phase of cfg's scenario and plan. It stops early, with ctx's error,
// when ctx ends.
func (l LoadPhase) Run(ctx context.Context, cfg Config) (ReplayResult, error) {
	stream := cfg.Compiled.Model.NewStream(schedule.New(cfg.Scenario))
	ops := make(chan workloads.Op, 256)
	var done, writes, expected, failed atomic.Int64
	var first atomic.Value
	var wg sync.WaitGroup
	t0 := time.Now()
	for range max(l.Concurrency, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var acc []design.Access
			for op := range ops {
				acc = cfg.Compiled.Accesses(&op, acc[:0])
				for i := range acc {
					a := &acc[i]
					if !l.Keep(a.Step) {
						continue
					}
					octx, cancel := context.WithTimeout(ctx, l.Timeout)
					err := l.Exec(octx, a, &op)
					cancel()
					writes.Add(1)
					switch {
					case err == nil:
					case l.Expected != nil && l.Expected(err):
						expected.Add(1)
					default:
						failed.Add(1)
						msg := err.Error()
						if l.Redact != nil {
							msg = l.Redact(msg)
						}
						first.CompareAndSwap(nil, msg)
					}
				}
				done.Add(1)
			}
		}()
	}
	var err error
	var op workloads.Op
feed:
	for i := 0; i < l.Ops && stream.Next(&op); i++ {
		select {
		case ops <- op:
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(ops)
	wg.Wait()
	r := ReplayResult{Ops: done.Load(), Writes: writes.Load(), Expected: expected.Load(), Failed: failed.Load(), Took: time.Since(t0)}
	r.FirstFailure, _ = first.Load().(string)
	return r, err
}
