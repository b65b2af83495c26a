package sim

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/plan"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/schedule"
	"github.com/shardbench/shardbench/workloads"
)

// limited is a stream cut after n operations.
type limited struct {
	src workloads.Source
	n   int
}

func (l *limited) Next(op *workloads.Op) bool {
	if l.n == 0 {
		return false
	}
	l.n--
	return l.src.Next(op)
}

// simulateGroup runs the named variants of sc as the engine runs a group of simulators:
// one shared stream of n operations, their shared tables placed once (Share). It returns
// each simulator and its samples in the order reported, and how many tables were shared.
func simulateGroup(t *testing.T, sc *scenario.Scenario, variants []string, n int) ([]*Simulator, [][]metrics.Sample, int) {
	t.Helper()
	prep, err := design.Prepare(sc)
	if err != nil {
		t.Fatal(err)
	}
	var sims []*Simulator
	var members []backend.Virtual
	for _, name := range variants {
		i := slices.IndexFunc(prep.Variants, func(v *design.Variant) bool { return v.Name == name })
		if i < 0 {
			t.Fatalf("%s has no variant %s", sc.File, name)
		}
		s, err := Open(context.Background(), backend.Config{Scenario: sc, Model: prep.Model, Variant: prep.Variants[i], Compiled: prep.Compiled[i], VariantIndex: i})
		if err != nil {
			t.Fatal(err)
		}
		sims = append(sims, s)
		members = append(members, s)
	}
	newSource := func() (workloads.Source, error) {
		return &limited{src: prep.Model.NewStream(schedule.New(sc)), n: n}, nil
	}
	each := sims[0].Share(context.Background(), members, newSource)
	shared := 0
	for _, s := range sims {
		if s.group != nil {
			shared = len(s.group.tables)
		}
	}
	src, _ := newSource()
	readers := workloads.Share(context.Background(), src, len(sims), each)
	out := make([][]metrics.Sample, len(sims))
	errs := make([]error, len(sims))
	var wg sync.WaitGroup
	for k, s := range sims {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer readers[k].Close()
			errs[k] = s.Simulate(context.Background(), workloads.Pull(readers[k]), func(smp *metrics.Sample) { out[k] = append(out[k], *smp) })
		}()
	}
	wg.Wait()
	for k, err := range errs {
		if err != nil {
			t.Fatalf("%s: %v", variants[k], err)
		}
	}
	return sims, out, shared
}

func hotspotsJSON(t *testing.T, s *Simulator) string {
	t.Helper()
	b, err := json.Marshal(result(s))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Simulators that share tables give, variant for variant, the simulation and the
// hot-partition analysis each gives alone: the operations' timings sample for sample,
// every node's load, hotspots.json and server.json (MongoDB write conflicts and
// Cassandra Paxos rounds, which need the key a shared placement carries). Black
// Friday's seed 001 MongoDB variants share all but one or two collections, seed 002's
// pair its carts and orders; one variant (products-subcategory) shares nothing, and a
// scenario that adds a node shares nothing.
func TestSharedTablesChangeNothing(t *testing.T) {
	sc := readScenario(t, "../../../scenarios/black-friday.yaml", 20*time.Second)
	variants := []string{"seed001-mongo", "seed001-mongo-orders-created", "seed001-mongo-products-brand",
		"seed001-mongo-products-subcategory", "seed002", "seed002-products-category"}
	const n = 150_000
	sims, samples, shared := simulateGroup(t, sc, variants, n)
	// seed001-mongo's five collections, of which orders-created changes one and
	// products-brand one; seed002's carts and orders.
	if shared != 7 {
		t.Errorf("%d tables shared, want 7", shared)
	}
	for k, name := range variants {
		alone, want := simulate(t, sc, name, n)
		if len(samples[k]) != len(want) || fingerprint(samples[k]) != fingerprint(want) {
			t.Errorf("%s: shared simulation differs from its own (%d and %d samples)", name, len(samples[k]), len(want))
		}
		if got, want := hotspotsJSON(t, sims[k]), hotspotsJSON(t, alone); got != want {
			t.Errorf("%s: shared hot-partition analysis differs from its own:\n%s\n%s", name, got, want)
		}
		if got, want := jobsByNode(sims[k]), jobsByNode(alone); !mapsEqual(got, want) {
			t.Errorf("%s: shared node loads %v, its own %v", name, got, want)
		}
		if got, want := serverJSON(t, sims[k]), serverJSON(t, alone); got != want {
			t.Errorf("%s: shared server report differs from its own:\n%s\n%s", name, got, want)
		}
		if (sims[k].shares != nil) != (name != "seed001-mongo-products-subcategory") {
			t.Errorf("%s: shares tables: %v", name, sims[k].shares != nil)
		}
	}

	grow := writeScenario(t, addNodeScenario)
	if _, _, shared := simulateGroup(t, grow, []string{"a", "b"}, 20_000); shared != 0 {
		t.Errorf("%d tables shared in a scenario that adds a node, want none", shared)
	}
}

func serverJSON(t *testing.T, s *Simulator) string {
	t.Helper()
	b, err := json.Marshal(s.serverView())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mapsEqual(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

const addNodeScenario = `
name: add-node
seed: 5
load:
  phases:
    - {name: steady, type: constant, rate: 2000, duration: 10s}
population:
  users: 100000
  sessions: 200000
mix:
  sessions.create: 1
  sessions.read: 2
events:
  - {at: 4s, action: add_node, dc: dc1}
designs:
  - design: DESIGNS/seed000.yaml
    name: a
  - design: DESIGNS/seed000.yaml
    name: b
`

// A group holds a block's shared placements until every member has read past it. Here
// member b's client falls hopelessly behind (its session reads cost a thousand times
// more), so from the first seconds on it drops every operation, and a dropped operation
// reads no placement; a has its placements all the same. b still moves on with the
// stream, and the blocks held at once stay within the stream's lead, however long the
// run.
func TestSharedPlacementsFollowAMemberThatDropsEverything(t *testing.T) {
	sc := writeScenario(t, collapseScenario)
	const n = 1_000_000
	sims, samples, shared := simulateGroup(t, sc, []string{"a", "b"}, n)
	if shared == 0 {
		t.Fatal("a and b share no table")
	}
	last := samples[1][len(samples[1])-1000:]
	for _, s := range last {
		if s.Flags&metrics.FlagDropped == 0 {
			t.Fatalf("b's last operations should all be dropped: %+v", s)
		}
	}
	if got := sims[0].group.peak; got > n/4096/3 {
		t.Errorf("the group held %d blocks of placements at once (of %d in the run)", got, n/4096)
	}
}

const collapseScenario = `
name: collapse
seed: 3
load:
  max_in_flight: 64
  timeout: 2s
  phases:
    - {name: steady, type: constant, rate: 20000, duration: 60s}
population:
  users: 100000
  sessions: 200000
mix:
  sessions.create: 1
  sessions.read: 2
backends:
  sim:
    operation_scale: {sessions.read@b: 1000}
designs:
  - design: DESIGNS/seed000.yaml
    name: a
  - design: DESIGNS/seed000.yaml
    name: b
`

// The hot-partition analysis of a simulated run is that of the stream the scenario
// offers, as `plan` makes it: also the accesses of operations the saturated client
// dropped and of the steps after one that failed. Here the cluster is far too small for
// the traffic, so operations are dropped (on_full: drop), and a node down makes ALL and
// the writes of a shard without a primary fail part-way.
func TestHotspotsOfTheOfferedStream(t *testing.T) {
	sc := writeScenario(t, overloadScenario)
	const n = 60_000
	variants := []string{"seed000", "seed001-mongo", "seed001-mongo-orders-created"}
	sims, samples, _ := simulateGroup(t, sc, variants, n)
	var dropped, failed int
	for _, ss := range samples {
		for _, s := range ss {
			if s.Flags&metrics.FlagDropped != 0 {
				dropped++
			} else if s.Class != uint8(metrics.OK) {
				failed++
			}
		}
	}
	if dropped == 0 || failed == 0 {
		t.Fatalf("the scenario should drop and fail operations: %d dropped, %d failed", dropped, failed)
	}
	prep, err := design.Prepare(sc)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var plans []*design.Compiled
	for _, name := range variants {
		i := slices.IndexFunc(prep.Variants, func(v *design.Variant) bool { return v.Name == name })
		names, plans = append(names, name), append(plans, prep.Compiled[i])
	}
	newStream := func() plan.Stream { return &limited{src: prep.Model.NewStream(schedule.New(sc)), n: n} }
	want, _, err := plan.Variants(context.Background(), names, plans, &sims[0].opt.Cluster, newStream, 0)
	if err != nil {
		t.Fatal(err)
	}
	for k, s := range sims {
		got := result(s)
		got.Topology, want[k].Topology = "", ""
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want[k])
		if string(gb) != string(wb) {
			t.Errorf("%s: simulated hot-partition analysis differs from plan's:\n%s\n%s", variants[k], gb, wb)
		}
	}
}

const overloadScenario = `
name: overload
seed: 11
load:
  arrival: poisson
  max_in_flight: 256
  on_full: drop
  timeout: 2s
  phases:
    - {name: steady, type: constant, rate: 20000, duration: 10s}
population:
  users: 200000
  sessions: 400000
  carts: 100000
  products: 20000
mix:
  sessions.create: 1
  sessions.read: 3
  carts.add_item: 2
  carts.checkout: 1
  orders.place: 1
  orders.read: 2
  catalog.product_read: 3
events:
  - {at: 3s, action: node_down, node: dc1-n2}
  - {at: 3s, action: node_down, node: shard0}
backends:
  sim:
    cluster:
      dcs: [{name: dc1, nodes: 3, racks: 1}]
      shards: 2
    cassandra: {cores: 2}
    mongodb: {cores: 1}
designs:
  - design: DESIGNS/seed000.yaml
    name: seed000
    set: {consistency.read: ALL, consistency.write: ALL}
  - design: DESIGNS/seed001-mongo.yaml
  - design: DESIGNS/seed001-mongo-orders-created.yaml
`
