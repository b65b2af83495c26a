package cassandra

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/workloads"
)

// loadScenario is a small catalog and session population read by point reads, on seed
// 004's Cassandra tables (products by id, sessions by id), loaded at half scale.
func loadScenario(t *testing.T) (*design.Prepared, *scenario.Scenario) {
	t.Helper()
	abs, _ := filepath.Abs(filepath.Join(repo, "scenarios/designs/seed004.yaml"))
	text := fmt.Sprintf(`name: load-step
seed: 11
load:
  arrival: uniform
  timeout: 30s
  phases: [{type: constant, rate: 200, duration: 10s}]
population:
  users: 3000
  sessions: 6000
  carts: 500
  products: 2000
  bots: {count: 2, share: 0.05}
  extra: {catalog.attributes_bytes: 512}
mix:
  catalog.product_read: 1
  sessions.read: 1
backends:
  cassandra:
    keyspace: sbtest_load
    replication: {class: NetworkTopologyStrategy, dc1: 3}
    load: {scale: 0.5, batch: 128}
designs:
  - design: %s
`, abs)
	p := filepath.Join(t.TempDir(), "load.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	prep, err := design.Prepare(sc)
	if err != nil {
		t.Fatal(err)
	}
	return prep, sc
}

// The load step writes the population before the run into the tables the scenario's
// operations reach: at load.scale 0.5 the most popular half of each category's products
// and the first half of the sessions. Every point read
// of a loaded product or session then finds its row, every read of one left out finds
// none — counted exactly, per step, from the rows the reads returned — and the load
// reports its own time and throughput. A run with --skip-load on the same keyspace finds
// the load complete.
func TestLoadStepPointReadsFindRows(t *testing.T) {
	hosts := clusterHosts(t)
	prep, sc := loadScenario(t)
	b := openVariant(t, prep, sc, 0, hosts)
	m := prep.Model
	r := b.Loaded()
	if r == nil || r.Rows == 0 || r.Took <= 0 || r.RowsPerSecond() <= 0 {
		t.Fatalf("load result %+v", r)
	}
	notes := strings.Join(b.Notes(), "\n")
	if !strings.Contains(notes, "load: ") || !strings.Contains(notes, "rows/s") {
		t.Fatalf("no load note with its throughput:\n%s", notes)
	}
	products := int64(0)
	for _, c := range m.Categories {
		products += int64(math.Ceil(0.5 * float64(c.Count)))
	}
	sessions := int64(math.Ceil(0.5 * float64(m.Sessions)))
	rows := map[string]int64{}
	for _, tl := range r.Tables {
		rows[tl.Target] = tl.Rows
	}
	// The tables the scenario's operations reach (products_by_category serves listings,
	// which this mix has not).
	if len(rows) != 2 || rows["products"] != products || rows["user_sessions"] != sessions {
		t.Fatalf("rows loaded %v, want %d products and %d sessions", rows, products, sessions)
	}
	t.Logf("%s", r)

	// Which reads must find their row.
	loaded := func(op *workloads.Op) bool {
		if m.Ops[op.Type].Name == "sessions.read" {
			return op.Session < sessions
		}
		c := m.Categories[op.Category]
		return op.Product-c.First < int64(math.Ceil(0.5*float64(c.Count)))
	}
	want := map[string][2]int64{} // op -> reads, found
	counts, examples := drive(t, b, prep, sc, 1500, func(op *workloads.Op) bool {
		w := want[m.Ops[op.Type].Name]
		w[0]++
		if loaded(op) {
			w[1]++
		}
		want[m.Ops[op.Type].Name] = w
		return true
	})
	if len(counts) != 1 || counts[0] == 0 {
		t.Fatalf("outcomes %v: %v", counts, examples)
	}
	got := map[string][2]int64{}
	for _, s := range b.ReadRows() {
		got[s.Op] = [2]int64{s.Reads, s.Found}
		if s.Found > 0 && s.Rows < s.Found {
			t.Errorf("%s: %d reads found rows but %d rows returned", s.Op, s.Found, s.Rows)
		}
	}
	for op, w := range want {
		if got[op] != w {
			t.Errorf("%s: %d reads, %d found rows; want %d reads, %d finding their row", op, got[op][0], got[op][1], w[0], w[1])
		}
		if w[1] == 0 || w[1] == w[0] {
			t.Errorf("%s: the test needs reads of loaded and of left-out records (%v)", op, w)
		}
	}
	t.Logf("reads per step: %+v", b.ReadRows())

	// The same keyspace, reused.
	cfg := backend.Config{Scenario: sc, Model: prep.Model, Variant: prep.Variants[0], Compiled: prep.Compiled[0],
		Target: targetOf(hosts), SkipLoad: true, Options: sc.Backends["cassandra"]}
	again, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if n := strings.Join(again.Notes(), "\n"); !strings.Contains(n, "--skip-load: the database holds this scenario's population at scale 0.5") || again.Loaded() != nil {
		t.Errorf("--skip-load notes:\n%s", n)
	}
}
