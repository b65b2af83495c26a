package plan

import (
	"context"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/shardbench/shardbench/workloads"
)

// TestVariantsMatchVariant: generating the stream once for all variants gives every
// variant exactly the result of running it on its own stream.
func TestVariantsMatchVariant(t *testing.T) {
	prep, sch := prepare(t, "../../scenarios/black-friday.yaml")
	newStream := func() Stream { return prep.Model.NewStream(sch) }
	const limit = 30_000 // not a multiple of the batch size
	var names []string
	var want []any
	for i, v := range prep.Variants {
		names = append(names, v.Name)
		hv, n, err := PlaceVariant(context.Background(), v.Name, prep.Compiled[i], &Cluster{Seed: 1}, newStream, limit)
		if err != nil || n != limit {
			t.Fatalf("%s: %d operations, %v", v.Name, n, err)
		}
		want = append(want, hv)
	}
	got, n, err := Variants(context.Background(), names, prep.Compiled, &Cluster{Seed: 1}, newStream, limit)
	if err != nil || n != limit {
		t.Fatalf("%d operations, %v", n, err)
	}
	for i := range got {
		if !reflect.DeepEqual(any(got[i]), want[i]) {
			t.Errorf("variant %s differs from its own run", names[i])
		}
	}
}

// TestShareTables: across black-friday's variants, a table is borrowed exactly where the
// design and layout make it the same: the seed 001 MongoDB variants share every
// collection but the one they change (none with 32 MB chunks, which re-split them all),
// seed 002's two variants share carts and orders, and no variant borrows from a design
// of another seed. TestVariantsMatchVariant shows the borrowed results are the same.
func TestShareTables(t *testing.T) {
	prep, sch := prepare(t, "../../scenarios/black-friday.yaml")
	_ = sch
	obs := make([]*Observer, len(prep.Compiled))
	byName := map[string]*Observer{}
	for i, p := range prep.Compiled {
		pl, err := NewPlacer(p, &Cluster{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		obs[i] = NewObserver(pl)
		byName[prep.Variants[i].Name] = obs[i]
	}
	n := ShareTables(obs)
	borrowed := func(variant string) map[string]string {
		out := map[string]string{}
		o := byName[variant]
		for _, b := range o.borrowed {
			for name, v := range byName {
				if v == b.owner {
					out[b.name] = name
				}
			}
		}
		return out
	}
	want := map[string]map[string]string{
		"seed001-mongo-orders-created": {
			"mobilnymir.products": "seed001-mongo", "mobilnymir.hot_products": "seed001-mongo",
			"mobilnymir.carts": "seed001-mongo", "mobilnymir.inventory": "seed001-mongo",
		},
		"seed001-mongo-products-brand": {
			"mobilnymir.orders": "seed001-mongo", "mobilnymir.hot_products": "seed001-mongo",
			"mobilnymir.carts": "seed001-mongo", "mobilnymir.inventory": "seed001-mongo",
		},
		"seed001-mongo-products-subcategory": {},
		"seed002-products-category":          {"mobile_world.carts": "seed002", "mobile_world.orders": "seed002"},
		"seed000":                            {},
		"seed003":                            {},
		"seed004":                            {},
	}
	for variant, w := range want {
		if got := borrowed(variant); !reflect.DeepEqual(got, w) {
			t.Errorf("%s borrows %v, want %v", variant, got, w)
		}
	}
	total := 0
	for _, o := range obs {
		total += len(o.borrowed)
		for ty := range o.Placer.Compiled.Model.Ops {
			for _, s := range o.plan.Steps(ty) {
				for _, b := range o.borrowed {
					if s.Namespace+"."+s.Target == b.name {
						t.Errorf("a step on borrowed %s is still placed", b.name)
					}
				}
			}
		}
	}
	if n != total || n == 0 {
		t.Errorf("ShareTables says %d borrowed, the observers hold %d", n, total)
	}
}

// counting is a stream of n operations numbered from 0.
type counting struct{ next, n uint64 }

func (c *counting) Next(op *workloads.Op) bool {
	if c.next == c.n {
		return false
	}
	*op = workloads.Op{Seq: c.next}
	c.next++
	return true
}

// TestEachSharedOrder: every consumer sees every operation once, in stream order, never
// two of its blocks at once; limit cuts the stream; a cancelled context stops it.
func TestEachSharedOrder(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ops      uint64
		n        int
		limit    int64
		wantSeen int64
	}{
		{"several blocks", 5*shareBlock + 17, 5, 0, 5*shareBlock + 17},
		{"one consumer", 3 * shareBlock, 1, 0, 3 * shareBlock},
		{"limit inside a block", 4 * shareBlock, 3, shareBlock + 5, shareBlock + 5},
		{"limit on a block boundary", 4 * shareBlock, 3, 2 * shareBlock, 2 * shareBlock},
		{"empty", 0, 2, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := make([]uint64, tc.n)
			busy := make([]atomic.Bool, tc.n)
			var bad atomic.Int64
			got, err := EachShared(context.Background(), &counting{n: tc.ops}, tc.n, tc.limit, func(i int, ops []workloads.Op) {
				if !busy[i].CompareAndSwap(false, true) {
					bad.Add(1)
				}
				for k := range ops {
					if ops[k].Seq != next[i] {
						bad.Add(1)
					}
					next[i]++
				}
				busy[i].Store(false)
			})
			if err != nil || got != tc.wantSeen || bad.Load() != 0 {
				t.Fatalf("got %d operations, %v, %d out of order or overlapping", got, err, bad.Load())
			}
			for i, n := range next {
				if int64(n) != tc.wantSeen {
					t.Errorf("consumer %d saw %d operations, want %d", i, n, tc.wantSeen)
				}
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	var seen atomic.Int64
	got, err := EachShared(ctx, &counting{n: 1 << 40}, 3, 0, func(i int, ops []workloads.Op) {
		if seen.Add(int64(len(ops))) > 10*shareBlock {
			cancel()
		}
	})
	if err == nil || got == 0 || got > 20*shareBlock {
		t.Errorf("cancelled run: %d operations, %v", got, err)
	}
}
