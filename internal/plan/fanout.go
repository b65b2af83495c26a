package plan

import (
	"context"
	"fmt"
	"sync"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/workloads"
)

// fanoutBatch is how many operations travel together from the stream to the consumers:
// large enough that channel hand-offs cost nothing per operation, small enough (about
// 0.5 MB) to stay in cache while every consumer reads it.
const fanoutBatch = 4096

// Fanout reads the stream once and hands every operation, in stream order, to each of
// the consumers: consumer i is always called from the same goroutine, with successive
// batches, and the consumers are spread over workers goroutines (at least 1). All
// variants of a scenario see the same operation stream, and generating it costs more
// than placing its keys, so generating it once for all of them instead of once per
// variant is what makes plan and analyze fast end to end. A batch is shared by all
// consumers: they must not modify it or keep it after returning. Fanout stops after
// limit operations (0: the whole stream) or when ctx is done, and returns how many
// operations every consumer received; ctx's error if it stopped early.
func Fanout(ctx context.Context, s Stream, limit int64, workers int, consumers []func(ops []workloads.Op)) (int64, error) {
	workers = max(1, min(workers, len(consumers)))
	type batch struct {
		ops     []workloads.Op
		pending sync.WaitGroup // workers still reading ops
	}
	free := make(chan *batch, 2*workers+2)
	for range cap(free) {
		free <- &batch{ops: make([]workloads.Op, 0, fanoutBatch)}
	}
	inbox := make([]chan *batch, workers)
	var done sync.WaitGroup
	for w := range inbox {
		inbox[w] = make(chan *batch, cap(free))
		done.Add(1)
		go func() {
			defer done.Done()
			for b := range inbox[w] {
				for i := w; i < len(consumers); i += workers {
					consumers[i](b.ops)
				}
				b.pending.Done()
			}
		}()
	}
	var n int64
	var err error
	for more := true; more; {
		if err = ctx.Err(); err != nil {
			break
		}
		b := <-free
		b.pending.Wait() // every worker is done with its previous contents
		b.ops = b.ops[:fanoutBatch]
		k := 0
		for k < len(b.ops) && (limit <= 0 || n < limit) {
			if !s.Next(&b.ops[k]) {
				more = false
				break
			}
			k++
			n++
		}
		if limit > 0 && n >= limit {
			more = false
		}
		b.ops = b.ops[:k]
		if k == 0 {
			free <- b
			break
		}
		b.pending.Add(workers)
		for _, in := range inbox {
			in <- b
		}
		free <- b // reusable once pending drops to zero
	}
	for _, in := range inbox {
		close(in)
	}
	done.Wait()
	return n, err
}

// Variants is [Variant] for every variant of a scenario (names and plans in the same
// order), with the stream generated once for all of them ([Fanout] over workers
// goroutines). The results are the ones Variant gives for each.
func Variants(ctx context.Context, names []string, plans []*design.Plan, c *Cluster, newStream func() Stream, limit int64, workers int) ([]results.HotspotsVariant, int64, error) {
	sample := Sample(newStream())
	obs := make([]*Observer, len(plans))
	consumers := make([]func([]workloads.Op), len(plans))
	for i, p := range plans {
		pl, err := NewPlacer(p, c, sample)
		if err != nil {
			return nil, 0, err
		}
		o := NewObserver(pl)
		obs[i] = o
		consumers[i] = func(ops []workloads.Op) {
			for j := range ops {
				o.Op(&ops[j])
			}
		}
	}
	n, err := Fanout(ctx, newStream(), limit, workers, consumers)
	out := make([]results.HotspotsVariant, len(plans))
	for i, o := range obs {
		out[i] = o.Result(names[i], "computed", o.Placer.Topology())
		if err != nil {
			out[i].Notes = append(out[i].Notes, fmt.Sprintf("interrupted after %d operations", n))
		}
	}
	return out, n, err
}
