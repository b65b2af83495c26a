package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/itest"
	"github.com/shardbench/shardbench/internal/results"
)

// mongoSmoke writes scenarios/smoke.yaml with its designs replaced by the given ones.
func mongoSmoke(t *testing.T, designs []string, extra string) string {
	t.Helper()
	b, err := os.ReadFile("../../scenarios/smoke.yaml")
	if err != nil {
		t.Fatal(err)
	}
	body, _, _ := strings.Cut(string(b), "\ndesigns:")
	body += extra + "\ndesigns:\n"
	for _, d := range designs {
		abs, _ := filepath.Abs(d)
		body += "  - design: " + abs + "\n"
	}
	return writeFile(t, "smoke-mongo.yaml", body)
}

func mongoDesignFiles(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob("../../scenarios/designs/*.yaml")
	var out []string
	for _, f := range files {
		d, err := design.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		if d.MongoDB != nil {
			out = append(out, f)
		}
	}
	if len(out) < 8 {
		t.Fatalf("MongoDB designs: %v", out)
	}
	return out
}

// smoke.yaml runs end to end on every MongoDB design against FerretDB: no unexpected
// errors, a complete results directory with the server's view, and the non-mongos notes.
func TestRunSmokeOnEveryMongoDesign(t *testing.T) {
	uri := itest.Env(t, "SHARDBENCH_MONGODB_URI", "FerretDB (testenv/ferretdb/start.sh)")
	path := mongoSmoke(t, mongoDesignFiles(t), "\nbackends:\n  mongo: {database: sbtest_cli, load: {scale: 0.2}}\n")
	// The smoke checks that every statement works end to end, not how fast: FerretDB
	// answers a range read (orders.list_by_period, a category listing) by fetching the
	// collection from PostgreSQL and filtering it itself, which takes seconds when the
	// machine's two cores are shared with three Cassandra nodes; the operation timeout
	// is raised so that only a stuck server times out.
	b, err := os.ReadFile(path)
	if err != nil || !bytes.Contains(b, []byte("\n  timeout: 5s\n")) {
		t.Fatalf("smoke scenario without its 5s timeout: %v", err)
	}
	path = writeFile(t, "smoke-mongo.yaml", string(bytes.Replace(b, []byte("\n  timeout: 5s\n"), []byte("\n  timeout: 30s\n"), 1)))

	io, _, stderr := testIO()
	out := filepath.Join(t.TempDir(), "res")
	opts := &RunOptions{IO: io, ScenarioPath: path, Backend: "mongo", Target: uri, Out: out, Duration: 2 * time.Second, RateScale: 0.5, Recreate: true, NoReport: true}
	if err := runRun(context.Background(), opts); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	sum, err := results.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Complete || !strings.Contains(sum.Backend.Server, "FerretDB") || sum.Backend.Details["deployment"] != "ferretdb" {
		t.Fatalf("summary: complete=%v backend=%+v", sum.Complete, sum.Backend)
	}
	srv, err := results.ReadServer(out)
	if err != nil || srv == nil {
		t.Fatalf("server.json: %v", err)
	}
	for _, v := range sum.Variants {
		// seed004 serves only its carts on this backend (about a quarter of the stream).
		if v.Totals.Completed < 20 || v.Totals.Completed+v.Totals.Unserved < 50 {
			t.Errorf("%s: only %d operations completed, %d not served", v.Name, v.Totals.Completed, v.Totals.Unserved)
		}
		for cls, n := range v.Totals.Errors {
			// A timeout is the server being slow on a shared machine (PostgreSQL under
			// FerretDB shares two cores with three Cassandra nodes and the other test
			// packages), not a statement it refused: up to 2 or 5% are tolerated (logged);
			// any other error class fails.
			if cls == "timeout" && n <= max(2, v.Totals.Completed/20) {
				t.Logf("%s: %d timeouts of %d operations, e.g. %v", v.Name, n, v.Totals.Completed, v.ErrorExamples[cls])
				continue
			}
			t.Errorf("%s: %d %s errors, e.g. %v", v.Name, n, cls, v.ErrorExamples[cls])
		}
		// seed004 keeps sessions and views in Cassandra: the mongo backend does not serve
		// them, and says so as coverage, not as errors.
		if v.Name == "seed004" {
			st := v.Op("sessions.read")
			if st == nil || st.Served() || st.Unserved == 0 || !strings.Contains(st.UnservedReason, "runs on cassandra") || v.Coverage.Full() {
				t.Errorf("seed004 on mongo: sessions.read %+v, coverage %+v", st, v.Coverage)
			}
		}
		notes := strings.Join(v.Notes, "\n")
		if !strings.Contains(notes, "not a mongos (ferretdb): shard key {") || !strings.Contains(notes, "placement is computed client-side") {
			t.Errorf("%s: no non-mongos note:\n%s", v.Name, notes)
		}
		if len(v.Nodes) != 1 || v.Nodes[0].Ops == 0 {
			t.Errorf("%s: per-server attribution %+v", v.Name, v.Nodes)
		}
		sv := srv.Variant(v.Name)
		if sv == nil || len(sv.Tables) < 2 {
			t.Errorf("%s: server view %+v", v.Name, sv)
		}
	}
	if strings.Contains(stderr.String(), "not a mongos (ferretdb): shard key") == false {
		t.Errorf("the log must say the shard keys were not applied:\n%s", stderr)
	}
}

// A server stopped mid-run: the operations after it fail as connection or timeout errors,
// counted, and the run completes with an intact results directory. The test stops its own
// FerretDB (the project's scripts with a private directory and port, on the shared
// PostgreSQL), so the shared server other tests use is never interrupted, whatever the
// test order.
func TestRunSurvivesMongoServerStoppedMidRun(t *testing.T) {
	itest.Env(t, "SHARDBENCH_MONGODB_URI", "FerretDB (testenv/ferretdb/start.sh)")
	scripts, _ := filepath.Abs("../../testenv/ferretdb")
	dir := t.TempDir()
	shared := os.Getenv("FERRETDB_DIR")
	if shared == "" {
		shared, _ = filepath.Abs("../../.build/ferretdb")
	}
	// Reuse the built binary instead of building another (the scripts accept a symlink).
	if _, err := os.Stat(filepath.Join(shared, "ferretdb")); err == nil {
		os.Symlink(filepath.Join(shared, "ferretdb"), filepath.Join(dir, "ferretdb"))
		if tags, err := os.ReadFile(filepath.Join(shared, "build.tags")); err == nil {
			os.WriteFile(filepath.Join(dir, "build.tags"), tags, 0o644)
		}
	}
	addr := freePort(t)
	env := append(os.Environ(), "FERRETDB_DIR="+dir, "FERRETDB_LISTEN="+addr, "FERRETDB_KEEP_PG=1")
	script := func(name string, extraEnv ...string) {
		cmd := exec.Command(filepath.Join(scripts, name))
		cmd.Env = append(env, extraEnv...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", name, err, out)
		}
	}
	script("start.sh")
	t.Cleanup(func() { script("stop.sh") })

	// A short server selection timeout: without a server every operation waits that long
	// (the driver's rule), and the test wants many of them to fail within the run.
	path := mongoSmoke(t, []string{"../../scenarios/designs/seed001-mongo.yaml"}, "\nbackends:\n  mongo: {server_selection_timeout: 300ms, load: {scale: 0}}\n")
	io, _, stderr := testIO()
	out := filepath.Join(t.TempDir(), "res")
	opts := &RunOptions{IO: io, ScenarioPath: path, Backend: "mongo", Target: "mongodb://" + addr + "/", Out: out, Duration: 8 * time.Second, Recreate: true, NoReport: true}
	stopped := make(chan struct{})
	start := time.Now()
	var stopTook time.Duration
	go func() {
		time.Sleep(2 * time.Second) // setup takes well under a second (no population loaded)
		t0 := time.Now()
		// FerretDB serves its open connections for seconds after SIGTERM; stop.sh's
		// SIGKILL after 1 s makes the stop happen mid-run, as a crash would.
		script("stop.sh", "FERRETDB_STOP_TIMEOUT=1")
		stopTook = time.Since(t0)
		close(stopped)
	}()
	err := runRun(context.Background(), opts)
	<-stopped
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	if took := time.Since(start); took > 40*time.Second {
		t.Errorf("run took %s for an 8 s schedule: it hung on the dead server", took)
	}
	sum, err := results.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	v := sum.Variants[0]
	failed := v.Totals.Errors["connection"] + v.Totals.Errors["timeout"]
	if !sum.Complete || v.Totals.Scheduled != v.Totals.Completed+v.Totals.Dropped+v.Totals.Abandoned {
		t.Errorf("incomplete accounting: complete=%v %+v", sum.Complete, v.Totals)
	}
	if failed < 100 || v.Totals.OK < 100 || v.Totals.Abandoned > 0 || v.Totals.Errors["connection"] < 50 {
		t.Errorf("want ok operations before the stop and connection/timeout errors after it: ok=%d errors=%v abandoned=%d", v.Totals.OK, v.Totals.Errors, v.Totals.Abandoned)
	}
	for cls := range v.Totals.Errors {
		if cls != "connection" && cls != "timeout" {
			t.Errorf("unexpected class %s: %v", cls, v.ErrorExamples[cls])
		}
	}
	for _, f := range []string{"summary.json", "timeseries.jsonl", "server.json", "histograms/seed001-mongo/orders.place.hlog"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	t.Logf("stop.sh took %s; ok %d, errors %v, response p99 %.1f ms", stopTook, v.Totals.OK, v.Totals.Errors, v.Totals.Response.P99)
	_ = stopTook
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return fmt.Sprint(ln.Addr().String())
}
