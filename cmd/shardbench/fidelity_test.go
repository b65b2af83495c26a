package main

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardbench/shardbench/internal/fidelity"
	"github.com/shardbench/shardbench/internal/itest"
	"github.com/shardbench/shardbench/internal/results"
)

// fidelityScenario is sessions on two seed000 variants (one bucket: every request to one
// partition, so two of the three nodes at RF 2; 100 buckets: spread) and seed004, at a
// rate the shared test cluster sustains. DIR is replaced by scenarios/designs.
const fidelityScenario = `name: fidelity-short
seed: 27
load:
  arrival: poisson
  max_in_flight: 64
  timeout: 5s
  phases:
    - {name: steady, type: constant, rate: 50, duration: 10s}
population: {users: 5000, sessions: 10000, carts: 2000, products: 500}
mix: {sessions.create: 2, sessions.touch: 4, sessions.read: 6}
backends:
  cassandra:
    keyspace: sbtest_fidelity
    replication: {class: NetworkTopologyStrategy, dc1: 2}
    load: {scale: 0.2, concurrency: 16}
  sim:
    cluster:
      dcs: [{name: dc1, nodes: 3, racks: 3}]
designs:
  - design: DIR/seed000.yaml
    sweep:
      sessions.buckets: [1, 100]
  - design: DIR/seed004.yaml
`

func fidelityScenarioFile(t *testing.T) string {
	t.Helper()
	d, err := filepath.Abs("../../scenarios/designs")
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, "fidelity.yaml", strings.ReplaceAll(fidelityScenario, "DIR", d))
}

// On the project's 3-node Cassandra: the simulated twin, on the ring and replication read
// from the cluster, puts each node's share of the replica requests where the servers'
// own counters put it, orders the seed000 variants by hottest node as the cluster does,
// and the run's report carries the comparison. Latency is measured and written but not
// asserted: on a shared machine the real service times follow the other load.
func TestFidelityOnRealCassandra(t *testing.T) {
	hosts := itest.Cassandra(t)
	io, stdout, stderr := testIO()
	out := filepath.Join(t.TempDir(), "fid")
	opts := &FidelityOptions{IO: io, ScenarioPath: fidelityScenarioFile(t), Target: "cassandra://" + hosts + ":9042?dc=dc1",
		Out: out, Recreate: true, Limit: 20000, Tolerance: fidelity.DefaultTolerance}
	if err := runFidelity(context.Background(), opts); err != nil {
		t.Fatalf("fidelity: %v\n%s", err, stderr)
	}
	f, err := results.ReadFidelity(out)
	if err != nil || f == nil {
		t.Fatalf("fidelity.json: %v", err)
	}
	if len(f.Variants) != 3 || f.Calibration.Variant != "seed000[sessions.buckets=1]" || f.Calibration.NetworkMS <= 0 {
		t.Fatalf("variants %d, calibration %+v", len(f.Variants), f.Calibration)
	}
	hottest := map[string]float64{}
	for _, v := range f.Variants {
		var real, sim int64
		for _, n := range v.Nodes {
			real, sim = real+n.RealCount, sim+n.SimCount
		}
		if len(v.Nodes) != 3 || real == 0 {
			t.Fatalf("%s: nodes %+v: the servers' counters were not read", v.Name, v.Nodes)
		}
		// Same stream, same ring: the totals differ only by what the servers add
		// (speculative retries, hints) and timeouts.
		if d := math.Abs(float64(sim-real)) / float64(real); d > 0.1 {
			t.Errorf("%s: %d replica requests on the servers' counters, %d simulated", v.Name, real, sim)
		}
		// A wrong ring or replication moves a node's share by a sixth or more; 5 pp leaves
		// room for the replica a ONE read picks at random in a run this short.
		if v.MaxNodeDiffPP > 5 {
			t.Errorf("%s: node shares differ by up to %.2f pp: %+v", v.Name, v.MaxNodeDiffPP, v.Nodes)
		}
		if len(v.Ops) == 0 || v.All.Count == 0 || v.All.Sim.P99 <= 0 {
			t.Errorf("%s: latency rows %+v", v.Name, v.All)
		}
		hottest[v.Name] = v.HottestReal.Share
	}
	// One bucket: one partition on two of three nodes, so a node serves about half.
	if h1, h100 := hottest["seed000[sessions.buckets=1]"], hottest["seed000[sessions.buckets=100]"]; h1 < 0.4 || h1 <= h100 {
		t.Errorf("hottest node share: 1 bucket %.3f, 100 buckets %.3f", h1, h100)
	}
	agreed := false
	for _, r := range f.Rankings {
		if r.By == "hottest node" && r.Group == "seed000" {
			agreed = r.Agree
		}
	}
	if !agreed {
		t.Errorf("the seed000 variants are not ranked alike by hottest node: %+v", f.Rankings)
	}
	for _, want := range []string{"placement: each node's share", "latency: service time", "rankings, best first", "placement: every node's share"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	html, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil || !strings.Contains(string(html), `<section id="fidelity">`) {
		t.Errorf("report.html has no fidelity section: %v", err)
	}
	if _, err := results.Read(filepath.Join(out, fidelitySimDir)); err != nil {
		t.Errorf("the simulated twin's results: %v", err)
	}
	t.Logf("placement: %s; %s", f.Verdict.Lines[0], f.Verdict.Lines[1])
}

// Bad input is exit 2 before anything runs: flags that exclude each other, a calibration
// variant that is not the scenario's, a scenario with no Cassandra design.
func TestFidelityBadInput(t *testing.T) {
	io, _, _ := testIO()
	path := fidelityScenarioFile(t)
	base := FidelityOptions{IO: io, ScenarioPath: path, Target: "cassandra://127.0.0.1", Tolerance: fidelity.DefaultTolerance, Out: filepath.Join(t.TempDir(), "x")}
	cases := map[string]struct {
		edit func(*FidelityOptions)
		want string
	}{
		"both":      {func(o *FidelityOptions) { o.CalibrateOn, o.Calibration = "a", "b.yaml" }, "exclude each other"},
		"variant":   {func(o *FidelityOptions) { o.CalibrateOn = "seed999" }, `--calibrate-on "seed999": not a variant`},
		"tolerance": {func(o *FidelityOptions) { o.Tolerance.SharePP = 0 }, "--share-pp"},
		"no cassandra": {func(o *FidelityOptions) {
			d, _ := filepath.Abs("../../scenarios/designs/seed001-mongo.yaml")
			body := fidelityScenario[:strings.Index(fidelityScenario, "designs:")] + "designs:\n  - design: " + d + "\n"
			o.ScenarioPath = writeFile(t, "mongo.yaml", body)
		}, "no variant has a Cassandra design"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			o := base
			c.edit(&o)
			err := o.check()
			if err == nil {
				err = runFidelity(context.Background(), &o)
			}
			if exitCode(err) != 2 || !strings.Contains(err.Error(), c.want) {
				t.Errorf("exit %d, %v; want 2 and %q", exitCode(err), err, c.want)
			}
		})
	}
}
