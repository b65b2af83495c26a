package plan

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/schedule"
	"github.com/shardbench/shardbench/workloads"
)

// TestVariantsMatchVariant: generating the stream once for all variants gives every
// variant exactly the result of running it on its own stream, whatever the workers.
func TestVariantsMatchVariant(t *testing.T) {
	sc, err := scenario.ReadFile("../../scenarios/black-friday.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.Apply(scenario.Overrides{Duration: 2 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	prep, err := design.Prepare(sc)
	if err != nil {
		t.Fatal(err)
	}
	sch := schedule.New(sc)
	newStream := func() Stream { return prep.Model.NewStream(sch) }
	const limit = 30_000 // not a multiple of the batch size
	var names []string
	var want []any
	for i, v := range prep.Variants {
		names = append(names, v.Name)
		hv, n, err := Variant(context.Background(), v.Name, prep.Plans[i], &Cluster{Seed: 1}, newStream, limit)
		if err != nil || n != limit {
			t.Fatalf("%s: %d operations, %v", v.Name, n, err)
		}
		want = append(want, hv)
	}
	for _, workers := range []int{1, 2, 5} {
		got, n, err := Variants(context.Background(), names, prep.Plans, &Cluster{Seed: 1}, newStream, limit, workers)
		if err != nil || n != limit {
			t.Fatalf("workers %d: %d operations, %v", workers, n, err)
		}
		for i := range got {
			if !reflect.DeepEqual(any(got[i]), want[i]) {
				t.Errorf("workers %d: variant %s differs from its own run", workers, names[i])
			}
		}
	}
}

type countStream struct{ n, end uint64 }

func (s *countStream) Next(op *workloads.Op) bool {
	if s.n == s.end {
		return false
	}
	*op = workloads.Op{Seq: s.n}
	s.n++
	return true
}

// TestFanoutOrder: every consumer gets every operation once, in order, whether the
// stream ends, a limit stops it or nothing comes at all.
func TestFanoutOrder(t *testing.T) {
	for _, c := range []struct{ end, limit, want uint64 }{
		{0, 0, 0}, {10, 0, 10}, {3 * fanoutBatch, 0, 3 * fanoutBatch}, {3*fanoutBatch + 7, 0, 3*fanoutBatch + 7},
		{100_000, fanoutBatch + 1, fanoutBatch + 1}, {100_000, 2 * fanoutBatch, 2 * fanoutBatch},
	} {
		next := make([]uint64, 7)
		consumers := make([]func([]workloads.Op), len(next))
		for i := range consumers {
			consumers[i] = func(ops []workloads.Op) {
				for j := range ops {
					if ops[j].Seq != next[i] {
						t.Fatalf("consumer %d: got op %d, want %d", i, ops[j].Seq, next[i])
					}
					next[i]++
				}
			}
		}
		n, err := Fanout(context.Background(), &countStream{end: c.end}, int64(c.limit), 3, consumers)
		if err != nil || uint64(n) != c.want {
			t.Fatalf("%+v: %d operations, %v", c, n, err)
		}
		for i, got := range next {
			if got != c.want {
				t.Errorf("%+v: consumer %d got %d operations", c, i, got)
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Fanout(ctx, &countStream{end: 10}, 0, 2, []func([]workloads.Op){func([]workloads.Op) {}}); err == nil {
		t.Error("a cancelled context did not stop Fanout")
	}
}
