package design_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/engine"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/schedule"
	"github.com/shardbench/shardbench/workloads"
)

const twoVariantScenario = `name: two
seed: 11
load:
  arrival: poisson
  max_in_flight: 16
  phases:
    - {type: constant, rate: 500, duration: 4s}
population:
  users: 5000
  sessions: 10000
  carts: 2000
  products: 3000
mix:
  sessions.create: 3
  sessions.read: 3
  carts.add_item: 3
  carts.read: 2
  orders.place: 1
  orders.history_all: 1
designs:
  - {name: cassandra, design: designs/seed000.yaml}
  - {name: mongo, design: designs/seed001-mongo.yaml}
`

// One logical stream drives a Cassandra design and a MongoDB design as two variants of one
// run: both receive the identical operations, each mapped to its own tables/collections.
func TestOneStreamDrivesCassandraAndMongo(t *testing.T) {
	sc, err := scenario.Parse(filepath.Join(designsDir, "..", "two.yaml"), []byte(twoVariantScenario))
	if err != nil {
		t.Fatal(err)
	}
	variants, err := design.Expand(sc)
	if err != nil {
		t.Fatal(err)
	}
	m := model(t, sc)
	ops := make([]engine.OpInfo, len(m.Ops))
	for i, o := range m.Ops {
		ops[i] = engine.OpInfo{Name: o.Name, Kind: o.Kind.String()}
	}
	type seen struct {
		ops     []string
		targets map[string]map[string]bool // op -> "db:target"
	}
	got := make([]*seen, len(variants))
	var mu sync.Mutex
	var evs []engine.VariantBackend
	for i, v := range variants {
		plan, err := design.Compile(v.Design, m)
		if err != nil {
			t.Fatal(err)
		}
		got[i] = &seen{targets: map[string]map[string]bool{}}
		rec := got[i]
		evs = append(evs, engine.VariantBackend{Name: v.Name, Design: v.Design.Path, Database: v.Design.DatabaseName(),
			Backend: backend.Func(func(_ context.Context, op *workloads.Op) backend.Outcome {
				acc := plan.Accesses(op, nil)
				mu.Lock()
				defer mu.Unlock()
				name := m.Ops[op.Type].Name
				rec.ops = append(rec.ops, fmt.Sprintf("%d %s u%d s%d p%d o%d %d", op.Seq, name, op.User, op.Session, op.Product, op.Order, op.Time))
				if rec.targets[name] == nil {
					rec.targets[name] = map[string]bool{}
				}
				for _, a := range acc {
					rec.targets[name][a.Step.Database.String()+":"+a.Step.Target] = true
				}
				return backend.Outcome{}
			})})
	}
	synctest.Test(t, func(t *testing.T) {
		dir, err := results.Create(filepath.Join(t.TempDir(), "out"))
		if err != nil {
			t.Fatal(err)
		}
		defer dir.Close()
		sch := schedule.New(sc)
		sum, err := engine.Run(context.Background(), engine.Config{
			Scenario: sc, Schedule: sch, Ops: ops, Variants: evs, Dir: dir, SpinBelow: -1,
			NewSource: func() (engine.Source, error) { return m.NewStream(sch), nil },
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(sum.Variants) != 2 || sum.Variants[0].Totals.Completed != sum.Variants[1].Totals.Completed || sum.Variants[0].Totals.Completed < 1500 {
			t.Fatalf("one summary with both variants, same number of operations: %+v", sum.Variants)
		}
	})
	for _, r := range got {
		sort.Strings(r.ops)
	}
	if len(got[0].ops) != len(got[1].ops) {
		t.Fatalf("cassandra got %d ops, mongo %d", len(got[0].ops), len(got[1].ops))
	}
	for i := range got[0].ops {
		if got[0].ops[i] != got[1].ops[i] {
			t.Fatalf("streams differ at %d: %q vs %q", i, got[0].ops[i], got[1].ops[i])
		}
	}
	want := []struct {
		variant int
		op, db  string
		targets []string
	}{
		{0, "sessions.create", "cassandra", []string{"user_sessions", "sessions_by_user"}},
		{0, "orders.place", "cassandra", []string{"order_history", "orders_by_period"}},
		{0, "carts.add_item", "cassandra", []string{"carts"}},
		{1, "orders.place", "mongodb", []string{"orders"}},
		{1, "carts.add_item", "mongodb", []string{"carts"}},
		{1, "orders.history_all", "mongodb", []string{"orders"}},
	}
	for _, w := range want {
		for _, tg := range w.targets {
			if !got[w.variant].targets[w.op][w.db+":"+tg] {
				t.Errorf("%s: %s should reach %s:%s, got %v", variants[w.variant].Name, w.op, w.db, tg, got[w.variant].targets[w.op])
			}
		}
	}
	if len(got[1].targets["sessions.create"]) != 0 {
		t.Errorf("seed001-mongo does not serve sessions, got %v", got[1].targets["sessions.create"])
	}
}
