package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/results"
)

// runSmall runs the small scenario on the delay backend into a new directory.
func runSmall(t *testing.T, noReport bool, extra func(*RunOptions)) (string, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	path := writeFile(t, "small.yaml", smallScenario)
	io, stdout, stderr := testIO()
	out := filepath.Join(t.TempDir(), "res")
	opts := &RunOptions{IO: io, ScenarioPath: path, Backend: "delay", Out: out, RateScale: 0.5, NoReport: noReport}
	if extra != nil {
		extra(opts)
	}
	if err := runRun(context.Background(), opts); err != nil && extra == nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	return out, stdout, stderr
}

func TestRunRendersTheReportUnlessNoReport(t *testing.T) {
	dir, stdout, stderr := runSmall(t, false, nil)
	html, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatalf("run did not render the report: %v\n%s", err, stderr)
	}
	if !strings.Contains(string(html), "sessions.read") || !strings.Contains(string(html), "No gates") {
		t.Errorf("report lacks the run's operations or the verdict section")
	}
	pngs, _ := filepath.Glob(filepath.Join(dir, "charts", "*.png"))
	if len(pngs) < 4 {
		t.Errorf("charts: %v", pngs)
	}
	if !strings.Contains(stderr.String(), "report: "+filepath.Join(dir, "report.html")) {
		t.Errorf("run must say where the report is:\n%s", stderr)
	}
	// The end-of-run summary: a table per variant with rates and percentiles.
	for _, want := range []string{"variant", "achieved/s", "p99.9", "default"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}

	dir2, _, _ := runSmall(t, true, nil)
	if _, err := os.Stat(filepath.Join(dir2, "report.html")); !os.IsNotExist(err) {
		t.Errorf("--no-report still rendered a report: %v", err)
	}
}

func TestInterruptedRunStillGetsAReport(t *testing.T) {
	sig := make(chan os.Signal, 1)
	go func() {
		time.Sleep(700 * time.Millisecond)
		sig <- syscall.SIGINT
	}()
	path := writeFile(t, "long.yaml", strings.Replace(smallScenario, "duration: 2s", "duration: 60s", 1))
	io, _, stderr := testIO()
	out := filepath.Join(t.TempDir(), "res")
	err := runRun(context.Background(), &RunOptions{IO: io, ScenarioPath: path, Backend: "delay", Out: out, signals: sig})
	if exitCode(err) != exitFailure {
		t.Fatalf("interrupted run: %v", err)
	}
	html, rerr := os.ReadFile(filepath.Join(out, "report.html"))
	if rerr != nil {
		t.Fatalf("no report for the interrupted run: %v\n%s", rerr, stderr)
	}
	if !strings.Contains(string(html), "Interrupted.") || !strings.Contains(string(html), "received SIGINT") {
		t.Errorf("the report must say the run was interrupted")
	}
}

func TestReportAndCompareCommands(t *testing.T) {
	a, _, _ := runSmall(t, true, nil)
	b, _, _ := runSmall(t, true, nil)
	io, stdout, stderr := testIO()
	out := filepath.Join(t.TempDir(), "rep")
	if code := Main([]string{"report", a, "--out", out}, io); code != exitOK {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout.String(), "report: "+filepath.Join(out, "report.html")) {
		t.Errorf("stdout: %s", stdout)
	}
	if _, err := os.Stat(filepath.Join(out, "charts", "latency-all.png")); err != nil {
		t.Error(err)
	}

	io, stdout, stderr = testIO()
	cmp := filepath.Join(t.TempDir(), "cmp")
	if code := Main([]string{"compare", a, b, "--out", cmp, "--embed"}, io); code != exitOK {
		t.Fatalf("compare: exit %d\n%s", code, stderr)
	}
	html, err := os.ReadFile(filepath.Join(cmp, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), "Comparison: every figure") || !strings.Contains(string(html), "data:image/png;base64,") {
		t.Errorf("compare report lacks the figures table or the embedded charts")
	}
	if _, err := os.Stat(filepath.Join(cmp, "charts")); !os.IsNotExist(err) {
		t.Errorf("--embed wrote a charts directory")
	}

	// One directory: its variants, into DIR/compare by default.
	io, _, stderr = testIO()
	if code := Main([]string{"compare", a}, io); code != exitOK {
		t.Fatalf("compare one dir: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(a, "compare", "report.html")); err != nil {
		t.Error(err)
	}
}

func TestReportBadInputExitsTwo(t *testing.T) {
	empty := t.TempDir()
	for _, args := range [][]string{
		{"report"},
		{"report", filepath.Join(empty, "missing")},
		{"report", empty},
		{"compare"},
		{"compare", empty},
		{"report", empty, "--max-op-charts", "x"},
	} {
		io, _, stderr := testIO()
		if code := Main(args, io); code != exitUsage {
			t.Errorf("%v: exit %d, want %d\n%s", args, code, exitUsage, stderr)
		}
	}
}

func TestRunSummaryShowsHotSpots(t *testing.T) {
	dir, _, _ := runSmall(t, true, nil)
	d := &results.Dir{Path: dir}
	hs := &results.Hotspots{Variants: []results.HotspotsVariant{{
		Variant: "default", Database: "cassandra",
		Tables: []results.TableHotspots{{Table: "shop.orders_by_period", Ops: 1000, Top: []results.PartitionLoad{{Key: "time_bucket='2025-11-28'", Ops: 1000, Share: 1}}}},
		Nodes:  []results.NodeLoad{{Node: "10.0.0.1", Ops: 100}, {Node: "10.0.0.2", Ops: 100}, {Node: "10.0.0.3", Ops: 400, Over30: true}},
	}}}
	if err := d.WriteHotspots(hs); err != nil {
		t.Fatal(err)
	}
	sum, err := results.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	printRunSummary(&buf, sum, dir)
	for _, want := range []string{"hot spots:", "orders_by_period time_bucket='2025-11-28' takes 100% of its table", "busiest node 10.0.0.3 at 2.00× the mean (+100%); 1 node(s) break the 30% rule"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, buf.String())
		}
	}
}
