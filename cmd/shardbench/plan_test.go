package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/results"
)

// plan on the session-bucket claim: every variant is placed, hotspots.json says that one
// bucket puts every session of the table in one partition and 100 buckets spread them,
// the terminal table names the hottest partition with its token and replicas, and the
// report renders.
func TestPlanSessionBuckets(t *testing.T) {
	io, stdout, stderr := testIO()
	out := filepath.Join(t.TempDir(), "plan")
	err := runPlan(context.Background(), &PlanOptions{IO: io, ScenarioPath: "../../scenarios/claims/session-buckets.yaml", PlacementOptions: PlacementOptions{Out: out, Limit: 40000}})
	if err != nil {
		t.Fatalf("plan: %v\n%s", err, stderr)
	}
	hs, err := results.ReadHotspots(out)
	if err != nil || hs == nil {
		t.Fatalf("hotspots.json: %v", err)
	}
	if len(hs.Variants) != 6 {
		t.Fatalf("%d variants, want 6 (4 bucket counts + 2 designs)", len(hs.Variants))
	}
	share := map[string]float64{}
	for _, v := range hs.Variants {
		for _, tb := range v.Tables {
			if strings.HasSuffix(tb.Table, ".user_sessions") && len(tb.Top) > 0 {
				share[v.Variant] = tb.Top[0].Share
				// A bucketed table has exactly as many partitions as buckets.
				for _, n := range []int64{1, 10, 100, 1000} {
					if strings.HasSuffix(v.Variant, "buckets="+strconv.FormatInt(n, 10)+"]") && tb.Partitions != n {
						t.Errorf("%s: %d user_sessions partitions, want %d", v.Variant, tb.Partitions, n)
					}
				}
				if tb.Top[0].Token == "" || len(tb.Top[0].Replicas) != 3 {
					t.Errorf("%s: hottest partition without token or 3 replicas: %+v", v.Variant, tb.Top[0])
				}
			}
		}
	}
	var one, hundred float64 = -1, -1
	for name, s := range share {
		switch {
		case strings.HasSuffix(name, "buckets=1]"):
			one = s
		case strings.HasSuffix(name, "buckets=100]"):
			hundred = s
		}
	}
	if one < 0.99 {
		t.Errorf("1 bucket: hottest user_sessions partition has %.3f of the table's operations, want all (%v)", one, share)
	}
	// The hottest of 100 buckets holds the hottest session's own traffic plus its
	// bucket's even share; nowhere near all of it.
	if hundred <= 0 || hundred > 0.25 {
		t.Errorf("100 buckets: hottest partition share %.3f, want a small share (%v)", hundred, share)
	}
	for _, want := range []string{"user_sessions", "hottest partition", "token "} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("terminal output lacks %q:\n%s", want, stdout)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "report.html")); err != nil {
		t.Errorf("no report: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, results.ScenarioFile)); err != nil {
		t.Errorf("no scenario copy: %v", err)
	}
}

// A scenario without designs and a negative limit are usage errors (exit 2).
func TestPlanBadInput(t *testing.T) {
	io, _, _ := testIO()
	nodesigns := writeFile(t, "nodesigns.yaml", `name: x
load:
  phases:
    - {name: p, type: constant, rate: 10, duration: 1s}
mix:
  sessions.read: 1
`)
	err := runPlan(context.Background(), &PlanOptions{IO: io, ScenarioPath: nodesigns, PlacementOptions: PlacementOptions{Out: filepath.Join(t.TempDir(), "o"), Quiet: true}})
	if err == nil || exitCode(err) != 2 {
		t.Errorf("no designs: err %v exit %d, want a usage error", err, exitCode(err))
	}
	cmd := newPlanCmd(io, func(*PlanOptions) error { return nil })
	cmd.SetArgs([]string{"s.yaml", "--limit", "-1"})
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	if err := cmd.Execute(); err == nil || exitCode(err) != 2 {
		t.Errorf("--limit -1: err %v, want a usage error", err)
	}
}

// A run against a real-time backend (here null: no database, the same engine) gets the
// hot-partition analysis of exactly the operations it sent.
func TestRealRunGetsHotspotsOfWhatItSent(t *testing.T) {
	io, stdout, stderr := testIO()
	out := filepath.Join(t.TempDir(), "res")
	opts := &RunOptions{IO: io, ScenarioPath: "../../scenarios/smoke.yaml", Backend: "null", Out: out, Duration: 2 * time.Second, NoReport: true}
	if err := runRun(context.Background(), opts); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	sum, err := results.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	hs, err := results.ReadHotspots(out)
	if err != nil || hs == nil {
		t.Fatalf("no hotspots.json: %v", err)
	}
	if len(hs.Variants) != len(sum.Variants) {
		t.Fatalf("hotspots for %d of %d variants", len(hs.Variants), len(sum.Variants))
	}
	for _, v := range sum.Variants {
		hv := hs.Variant(v.Name)
		if hv == nil {
			t.Fatalf("%s: no hotspots", v.Name)
		}
		want := fmt.Sprintf("the %d operations this run sent", v.Totals.Scheduled)
		if !strings.Contains(strings.Join(hv.Notes, " "), want) {
			t.Errorf("%s: notes %q lack %q", v.Name, hv.Notes, want)
		}
		var ops int64
		placed := 0
		for _, tb := range hv.Tables {
			ops += tb.Ops
			// Unsharded collections and tables only scanned have no partitions to list.
			if len(tb.Top) == 0 {
				continue
			}
			placed++
			if hv.Database == "cassandra" && tb.Top[0].Token == "" {
				t.Errorf("%s %s: a top partition without its token: %+v", v.Name, tb.Table, tb.Top[0])
			}
		}
		if placed == 0 {
			t.Errorf("%s: no table lists its top partitions", v.Name)
		}
		if ops < v.Totals.Scheduled/2 {
			t.Errorf("%s: %d table accesses for %d operations", v.Name, ops, v.Totals.Scheduled)
		}
	}
	if !strings.Contains(stdout.String(), "hot spots:") {
		t.Errorf("the run summary shows no hot spots:\n%s", stdout)
	}
}
