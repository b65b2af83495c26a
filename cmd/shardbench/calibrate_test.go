package main

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/backend/sim"
	"github.com/shardbench/shardbench/internal/itest"
	"github.com/shardbench/shardbench/internal/results"
)

// calibrationScenario is three cart operations on seed003's Cassandra design, on a
// 3-node, one-rack layout like the test cluster's. DESIGN is replaced by the design's
// absolute path and EXTRA by more backend settings.
const calibrationScenario = `name: calibrate-carts
seed: 9
load:
  arrival: poisson
  max_in_flight: 64
  phases:
    - {name: steady, type: constant, rate: RATE, duration: 8s}
population:
  users: 5000
  sessions: 10000
  carts: 3000
  products: 1000
mix:
  carts.add_item: 1
  carts.read: 1
  carts.change_qty: 1
backends:
  cassandra:
    keyspace: sbtest_calibrate
    replication: {class: NetworkTopologyStrategy, dc1: 3}
  sim:
    cluster:
      dcs: [{name: dc1, nodes: 3, racks: 1}]
EXTRA
designs:
  - design: DESIGN
`

func calibrationScenarioFile(t *testing.T, rate, extra string) string {
	t.Helper()
	d, err := filepath.Abs("../../scenarios/designs/seed003.yaml")
	if err != nil {
		t.Fatal(err)
	}
	body := strings.NewReplacer("DESIGN", d, "RATE", rate, "EXTRA", extra).Replace(calibrationScenario)
	return writeFile(t, "calibrate.yaml", body)
}

// meanServices is each operation's mean service time in a results directory's first
// variant.
func meanServices(t *testing.T, dir string) map[string]time.Duration {
	t.Helper()
	sum, err := results.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]time.Duration{}
	for _, op := range sum.Variants[0].Ops {
		out[op.Op] = msDuration(op.Service.Mean)
	}
	return out
}

// Fitted to a real Cassandra cluster (the project's 3-node test cluster): the parameter
// file reproduces the run's mean service time per operation, and a sim run of the same
// scenario pointing at it reports the same means.
func TestCalibrateFromRealCassandra(t *testing.T) {
	hosts := itest.Cassandra(t)
	path := calibrationScenarioFile(t, "80", "")
	io, _, stderr := testIO()
	real := filepath.Join(t.TempDir(), "real")
	err := runRun(context.Background(), &RunOptions{IO: io, ScenarioPath: path, Backend: "cassandra",
		Target: "cassandra://" + hosts + ":9042?dc=dc1", Out: real, Recreate: true, NoReport: true, Quiet: true})
	if err != nil {
		t.Fatalf("real run: %v\n%s", err, stderr)
	}
	measured := meanServices(t, real)

	params := filepath.Join(filepath.Dir(path), "cassandra-calibration.yaml")
	cio, stdout, cerr := testIO()
	if err := runCalibrate(context.Background(), &CalibrateOptions{IO: cio, ResultsDir: real, Out: params, Limit: defaultCalibrateLimit}); err != nil {
		t.Fatalf("calibrate: %v\n%s", err, cerr)
	}
	cal, err := sim.ReadCalibration(params)
	if err != nil {
		t.Fatal(err)
	}
	if cal.Backend != "cassandra" || cal.Cassandra == nil || cal.Cassandra.Read <= 0 || cal.Cassandra.Write <= 0 || len(cal.Fit) != 3 {
		t.Fatalf("calibration: %+v", cal)
	}
	for _, r := range cal.Fit {
		if math.Abs(r.Error) > 0.03 {
			t.Errorf("%s: measured mean %s, calibrated simulation %s", r.Op, r.MeasuredMean, r.SimulatedMean)
		}
	}
	for _, want := range []string{"carts.add_item", "measured mean", "cassandra: read "} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("calibrate's table lacks %q:\n%s", want, stdout)
		}
	}

	// The sim backend with the file: the real run's means, within the simulation's noise.
	simPath := calibrationScenarioFile(t, "80", "    calibration: "+params)
	sio, _, serr := testIO()
	simOut := filepath.Join(t.TempDir(), "sim")
	if err := runRun(context.Background(), &RunOptions{IO: sio, ScenarioPath: simPath, Backend: "sim", Out: simOut, NoReport: true, Quiet: true}); err != nil {
		t.Fatalf("sim run: %v\n%s", err, serr)
	}
	simulated := meanServices(t, simOut)
	for op, m := range measured {
		if e := (float64(simulated[op]) - float64(m)) / float64(m); math.Abs(e) > 0.05 {
			t.Errorf("%s: real %s, calibrated sim %s (%+.1f%%)", op, m, simulated[op], e*100)
		}
	}
	t.Logf("real Cassandra means %v; fitted read %s write %s; calibrated sim %v", measured, cal.Cassandra.Read, cal.Cassandra.Write, simulated)
}

// calibrate's bad input: a directory that is not a run, and a run whose scenario's design
// files cannot be found (it names where it looked and the flag that fixes it).
func TestCalibrateBadInput(t *testing.T) {
	io, _, _ := testIO()
	err := runCalibrate(context.Background(), &CalibrateOptions{IO: io, ResultsDir: t.TempDir()})
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "summary.json") {
		t.Errorf("empty directory: exit %d, %v", exitCode(err), err)
	}

	path := calibrationScenarioFile(t, "200", "")
	out := filepath.Join(t.TempDir(), "res")
	if err := runRun(context.Background(), &RunOptions{IO: io, ScenarioPath: path, Backend: "sim", Out: out, NoReport: true, Quiet: true}); err != nil {
		t.Fatal(err)
	}
	// Move the scenario away: the copy in the results names designs by the same absolute
	// path, which still resolves; a relative one would not, so rewrite it as relative.
	b, err := os.ReadFile(filepath.Join(out, results.ScenarioFile))
	if err != nil {
		t.Fatal(err)
	}
	d, _ := filepath.Abs("../../scenarios/designs/seed003.yaml")
	if err := os.WriteFile(filepath.Join(out, results.ScenarioFile), []byte(strings.ReplaceAll(string(b), d, "designs/seed003.yaml")), 0o644); err != nil {
		t.Fatal(err)
	}
	err = runCalibrate(context.Background(), &CalibrateOptions{IO: io, ResultsDir: out, Limit: 1000})
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "designs/seed003.yaml") || !strings.Contains(err.Error(), "--scenario") {
		t.Errorf("designs not found: exit %d, %v", exitCode(err), err)
	}
	// --scenario names the original: the designs resolve from its directory.
	err = runCalibrate(context.Background(), &CalibrateOptions{IO: io, ResultsDir: out, Limit: 1000,
		ScenarioPath: "../../scenarios/smoke.yaml"})
	if err != nil {
		t.Errorf("with --scenario: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "sim-calibration.yaml")); err != nil {
		t.Errorf("default output file: %v", err)
	}
}
