package mongo_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	mongodrv "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.yaml.in/yaml/v3"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/backend/mongo"
	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/itest"
	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/schedule"
	"github.com/shardbench/shardbench/internal/yamlx"
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
	body += "\nbackends:\n  mongo: {database: sbtest_backend}\n"
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
	return backend.Config{Scenario: sc, Model: prep.Model, Variant: prep.Variants[0], Plan: prep.Plans[0], Target: uri, Recreate: true, Log: &log, Options: sc.Backends["mongo"]}
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
			mg := prep.Plans[0].Design.MongoDB
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
			v := results.Variant{Name: "v"}
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

// The load phase's upserts leave documents the measured run's reads then find.
func TestLoadPhaseFillsCollections(t *testing.T) {
	uri := mongoURI(t)
	prep, sc := smoke(t, filepath.Join(repo, "scenarios/designs/seed001-mongo.yaml"))
	cfg := configFor(t, prep, sc, uri)
	var n yaml.Node
	if err := yaml.Unmarshal([]byte("{database: sbtest_load, load: {ops: 800, concurrency: 8}}"), &n); err != nil {
		t.Fatal(err)
	}
	cfg.Options = yamlx.Raw{Node: n.Content[0], File: "test", Path: "backends.mongo"}
	b, err := mongo.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	notes := strings.Join(b.Notes(), "\n")
	if !strings.Contains(notes, "load phase: ") || !strings.Contains(notes, " writes of 800 operations") || !strings.Contains(notes, "(0 failed") {
		t.Fatalf("load note:\n%s", notes)
	}
	carts, err := client(t, uri).Database(b.Database()).Collection("carts").CountDocuments(context.Background(), bson.D{})
	if err != nil || carts == 0 {
		t.Fatalf("carts after the load phase: %d %v", carts, err)
	}
	orders, _ := client(t, uri).Database(b.Database()).Collection("orders").CountDocuments(context.Background(), bson.D{})
	if orders != 0 {
		t.Errorf("the load phase must not insert (the measured run inserts the same orders): %d orders", orders)
	}
	t.Logf("%d carts after loading", carts)
}
