package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/results"
)

func TestParseShard(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == jobIndexEnv {
				return v
			}
			return ""
		}
	}
	for _, c := range []struct {
		shard  string
		shards int
		env    string
		want   shardSpec
		err    string
	}{
		{"", 0, "", shardSpec{}, ""},
		{"2/4", 0, "", shardSpec{2, 4}, ""},
		{" 0 / 3 ", 0, "", shardSpec{0, 3}, ""},
		{"0/1", 0, "", shardSpec{}, ""}, // one shard is the whole run
		{"4/4", 0, "", shardSpec{}, "index must be in 0..3"},
		{"-1/4", 0, "", shardSpec{}, "index must be in 0..3"},
		{"1/0", 0, "", shardSpec{}, "at least 1"},
		{"2", 0, "", shardSpec{}, "want INDEX/COUNT"},
		{"a/b", 0, "", shardSpec{}, "want INDEX/COUNT"},
		{"0/5000", 0, "", shardSpec{}, "at most 1024"},
		{"", 4, "3", shardSpec{3, 4}, ""},
		{"", 4, "", shardSpec{}, "JOB_COMPLETION_INDEX, which is not set"},
		{"", 4, "4", shardSpec{}, "index must be in 0..3"},
		{"", 4, "x", shardSpec{}, `JOB_COMPLETION_INDEX="x" is not a shard index`},
		{"1/4", 4, "1", shardSpec{}, "give one"},
	} {
		got, err := parseShard(c.shard, c.shards, env(c.env))
		if c.err != "" {
			if exitCode(err) != exitUsage || !strings.Contains(err.Error(), c.err) {
				t.Errorf("--shard %q --shards %d (%s=%q): %v, want a usage error with %q", c.shard, c.shards, jobIndexEnv, c.env, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("--shard %q --shards %d (%s=%q): %+v, %v; want %+v", c.shard, c.shards, jobIndexEnv, c.env, got, err, c.want)
		}
	}
	if _, err := parseStartAt("tomorrow"); exitCode(err) != exitUsage {
		t.Errorf("--start-at tomorrow: %v", err)
	}
	if at, err := parseStartAt("2026-11-28T10:00:00+03:00"); err != nil || !at.Equal(time.Date(2026, 11, 28, 7, 0, 0, 0, time.UTC)) {
		t.Errorf("--start-at: %s %v", at, err)
	}
}

// A shard's part of a run cannot be gated, set up or recreated on its own: those belong
// to the whole run.
func TestShardRefusesWholeRunSteps(t *testing.T) {
	path := writeFile(t, "small.yaml", smallScenario)
	for _, c := range []struct {
		opts RunOptions
		want string
	}{
		{RunOptions{Shard: "1/2", Gate: gateScenario}, "merge the shards' directories, then gate"},
		{RunOptions{Shard: "1/2", Recreate: true}, "--setup-only"},
		{RunOptions{Shard: "0/2", SetupOnly: true}, "--setup-only"},
		{RunOptions{SetupOnly: true}, "nothing to set up"},
	} {
		io, _, _ := testIO()
		o := c.opts
		o.IO, o.ScenarioPath, o.Backend, o.Out = io, path, "delay", filepath.Join(t.TempDir(), "out")
		err := runRun(context.Background(), &o)
		if exitCode(err) != exitUsage || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want a usage error with %q", c.opts, err, c.want)
		}
	}
}

// runQuiet runs a scenario in-process and fails the test on error.
func runQuiet(t *testing.T, o RunOptions) {
	t.Helper()
	io, _, stderr := testIO()
	o.IO, o.Quiet, o.NoReport = io, true, true
	if err := runRun(context.Background(), &o); err != nil {
		t.Fatalf("run %+v: %v\n%s", o, err, stderr)
	}
}

// Black Friday on the simulator in four shards, merged, is the single-process run: the same
// counts per operation, the same histograms bucket for bucket (summary and interval logs),
// the same time series, the same hot partitions and simulated servers. It runs 10 s at 2%
// of the rate; SHARDBENCH_SHARD_TEST_DURATION=2m runs the scenario at its full rates with
// its phases scaled to that duration (0: as written, 10 minutes), five simulations one
// after another (about 1.5 GB each).
func TestShardedSimulationEqualsSingleRun(t *testing.T) {
	if testing.Short() {
		t.Skip("five simulated runs of Black Friday")
	}
	const n = 4
	scenarioPath := filepath.Join("..", "..", "scenarios", "black-friday.yaml")
	tmp := t.TempDir()
	base := RunOptions{ScenarioPath: scenarioPath, Backend: "sim", Duration: 10 * time.Second, RateScale: 0.02}
	if d := os.Getenv("SHARDBENCH_SHARD_TEST_DURATION"); d != "" {
		full, err := time.ParseDuration(d)
		if err != nil {
			t.Fatalf("SHARDBENCH_SHARD_TEST_DURATION: %v", err)
		}
		base.Duration, base.RateScale = full, 0 // full rates; 0: the scenario's duration
	}
	single := filepath.Join(tmp, "single")
	o := base
	o.Out = single
	runQuiet(t, o)
	var shards []string
	for i := range n {
		o := base
		o.Out = filepath.Join(tmp, fmt.Sprintf("shard-%d", i))
		o.Shard = fmt.Sprintf("%d/%d", i, n)
		runQuiet(t, o)
		shards = append(shards, o.Out)
	}
	merged := filepath.Join(tmp, "merged")
	if _, err := results.Merge(shards, merged, results.MergeOptions{Tool: results.Tool{Name: "shardbench"}}); err != nil {
		t.Fatal(err)
	}
	a, err := results.Read(single)
	if err != nil {
		t.Fatal(err)
	}
	b, err := results.Read(merged)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Variants) != 14 || len(b.Variants) != len(a.Variants) || !b.Complete {
		t.Fatalf("%d variants single, %d merged (complete %v)", len(a.Variants), len(b.Variants), b.Complete)
	}
	// Every shard sends a real part of the stream. (Not an even one over these first ten
	// seconds: the few sessions created so far take every "recent" pick, and each is one
	// shard's.)
	var parts int64
	for _, d := range shards {
		s, err := results.Read(d)
		if err != nil {
			t.Fatal(err)
		}
		got := s.Variants[0].Totals.Scheduled
		if total := a.Variants[0].Totals.Scheduled; got < total/(2*n) || got > total/2 {
			t.Errorf("%s: %d of %d operations", d, got, total)
		}
		parts += got
		t.Logf("%s: %d of %s's %d operations", filepath.Base(d), got, a.Variants[0].Name, a.Variants[0].Totals.Scheduled)
	}
	if parts != a.Variants[0].Totals.Scheduled {
		t.Errorf("the shards hold %d operations, the single run %d", parts, a.Variants[0].Totals.Scheduled)
	}
	var offered, served, logs, intervals int64
	for i := range a.Variants {
		va := &a.Variants[i]
		vb := b.Variant(va.Name)
		if vb == nil {
			t.Fatalf("variant %s missing from the merge", va.Name)
		}
		compareStats(t, va.Name, va.Totals, vb.Totals)
		if len(va.Ops) != len(vb.Ops) {
			t.Fatalf("%s: %d operations single, %d merged", va.Name, len(va.Ops), len(vb.Ops))
		}
		for _, oa := range va.Ops {
			ob := vb.Op(oa.Op)
			if ob == nil {
				t.Fatalf("%s/%s missing", va.Name, oa.Op)
			}
			compareStats(t, va.Name, oa, *ob)
			if oa.HistogramLog == "" || ob.HistogramLog == "" { // an operation the variant does not serve
				if oa.HistogramLog != ob.HistogramLog {
					t.Errorf("%s/%s: interval log %q single, %q merged", va.Name, oa.Op, oa.HistogramLog, ob.HistogramLog)
				}
				continue
			}
			logs++
			intervals += compareLogs(t, filepath.Join(single, oa.HistogramLog), filepath.Join(merged, ob.HistogramLog))
		}
		offered += va.Totals.Scheduled + va.Totals.Unserved
		served += va.Totals.Scheduled
		if !reflect.DeepEqual(va.Nodes, vb.Nodes) {
			t.Errorf("%s nodes: single %v merged %v", va.Name, va.Nodes, vb.Nodes)
		}
	}
	// Hot partitions and the simulated servers: the same (variants are listed in the order
	// the simulators finished).
	for _, f := range []string{results.HotspotsFile, results.ServerFile} {
		if x, y := variantsByName(t, filepath.Join(single, f)), variantsByName(t, filepath.Join(merged, f)); !reflect.DeepEqual(x, y) || len(x) != 14 {
			t.Errorf("%s differs from the single run's (%d and %d variants)", f, len(x), len(y))
		}
	}
	pa, err := results.ReadTimeseries(single)
	if err != nil {
		t.Fatal(err)
	}
	pb, err := results.ReadTimeseries(merged)
	if err != nil {
		t.Fatal(err)
	}
	if len(pa) != len(pb) {
		t.Fatalf("%d time-series points single, %d merged", len(pa), len(pb))
	}
	t.Logf("%d variants, %d operations offered (%d served by the variant's design), %d interval logs of %d intervals, %d time-series points: merged = single",
		len(a.Variants), offered, served, logs, intervals, len(pa))
	type key struct {
		variant string
		start   float64
	}
	byKey := map[key]results.Point{}
	for _, p := range pb {
		byKey[key{p.Variant, p.StartS}] = p
	}
	for _, x := range pa { // simulators finish in any order: points are matched by variant and second
		y, ok := byKey[key{x.Variant, x.StartS}]
		if !ok {
			t.Fatalf("merged time series lacks %s at %gs", x.Variant, x.StartS)
		}
		if d := x.TargetRate - y.TargetRate; d > 1e-9*x.TargetRate || d < -1e-9*x.TargetRate || x.AchievedRate-y.AchievedRate > 1e-9*x.AchievedRate || y.AchievedRate-x.AchievedRate > 1e-9*x.AchievedRate {
			t.Errorf("%s at %gs: rates single %v/%v merged %v/%v", x.Variant, x.StartS, x.TargetRate, x.AchievedRate, y.TargetRate, y.AchievedRate)
		}
		x.TargetRate, y.TargetRate, x.AchievedRate, y.AchievedRate = 0, 0, 0, 0 // sums of shares: equal up to rounding
		if !reflect.DeepEqual(x, y) {
			t.Errorf("single %+v\nmerged %+v", x, y)
			break
		}
	}
}

func compareStats(t *testing.T, variant string, a, b results.OpStats) {
	t.Helper()
	if a.Scheduled != b.Scheduled || a.Completed != b.Completed || a.OK != b.OK || a.Late != b.Late || a.Dropped != b.Dropped ||
		a.Abandoned != b.Abandoned || a.Unserved != b.Unserved || a.UnservedReason != b.UnservedReason || !reflect.DeepEqual(a.Errors, b.Errors) {
		t.Errorf("%s/%s counts: single %+v merged %+v", variant, a.Op, a, b)
	}
	if a.Scheduled+a.Unserved == 0 {
		t.Errorf("%s/%s: no operations", variant, a.Op)
	}
	// The embedded histograms, byte for byte, and so every percentile.
	if a.Response != b.Response || a.Service != b.Service || a.Lag != b.Lag {
		t.Errorf("%s/%s histograms differ: response %v service %v lag %v", variant, a.Op, a.Response == b.Response, a.Service == b.Service, a.Lag == b.Lag)
	}
	if d := a.TargetRate - b.TargetRate; d > 1e-9*a.TargetRate || d < -1e-9*a.TargetRate || a.AchievedRate != b.AchievedRate {
		t.Errorf("%s/%s rates: single %v/%v merged %v/%v", variant, a.Op, a.TargetRate, a.AchievedRate, b.TargetRate, b.AchievedRate)
	}
}

// compareLogs compares two interval logs interval by interval and returns how many it
// compared.
func compareLogs(t *testing.T, a, b string) int64 {
	t.Helper()
	la, err := results.ReadHistogramLog(a)
	if err != nil {
		t.Fatal(err)
	}
	lb, err := results.ReadHistogramLog(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(la) != len(lb) {
		t.Errorf("%s: %d intervals single, %d merged", filepath.Base(a), len(la), len(lb))
		return 0
	}
	for i := range la {
		if la[i].Tag != lb[i].Tag || la[i].StartS != lb[i].StartS || la[i].EndS != lb[i].EndS || !la[i].Hist.Equals(lb[i].Hist) {
			t.Errorf("%s interval %d (%q at %gs) differs", filepath.Base(a), i, la[i].Tag, la[i].StartS)
			return 0
		}
	}
	return int64(len(la))
}

// variantsByName reads a results file's variants keyed by name, as raw JSON.
func variantsByName(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Variants []json.RawMessage `json:"variants"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, v := range f.Variants {
		var name struct {
			A string `json:"variant"`
			B string `json:"name"`
		}
		if err := json.Unmarshal(v, &name); err != nil {
			t.Fatal(err)
		}
		out[name.A+name.B] = string(v)
	}
	return out
}

// Four real-time shards on the null backend, started together on a common clock, send the
// single run's operations, no more and no fewer, per operation; their seconds line up.
func TestShardedNullRunSendsTheWholeSchedule(t *testing.T) {
	const n = 4
	path := writeFile(t, "small.yaml", strings.Replace(smallScenario, "  max_in_flight: 8\n", "  max_in_flight: 8\n  drain_timeout: 1s\n", 1))
	tmp := t.TempDir()
	single := filepath.Join(tmp, "single")
	runQuiet(t, RunOptions{ScenarioPath: path, Backend: "null", Out: single})
	start := time.Now().Add(1500 * time.Millisecond).UTC().Format(time.RFC3339Nano)
	var wg sync.WaitGroup
	var dirs []string
	for i := range n {
		dir := filepath.Join(tmp, fmt.Sprintf("shard-%d", i))
		dirs = append(dirs, dir)
		wg.Add(1)
		go func() {
			defer wg.Done()
			env := func(k string) string {
				if k == jobIndexEnv {
					return fmt.Sprint(i)
				}
				return ""
			}
			runQuiet(t, RunOptions{ScenarioPath: path, Backend: "null", Out: dir, Shards: n, StartAt: start, getenv: env})
		}()
	}
	wg.Wait()
	merged := filepath.Join(tmp, "merged")
	if _, err := results.Merge(dirs, merged, results.MergeOptions{}); err != nil {
		t.Fatal(err)
	}
	a, _ := results.Read(single)
	b, err := results.Read(merged)
	if err != nil {
		t.Fatal(err)
	}
	va, vb := a.Variants[0], b.Variants[0]
	if vb.Totals.Scheduled != va.Totals.Scheduled || vb.Totals.Completed != va.Totals.Completed || va.Totals.Scheduled != 3500*2 {
		t.Errorf("merged %d scheduled, %d completed; single %d, %d", vb.Totals.Scheduled, vb.Totals.Completed, va.Totals.Scheduled, va.Totals.Completed)
	}
	for _, oa := range va.Ops {
		if ob := vb.Op(oa.Op); ob == nil || ob.Scheduled != oa.Scheduled {
			t.Errorf("%s: merged %+v, single %d", oa.Op, ob, oa.Scheduled)
		}
	}
	pts, err := results.ReadTimeseries(merged)
	if err != nil {
		t.Fatal(err)
	}
	// 3 s of schedule: three seconds on the common clock, and a last partial one for the
	// drain; no interleaved per-shard seconds.
	if len(pts) < 3 || len(pts) > 4 {
		t.Errorf("%d merged points, want the 3-4 seconds of the common clock: %+v", len(pts), pts)
	}
}

// A shard whose common start passed more than a whole schedule ago refuses to run rather
// than send everything at once.
func TestShardRefusesAStartLongPast(t *testing.T) {
	path := writeFile(t, "small.yaml", smallScenario)
	io, _, _ := testIO()
	o := RunOptions{IO: io, ScenarioPath: path, Backend: "null", Out: filepath.Join(t.TempDir(), "out"), Shard: "0/2",
		StartAt: time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)}
	if err := runRun(context.Background(), &o); exitCode(err) != exitUsage || !strings.Contains(err.Error(), "more than the schedule's 3s") {
		t.Errorf("start a minute ago for a 3 s schedule: %v", err)
	}
}
