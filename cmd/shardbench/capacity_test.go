package main

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/reports"
)

func TestCapacityFlagsParseIntoOptions(t *testing.T) {
	io, _, _ := testIO()
	var got *CapacityOptions
	cmd := newCapacityCmd(io, func(o *CapacityOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"s.yaml", "--precision", "10%", "--variant", "a*", "--variant", "b[x={k: 1, j: 2}]", "--start", "0.5", "--growth", "1.5", "--max-multiple", "8",
		"--lead-in", "20s", "--p99", "20ms", "--seed", "3", "--slo", "rules.yaml", "-b", "cassandra", "--target", "cassandra://h", "--step", "15s",
		"--warmup", "5s", "--max-duration", "10m", "--recreate", "-q", "--no-report", "--spin", "0", "-o", "out"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	want := CapacityOptions{IO: io, ScenarioPath: "s.yaml", Backend: "cassandra", Target: "cassandra://h", Out: "out", Seed: 3, SeedSet: true,
		Variants: []string{"a*", "b[x={k: 1, j: 2}]"}, SLOFile: "rules.yaml", P99: 20 * time.Millisecond, Precision: 0.1, Start: 0.5, Growth: 1.5, Max: 8,
		LeadIn: 20 * time.Second, Warmup: 5 * time.Second, Step: 15 * time.Second, MaxDuration: 10 * time.Minute, Recreate: true, Quiet: true, NoReport: true}
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("options\n got %+v\nwant %+v", *got, want)
	}
	// Defaults: 5% precision; the rest filled per backend.
	cmd = newCapacityCmd(io, func(o *CapacityOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"s.yaml"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Precision != 0.05 || got.Backend != "sim" || got.P99 != 50*time.Millisecond || got.MaxDuration != 30*time.Minute || got.SeedSet {
		t.Errorf("defaults: %+v", got)
	}
	got.defaultsFor(true)
	if got.Start != 1 || got.Growth != 2 || got.Min != 0.01 || got.Max != 32 {
		t.Errorf("simulator defaults: %+v", got)
	}
	for _, bad := range []string{"0", "0%", "100%", "1.5", "lots"} {
		cmd = newCapacityCmd(io, func(*CapacityOptions) error { return nil })
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		cmd.SetArgs([]string{"s.yaml", "--precision", bad})
		if err := cmd.Execute(); exitCode(err) != exitUsage {
			t.Errorf("--precision %s: %v", bad, err)
		}
	}
}

// capacityScenario: catalog reads with electronics at 70% on small simulated nodes,
// against seed 002's products partitioned by category alone and by category with
// category_shard.
const capacityScenario = `name: hot-catalog
description: Catalog reads with electronics at 70%, on small simulated nodes.
seed: 4
load:
  arrival: poisson
  max_in_flight: 2048
  timeout: 2s
  phases:
    - {name: calm, type: constant, rate: 400, duration: 8s}
    - {name: sale, type: spike, rate: 400, peak: 800, spike_at: 3s, spike_for: 6s, duration: 12s}
population:
  users: 10000
  products: 20000
  categories: {electronics: 70, appliances: 10, accessories: 8, clothing: 5, home: 4, books: 3}
mix:
  catalog.product_read: 3
  catalog.category_listing: 1
backends:
  sim:
    cassandra: {cores: 2, read: 500us, write: 200us}
designs:
  - design: DESIGNS/seed002.yaml
    sweep:
      products.partition_key: [[category, category_shard], [category]]
`

func writeCapacityScenario(t *testing.T) string {
	t.Helper()
	designs, err := filepath.Abs("../../scenarios/designs")
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, "hot.yaml", strings.ReplaceAll(capacityScenario, "DESIGNS", designs))
}

// The search brackets each variant to the precision, confirms it from the schedule's start,
// and names the node that saturates first and the partition that put it there. A fixed
// run of the whole schedule at the multiple found passes the same SLO and one at the
// next step fails: capacity and run --gate agree. The same seed gives the same answer.
func TestCapacityFindsWhereEachVariantBreaks(t *testing.T) {
	path := writeCapacityScenario(t)
	search := func(out string) *results.Capacity {
		io, stdout, stderr := testIO()
		opts := &CapacityOptions{IO: io, ScenarioPath: path, Backend: "sim", Out: out, Precision: 0.1, Start: 8, LeadIn: 3 * time.Second, P99: 50 * time.Millisecond, Step: time.Second}
		if err := runCapacity(context.Background(), opts); err != nil {
			t.Fatalf("capacity: %v\n%s", err, stderr)
		}
		c, err := results.ReadCapacity(out)
		if err != nil || c == nil {
			t.Fatalf("capacity.json: %v", err)
		}
		if !strings.Contains(stdout.String(), "breaks first at") {
			t.Errorf("terminal summary:\n%s", stdout)
		}
		return c
	}
	out := filepath.Join(t.TempDir(), "cap")
	c := search(out)
	if !c.Complete || c.Method != results.CapacitySimulated || c.PeakRate != 800 || len(c.Variants) != 2 || c.SLO.Source != "default" {
		t.Fatalf("capacity.json: complete %v method %s peak %g variants %d slo %s", c.Complete, c.Method, c.PeakRate, len(c.Variants), c.SLO.Source)
	}
	sub := map[string]*results.CapacityVariant{}
	for i := range c.Variants {
		v := &c.Variants[i]
		sub[v.Params["products.partition_key"]] = v
		if v.Outcome != results.CapacityFound || !v.Confirmed || v.Sustains <= 0 || v.Breaks > v.Sustains*1.1*(1+1e-9) || v.Breaks <= v.Sustains {
			t.Errorf("%s: %s ×%g..×%g confirmed %v", v.Variant, v.Outcome, v.Sustains, v.Breaks, v.Confirmed)
		}
		for _, step := range []string{v.PassStep, v.FailStep} {
			if !strings.Contains(step, "-full-") {
				t.Errorf("%s: evidence from %s, want a whole-schedule probe", v.Variant, step)
			}
		}
		if v.ServedPeakRate < 0.9*v.SustainedPeakRate || v.SustainedPeakRate != 800*v.Sustains || v.Headroom != v.Sustains-1 {
			t.Errorf("%s: served %g/s at the peak, offered %g/s, headroom %g", v.Variant, v.ServedPeakRate, v.SustainedPeakRate, v.Headroom)
		}
		for _, pt := range v.Curve {
			w, ok := pt.Workloads["catalog"]
			if !ok || w.Pass != pt.Pass || w.P99Ms != pt.P99Ms {
				t.Errorf("%s at ×%g: catalog workload %+v, the point %+v (catalog is the only workload)", v.Variant, pt.Multiple, w, pt)
			}
		}
		bf := v.BreaksFirst
		if bf == nil || bf.Kind != results.CauseNode || !strings.Contains(bf.Summary, "category='electronics'") || !strings.Contains(bf.Summary, "read stage saturated first") || len(bf.Evidence) < 3 {
			t.Errorf("%s: breaks first %+v", v.Variant, bf)
		}
	}
	// The node named holds a replica of the partition named (hotspots.json of that step).
	for _, v := range sub {
		hot, err := results.ReadHotspots(filepath.Join(out, v.FailStep))
		if err != nil || hot == nil {
			t.Fatal(err)
		}
		found := false
		for _, tb := range hot.Variant(v.Variant).Tables {
			for _, p := range tb.Top {
				if strings.Contains(v.BreaksFirst.Summary, p.Key) && contains(p.Replicas, v.BreaksFirst.Subject) {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("%s: %s holds no replica of the partition named in %q", v.Variant, v.BreaksFirst.Subject, v.BreaksFirst.Summary)
		}
	}
	if len(sub) != 2 {
		t.Fatalf("variants %v", sub)
	}

	// run --gate with the default SLO on the whole schedule, measured over the peak
	// window, agrees with the search.
	rules := writeFile(t, "slo.yaml", "slo:\n  - \"* p99 < 50ms\"\n  - \"all error_rate < 0.1%\"\n  - \"all achieved_ratio >= 0.99\"\n  - \"all dropped_share == 0\"\n")
	if c.Window == nil || c.Window.FromS <= 0 || c.Window.ToS >= c.Window.ScheduleS {
		t.Fatalf("the search's window %+v: want a stretch inside the schedule", c.Window)
	}
	from, to := time.Duration(c.Window.FromS*1e9), time.Duration(c.Window.ToS*1e9)
	for _, v := range sub {
		for _, m := range []float64{v.Sustains, v.Breaks} {
			io, _, stderr := testIO()
			ro := &RunOptions{IO: io, ScenarioPath: path, Backend: "sim", Out: filepath.Join(t.TempDir(), "run"), RateScale: m, Gate: rules, NoReport: true, Quiet: true,
				MeasureFrom: from, MeasureTo: to}
			err := runRun(context.Background(), ro)
			gr, rerr := results.ReadGate(ro.Out)
			if rerr != nil || gr == nil {
				t.Fatalf("gate.json: %v %s", rerr, stderr)
			}
			failed := false
			for _, ch := range gr.Checks {
				failed = failed || (ch.Variant == v.Variant && ch.Status == results.GateFail)
			}
			if failed != (m == v.Breaks) {
				t.Errorf("%s: run --rate-scale %g --gate: failed=%v (err %v); the search says ×%g holds, ×%g fails", v.Variant, m, failed, err, v.Sustains, v.Breaks)
			}
		}
	}

	// The same seed, the same answer.
	again := search(filepath.Join(t.TempDir(), "cap2"))
	if len(again.Probes) != len(c.Probes) {
		t.Fatalf("second search ran %d probes, the first %d", len(again.Probes), len(c.Probes))
	}
	for i := range c.Variants {
		a, b := c.Variants[i], again.Variants[i]
		if a.Sustains != b.Sustains || a.Breaks != b.Breaks || a.ServedPeakRate != b.ServedPeakRate || !reflect.DeepEqual(a.Curve, b.Curve) || a.BreaksFirst.Summary != b.BreaksFirst.Summary {
			t.Errorf("%s answered differently the second time: ×%g..×%g %q vs ×%g..×%g %q", a.Variant, a.Sustains, a.Breaks, a.BreaksFirst.Summary, b.Sustains, b.Breaks, b.BreaksFirst.Summary)
		}
	}

	// The capacity directory renders (by the command and by shardbench report): the
	// curve, the answer table, each step a results directory of its own.
	html, err := os.ReadFile(filepath.Join(out, reports.HTMLFile))
	if err != nil || !strings.Contains(string(html), "capacity-curve.png") || !strings.Contains(string(html), "What breaks first") {
		t.Errorf("report: %v", err)
	}
	io, _, stderr := testIO()
	if err := runReport(&ReportOptions{IO: io, ResultsDir: out, Out: filepath.Join(t.TempDir(), "rep"), MaxOps: 8, MaxVars: 6}); err != nil {
		t.Errorf("shardbench report on a capacity directory: %v %s", err, stderr)
	}
	for _, p := range c.Probes {
		if sum, err := results.Read(filepath.Join(out, results.CapacityStepsDir, p.Step)); err != nil || !sum.Complete {
			t.Errorf("step %s: %v", p.Step, err)
		}
	}
}

func TestCapacityRejectsBadInput(t *testing.T) {
	path := writeCapacityScenario(t)
	for _, tc := range []struct {
		opts CapacityOptions
		want string
	}{
		{CapacityOptions{Variants: []string{"nothing*"}}, `matches none of the scenario's variants`},
		{CapacityOptions{Backend: "null"}, "test backend"},
		{CapacityOptions{Backend: "oracle"}, `unknown backend "oracle"`},
		{CapacityOptions{SLOFile: writeFile(t, "bad.yaml", "slo:\n  - \"carts.nothing p99 < 5ms\"\n")}, `carts.nothing`},
		{CapacityOptions{Start: 100}, "outside"},
		{CapacityOptions{Growth: 0.5}, "--growth"},
	} {
		io, _, _ := testIO()
		o := tc.opts
		o.IO, o.ScenarioPath, o.Out = io, path, filepath.Join(t.TempDir(), "x")
		if o.Backend == "" {
			o.Backend = "sim"
		}
		o.P99, o.Step = 50*time.Millisecond, time.Second
		err := runCapacity(context.Background(), &o)
		if exitCode(err) != exitUsage || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: exit %d, %v; want usage error with %q", tc.opts, exitCode(err), err, tc.want)
		}
	}
}

// Ctrl-C (SIGTERM) stops the search: capacity.json keeps what was found, marked
// incomplete, and the exit code is 1.
func TestCapacityInterruptedKeepsWhatWasFound(t *testing.T) {
	path := writeCapacityScenario(t)
	io, _, stderr := testIO()
	out := filepath.Join(t.TempDir(), "cap")
	sig := make(chan os.Signal, 1)
	go func() {
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			if c, _ := results.ReadCapacity(out); c != nil && len(c.Probes) >= 2 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		sig <- syscall.SIGTERM
	}()
	opts := &CapacityOptions{IO: io, ScenarioPath: path, Backend: "sim", Out: out, Precision: 0.01, Start: 1, LeadIn: 3 * time.Second, P99: 50 * time.Millisecond, Step: time.Second, NoReport: true, signals: sig}
	err := runCapacity(context.Background(), opts)
	if exitCode(err) != exitFailure || !strings.Contains(err.Error(), "received SIGTERM") {
		t.Fatalf("exit %d: %v\n%s", exitCode(err), err, stderr)
	}
	c, rerr := results.ReadCapacity(out)
	if rerr != nil || c == nil {
		t.Fatal(rerr)
	}
	if c.Complete || c.Interrupted != "received SIGTERM" || len(c.Probes) < 2 {
		t.Errorf("complete %v interrupted %q probes %d", c.Complete, c.Interrupted, len(c.Probes))
	}
	for _, v := range c.Variants {
		if v.Outcome != results.CapacityIncomplete || v.Sustains < 1 {
			t.Errorf("%s: %s ×%g (the first probes held at ×1 and ×2)", v.Variant, v.Outcome, v.Sustains)
		}
	}
}

// --variant patterns match whole names, commas and brackets included.
func TestCapacityPicksVariants(t *testing.T) {
	path := writeCapacityScenario(t)
	io, _, _ := testIO()
	for _, tc := range []struct {
		pats []string
		want int
	}{{nil, 2}, {[]string{"seed002[products.partition_key=[category, category_shard]]"}, 1}, {[]string{"*[category]]", "*shard]]"}, 2}} {
		o := &CapacityOptions{IO: io, ScenarioPath: path, Backend: "sim", Variants: tc.pats, P99: 50 * time.Millisecond, Out: filepath.Join(t.TempDir(), "c"), now: time.Now}
		o.defaultsFor(true)
		cr, err := loadCapacity(o, true)
		if err != nil || len(cr.in.Variants) != tc.want {
			t.Errorf("%q: %v, %d variants; want %d", tc.pats, err, len(cr.in.Variants), tc.want)
		}
	}
}
