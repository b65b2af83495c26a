package plan

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/workloads"
)

// EachShared generates the stream once for n consumers (workloads.Share) and calls
// f(i, op) with every operation (shared by the consumers: f must not modify it), in
// stream order, consumer i always on its own goroutine, up to limit operations (0: the
// whole stream). Every design variant runs the same stream, and generating it costs
// about as much as placing its keys: plan and analyze generate it once for all variants. It returns how many operations each consumer got,
// and ctx's error if the run stopped early.
func EachShared(ctx context.Context, s Stream, n int, limit int64, f func(i int, op *workloads.Op)) (int64, error) {
	readers := workloads.Share(ctx, s, n)
	counts := make([]int64, n)
	var wg sync.WaitGroup
	for i, r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer r.Close()
			for limit <= 0 || counts[i] < limit {
				op := r.Peek()
				if op == nil {
					break
				}
				f(i, op)
				counts[i]++
			}
		}()
	}
	wg.Wait()
	var most int64
	for _, c := range counts {
		most = max(most, c)
	}
	return most, ctx.Err()
}

// Variants is [Variant] for every variant of a scenario (names and plans in the same
// order), with the stream generated once for all of them ([EachShared]). The results
// are the ones Variant gives for each; a variant whose placer cannot be built is left
// empty and its error joined to the one returned.
func Variants(ctx context.Context, names []string, plans []*design.Plan, c *Cluster, newStream func() Stream, limit int64) ([]results.HotspotsVariant, int64, error) {
	sample := Sample(newStream())
	obs := make([]*Observer, len(plans))
	var errs []error
	for i, p := range plans {
		pl, err := NewPlacer(p, c, sample)
		if err != nil {
			// That variant is left out (its result stays empty); the others run.
			errs = append(errs, fmt.Errorf("variant %s: %w", names[i], err))
			continue
		}
		obs[i] = NewObserver(pl)
	}
	n, err := EachShared(ctx, newStream(), len(plans), limit, func(i int, op *workloads.Op) {
		if obs[i] != nil {
			obs[i].Op(op)
		}
	})
	out := make([]results.HotspotsVariant, len(plans))
	for i, o := range obs {
		if o == nil {
			continue
		}
		out[i] = o.Result(names[i], "computed", o.Placer.Topology())
		if err != nil {
			out[i].Notes = append(out[i].Notes, fmt.Sprintf("interrupted after %d operations", n))
		}
	}
	return out, n, errors.Join(append(errs, err)...)
}
