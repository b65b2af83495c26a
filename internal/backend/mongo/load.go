package mongo

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

// load is the optional load phase: the first Load.Ops operations of the scenario's own
// stream run their MongoDB update and upsert steps, unmeasured, so that the measured run's
// reads and updates find the documents (carts, stock) the workload refers to. Inserts are
// left out: the stream is deterministic, so the measured run inserts the same documents
// and would otherwise meet its own duplicates.
func (b *Backend) load(ctx context.Context) error {
	n := b.opts.Load.Ops
	stream := b.cfg.Plan.Model.NewStream(schedule.New(b.cfg.Scenario))
	ops := make(chan workloads.Op, 256)
	var done, failed, dup atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	t0 := time.Now()
	for range b.opts.Load.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var acc []design.Access
			for op := range ops {
				acc = b.cfg.Plan.Accesses(&op, acc[:0])
				for i := range acc {
					a := &acc[i]
					if a.Step.Database != design.MongoDB || !a.Step.Kind.IsWrite() || a.Step.Statement == "insertOne" {
						continue
					}
					octx, cancel := context.WithTimeout(ctx, b.timeout)
					err := b.run(octx, a, &op)
					cancel()
					switch {
					case err == nil:
					case serverCode(err) == 11000:
						dup.Add(1)
					default:
						failed.Add(1)
						firstErr.CompareAndSwap(nil, b.redact(err.Error()))
					}
				}
				done.Add(1)
			}
		}()
	}
	var op workloads.Op
	for i := 0; i < n && stream.Next(&op); i++ {
		select {
		case ops <- op:
		case <-ctx.Done():
			close(ops)
			wg.Wait()
			return ctx.Err()
		}
	}
	close(ops)
	wg.Wait()
	msg := fmt.Sprintf("load phase: update/upsert steps of %d operations in %s (%d duplicates already there, %d failed)", done.Load(), time.Since(t0).Round(time.Millisecond), dup.Load(), failed.Load())
	if e, ok := firstErr.Load().(string); ok {
		msg += "; first failure: " + e
	}
	b.note("%s", msg)
	return nil
}
