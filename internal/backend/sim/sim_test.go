package sim

import (
	"context"
	"encoding/binary"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/workloads"
)

// each gives ops one by one, in place, as backend.Virtual's next does; nil after the last.
func each(ops []workloads.Op) func() *workloads.Op {
	i := 0
	return func() *workloads.Op {
		if i >= len(ops) {
			return nil
		}
		i++
		return &ops[i-1]
	}
}

// simulate runs one variant of sc over n operations and returns the simulator and every
// sample in the order reported.
func simulate(t *testing.T, sc *scenario.Scenario, variant string, n int) (*Simulator, []metrics.Sample) {
	t.Helper()
	cfg, ops := configFor(t, sc, variant, n)
	s, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	orig := slices.Clone(ops)
	var out []metrics.Sample
	err = s.Simulate(context.Background(), each(ops), func(smp *metrics.Sample) {
		// The backend.Virtual contract: in stream order, each operation reported once,
		// due (completed, or dropped: intended) at or after its intended time.
		if n := len(out); n < len(ops) && smp.Intended != int64(ops[n].Intended) {
			t.Fatalf("sample %d intended at %d reported for the operation intended at %d", n, smp.Intended, ops[n].Intended)
		}
		at := smp.End
		if smp.Flags&metrics.FlagDropped != 0 {
			at = smp.Intended
		}
		if at < smp.Intended || smp.Start < smp.Intended {
			t.Fatalf("sample %+v due before its intended time", *smp)
		}
		out = append(out, *smp)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(ops) {
		t.Fatalf("%d samples for %d operations", len(out), len(ops))
	}
	// The backend.Virtual contract: the operations are read in place, shared with other
	// variants, and left as they were.
	for i := range ops {
		if ops[i] != orig[i] {
			t.Fatalf("the simulator modified operation %d: %+v, was %+v", i, ops[i], orig[i])
		}
	}
	return s, out
}

func readScenario(t *testing.T, path string, d time.Duration) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if d > 0 {
		if err := sc.Apply(scenario.Overrides{Duration: d}); err != nil {
			t.Fatal(err)
		}
	}
	return sc
}

// writeScenario writes a scenario whose designs are the shipped ones.
func writeScenario(t *testing.T, body string) *scenario.Scenario {
	t.Helper()
	designs, err := filepath.Abs("../../../scenarios/designs")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(body, "DESIGNS", designs)), 0o644); err != nil {
		t.Fatal(err)
	}
	return readScenario(t, path, 0)
}

const nodeLossScenario = `
name: node-loss
seed: 3
load:
  arrival: poisson
  max_in_flight: 256
  timeout: 5s
  phases:
    - {name: steady, type: constant, rate: 2000, duration: 20s}
population:
  users: 100000
  sessions: 200000
mix:
  sessions.create: 1
  sessions.read: 2
  sessions.touch: 1
events:
  - {at: 8s, action: node_down, node: dc1-n2}
  - {at: 14s, action: node_up, node: dc1-n2}
backends:
  sim:
    cluster:
      dcs: [{name: dc1, nodes: 3, racks: 1}]
designs:
  - design: DESIGNS/seed000.yaml
    name: quorum
    set: {consistency.read: QUORUM, consistency.write: QUORUM}
  - design: DESIGNS/seed000.yaml
    name: all
    set: {consistency.read: ALL, consistency.write: ALL}
  - design: DESIGNS/seed000.yaml
    name: one
    set: {consistency.read: ONE, consistency.write: ONE}
`

// With RF 3 on 3 nodes every partition has a replica on the stopped node: QUORUM and ONE
// keep succeeding, ALL fails as unavailable exactly while the node is down.
func TestConsistencyUnderNodeLoss(t *testing.T) {
	sc := writeScenario(t, nodeLossScenario)
	down, up := int64(8*time.Second), int64(14*time.Second)
	for _, c := range []struct {
		variant  string
		failDown bool
	}{{"quorum", false}, {"one", false}, {"all", true}} {
		s, samples := simulate(t, sc, c.variant, 1<<30)
		var before, during, after, failedDuring int
		for _, smp := range samples {
			failed := smp.Class != uint8(metrics.OK)
			switch {
			case smp.Intended < down-int64(time.Second):
				before++
				if failed {
					t.Errorf("%s: an operation failed (%s) before the node went down", c.variant, metrics.Class(smp.Class))
				}
			case smp.Start >= down && smp.End < up:
				during++
				if failed {
					failedDuring++
					if metrics.Class(smp.Class) != metrics.Unavailable {
						t.Errorf("%s: failure class %s while the node is down, want unavailable", c.variant, metrics.Class(smp.Class))
					}
				}
			case smp.Start > up:
				after++
				if failed {
					t.Errorf("%s: an operation failed (%s) after the node came back", c.variant, metrics.Class(smp.Class))
				}
			}
		}
		if before == 0 || during == 0 || after == 0 {
			t.Fatalf("%s: %d/%d/%d operations before/during/after", c.variant, before, during, after)
		}
		if c.failDown && failedDuring != during {
			t.Errorf("%s: %d of %d operations failed while a replica was down, want all", c.variant, failedDuring, during)
		}
		if !c.failDown && failedDuring != 0 {
			t.Errorf("%s: %d of %d operations failed while one of three replicas was down, want none", c.variant, failedDuring, during)
		}
		if len(s.applied) != 2 || s.applied[0].Error != "" {
			t.Errorf("%s: events applied: %+v", c.variant, s.applied)
		}
		t.Logf("%s: %d operations during the outage, %d failed", c.variant, during, failedDuring)
	}
}

func fingerprint(samples []metrics.Sample) uint64 {
	h := fnv.New64a()
	var b [8 * 3]byte
	for _, s := range samples {
		binary.LittleEndian.PutUint64(b[0:], uint64(s.Start))
		binary.LittleEndian.PutUint64(b[8:], uint64(s.End))
		binary.LittleEndian.PutUint64(b[16:], uint64(s.Class)<<16|uint64(s.Op))
		h.Write(b[:])
	}
	return h.Sum64()
}

// The same scenario and seed give the same simulation, sample for sample.
func TestDeterministic(t *testing.T) {
	sc := readScenario(t, "../../../scenarios/smoke.yaml", 0)
	for _, v := range []string{"seed000", "seed001-mongo"} {
		_, a := simulate(t, sc, v, 1<<30)
		_, b := simulate(t, sc, v, 1<<30)
		if fa, fb := fingerprint(a), fingerprint(b); fa != fb {
			t.Errorf("%s: two runs differ (%x vs %x)", v, fa, fb)
		}
	}
	seed := int64(99)
	sc2 := readScenario(t, "../../../scenarios/smoke.yaml", 0)
	if err := sc2.Apply(scenario.Overrides{Seed: &seed}); err != nil {
		t.Fatal(err)
	}
	_, a := simulate(t, sc, "seed000", 1<<30)
	_, c := simulate(t, sc2, "seed000", 1<<30)
	if fingerprint(a) == fingerprint(c) {
		t.Error("another seed gave the same simulation")
	}
}

// jobsByNode sums each node's (shard member's) requests over the run from the
// simulator's time series.
func jobsByNode(s *Simulator) map[string]int64 {
	out := map[string]int64{}
	for name, ns := range s.nodes {
		out[name] = ns.jobs[StageRead] + ns.jobs[StageWrite]
	}
	return out
}

func result(s *Simulator) results.HotspotsVariant {
	return s.obs.Result(s.cfg.Variant.Name, "computed", s.placer.Topology())
}

// Seed 004's products_by_category: electronics' partition drives its three replicas far
// harder than the other three nodes.
func TestHotCategoryHeatsItsReplicas(t *testing.T) {
	sc := readScenario(t, "../../../scenarios/claims/products-hot-category.yaml", 20*time.Second)
	s, _ := simulate(t, sc, "seed004", 1<<30)
	hv := result(s)
	var top results.PartitionLoad
	for _, tb := range hv.Tables {
		if strings.HasSuffix(tb.Table, ".products_by_category") {
			top = tb.Top[0]
		}
	}
	if len(top.Replicas) != 3 {
		t.Fatalf("no replicas for the hottest category: %+v", top)
	}
	jobs := jobsByNode(s)
	var hot, cold []float64
	for node, n := range jobs {
		if slices.Contains(top.Replicas, node) {
			hot = append(hot, float64(n))
		} else {
			cold = append(cold, float64(n))
		}
	}
	ratio := mean(hot) / mean(cold)
	if ratio < 1.5 {
		t.Errorf("replicas of %s served %.2f× the requests of the other nodes, want ≥ 1.5×", top.Key, ratio)
	}
	t.Logf("hottest category %s (%.0f%% of its table): its replicas %v served %.2f× the other nodes' requests", top.Key, 100*top.Share, top.Replicas, ratio)
}

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// Seed 001's {created_at: 1} puts every new order on one shard; {user_id: hashed,
// created_at: 1} spreads them.
func TestMonotonicShardKeyOneShard(t *testing.T) {
	sc := readScenario(t, "../../../scenarios/claims/orders-shard-keys.yaml", 20*time.Second)
	share := func(variant string) (maxShare float64, shard string) {
		s, _ := simulate(t, sc, variant, 1<<30)
		// Count where each new order (an insert into orders) went.
		cfg, ops := configFor(t, sc, variant, 1<<30)
		inserts := map[string]int{}
		total := 0
		var accs []design.Access
		for i := range ops {
			accs = cfg.Compiled.Accesses(&ops[i], accs[:0])
			for j := range accs {
				a := &accs[j]
				if a.Step.Target != "orders" || a.Step.Statement != "insertOne" {
					continue
				}
				w := s.placer.Place(a, &ops[i])
				inserts[s.placer.Shards[w.Shards[0]]]++
				total++
			}
		}
		if total == 0 {
			t.Fatalf("%s: no inserts into orders", variant)
		}
		for name, n := range inserts {
			if f := float64(n) / float64(total); f > maxShare {
				maxShare, shard = f, name
			}
		}
		return maxShare, shard
	}
	mono, shard := share("seed001-mongo[orders.shard_key={created_at: 1}]")
	hashed, _ := share("seed001-mongo[orders.shard_key={user_id: hashed, created_at: 1}]")
	if mono < 0.95 {
		t.Errorf("{created_at: 1}: the busiest shard took %.0f%% of the new orders, want ≈100%%", 100*mono)
	}
	if hashed > 0.45 {
		t.Errorf("{user_id: hashed, created_at: 1}: the busiest of 3 shards took %.0f%% of the new orders, want ≈33%%", 100*hashed)
	}
	t.Logf("new orders on the busiest shard: {created_at: 1} %.1f%% (%s); {user_id: hashed, created_at: 1} %.1f%%", 100*mono, shard, 100*hashed)
}

const timelineScenario = `
name: timeline
seed: 5
load:
  arrival: poisson
  max_in_flight: 256
  timeout: 5s
  phases:
    - {name: steady, type: constant, rate: 2000, duration: 12s}
population:
  users: 100000
  sessions: 200000
mix:
  sessions.create: 1
  sessions.read: 2
  carts.add_item: 1
  orders.place: 1
  catalog.product_read: 2
events:
  - {at: 2300ms, action: node_down, node: dc1-n2}
  - {at: 3100ms, action: add_shard, shard: extra}
  - {at: 4700ms, action: node_up, node: dc1-n2}
backends:
  sim:
    tick: 1s
    cluster:
      dcs: [{name: dc1, nodes: 3, racks: 1}]
      shards: 2
    mongodb:
      migration: 700ms
designs:
  - design: DESIGNS/seed000.yaml
  - design: DESIGNS/seed001-mongo.yaml
    name: mongo
    set: {products.shard_key: {category: 1}, chunk_size_mb: 1}
`

// TestAdvanceKeepsTheTimeline: whatever an operation's time, by the time it is simulated
// (and reported) every tick, event and chunk migration due by then has been taken care
// of, and the next tick and the events are still to come: the step skips advancing time
// only when there is nothing due.
func TestAdvanceKeepsTheTimeline(t *testing.T) {
	sc := writeScenario(t, timelineScenario)
	for _, variant := range []string{"seed000", "mongo"} {
		cfg, ops := configFor(t, sc, variant, 1<<30)
		s, err := Open(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		migrations := 0
		err = s.Simulate(context.Background(), each(ops), func(smp *metrics.Sample) {
			at := smp.Intended
			if s.nextTick <= at || s.nextTick > at+s.tick {
				t.Fatalf("%s: operation at %d simulated with the next tick at %d", variant, at, s.nextTick)
			}
			if len(s.events) > 0 && int64(s.events[0].At) <= at {
				t.Fatalf("%s: operation at %d simulated before the event at %v", variant, at, s.events[0].At)
			}
			if s.mongo != nil {
				if len(s.mongo.migrations) > 0 && s.mongo.due() <= at {
					t.Fatalf("%s: operation at %d simulated before the migration due at %d", variant, at, s.mongo.due())
				}
				migrations = max(migrations, len(s.mongo.migrations))
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(s.applied) != 3 {
			t.Errorf("%s: %d events applied, want 3", variant, len(s.applied))
		}
		if s.mongo != nil && (migrations == 0 || len(s.mongo.migrations) != 0) {
			t.Errorf("%s: %d migrations planned, %d left at the end", variant, migrations, len(s.mongo.migrations))
		}
	}
}
