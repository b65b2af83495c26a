package design_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/workloads"
)

// keysOf runs n operations and collects each access's key for one target, by op name.
func keysOf(t *testing.T, d *design.Design, m *workloads.Model, n int, target string) map[string]map[string]int {
	t.Helper()
	p, err := design.Compile(d, m)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]int{}
	s := stream(m)
	var op workloads.Op
	var acc []design.Access
	for i := 0; i < n && s.Next(&op); i++ {
		acc = p.Accesses(&op, acc[:0])
		for j := range acc {
			if acc[j].Step.Target != target {
				continue
			}
			name := m.Ops[op.Type].Name
			if out[name] == nil {
				out[name] = map[string]int{}
			}
			out[name][string(acc[j].AppendKey(nil, &op))]++
		}
	}
	return out
}

func mixScenarioB(t testing.TB, mix string) *scenario.Scenario { return mixScenario(t, mix) }

func mixScenario(t testing.TB, mix string) *scenario.Scenario {
	t.Helper()
	text := `name: c
seed: 4
load:
  arrival: uniform
  phases: [{type: constant, rate: 1000, duration: 60s}]
population: {users: 20000, sessions: 40000, carts: 5000, products: 5000}
mix:
` + mix
	sc, err := scenario.Parse("c.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// Seed 000: every order of a day goes to one orders_by_period partition, while
// order_history spreads them by customer.
func TestSeed000OrdersByPeriodIsOnePartitionPerDay(t *testing.T) {
	m := model(t, mixScenario(t, "  orders.place: 1\n"))
	d := mustLoad(t, filepath.Join(designsDir, "seed000.yaml"))
	byPeriod := keysOf(t, d, m, 5000, "orders_by_period")["orders.place"]
	history := keysOf(t, d, m, 5000, "order_history")["orders.place"]
	if len(byPeriod) != 1 {
		t.Fatalf("orders_by_period: %d partitions for one day of orders, want 1", len(byPeriod))
	}
	if len(history) < 1000 {
		t.Fatalf("order_history: %d partitions for 5000 orders", len(history))
	}
}

// Seed 000's bucket count: sessions spread over exactly min(N, sessions) buckets.
func TestSeed000SessionBuckets(t *testing.T) {
	m := model(t, mixScenario(t, "  sessions.create: 1\n"))
	for _, n := range []int{1, 10, 100, 1000} {
		d, err := design.Load(filepath.Join(designsDir, "seed000.yaml"), design.Override{Name: "sessions.buckets", Node: yamlScalar(fmt.Sprint(n), 1, 1)})
		if err != nil {
			t.Fatal(err)
		}
		keys := keysOf(t, d, m, 20000, "user_sessions")["sessions.create"]
		if len(keys) != n {
			t.Errorf("%d buckets: sessions landed in %d partitions", n, len(keys))
		}
	}
}

// Seed 001's MongoDB keys: how each query is routed under the chosen and the rejected keys.
func TestSeed001ShardKeysRouting(t *testing.T) {
	kind := func(file, op string, index int) design.Kind {
		d := mustLoad(t, filepath.Join(designsDir, file))
		steps := d.StaticSteps(op)
		if len(steps) <= index {
			t.Fatalf("%s: %s has %d steps", file, op, len(steps))
		}
		return steps[index].Kind
	}
	for _, c := range []struct {
		file, op string
		index    int
		want     design.Kind
	}{
		{"seed001-mongo.yaml", "orders.history_all", 0, design.Read},            // {user_id: hashed, ...}: targeted
		{"seed001-mongo.yaml", "orders.read", 0, design.Scan},                   // findOne({_id}) broadcasts
		{"seed001-mongo.yaml", "orders.list_by_period", 0, design.Scan},         // created_at is not a prefix
		{"seed001-mongo.yaml", "catalog.category_listing", 0, design.MultiRead}, // category prefix
		{"seed001-mongo.yaml", "catalog.product_read", 0, design.Scan},          // findOne({_id}) without category
		{"seed001-mongo.yaml", "carts.read", 0, design.Read},
		{"seed001-mongo.yaml", "catalog.stock_decrement", 0, design.Write},
		{"seed001-mongo-orders-created.yaml", "orders.history_all", 0, design.MultiRead}, // routed by the date range, not the user
		{"seed001-mongo-orders-created.yaml", "orders.read", 0, design.Scan},
		{"seed001-mongo-orders-created.yaml", "orders.list_by_period", 0, design.MultiRead},
		{"seed001-mongo-orders-id-hashed.yaml", "orders.history_all", 0, design.Scan},
		{"seed001-mongo-orders-id-hashed.yaml", "orders.read", 0, design.Read},
		{"seed001-mongo-orders-geo-created.yaml", "orders.history_all", 0, design.Scan},
		{"seed001-mongo-products-category.yaml", "catalog.category_listing", 0, design.Read},
		{"seed001-mongo-products-id-hashed.yaml", "catalog.category_listing", 0, design.Scan},
		{"seed001-mongo-products-id-hashed.yaml", "catalog.product_read", 0, design.Read},
		{"seed001-mongo-products-brand.yaml", "catalog.category_listing", 0, design.Scan},
		{"seed001-mongo-products-subcategory.yaml", "catalog.category_listing", 0, design.MultiRead},
	} {
		if got := kind(c.file, c.op, c.index); got != c.want {
			t.Errorf("%s %s: %s, want %s", c.file, c.op, got, c.want)
		}
	}
	if f := mustLoad(t, filepath.Join(designsDir, "seed001-mongo.yaml")).StaticSteps("orders.history_by_month")[0].Filter; strings.Join(f, ",") != "user_id,created_at" {
		t.Errorf("history filter %v", f)
	}
	// Under {created_at: 1}, every new order's shard key is the newest time: monotonic.
	m := model(t, mixScenario(t, "  orders.place: 1\n"))
	d := mustLoad(t, filepath.Join(designsDir, "seed001-mongo-orders-created.yaml"))
	p, err := design.Compile(d, m)
	if err != nil {
		t.Fatal(err)
	}
	s := stream(m)
	var op workloads.Op
	var last string
	for i := 0; i < 1000 && s.Next(&op); i++ {
		acc := p.Accesses(&op, nil)
		k := string(acc[0].AppendKey(nil, &op))
		if k < last {
			t.Fatalf("created_at keys must only grow: %x after %x", k, last)
		}
		last = k
	}
}

// Seed 002: a category listing reads every category_shard partition; without the shard
// it reads the one category partition.
func TestSeed002CategoryShards(t *testing.T) {
	m := model(t, mixScenario(t, "  catalog.category_listing: 1\n"))
	for _, c := range []struct {
		file  string
		parts int32
		kind  design.Kind
	}{{"seed002.yaml", 8, design.MultiRead}, {"seed002-products-category.yaml", 1, design.Read}} {
		d := mustLoad(t, filepath.Join(designsDir, c.file))
		p, err := design.Compile(d, m)
		if err != nil {
			t.Fatal(err)
		}
		s := stream(m)
		var op workloads.Op
		s.Next(&op)
		acc := p.Accesses(&op, nil)
		if int32(len(acc)) != c.parts || acc[0].Parts != c.parts || acc[0].Step.Kind != c.kind {
			t.Errorf("%s: %d accesses, parts %d, kind %s", c.file, len(acc), acc[0].Parts, acc[0].Step.Kind)
		}
	}
}

// Seed 003: a user's order history is one partition forever (no time bucket); seed 000
// splits it by month.
func TestSeed003HistoryHasNoTimeBucket(t *testing.T) {
	m := model(t, mixScenario(t, "  orders.history_all: 1\n"))
	for _, c := range []struct {
		file  string
		parts int32
	}{{"seed003.yaml", 1}, {"seed000.yaml", 12}} {
		d := mustLoad(t, filepath.Join(designsDir, c.file))
		p, err := design.Compile(d, m)
		if err != nil {
			t.Fatal(err)
		}
		s := stream(m)
		var op workloads.Op
		s.Next(&op)
		if acc := p.Accesses(&op, nil); acc[0].Parts != c.parts {
			t.Errorf("%s: history reads %d partitions, want %d", c.file, acc[0].Parts, c.parts)
		}
	}
}

// Every seed document has a design, every design names its source, and every design
// says for every operation how it serves it or why it does not.
func TestEverySeedHasAFaithfulDesign(t *testing.T) {
	seeds := map[string]bool{}
	for _, f := range designFiles(t) {
		d := mustLoad(t, f)
		if d.Source == "" || d.Description == "" {
			t.Errorf("%s: source and description are required in shipped designs", f)
		}
		seeds[d.Source[:3]] = true
		for _, op := range workloads.OpNames() {
			if ok, reason := d.Serves(op); !ok && reason == "" {
				t.Errorf("%s: %s is neither mapped nor listed under not_served", f, op)
			}
		}
	}
	for _, s := range []string{"000", "001", "002", "003", "004"} {
		if !seeds[s] {
			t.Errorf("no design from seed %s", s)
		}
	}
	d := mustLoad(t, filepath.Join(designsDir, "seed004.yaml"))
	if d.DatabaseName() != "cassandra+mongodb" {
		t.Errorf("seed004 keeps carts in MongoDB: %s", d.DatabaseName())
	}
}

func TestExpandSweeps(t *testing.T) {
	text := `name: s
load: {phases: [{type: constant, rate: 10, duration: 1s}]}
mix: {sessions.create: 1}
designs:
  - design: designs/seed000.yaml
    sweep:
      sessions.buckets: [1, 10, 100, 1000]
  - design: designs/seed001-mongo.yaml
    set: {chunk_size_mb: 32}
    sweep:
      orders.shard_key: [{user_id: hashed, created_at: 1}, {created_at: 1}]
      catalog.read_preference: [primary, secondary]
  - name: s2
    design: designs/seed002.yaml
    sweep:
      replication: [{class: NetworkTopologyStrategy, DC1: 3, DC2: 3}, {class: NetworkTopologyStrategy, DC1: 5}]
`
	sc, err := scenario.Parse(filepath.Join(designsDir, "..", "s.yaml"), []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	vs, err := design.Expand(sc)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range vs {
		names = append(names, v.Name)
	}
	want := []string{
		"seed000[sessions.buckets=1]", "seed000[sessions.buckets=10]", "seed000[sessions.buckets=100]", "seed000[sessions.buckets=1000]",
		"seed001-mongo[chunk_size_mb=32,orders.shard_key={user_id: hashed, created_at: 1},catalog.read_preference=primary]",
		"seed001-mongo[chunk_size_mb=32,orders.shard_key={user_id: hashed, created_at: 1},catalog.read_preference=secondary]",
		"seed001-mongo[chunk_size_mb=32,orders.shard_key={created_at: 1},catalog.read_preference=primary]",
		"seed001-mongo[chunk_size_mb=32,orders.shard_key={created_at: 1},catalog.read_preference=secondary]",
		"s2[replication={class: NetworkTopologyStrategy, DC1: 3, DC2: 3}]",
		"s2[replication={class: NetworkTopologyStrategy, DC1: 5}]",
	}
	if strings.Join(names, "\n") != strings.Join(want, "\n") {
		t.Fatalf("variants:\n%s\nwant:\n%s", strings.Join(names, "\n"), strings.Join(want, "\n"))
	}
	if got := vs[6].Design.StaticSteps("orders.place")[0].KeyFields; got != 1 {
		t.Errorf("{created_at: 1}: an insert supplies the one key field, got %d", got)
	}
	if vs[3].Params["sessions.buckets"] != "1000" {
		t.Errorf("params: %v", vs[3].Params)
	}

	bad := strings.Replace(text, "sessions.buckets: [1, 10, 100, 1000]", "sessions.buckets: [1, 0]\n      session.buckets: [2]", 1)
	sc, err = scenario.Parse(filepath.Join(designsDir, "..", "s.yaml"), []byte(bad))
	if err != nil {
		t.Fatal(err)
	}
	_, err = design.Expand(sc)
	if err == nil {
		t.Fatal("expected errors")
	}
	for _, w := range []string{
		"bucket count must be at least 1, got 0 (${sessions.buckets} = 0, set at ",
		"s.yaml:7:",
		`s.yaml:8:25: session.buckets: design seed000.yaml has no parameter "session.buckets"`,
	} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("missing %q in\n%v", w, err)
		}
	}
}
