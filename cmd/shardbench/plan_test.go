package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/shardbench/shardbench/internal/results"
)

// plan on the session-bucket claim: every variant is placed, hotspots.json says that one
// bucket puts every session of the table in one partition and 100 buckets spread them,
// the terminal table names the hottest partition with its token and replicas, and the
// report renders.
func TestPlanSessionBuckets(t *testing.T) {
	io, stdout, stderr := testIO()
	out := filepath.Join(t.TempDir(), "plan")
	err := runPlan(context.Background(), &PlanOptions{IO: io, ScenarioPath: "../../scenarios/claims/session-buckets.yaml", Out: out, Limit: 40000})
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
	err := runPlan(context.Background(), &PlanOptions{IO: io, ScenarioPath: nodesigns, Out: filepath.Join(t.TempDir(), "o"), Quiet: true})
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
