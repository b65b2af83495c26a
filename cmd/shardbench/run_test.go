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

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const smallScenario = `name: small
seed: 5
load:
  arrival: uniform
  max_in_flight: 8
  phases:
    - {name: a, type: constant, rate: 2000, duration: 2s}
    - {name: b, type: ramp, from: 2000, to: 4000, duration: 1s}
mix: {sessions.read: 1, carts.add_item: 1}
backends:
  delay: {latency: 200us, distribution: exponential}
`

func testIO() (*IO, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return &IO{Out: &out, ErrOut: &errOut}, &out, &errOut
}

func TestRunWritesResultsDirectory(t *testing.T) {
	path := writeFile(t, "small.yaml", smallScenario)
	io, stdout, stderr := testIO()
	outDir := filepath.Join(t.TempDir(), "res")
	opts := &RunOptions{IO: io, ScenarioPath: path, Backend: "delay", Out: outDir, RateScale: 0.5}
	if err := runRun(context.Background(), opts); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	sum, err := results.Read(outDir)
	if err != nil {
		t.Fatal(err)
	}
	v := sum.Variants[0]
	// rate-scale 0.5: 1000/s for 2 s, then 1000→2000 over 1 s = 3500 operations, each
	// completed or, if a busy machine stalled the client at the schedule's end while it
	// still waited for a worker, dropped.
	if !sum.Complete || v.Totals.Scheduled != 3500 || v.Totals.Completed+v.Totals.Dropped != 3500 || v.Totals.Completed < 3000 || len(v.Ops) != 2 {
		t.Fatalf("summary: complete=%v totals=%+v ops=%d", sum.Complete, v.Totals, len(v.Ops))
	}
	if v.Totals.Response.Count != v.Totals.Completed || v.Totals.Service.P50 <= 0.1 {
		t.Errorf("latency not recorded: %+v", v.Totals.Response)
	}
	asRun, err := os.ReadFile(filepath.Join(outDir, results.ScenarioFile))
	if err != nil || !strings.Contains(string(asRun), "rate: 1000") || !strings.Contains(string(asRun), "on_full: queue") {
		t.Errorf("scenario as run must show overrides and defaults: %v\n%s", err, asRun)
	}
	for _, f := range []string{"timeseries.jsonl", "histograms/default/sessions.read.hlog", "histograms/default/carts.add_item.hlog"} {
		if _, err := os.Stat(filepath.Join(outDir, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	if !strings.Contains(stdout.String(), "variant") || !strings.Contains(stdout.String(), "default") {
		t.Errorf("end-of-run table missing:\n%s", stdout)
	}
	// The same directory is never overwritten.
	err = runRun(context.Background(), opts)
	if exitCode(err) != exitUsage || !strings.Contains(err.Error(), "already holds results") {
		t.Errorf("reusing --out: %v", err)
	}
}

func TestRunInterruptedBySignalKeepsResults(t *testing.T) {
	path := writeFile(t, "long.yaml", strings.Replace(smallScenario, "duration: 2s", "duration: 60s", 1))
	io, _, stderr := testIO()
	outDir := filepath.Join(t.TempDir(), "res")
	sig := make(chan os.Signal, 1)
	go func() {
		time.Sleep(1500 * time.Millisecond)
		sig <- syscall.SIGTERM
	}()
	opts := &RunOptions{IO: io, ScenarioPath: path, Backend: "delay", Out: outDir, signals: sig}
	err := runRun(context.Background(), opts)
	if exitCode(err) != exitFailure || !strings.Contains(err.Error(), "received SIGTERM") {
		t.Fatalf("interrupted run: exit %d, %v", exitCode(err), err)
	}
	sum, rerr := results.Read(outDir)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if sum.Complete || sum.Interrupted != "received SIGTERM" {
		t.Errorf("summary must record the interrupt: %+v", sum)
	}
	if n := sum.Variants[0].Totals.Completed; n < 2000 || n > 4000 {
		t.Errorf("completed %d operations in about 1.5 s at 2000/s", n)
	}
	_ = stderr
}

func TestRunRejectsBadInputWithUsageExitCode(t *testing.T) {
	io, _, _ := testIO()
	bad := writeFile(t, "bad.yaml", "name: x\nload:\n  phases:\n    - {type: constant, rate: fast, duration: 1s}\nmix: {sessions.read: 1}\n")
	err := runRun(context.Background(), &RunOptions{IO: io, ScenarioPath: bad, Backend: "null"})
	if exitCode(err) != exitUsage || !strings.Contains(err.Error(), "bad.yaml:4:30: load.phases[0].rate") {
		t.Errorf("bad scenario: exit %d: %v", exitCode(err), err)
	}
	err = runRun(context.Background(), &RunOptions{IO: io, ScenarioPath: bad, Backend: "oracle"})
	if exitCode(err) != exitUsage || !strings.Contains(err.Error(), `unknown backend "oracle"`) {
		t.Errorf("bad backend: exit %d: %v", exitCode(err), err)
	}
	err = runRun(context.Background(), &RunOptions{IO: io, ScenarioPath: filepath.Join(t.TempDir(), "none.yaml"), Backend: "null"})
	if exitCode(err) != exitUsage || !strings.Contains(err.Error(), "none.yaml: no such file") {
		t.Errorf("missing file: exit %d: %v", exitCode(err), err)
	}
}

func TestFlagErrorsExitTwo(t *testing.T) {
	io, _, stderr := testIO()
	if code := Main([]string{"run", "--rate-scale", "lots", "x.yaml"}, io); code != exitUsage {
		t.Errorf("bad flag value: exit %d", code)
	}
	if !strings.Contains(stderr.String(), "invalid argument") {
		t.Errorf("stderr: %s", stderr)
	}
	if code := Main([]string{"run"}, io); code != exitUsage {
		t.Errorf("missing argument: exit %d", code)
	}
	if code := Main([]string{"frobnicate"}, io); code != exitFailure && code != exitUsage {
		t.Errorf("unknown command: exit %d", code)
	}
}

func TestRunFlagsParseIntoOptions(t *testing.T) {
	io, _, _ := testIO()
	var got *RunOptions
	cmd := newRunCmd(io, func(o *RunOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"s.yaml", "--backend", "delay", "--duration", "90s", "--rate-scale", "0.25", "--seed", "0", "-q", "--out", "d"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.ScenarioPath != "s.yaml" || got.Backend != "delay" || got.Duration != 90*time.Second || got.RateScale != 0.25 ||
		!got.SeedSet || got.Seed != 0 || !got.Quiet || got.Out != "d" {
		t.Errorf("options: %+v", got)
	}
}

// --skip-load reuses a loaded database; with --recreate, which drops it, it is a usage
// error.
func TestRunSkipLoadFlag(t *testing.T) {
	io, _, _ := testIO()
	var got *RunOptions
	cmd := newRunCmd(io, func(o *RunOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"s.yaml", "--backend", "cassandra", "--skip-load"})
	if err := cmd.Execute(); err != nil || !got.SkipLoad || got.Recreate {
		t.Fatalf("--skip-load: %v %+v", err, got)
	}
	cmd = newRunCmd(io, func(o *RunOptions) error { return nil })
	cmd.SetArgs([]string{"s.yaml", "--skip-load", "--recreate"})
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	if err := cmd.Execute(); exitCode(err) != exitUsage || !strings.Contains(err.Error(), "--skip-load reuses a loaded database") {
		t.Fatalf("--skip-load --recreate: %v", err)
	}
}
