package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardbench/shardbench/internal/results"
)

// The simulated cluster is the default backend.
func TestRunDefaultsToSim(t *testing.T) {
	io, _, _ := testIO()
	var got *RunOptions
	cmd := newRunCmd(io, func(o *RunOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"s.yaml"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Backend != "sim" {
		t.Errorf("default backend %q, want sim", got.Backend)
	}
}

// smoke.yaml on the simulator writes what a real run writes, marked simulated, plus the
// hot-partition analysis and the simulated servers' view, and its report renders.
func TestRunSmokeOnSim(t *testing.T) {
	io, _, stderr := testIO()
	out := filepath.Join(t.TempDir(), "res")
	if err := runRun(context.Background(), &RunOptions{IO: io, ScenarioPath: "../../scenarios/smoke.yaml", Backend: "sim", Out: out, Quiet: true}); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	sum, err := results.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Complete || !sum.Backend.Simulated || sum.Backend.Name != "sim" || len(sum.Variants) != 6 {
		t.Fatalf("summary: complete=%v backend=%+v variants=%d", sum.Complete, sum.Backend, len(sum.Variants))
	}
	for _, v := range sum.Variants {
		// Every operation is offered; those the design does not serve are counted apart.
		c := v.Coverage
		if c.Offered != 1000 || v.Totals.Scheduled+v.Totals.Unserved != 1000 || v.Totals.Completed != v.Totals.Scheduled || len(v.Nodes) == 0 {
			t.Errorf("%s: offered %d scheduled %d unserved %d completed %d nodes %d", v.Name, c.Offered, v.Totals.Scheduled, v.Totals.Unserved, v.Totals.Completed, len(v.Nodes))
		}
		if c.Ops != 25 || c.ServedOps == c.Ops || v.Totals.Unserved == 0 {
			t.Errorf("%s: coverage %+v: every seed design leaves some operations to another store", v.Name, c)
		}
		for class, n := range v.Totals.Errors {
			t.Errorf("%s: %d %s errors on an idle simulated cluster", v.Name, n, class)
		}
	}
	hs, err := results.ReadHotspots(out)
	if err != nil || hs == nil || len(hs.Variants) != 6 {
		t.Fatalf("hotspots.json: %v, %+v", err, hs)
	}
	srv, err := results.ReadServer(out)
	if err != nil || srv == nil || len(srv.Variants) != 6 || len(srv.Variants[0].Series) == 0 {
		t.Fatalf("server.json: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, want := range []string{"simulated run report", "Simulated.", "orders_by_period"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
