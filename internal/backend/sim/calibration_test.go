package sim

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/scenario"
)

const calibrationScenario = `
name: calibration
seed: 11
load:
  arrival: poisson
  max_in_flight: 256
  phases:
    - {name: steady, type: constant, rate: 1500, duration: 20s}
population:
  users: 50000
  sessions: 100000
  carts: 20000
  products: 5000
mix:
  sessions.create: 1
  sessions.read: 2
  carts.add_item: 1
  carts.read: 1
  orders.place: 1
  orders.read: 1
designs:
  - design: DESIGNS/seed000.yaml
  - design: DESIGNS/seed001-mongo.yaml
BACKENDS`

// measure runs every variant of sc with the options as they are and returns each
// operation's mean and p99 service time, as a real run's summary has them.
func measure(t *testing.T, sc *scenario.Scenario) []Measured {
	t.Helper()
	prep, err := design.Prepare(sc)
	if err != nil {
		t.Fatal(err)
	}
	var out []Measured
	for _, v := range prep.Variants {
		s, samples := simulate(t, sc, v.Name, 1<<30)
		_ = s
		sum := map[int]float64{}
		n := map[int]int64{}
		all := map[int][]int64{}
		for _, smp := range samples {
			if metrics.Class(smp.Class) == metrics.OK && smp.Flags&metrics.FlagUnserved == 0 {
				sum[int(smp.Op)] += float64(smp.End - smp.Start)
				n[int(smp.Op)]++
				all[int(smp.Op)] = append(all[int(smp.Op)], smp.End-smp.Start)
			}
		}
		for i, op := range prep.Model.Ops {
			if n[i] > 0 {
				ds := all[i]
				slices.Sort(ds)
				out = append(out, Measured{Variant: v.Name, Op: op.Name, Count: n[i], Mean: time.Duration(sum[i] / float64(n[i])),
					P50: time.Duration(ds[len(ds)/2]), P99: time.Duration(ds[len(ds)*99/100])})
			}
		}
	}
	return out
}

// The fit recovers a cluster it did not know: "measurements" come from a simulation with
// nodes twice or more as slow as the defaults (each side's fields in the defaults'
// ratios, as the fit moves them) and two operations made costlier and cheaper; the fit
// starts from the defaults. The calibrated simulation reproduces every operation's mean service time,
// the fitted per-operation scales recover the two odd operations against their
// neighbours, and a scenario pointing at the written file simulates the same.
func TestFitRecoversTheMeasuredCluster(t *testing.T) {
	truth := writeScenario(t, strings.Replace(calibrationScenario, "BACKENDS", `backends:
  sim:
    cassandra: {read: 360us, row: 8us, sstable: 80us, scan: 6ms, write: 400us}
    mongodb: {find: 200us, doc: 10us, scan: 1200us, write: 500us, update: 850us, apply: 250us}
    operation_scale: {carts.read: 2, orders.place: 0.5}
`, 1))
	measured := measure(t, truth)

	dir := t.TempDir()
	base := writeScenario(t, strings.Replace(calibrationScenario, "BACKENDS", "", 1))
	prep, err := design.Prepare(base)
	if err != nil {
		t.Fatal(err)
	}
	cal, err := Fit(context.Background(), FitInput{Scenario: base, Prepared: prep, Measured: measured})
	if err != nil {
		t.Fatal(err)
	}
	if len(cal.Fit) != len(measured) {
		t.Fatalf("%d fit rows for %d measured operations", len(cal.Fit), len(measured))
	}
	for _, r := range cal.Fit {
		if math.Abs(r.Error) > 0.02 {
			t.Errorf("%s %s: measured %s, calibrated simulation %s (%+.1f%%)", r.Variant, r.Op, r.MeasuredMean, r.SimulatedMean, r.Error*100)
		}
	}
	// The split between the node model and the scales is not unique (both multiply the
	// same draws), but relative to an operation of the same shape the scales recover the
	// truth's factors (2 and 0.5). On seed001-mongo carts.add_item reads then writes (a find,
	// then an update), so its scale mixes two sides: only the read pair is compared there.
	ratio := func(op, ref, variant string) float64 {
		return cal.OperationScale[op+"@"+variant] / cal.OperationScale[ref+"@"+variant]
	}
	for _, c := range []struct {
		variant, op, ref string
		want             float64
	}{
		{"seed000", "carts.read", "orders.read", 2},
		{"seed001-mongo", "carts.read", "orders.read", 2},
		{"seed000", "orders.place", "carts.add_item", 0.5},
	} {
		if r := ratio(c.op, c.ref, c.variant); math.Abs(r-c.want) > 0.1*c.want {
			t.Errorf("%s: %s scale is %.2f× %s's, want about %g", c.variant, c.op, r, c.ref, c.want)
		}
	}
	def := Options{}
	def.applyDefaults()
	if cal.Cassandra == nil || cal.MongoDB == nil || cal.Cassandra.Write <= def.Cassandra.Write || cal.MongoDB.Write <= def.MongoDB.Write || cal.MongoDB.Update <= def.MongoDB.Update {
		t.Errorf("node models not fitted upwards from the defaults: %+v %+v", cal.Cassandra, cal.MongoDB)
	}

	// Written, referenced from a scenario, read back: the same means.
	path := filepath.Join(dir, "cal.yaml")
	if err := cal.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	body := strings.Replace(calibrationScenario, "BACKENDS", "backends:\n  sim:\n    calibration: "+path+"\n", 1)
	again := measure(t, writeScenario(t, body))
	for i, m := range again {
		want := measured[i]
		if e := (float64(m.Mean) - float64(want.Mean)) / float64(want.Mean); math.Abs(e) > 0.02 {
			t.Errorf("%s %s with the calibration file: %s, measured %s", m.Variant, m.Op, m.Mean, want.Mean)
		}
	}
}

// Bad references are errors naming the scenario file, line and field, or the
// calibration file's.
func TestCalibrationFileErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("schema: shardbench/sim-calibration\noperation_scale: {carts.read: -1}\ncassandra: {reed: 1ms}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ backends, want string }{
		{"calibration: nope.yaml", "s.yaml:26:18: backends.sim.calibration: no such file"},
		{"calibration: " + bad, "bad.yaml:2:18: operation_scale: carts.read: must be a positive factor"},
		{"calibration: " + bad, `bad.yaml:3:13: cassandra.reed: unknown field`},
		{"operation_scale: {carts.read: 0}", "backends.sim.operation_scale: carts.read: must be a positive factor"},
	} {
		sc := writeScenario(t, strings.Replace(calibrationScenario, "BACKENDS", "backends:\n  sim:\n    "+c.backends+"\n", 1))
		_, err := LoadOptions(sc)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.backends, err, c.want)
		}
	}
	sc := writeScenario(t, strings.Replace(calibrationScenario, "BACKENDS", "backends:\n  sim:\n    operation_scale: {carts.reed@seed000: 2}\n", 1))
	cfg, _ := configFor(t, sc, "seed000", 0)
	if _, err := Open(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), `no operation "carts.reed"`) {
		t.Errorf("unknown operation: %v", err)
	}
}

// With Shape, the fit recovers the spread of heavy-tailed service times: "measurements"
// from a simulation with log-normal service times of σ 1.2 (medians far below means,
// p99 tens of times the median), fitted from the default shape, give back σ within 15%,
// and the calibrated simulation's p50 and p99 match the measured ones within 20%. The
// default shape (σ 0) would put every p50 near its mean.
func TestFitRecoversTheSpread(t *testing.T) {
	truth := writeScenario(t, strings.Replace(calibrationScenario, "BACKENDS", `backends:
  sim:
    cassandra: {read: 300us, row: 8us, sstable: 80us, scan: 6ms, write: 150us}
    mongodb: {find: 240us, doc: 10us, scan: 1200us, write: 250us, apply: 100us}
    service_spread: 1.2
`, 1))
	measured := measure(t, truth)
	base := writeScenario(t, strings.Replace(calibrationScenario, "BACKENDS", "", 1))
	prep, err := design.Prepare(base)
	if err != nil {
		t.Fatal(err)
	}
	cal, err := Fit(context.Background(), FitInput{Scenario: base, Prepared: prep, Measured: measured, Limit: 20000, Shape: true})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(cal.ServiceSpread-1.2) > 0.15*1.2 {
		t.Errorf("fitted σ %.3f, want about 1.2 (notes %v)", cal.ServiceSpread, cal.Notes)
	}
	path := filepath.Join(t.TempDir(), "cal.yaml")
	if err := cal.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	again := measure(t, writeScenario(t, strings.Replace(calibrationScenario, "BACKENDS", "backends:\n  sim:\n    calibration: "+path+"\n", 1)))
	for i, m := range again {
		want := measured[i]
		if want.Count < 2000 {
			continue
		}
		for _, q := range []struct {
			name      string
			got, want time.Duration
		}{{"p50", m.P50, want.P50}, {"p99", m.P99, want.P99}} {
			if e := float64(q.got-q.want) / float64(q.want); math.Abs(e) > 0.2 {
				t.Errorf("%s %s %s: calibrated %s, measured %s (%+.0f%%)", m.Variant, m.Op, q.name, q.got, q.want, 100*e)
			}
		}
	}
}
