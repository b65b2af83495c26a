package workloads_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/schedule"
	"github.com/shardbench/shardbench/workloads"
)

// lifeKey names, from an operation's fields alone (not from the ownership function under
// test), the life cycle of the run's it belongs to: a session or an order the run
// created, a cart (its owner); "" for operations outside any.
func lifeKey(m *workloads.Model, op *workloads.Op) string {
	info := m.Ops[op.Type]
	switch info.Workload.Name {
	case "sessions":
		if info.Spec.Name != "list_by_user" && op.Session >= m.Sessions {
			return fmt.Sprintf("session %d", op.Session)
		}
	case "carts":
		if op.User >= 0 {
			return fmt.Sprintf("user cart %d", op.User)
		}
		// A guest's cart goes with the guest's session.
		return fmt.Sprintf("session %d", op.Session)
	case "orders":
		switch info.Spec.Name {
		case "place", "read", "status_change":
			if op.Order >= m.FirstNewOrder() {
				return fmt.Sprintf("order %d", op.Order)
			}
		}
	}
	return ""
}

// The shards of a run split the stream: every operation belongs to exactly one shard,
// every life cycle (a session's, a cart's, an order's) to one shard, its creation
// included and first, and the shards are even.
func TestShardsSplitTheStreamByLifeCycle(t *testing.T) {
	m := newModel(t, testScenario(t, 3, allMix(), ""))
	for _, n := range []int{1, 2, 4, 7} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			s := m.NewStream(schedule.New(m.Scenario))
			counts := make([]int, n)
			owner := map[string]int{}
			created := map[string]bool{}
			var op workloads.Op
			total, lives, createdUsed := 0, 0, 0
			for total < 200_000 && s.Next(&op) {
				total++
				k := m.Shard(&op, n)
				if k < 0 || k >= n {
					t.Fatalf("op %d: shard %d of %d", op.Seq, k, n)
				}
				if again := m.Shard(&op, n); again != k {
					t.Fatalf("op %d: shard %d, then %d", op.Seq, k, again)
				}
				counts[k]++
				key := lifeKey(m, &op)
				if key == "" {
					continue
				}
				name := m.Ops[op.Type].Name
				if name == "sessions.create" || name == "orders.place" {
					created[key] = true
				}
				if prev, ok := owner[key]; ok {
					if prev != k && name != "carts.merge" {
						t.Fatalf("%s: %s (op %d) on shard %d, its earlier operations on shard %d", key, name, op.Seq, k, prev)
					}
					if created[key] {
						createdUsed++
					}
					continue
				}
				owner[key] = k
				lives++
			}
			sum := 0
			for _, c := range counts {
				sum += c
			}
			if sum != total {
				t.Fatalf("the shards hold %d operations of %d", sum, total)
			}
			// Sessions and orders created in the run and then used: the creation came first
			// (owner was set by it) on the same shard, checked above.
			if lives < 1000 || createdUsed < 1000 {
				t.Fatalf("the test needs many life cycles: %d, of which %d created and used", lives, createdUsed)
			}
		})
	}
}

// On Black Friday's stream the shards are even. (In the first seconds of a run the few
// sessions and orders created so far take every "recent" pick, so the shards' shares
// settle only after a while.)
func TestShardsOfBlackFridayAreEven(t *testing.T) {
	b, err := os.ReadFile("../scenarios/black-friday.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Parse("../scenarios/black-friday.yaml", b)
	if err != nil {
		t.Fatal(err)
	}
	m := newModel(t, sc)
	s := m.NewStream(schedule.New(sc))
	const n, total = 4, 2_000_000
	counts := make([]int, n)
	var op workloads.Op
	for i := 0; i < total && s.Next(&op); i++ {
		counts[m.Shard(&op, n)]++
	}
	for k, c := range counts {
		if mean := float64(total) / n; float64(c) > 1.04*mean || float64(c) < 0.96*mean {
			t.Errorf("shard %d of %d holds %d operations, mean %.0f: %v", k, n, c, mean, counts)
		}
	}
}

// Operations outside any life cycle do not pile up on one shard: a workload without an
// owner function is spread by position.
func TestShardSpreadsOperationsWithoutOwner(t *testing.T) {
	m := newModel(t, testScenario(t, 3, "  views.append: 1\n  catalog.product_read: 1\n", ""))
	s := m.NewStream(schedule.New(m.Scenario))
	counts := make([]int, 4)
	var op workloads.Op
	for i := 0; i < 40_000 && s.Next(&op); i++ {
		counts[m.Shard(&op, 4)]++
	}
	for k, c := range counts {
		if c < 9_500 || c > 10_500 {
			t.Errorf("shard %d: %d of 40000", k, c)
		}
	}
}

// BenchmarkShard measures deciding an operation's shard, which every process of a
// distributed run does for every operation of the stream (BenchmarkStream generates it).
func BenchmarkShard(b *testing.B) {
	m := newModel(b, testScenario(b, 1, allMix(), ""))
	s := m.NewStream(schedule.New(m.Scenario))
	ops := make([]workloads.Op, 1<<16)
	for i := range ops {
		if !s.Next(&ops[i]) {
			b.Fatal("ended")
		}
	}
	n := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n += m.Shard(&ops[i&(len(ops)-1)], 4)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	_ = n
}
