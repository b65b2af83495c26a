package design_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/workloads"
)

// loaders compiles a shipped design against the all-operations model and returns its
// loaders by target.
func loaders(t *testing.T, file string) (map[string]*design.Loader, *workloads.Model) {
	t.Helper()
	m := model(t, allOpsScenario(t, 5))
	p, err := design.Compile(mustLoad(t, filepath.Join(designsDir, file)), m)
	if err != nil {
		t.Fatal(err)
	}
	ls, err := p.Loaders()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*design.Loader{}
	for _, l := range ls {
		out[l.Target] = l
	}
	return out, m
}

// rowsOf writes the first n records of every set through l and returns the rows: their
// keys, bytes and statements.
type loadedRow struct {
	key   string
	bytes int32
	op    workloads.Op
}

func rowsOf(t *testing.T, l *design.Loader, n int64) (rows []loadedRow, records int) {
	t.Helper()
	var op workloads.Op
	for i := range l.Sets {
		for c := int64(0); c < min(n, l.Count(i)); c++ {
			if !l.Sets[i].Record(c, &op) {
				continue
			}
			records++
			l.Rows(&op, func(a *design.Access, row *workloads.Op) {
				if a.Bytes <= 0 {
					t.Fatalf("%s: row of %d bytes", l.Target, a.Bytes)
				}
				if l.Database == design.Cassandra && len(a.Bind(row, nil)) == 0 {
					t.Fatalf("%s: no bind values", l.Target)
				}
				if l.Database == design.MongoDB && a.Mongo(row) == nil {
					t.Fatalf("%s: no command", l.Target)
				}
				rows = append(rows, loadedRow{key: a.KeyString(row), bytes: a.Bytes, op: *row})
			})
		}
	}
	return rows, records
}

// Every shipped design's tables take whole records of their entity: each row has a key,
// a size and a statement.
func TestEveryDesignLoadsItsPopulation(t *testing.T) {
	for _, f := range designFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			ls, _ := loaders(t, filepath.Base(f))
			if len(ls) == 0 {
				t.Fatal("no table holds pre-sale records")
			}
			for _, l := range ls {
				if !strings.Contains(l.Step.Statement, "INSERT") && l.Step.Statement != "insertOne" {
					t.Errorf("%s: the load step is %s, want an insert", l.Target, l.Step.Statement)
				}
				if rows, _ := rowsOf(t, l, 50); len(rows) == 0 {
					t.Errorf("%s: no rows from 50 records of each set", l.Target)
				}
			}
		})
	}
}

// Seed 001's inventory holds a document per product and zone (_id = stock_key); its
// products collection one per product, with the stock of every zone inside.
func TestInventoryExpandsPerZone(t *testing.T) {
	ls, m := loaders(t, "seed001-mongo.yaml")
	inv, prod := ls["inventory"], ls["products"]
	if inv == nil || prod == nil {
		t.Fatalf("loaders %v", ls)
	}
	if strings.Join(inv.Expands, ",") != "zone" || len(prod.Expands) != 0 {
		t.Fatalf("inventory expands along %v, products along %v", inv.Expands, prod.Expands)
	}
	rows, records := rowsOf(t, inv, 10)
	if len(rows) != records*len(m.Zones) {
		t.Fatalf("%d inventory documents for %d products and %d zones", len(rows), records, len(m.Zones))
	}
	seen := map[string]bool{}
	for _, r := range rows {
		if seen[r.key] {
			t.Fatalf("two inventory documents with shard key %s", r.key)
		}
		seen[r.key] = true
	}
	if rows, records := rowsOf(t, prod, 10); len(rows) != records {
		t.Fatalf("%d product documents for %d products", len(rows), records)
	}
	// A cache holds each category's most popular products only.
	hot := ls["hot_products"]
	if hot == nil || hot.Top != 1000 {
		t.Fatalf("hot_products: %+v", hot)
	}
}

// A record lacking a key field is not written to that table, as the operations that
// create records skip it: guests' sessions get no sessions_by_user row, users' carts no
// row in seed 000's session-keyed carts; seed 000's carts hold a row per item.
func TestLoadSkipsRecordsWithoutTheirKey(t *testing.T) {
	ls, m := loaders(t, "seed000.yaml")
	all, _ := rowsOf(t, ls["user_sessions"], 2000)
	byUser, _ := rowsOf(t, ls["sessions_by_user"], 2000)
	guests := 0
	for _, r := range all {
		if r.op.User < 0 {
			guests++
		}
	}
	if guests == 0 || len(byUser) != len(all)-guests {
		t.Fatalf("%d sessions (%d guests), %d sessions_by_user rows", len(all), guests, len(byUser))
	}
	carts := ls["carts"]
	if strings.Join(carts.Expands, ",") != "item" {
		t.Fatalf("seed 000's carts expand along %v, want item", carts.Expands)
	}
	rows, _ := rowsOf(t, carts, 5000)
	items := map[int64]int{}
	for _, r := range rows {
		if r.op.User >= 0 {
			t.Fatalf("a user's cart in seed 000's session-keyed carts: %+v", r.op)
		}
		items[r.op.Session]++
	}
	for s, n := range items {
		slot := m.CartSlot(s*2 + 1)
		if want := int(m.InitialCartItems(slot)); n != want {
			t.Fatalf("guest session %d: %d rows, its cart holds %d items", s, n, want)
		}
	}
	// Seed 001's abandoned carts start empty; its popular cache with 100 per category.
	c, _ := loaders(t, "seed001-cassandra.yaml")
	if c["abandoned_carts"] != nil {
		t.Error("abandoned_carts is loaded with the active carts")
	}
	if p := c["popular_products_cache"]; p == nil || p.Top != 100 {
		t.Errorf("popular_products_cache: %+v", p)
	}
}

func TestPopulationSpecErrors(t *testing.T) {
	base := `name: p
cassandra:
  keyspace: k
  replication: {class: SimpleStrategy, replication_factor: 1}
  tables:
    s:
      entity: sessions
      columns: {session_id: uuid}
      partition_key: [session_id]
      population: %s
operations:
  sessions.read: [{read: s}]
`
	for _, c := range []struct{ value, want string }{
		{"some", `p.yaml:10:19: cassandra.tables.s.population: must be all, none or {top: N}, got "some"`},
		{"{top: 0}", "cassandra.tables.s.population: top must be at least 1"},
		{"{first: 3}", "population.first"},
	} {
		_, err := design.Parse("p.yaml", []byte(strings.Replace(base, "%s", c.value, 1)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("population: %s: error %v, want %q", c.value, err, c.want)
		}
	}
	for _, ok := range []string{"all", "none", "{top: 5}"} {
		if _, err := design.Parse("p.yaml", []byte(strings.Replace(base, "%s", ok, 1))); err != nil {
			t.Errorf("population: %s: %v", ok, err)
		}
	}
}
