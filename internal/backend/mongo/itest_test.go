package mongo_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	mongodrv "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/backend/mongo"
	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/itest"
	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/schedule"
	"github.com/shardbench/shardbench/workloads"
)

const repo = "../../.."

func mongoURI(t *testing.T) string {
	return itest.Env(t, "SHARDBENCH_MONGODB_URI", "FerretDB (testenv/ferretdb/start.sh)")
}

// mongoDesigns lists every shipped design file with a MongoDB part.
func mongoDesigns(t *testing.T) []string {
	return itest.Designs(t, repo, func(d *design.Design) bool { return d.MongoDB != nil }, 8)
}

// smokeWith is scenarios/smoke.yaml driving one design.
func smokeWith(t *testing.T, designPath string) *design.Prepared {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, "scenarios/smoke.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	body, _, _ := strings.Cut(string(b), "\ndesigns:")
	abs, _ := filepath.Abs(designPath)
	p := filepath.Join(t.TempDir(), "smoke.yaml")
	// Own database prefix: other test packages use the same designs on the same server
	// at the same time.
	body += "\nbackends:\n  mongo: {database: sbtest_backend, load: {scale: 0.2}}\n"
	if err := os.WriteFile(p, []byte(body+"\ndesigns:\n  - design: "+abs+"\n"), 0o644); err != nil {
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
	scenarios[prep] = sc
	return prep
}

var scenarios = map[*design.Prepared]*scenario.Scenario{}

// opOf returns the first operation named name in the scenario's own stream.
func opOf(t *testing.T, prep *design.Prepared, name string) *workloads.Op {
	t.Helper()
	want := prep.Model.OpIndex(name)
	st := prep.Model.NewStream(schedule.New(scenarios[prep]))
	var op workloads.Op
	for st.Next(&op) {
		if int(op.Type) == want {
			return &op
		}
	}
	t.Fatalf("no %s in the stream", name)
	return nil
}

func configFor(t *testing.T, prep *design.Prepared, sc *scenario.Scenario, uri string) backend.Config {
	var log strings.Builder
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(log.String())
		}
	})
	return backend.Config{Scenario: sc, Model: prep.Model, Variant: prep.Variants[0], Compiled: prep.Compiled[0], Target: uri, Recreate: true, Log: &log, Options: sc.Backends["mongo"]}
}

// Every MongoDB design's collections and indexes are created on FerretDB; what it cannot
// do (sharding, hashed and TTL indexes, validators) is a note, never a failure.
func TestSetupOfEveryMongoDesign(t *testing.T) {
	uri := mongoURI(t)
	for _, f := range mongoDesigns(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			prep, sc := smoke(t, f)
			b, err := mongo.Open(context.Background(), configFor(t, prep, sc, uri))
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if b.Deployment().Kind != mongo.KindFerretDB {
				t.Fatalf("deployment %+v, want ferretdb", b.Deployment())
			}
			notes := strings.Join(b.Notes(), "\n")
			mg := prep.Compiled[0].Design.MongoDB
			names := listCollections(t, uri, b.Database())
			for i := range mg.Collections {
				c := mg.Collections[i]
				if !names[c.Key] {
					t.Errorf("collection %s not created (have %v)", c.Key, names)
				}
				if len(c.Value.ShardKey) > 0 && !strings.Contains(notes, "not a mongos (ferretdb): shard key {") ||
					len(c.Value.ShardKey) > 0 && !strings.Contains(notes, " of "+c.Key+" not applied; placement is computed client-side") {
					t.Errorf("no non-mongos note for %s:\n%s", c.Key, notes)
				}
				if !c.Value.Validator.IsZero() && !strings.Contains(notes, "validator of "+c.Key+" not applied") {
					t.Errorf("validator of %s neither applied nor reported:\n%s", c.Key, notes)
				}
				idx := listIndexes(t, uri, b.Database(), c.Key)
				for _, ix := range c.Value.Indexes {
					if ix.Name != "" && !idx[ix.Name] {
						t.Errorf("index %s of %s missing (have %v)", ix.Name, c.Key, idx)
					}
				}
			}
			if info := b.Describe(); info.Details["deployment"] != "ferretdb" || strings.Contains(info.Target, "@") {
				t.Errorf("describe: %+v", info)
			}
		})
	}
}

func smoke(t *testing.T, f string) (*design.Prepared, *scenario.Scenario) {
	prep := smokeWith(t, f)
	return prep, scenarios[prep]
}

func listCollections(t *testing.T, uri, db string) map[string]bool {
	t.Helper()
	c := client(t, uri)
	names, err := c.Database(db).ListCollectionNames(context.Background(), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, n := range names {
		out[n] = true
	}
	return out
}

func listIndexes(t *testing.T, uri, db, coll string) map[string]bool {
	t.Helper()
	c := client(t, uri)
	specs, err := c.Database(db).Collection(coll).Indexes().ListSpecifications(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, s := range specs {
		out[s.Name] = true
	}
	return out
}

// Read preference and write concern reach the wire as the design says. FerretDB is a
// standalone to the driver, and drivers never send $readPreference to a standalone
// (server selection spec), so the reads go through a relay that adds msg: "isdbgrid" to
// hello replies: the driver then treats FerretDB as a mongos and sends $readPreference
// for non-primary reads, as it does to a real mongos.
func TestReadPreferenceAndWriteConcernOnTheWire(t *testing.T) {
	uri := mongoURI(t)
	for _, via := range []string{"direct", "as mongos"} {
		t.Run(via, func(t *testing.T) {
			target := uri
			if via == "as mongos" {
				target = "mongodb://" + startMongosRelay(t, hostOf(t, uri)) + "/"
			}
			prep, sc := smoke(t, filepath.Join(repo, "scenarios/designs/seed001-mongo.yaml"))
			var mu sync.Mutex
			var started []*event.CommandStartedEvent
			b, err := mongo.Open(context.Background(), configFor(t, prep, sc, target), mongo.WithCommandStarted(func(e *event.CommandStartedEvent) {
				mu.Lock()
				started = append(started, e)
				mu.Unlock()
			}))
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if via == "as mongos" {
				if b.Deployment().Kind != mongo.KindMongos {
					t.Fatalf("relay not seen as mongos: %+v", b.Deployment())
				}
				if notes := strings.Join(b.Notes(), "\n"); !strings.Contains(notes, "enableSharding not supported by this mongos") {
					t.Errorf("a mongos refusing sharding must be a note:\n%s", notes)
				}
			}
			run := func(name string) {
				if out := b.Execute(context.Background(), opOf(t, prep, name)); out.Class != metrics.OK {
					t.Fatalf("%s: %v %v", name, out.Class, out.Err)
				}
			}
			mu.Lock()
			started = nil
			mu.Unlock()
			run("catalog.category_listing") // secondary (the design's catalog.read_preference)
			run("catalog.product_read")     // primary
			run("orders.place")             // {w: majority}
			mu.Lock()
			defer mu.Unlock()
			var sawSecondary, sawFind, sawWC bool
			for _, e := range started {
				rp, hasRP := e.Command.Lookup("$readPreference").DocumentOK()
				switch e.CommandName {
				case "find":
					sawFind = true
					coll, _ := e.Command.Lookup("find").StringValueOK()
					if coll == "products" && hasRP {
						mode, _ := rp.Lookup("mode").StringValueOK()
						if mode == "secondary" {
							sawSecondary = true
						}
					}
					if via == "direct" && hasRP {
						t.Errorf("a standalone must not get $readPreference (server selection spec): %s", e.Command)
					}
				case "insert":
					wc, ok := e.Command.Lookup("writeConcern").DocumentOK()
					if w, _ := wc.Lookup("w").StringValueOK(); ok && w == "majority" {
						sawWC = true
					}
					if hasRP {
						t.Errorf("writes carry no read preference: %s", e.Command)
					}
				}
			}
			if !sawFind || !sawWC {
				t.Errorf("find seen %v, insert with writeConcern {w: majority} seen %v", sawFind, sawWC)
			}
			if via == "as mongos" && !sawSecondary {
				t.Errorf("no find on products with $readPreference {mode: secondary}")
			}
			// The server view: on this "mongos" the cluster-only commands fail, and say so.
			dir, err := results.Create(filepath.Join(t.TempDir(), "res"))
			if err != nil {
				t.Fatal(err)
			}
			mu.Unlock()
			v := results.SummaryVariant{Name: "v"}
			if err := b.Report(context.Background(), &v, dir); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			srv, err := results.ReadServer(dir.Path)
			if err != nil || srv.Variant("v") == nil {
				t.Fatalf("server.json: %v", err)
			}
			sv := srv.Variant("v")
			all := strings.Join(sv.Notes, "\n")
			if len(v.Nodes) != 1 || v.Nodes[0].Ops < 3 {
				t.Errorf("per-server attribution: %+v", v.Nodes)
			}
			if via == "as mongos" && (!strings.Contains(all, "balancerStatus: ") || !strings.Contains(all, "$shardedDataDistribution")) {
				t.Errorf("mongos-only figures must be reported as unavailable:\n%s", all)
			}
			if len(sv.Tables) < 3 {
				t.Errorf("server view tables: %+v", sv.Tables)
			}
		})
	}
}

func client(t *testing.T, uri string) *mongodrv.Client {
	t.Helper()
	c, err := mongodrv.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Disconnect(context.Background()) })
	return c
}

// The load step writes the population before the run into the collections the
// scenario's operations reach: at load.scale 0.5 the most popular half of each category's
// products (and their stock per zone: five inventory documents a product) and the first
// half of the users' historic orders. Every point read of a
// loaded product or order then finds its document and every read of one left out finds
// none, counted exactly per step from the documents the reads returned; the load reports
// its time and throughput; FerretDB is said plainly not to be a mongos; a run with
// --skip-load on the same database finds the load complete.
func TestLoadStepPointReadsFindDocuments(t *testing.T) {
	uri := mongoURI(t)
	abs, _ := filepath.Abs(filepath.Join(repo, "scenarios/designs/seed001-mongo.yaml"))
	text := `name: load-step
seed: 12
load:
  arrival: uniform
  timeout: 30s
  phases: [{type: constant, rate: 200, duration: 10s}]
population:
  users: 1000
  sessions: 2000
  carts: 300
  products: 2000
  orders_per_user: 3
  extra: {catalog.attributes_bytes: 512}
mix:
  catalog.product_read: 1
  orders.read: 1
  catalog.stock_decrement: 0.2
backends:
  mongo: {database: sbtest_load, load: {scale: 0.5, batch: 200}}
designs:
  - design: ` + abs + "\n"
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
	m := prep.Model
	b, err := mongo.Open(context.Background(), configFor(t, prep, sc, uri))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	r := b.Loaded()
	if r == nil || r.Rows == 0 || r.RowsPerSecond() <= 0 {
		t.Fatalf("load result %+v", r)
	}
	notes := strings.Join(b.Notes(), "\n")
	if !strings.Contains(notes, "rows/s") || !strings.Contains(notes, "is not a mongos: its collections are not sharded, so there are no chunks") {
		t.Fatalf("notes:\n%s", notes)
	}
	var products int64
	for _, c := range m.Categories {
		products += int64(math.Ceil(0.5 * float64(c.Count)))
	}
	orders := int64(math.Ceil(0.5 * float64(m.Users*m.OrderSlots)))
	var historic int64
	for o := int64(0); o < orders; o++ {
		if u := m.OrderUser(o); o-u*m.OrderSlots < m.HistoricOrders(u) {
			historic++
		}
	}
	db := client(t, uri).Database(b.Database())
	count := func(coll string) int64 {
		n, err := db.Collection(coll).CountDocuments(context.Background(), bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if got := count("products"); got != products {
		t.Errorf("%d products, want %d", got, products)
	}
	if got := count("inventory"); got != products*int64(len(m.Zones)) {
		t.Errorf("%d inventory documents, want %d (a product per zone)", got, products*int64(len(m.Zones)))
	}
	if got := count("orders"); got != historic {
		t.Errorf("%d orders, want %d", got, historic)
	}
	t.Logf("%s", r)

	want := map[string][2]int64{}
	st := m.NewStream(schedule.New(sc))
	var op workloads.Op
	for i := 0; i < 1000 && st.Next(&op); i++ {
		name := m.Ops[op.Type].Name
		found := op.Order >= 0 && op.Order < orders
		if name == "catalog.product_read" {
			c := m.Categories[op.Category]
			found = op.Product-c.First < int64(math.Ceil(0.5*float64(c.Count)))
		}
		w := want[name]
		w[0]++
		if found {
			w[1]++
		}
		want[name] = w
		if out := b.Execute(context.Background(), &op); out.Class != metrics.OK {
			t.Fatalf("%s: %v %v", name, out.Class, out.Err)
		}
	}
	got := map[string][2]int64{}
	for _, s := range b.ReadRows() {
		got[s.Op] = [2]int64{s.Reads, s.Found}
	}
	for name, w := range want {
		if name == "catalog.stock_decrement" {
			continue // a write
		}
		if got[name] != w {
			t.Errorf("%s: %d reads, %d found documents; want %d reads, %d finding theirs", name, got[name][0], got[name][1], w[0], w[1])
		}
		if w[1] == 0 || w[1] == w[0] {
			t.Errorf("%s: the test needs reads of loaded and of left-out records (%v)", name, w)
		}
	}
	t.Logf("reads per step: %+v", b.ReadRows())

	cfg := configFor(t, prep, sc, uri)
	cfg.Recreate, cfg.SkipLoad = false, true
	again, err := mongo.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if n := strings.Join(again.Notes(), "\n"); !strings.Contains(n, "--skip-load: the database holds this scenario's population at scale 0.5") || again.Loaded() != nil {
		t.Errorf("--skip-load notes:\n%s", n)
	}
}
