package cassandra

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
// stream run their Cassandra INSERT and UPDATE steps (not DELETEs, not LWTs), unmeasured,
// at Load.Concurrency, so the measured run's reads find the rows (carts, sessions, order
// history, products) the workload refers to. Cassandra writes are upserts, so the measured
// run's own inserts of the same rows simply overwrite them.
func (b *Backend) load(ctx context.Context) error {
	n := b.opts.Load.Ops
	stream := b.cfg.Plan.Model.NewStream(schedule.New(b.cfg.Scenario))
	ops := make(chan workloads.Op, 256)
	var done, writes, failed atomic.Int64
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
					if a.Step.Database != design.Cassandra || a.Step.Kind != design.Write || a.Step.Statement == "DELETE" {
						continue
					}
					octx, cancel := context.WithTimeout(ctx, b.timeout)
					err := b.run(octx, a, &op)
					cancel()
					writes.Add(1)
					if err != nil {
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
	msg := fmt.Sprintf("load phase: %d writes of %d operations in %s (%d failed)", writes.Load(), done.Load(), time.Since(t0).Round(time.Millisecond), failed.Load())
	if e, ok := firstErr.Load().(string); ok {
		msg += "; first failure: " + e
	}
	b.note("%s", msg)
	return nil
}
