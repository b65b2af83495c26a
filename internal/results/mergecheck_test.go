package results_test

import (
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/shardbench/shardbench/internal/engine"
	"github.com/shardbench/shardbench/internal/results"
)

// fakeRun writes a minimal results directory: a summary (edited by edit) and, when hs is
// set, a hot-partition analysis.
func fakeRun(t *testing.T, dir string, edit func(*results.Summary), hs *results.Hotspots) string {
	t.Helper()
	d, err := results.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	s := &results.Summary{
		Tool:     results.Tool{Name: "shardbench", Version: "v1"},
		Scenario: results.ScenarioInfo{Name: "bf", Seed: 7, Digest: testDigest, DurationS: 10, ExpectedOps: 100},
		Backend:  results.BackendInfo{Name: "sim", Simulated: true},
		Complete: true,
		Variants: []results.SummaryVariant{{Name: "v"}},
	}
	if edit != nil {
		edit(s)
	}
	if err := d.WriteSummary(s); err != nil {
		t.Fatal(err)
	}
	if hs != nil {
		if err := d.WriteHotspots(hs); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func shardOf(i, n int) func(*results.Summary) {
	return func(s *results.Summary) {
		s.Shard = &results.ShardInfo{Index: i, Count: n, StartAt: "2026-11-28T10:00:00Z"}
	}
}

func both(fs ...func(*results.Summary)) func(*results.Summary) {
	return func(s *results.Summary) {
		for _, f := range fs {
			f(s)
		}
	}
}

// merge refuses what is not the shards of one run or repeats of one scenario, and says
// why, naming the inputs.
func TestMergeRefusesInputsThatDoNotBelongTogether(t *testing.T) {
	cases := []struct {
		name string
		a, b func(*results.Summary)
		want string
	}{
		{"different scenarios", nil, func(s *results.Summary) { s.Scenario.Name, s.Scenario.Digest = "smoke", "sha256:ffff" }, `different scenarios, "bf" and "smoke"`},
		{"same name, different digest", nil, func(s *results.Summary) { s.Scenario.Digest = "sha256:ffff" }, "different file, overrides"},
		{"no digest", nil, func(s *results.Summary) { s.Scenario.Digest = "" }, "has no scenario digest"},
		{"different backends", nil, func(s *results.Summary) { s.Backend = results.BackendInfo{Name: "null"} }, "ran on sim"},
		{"shard and whole run", shardOf(0, 2), nil, "is a shard of a distributed run and"},
		{"shard counts", shardOf(0, 2), shardOf(1, 3), "shard 0 of 2 and"},
		{"seeds", shardOf(0, 2), both(shardOf(1, 2), func(s *results.Summary) { s.Scenario.Seed = 8 }), "ran seed 7 and"},
		{"duplicate shard", shardOf(1, 2), shardOf(1, 2), "are both shard 1 of 2"},
		{"missing shard", shardOf(0, 3), shardOf(2, 3), "shard 1 of 3 missing"},
		{"start times", shardOf(0, 2), both(shardOf(1, 2), func(s *results.Summary) { s.Shard.StartAt = "" }), "share --start-at"},
		{"builds", shardOf(0, 2), both(shardOf(1, 2), func(s *results.Summary) { s.Tool.Version = "v2" }), "one build"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			a := fakeRun(t, filepath.Join(tmp, "a"), c.a, nil)
			b := fakeRun(t, filepath.Join(tmp, "b"), c.b, nil)
			out := filepath.Join(tmp, "out")
			_, err := results.Merge([]string{a, b}, out, results.MergeOptions{})
			if !errors.Is(err, results.ErrMergeInput) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an input error with %q", err, c.want)
			}
			if c.name != "missing shard" && !strings.Contains(err.Error(), a) && !strings.Contains(err.Error(), b) {
				t.Errorf("the error names neither input: %v", err)
			}
			if _, err := results.Read(out); err == nil {
				t.Error("a refused merge wrote a summary")
			}
		})
	}
}

// With --partial a missing shard merges, and the result says it is partial: incomplete,
// the missing shard listed, so gates fail on it.
func TestPartialMergeSaysWhatIsMissing(t *testing.T) {
	tmp := t.TempDir()
	a := fakeRun(t, filepath.Join(tmp, "a"), shardOf(0, 3), nil)
	b := fakeRun(t, filepath.Join(tmp, "b"), shardOf(2, 3), nil)
	out := filepath.Join(tmp, "out")
	sum, err := results.Merge([]string{a, b}, out, results.MergeOptions{Partial: true})
	if err != nil {
		t.Fatal(err)
	}
	back, err := results.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*results.Summary{sum, back} {
		if s.Complete || !reflect.DeepEqual(s.Merge.Missing, []string{"shard 1 of 3"}) || !strings.Contains(s.Interrupted, "shard 1 of 3") {
			t.Errorf("partial merge: complete %v, missing %v, interrupted %q", s.Complete, s.Merge.Missing, s.Interrupted)
		}
	}
}

// Repeats of one scenario of which only some have a hot-partition analysis are refused
// (the merged analysis would silently cover part of the runs), and with --partial merged
// and marked incomplete.
func TestMergeRefusesRunsLackingHotspots(t *testing.T) {
	tmp := t.TempDir()
	hs := &results.Hotspots{Variants: []results.HotspotsVariant{{Variant: "v", Tables: []results.TableHotspots{{Table: "t", Ops: 10}}}}}
	a := fakeRun(t, filepath.Join(tmp, "a"), nil, hs)
	b := fakeRun(t, filepath.Join(tmp, "b"), func(s *results.Summary) { s.Scenario.Seed = 9 }, nil)
	_, err := results.Merge([]string{a, b}, filepath.Join(tmp, "out"), results.MergeOptions{})
	if !errors.Is(err, results.ErrMergeInput) || !strings.Contains(err.Error(), b+" has no hot-partition analysis") {
		t.Fatalf("got %v", err)
	}
	sum, err := results.Merge([]string{a, b}, filepath.Join(tmp, "out2"), results.MergeOptions{Partial: true})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Complete || len(sum.Merge.Missing) != 1 || !strings.Contains(sum.Merge.Missing[0], b) {
		t.Errorf("complete %v, missing %v", sum.Complete, sum.Merge.Missing)
	}
	back, err := results.ReadHotspots(filepath.Join(tmp, "out2"))
	if err != nil || back == nil || len(back.Variants[0].Notes) == 0 {
		t.Fatalf("merged hotspots %+v, %v: want a note that they cover part of the runs", back, err)
	}
}

// Every shard of a run analyses the whole run's hot partitions: the merge takes them as
// they are (no top-K approximation), and says so when two shards disagree.
func TestShardMergeTakesTheWholeRunsHotspots(t *testing.T) {
	tmp := t.TempDir()
	mk := func(hot int64) *results.Hotspots {
		return &results.Hotspots{Variants: []results.HotspotsVariant{{Variant: "v", Database: "cassandra", Tables: []results.TableHotspots{{
			Table: "ks.t", Ops: 1000, Partitions: 900, PartitionsExact: true,
			Top:        []results.PartitionLoad{{Key: "hot", Ops: hot, Share: float64(hot) / 1000}, {Key: "b", Ops: 5, Share: 0.005}},
			Cumulative: []results.SharePoint{{Fraction: 0.01, Share: 0.2}},
		}}, Nodes: []results.NodeLoad{{Node: "n1", Ops: 3000}}}}}
	}
	a := fakeRun(t, filepath.Join(tmp, "a"), shardOf(1, 2), mk(40))
	b := fakeRun(t, filepath.Join(tmp, "b"), shardOf(0, 2), mk(40))
	out := filepath.Join(tmp, "out")
	if _, err := results.Merge([]string{a, b}, out, results.MergeOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := results.ReadHotspots(out)
	if err != nil {
		t.Fatal(err)
	}
	want := mk(40)
	want.Schema, want.Version = results.HotspotsSchema, 1
	if !reflect.DeepEqual(got, want) {
		t.Errorf("merged hotspots\n%+v\nwant the shards' own\n%+v", got, want)
	}
	// A shard that differs is noted; the lowest shard's analysis stands.
	c := fakeRun(t, filepath.Join(tmp, "c"), shardOf(1, 2), mk(41))
	out2 := filepath.Join(tmp, "out2")
	if _, err := results.Merge([]string{b, c}, out2, results.MergeOptions{}); err != nil {
		t.Fatal(err)
	}
	got, _ = results.ReadHotspots(out2)
	if tb := got.Variants[0].Tables[0]; tb.Top[0].Ops != 40 || len(got.Variants[0].Notes) != 1 || !strings.Contains(got.Variants[0].Notes[0], "differ") {
		t.Errorf("differing shards: top %+v, notes %v", tb.Top[0], got.Variants[0].Notes)
	}
}

// Repeated runs of one scenario pool their samples: counts add, histograms merge, rates
// are the runs' mean (they ran one after another, not at once).
func TestMergeRepeatsPoolsSamples(t *testing.T) {
	tmp := t.TempDir()
	one := runShare(t, filepath.Join(tmp, "r1"), engine.Shard{})
	runShare(t, filepath.Join(tmp, "r2"), engine.Shard{})
	out := filepath.Join(tmp, "pooled")
	sum, err := results.Merge([]string{filepath.Join(tmp, "r1"), filepath.Join(tmp, "r2")}, out, results.MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Merge.Kind != results.MergeRepeats || sum.Merge.Runs != 2 || !sum.Complete {
		t.Fatalf("merge %+v complete %v", sum.Merge, sum.Complete)
	}
	f, m := one.Variants[0].Totals, sum.Variants[0].Totals
	if m.Scheduled != 2*f.Scheduled || m.Completed != 2*f.Completed || m.Response.Count != 2*f.Response.Count {
		t.Errorf("pooled counts %d/%d/%d, one run %d/%d/%d", m.Scheduled, m.Completed, m.Response.Count, f.Scheduled, f.Completed, f.Response.Count)
	}
	if math.Abs(m.TargetRate-f.TargetRate) > 1e-6*f.TargetRate || math.Abs(m.AchievedRate-f.AchievedRate) > 1e-6*f.AchievedRate {
		t.Errorf("pooled rates %.3f/%.3f, one run's %.3f/%.3f: repeats' rates are their mean", m.TargetRate, m.AchievedRate, f.TargetRate, f.AchievedRate)
	}
	pts, err := results.ReadTimeseries(out)
	if err != nil {
		t.Fatal(err)
	}
	onePts, _ := results.ReadTimeseries(filepath.Join(tmp, "r1"))
	if len(pts) != len(onePts) {
		t.Fatalf("%d pooled points, %d in one run", len(pts), len(onePts))
	}
	for i := range pts {
		if pts[i].Completed != 2*onePts[i].Completed || math.Abs(pts[i].TargetRate-onePts[i].TargetRate) > 1e-6*math.Max(1, onePts[i].TargetRate) {
			t.Errorf("point %d: pooled %d at %.1f/s, one run %d at %.1f/s", i, pts[i].Completed, pts[i].TargetRate, onePts[i].Completed, onePts[i].TargetRate)
		}
	}
	// A pooled directory pools on: with a third run it stands for two runs.
	runShare(t, filepath.Join(tmp, "r3"), engine.Shard{})
	sum3, err := results.Merge([]string{out, filepath.Join(tmp, "r3")}, filepath.Join(tmp, "pooled3"), results.MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m3 := sum3.Variants[0].Totals
	if sum3.Merge.Runs != 3 || m3.Scheduled != 3*f.Scheduled || math.Abs(m3.TargetRate-f.TargetRate) > 1e-6*f.TargetRate {
		t.Errorf("three runs: %+v, %d operations at %.3f/s", sum3.Merge, m3.Scheduled, m3.TargetRate)
	}
}

// Directories written before scenario digests are matched by their scenario.yaml, the
// seed aside: the same scenario pools (and says how it was matched), another is refused.
func TestMergeMatchesOldRunsByTheirScenario(t *testing.T) {
	tmp := t.TempDir()
	old := func(name, asRun string, seed int64) string {
		d := fakeRun(t, filepath.Join(tmp, name), func(s *results.Summary) { s.Scenario.Digest, s.Scenario.Seed = "", seed }, nil)
		if err := (&results.Dir{Path: d}).WriteFile(results.ScenarioFile, []byte(asRun)); err != nil {
			t.Fatal(err)
		}
		return d
	}
	a := old("a", "name: bf\nseed: 1\nload: {}\n", 1)
	b := old("b", "name: bf\nseed: 2\nload: {}\n", 2)
	c := old("c", "name: bf\nseed: 1\nload: {arrival: uniform}\n", 1)
	sum, err := results.Merge([]string{a, b}, filepath.Join(tmp, "ab"), results.MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if notes := strings.Join(sum.Variants[0].Notes, " "); !strings.Contains(notes, "matched by their scenario.yaml") || !strings.Contains(notes, "seeds 1, 2") {
		t.Errorf("notes %q", notes)
	}
	if _, err := results.Merge([]string{a, c}, filepath.Join(tmp, "ac"), results.MergeOptions{}); !errors.Is(err, results.ErrMergeInput) {
		t.Errorf("old runs of different scenarios merged: %v", err)
	}
}
