package results_test

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/engine"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/schedule"
	"github.com/shardbench/shardbench/workloads"
)

// seqSource yields the schedule's operations with op types cycling over three operations.
type seqSource struct {
	a   *schedule.Arrivals
	seq uint64
}

func (s *seqSource) Next(op *workloads.Op) bool {
	t, ok := s.a.Next()
	if !ok {
		return false
	}
	*op = workloads.Op{Seq: s.seq, Type: uint16(s.seq % 3), Intended: t}
	s.seq++
	return true
}

// testDigest stands for the scenario digest `run` records.
const testDigest = "sha256:0123456789abcdef"

// halves is a two-shard split of the stream by sequence number.
func halves(i int) engine.Shard {
	return engine.Shard{Index: i, Count: 2, Of: func(op *workloads.Op) int { return int(op.Seq % 2) }}
}

// runShare runs the scenario on the delay backend (exponential latencies that depend only
// on the operation's sequence number, 5% errors) in a synctest bubble, as the given shard
// (a zero Shard: the whole stream), into dir.
func runShare(t *testing.T, dir string, shard engine.Shard) *results.Summary {
	t.Helper()
	var sum *results.Summary
	synctest.Test(t, func(t *testing.T) {
		sc := &scenario.Scenario{Name: "merge", Seed: 1, Load: scenario.Load{
			Arrival: "poisson", MaxInFlight: 256, OnFull: scenario.OnFullQueue,
			LateAfter: 50 * time.Millisecond, Timeout: time.Second, DrainTimeout: 5 * time.Second,
			Phases: []scenario.Phase{
				{Name: "warm", Type: "constant", Rate: 1000, Duration: 2 * time.Second},
				{Name: "peak", Type: "ramp", From: 1000, To: 3000, Duration: 2 * time.Second},
			},
		}}
		sch := schedule.New(sc)
		d, err := results.Create(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		be := backend.NewDelay(backend.DelayOptions{Latency: 2 * time.Millisecond, Distribution: "exponential", ErrorRate: 0.05, Seed: 11})
		cfg := engine.Config{
			Scenario: sc, Schedule: sch, Dir: d,
			Ops:       []engine.OpInfo{{Name: "carts.add_item", Kind: "write"}, {Name: "carts.view", Kind: "read"}, {Name: "orders.place", Kind: "write"}},
			NewSource: func() (engine.Source, error) { return &seqSource{a: sch.Arrivals()}, nil },
			Variants:  []engine.VariantBackend{{Name: "v/1", Backend: be}, {Name: "v2", Backend: be}},
			SpinBelow: -1,
			Shard:     shard,
			Digest:    testDigest,
		}
		s, err := engine.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		sum = s
	})
	return sum
}

func decode(t *testing.T, l results.Latency) *hdr.Histogram {
	t.Helper()
	h, err := l.DecodeHistogram()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Merging the two shards of a run gives exactly what one process driving all the
// operations recorded: the same histograms bucket for bucket, the same counters, the same
// percentiles, interval logs and time series.
func TestMergeEqualsSingleRunOfTheSameOperations(t *testing.T) {
	tmp := t.TempDir()
	full := runShare(t, filepath.Join(tmp, "full"), engine.Shard{})
	runShare(t, filepath.Join(tmp, "even"), halves(0))
	runShare(t, filepath.Join(tmp, "odd"), halves(1))

	out := filepath.Join(tmp, "merged")
	_, err := results.Merge([]string{filepath.Join(tmp, "odd"), filepath.Join(tmp, "even")}, out, results.MergeOptions{Tool: results.Tool{Name: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	back, err := results.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.MergedFrom) != 2 || len(back.Variants) != 2 || back.Merge == nil || back.Merge.Kind != results.MergeShards || !back.Complete {
		t.Fatalf("merged summary: %+v", back)
	}
	if back.Shard != nil || back.MergedFrom[0] != filepath.Join(tmp, "even") {
		t.Errorf("the merged run is whole, its shards in index order: shard %+v, from %v", back.Shard, back.MergedFrom)
	}
	if math.Abs(back.Scenario.ExpectedOps-full.Scenario.ExpectedOps) > 1e-9*full.Scenario.ExpectedOps {
		t.Errorf("expected operations: merged %g, single %g", back.Scenario.ExpectedOps, full.Scenario.ExpectedOps)
	}
	for _, fv := range full.Variants {
		mv := back.Variant(fv.Name)
		if mv == nil {
			t.Fatalf("variant %s missing", fv.Name)
		}
		if len(mv.Ops) != len(fv.Ops) {
			t.Fatalf("%s: %d ops merged, %d in the single run", fv.Name, len(mv.Ops), len(fv.Ops))
		}
		pairs := [][2]results.OpStats{{fv.Totals, mv.Totals}}
		for i := range fv.Ops {
			pairs = append(pairs, [2]results.OpStats{fv.Ops[i], *mv.Op(fv.Ops[i].Op)})
		}
		for _, p := range pairs {
			f, m := p[0], p[1]
			if f.Scheduled != m.Scheduled || f.Completed != m.Completed || f.OK != m.OK || f.Late != m.Late || f.Dropped != m.Dropped ||
				f.Errors["server"] != m.Errors["server"] || f.ErrorRate != m.ErrorRate {
				t.Errorf("%s/%s counters: single %+v merged %+v", fv.Name, f.Op, f, m)
			}
			if f.Completed < 1000 || f.Errors["server"] == 0 {
				t.Errorf("%s/%s: the test needs a real sample (completed %d, errors %v)", fv.Name, f.Op, f.Completed, f.Errors)
			}
			for _, which := range []struct {
				name string
				f, m results.Latency
			}{{"response", f.Response, m.Response}, {"service", f.Service, m.Service}, {"lag", f.Lag, m.Lag}} {
				hf, hm := decode(t, which.f), decode(t, which.m)
				if !hf.Equals(hm) {
					t.Errorf("%s/%s %s: merged histogram differs from the single run's", fv.Name, f.Op, which.name)
				}
				a, b := which.f, which.m
				a.Histogram, b.Histogram = "", ""
				if a != b {
					t.Errorf("%s/%s %s percentiles: single %+v merged %+v", fv.Name, f.Op, which.name, a, b)
				}
			}
			if math.Abs(f.TargetRate-m.TargetRate) > 1e-9*f.TargetRate || math.Abs(f.AchievedRate-m.AchievedRate) > 0.01*f.AchievedRate {
				t.Errorf("%s/%s rates: single %.3f/%.3f merged %.3f/%.3f", fv.Name, f.Op, f.TargetRate, f.AchievedRate, m.TargetRate, m.AchievedRate)
			}
		}
		// Interval logs: each merged interval equals the single run's interval.
		for _, fo := range fv.Ops {
			mo := mv.Op(fo.Op)
			fl, err := results.ReadHistogramLog(filepath.Join(tmp, "full", fo.HistogramLog))
			if err != nil {
				t.Fatal(err)
			}
			ml, err := results.ReadHistogramLog(filepath.Join(out, mo.HistogramLog))
			if err != nil {
				t.Fatal(err)
			}
			if len(fl) != len(ml) {
				t.Fatalf("%s/%s: %d intervals merged, %d in the single run", fv.Name, fo.Op, len(ml), len(fl))
			}
			for i := range fl {
				if fl[i].Tag != ml[i].Tag || fl[i].StartS != ml[i].StartS || !fl[i].Hist.Equals(ml[i].Hist) {
					t.Errorf("%s/%s interval %d (tag %q at %gs) differs", fv.Name, fo.Op, i, fl[i].Tag, fl[i].StartS)
					break
				}
			}
		}
	}
	// Time series: counts add, and each second's percentiles come from merged histograms.
	fts, _ := results.ReadTimeseries(filepath.Join(tmp, "full"))
	mts, err := results.ReadTimeseries(out)
	if err != nil {
		t.Fatal(err)
	}
	evenTS, _ := results.ReadTimeseries(filepath.Join(tmp, "even"))
	oddTS, _ := results.ReadTimeseries(filepath.Join(tmp, "odd"))
	if len(fts) != len(mts) || len(evenTS) != len(mts) || len(oddTS) != len(mts) {
		t.Fatalf("time series: %d points merged, %d single", len(mts), len(fts))
	}
	for i := range fts {
		f, m := fts[i], mts[i]
		if f.Variant != m.Variant || f.StartS != m.StartS || f.Completed != m.Completed || f.OK != m.OK || f.P50 != m.P50 || f.P99 != m.P99 || f.P999 != m.P999 || f.Max != m.Max || f.ServiceP99 != m.ServiceP99 {
			t.Errorf("point %d: single %+v\nmerged %+v", i, f, m)
		}
		// Each shard states its even share of the schedule as its target; the merge adds
		// them up to the whole run's.
		if want := evenTS[i].TargetRate + oddTS[i].TargetRate; math.Abs(want-m.TargetRate) > 1e-6*want || math.Abs(f.TargetRate-m.TargetRate) > 1e-6*f.TargetRate {
			t.Errorf("point %d target rate: merged %.3f, shards add to %.3f, single %.3f", i, m.TargetRate, want, f.TargetRate)
		}
		if want := evenTS[i].AchievedRate + oddTS[i].AchievedRate; math.Abs(want-m.AchievedRate) > 1e-6*math.Max(1, want) {
			t.Errorf("point %d achieved rate: merged %.3f, inputs add to %.3f", i, m.AchievedRate, want)
		}
	}
	// The merged directory refuses to be overwritten and inputs are checked.
	if _, err := results.Merge([]string{filepath.Join(tmp, "even"), filepath.Join(tmp, "odd")}, out, results.MergeOptions{}); !errors.Is(err, results.ErrMergeInput) || !strings.Contains(err.Error(), "already holds results") {
		t.Errorf("existing --out: %v", err)
	}
	if _, err := results.Merge([]string{filepath.Join(tmp, "even"), filepath.Join(tmp, "even")}, filepath.Join(tmp, "x"), results.MergeOptions{}); !errors.Is(err, results.ErrMergeInput) {
		t.Errorf("same input twice: %v", err)
	}
	if _, err := results.Merge([]string{filepath.Join(tmp, "even"), tmp}, filepath.Join(tmp, "y"), results.MergeOptions{}); !errors.Is(err, results.ErrMergeInput) || !strings.Contains(err.Error(), "not a results directory") {
		t.Errorf("not a results directory: %v", err)
	}
}

// Merged top-K lists keep honest bounds: every partition's true count lies in
// [Ops − ErrorBound, Ops]; node counts and imbalance are recomputed exactly.
func TestMergeHotspots(t *testing.T) {
	tmp := t.TempDir()
	// True per-run counts of partitions a..e.
	truth := []map[string]int64{
		{"a": 500, "b": 300, "c": 100, "d": 60, "e": 40},
		{"a": 100, "b": 50, "c": 400, "d": 350, "e": 100},
	}
	// Each run's stored top-3 (exact counts here, plus one Space-Saving style overcount).
	tops := [][]results.PartitionLoad{
		{{Key: "a", Ops: 500}, {Key: "b", Ops: 300}, {Key: "c", Ops: 110, ErrorBound: 10}},
		{{Key: "c", Ops: 400}, {Key: "d", Ops: 350}, {Key: "a", Ops: 100}},
	}
	nodes := [][]results.NodeLoad{
		{{Node: "n1", Ops: 600}, {Node: "n2", Ops: 400}},
		{{Node: "n1", Ops: 200}, {Node: "n2", Ops: 600}, {Node: "n3", Ops: 200}},
	}
	var dirs []string
	for i := range truth {
		d := filepath.Join(tmp, string(rune('p'+i)))
		dirs = append(dirs, d)
		rd, err := results.Create(d)
		if err != nil {
			t.Fatal(err)
		}
		if err := rd.WriteSummary(&results.Summary{Scenario: results.ScenarioInfo{Name: "s", Digest: testDigest}, Variants: []results.SummaryVariant{{Name: "v"}}}); err != nil {
			t.Fatal(err)
		}
		var ops int64
		for _, n := range truth[i] {
			ops += n
		}
		hs := &results.Hotspots{Variants: []results.HotspotsVariant{{Variant: "v", Database: "cassandra", Source: "computed",
			Tables: []results.TableHotspots{{Table: "ks.t", Ops: ops, Partitions: 5, PartitionsExact: true, Top: tops[i],
				Projections: []results.SizeProjection{{Key: "a", ProjectedBytes: 60e6, LimitBytes: 100e6}}}},
			Nodes: nodes[i]}}}
		if err := rd.WriteHotspots(hs); err != nil {
			t.Fatal(err)
		}
		rd.Close()
	}
	out := filepath.Join(tmp, "m")
	if _, err := results.Merge(dirs, out, results.MergeOptions{}); err != nil {
		t.Fatal(err)
	}
	hs, err := results.ReadHotspots(out)
	if err != nil || hs == nil {
		t.Fatalf("merged hotspots: %v", err)
	}
	tb := hs.Variants[0].Tables[0]
	if tb.Ops != 2000 || tb.PartitionsExact {
		t.Errorf("table ops %d (want 2000), partitions exact %v (runs may share partitions: not exact)", tb.Ops, tb.PartitionsExact)
	}
	for _, p := range tb.Top {
		actual := truth[0][p.Key] + truth[1][p.Key]
		if actual > p.Ops || actual < p.Ops-p.ErrorBound {
			t.Errorf("partition %s: true count %d outside [%d, %d]", p.Key, actual, p.Ops-p.ErrorBound, p.Ops)
		}
		if math.Abs(p.Share-float64(p.Ops)/2000) > 1e-12 {
			t.Errorf("partition %s share %g", p.Key, p.Share)
		}
	}
	if tb.Top[0].Key != "a" && tb.Top[0].Key != "c" {
		t.Errorf("heaviest merged partition %s", tb.Top[0].Key)
	}
	// d was not in run 1's top-3: its count there is at most 110 (run 1's smallest listed).
	for _, p := range tb.Top {
		if p.Key == "d" && (p.Ops != 350+110 || p.ErrorBound != 110) {
			t.Errorf("d: ops %d ± %d, want 460 with error bound 110", p.Ops, p.ErrorBound)
		}
	}
	// Projections of a partition both runs project add up; 120 MB now exceeds 100 MB.
	if pr := tb.Projections[0]; pr.ProjectedBytes != 120e6 || !pr.Exceeds {
		t.Errorf("projection %+v", pr)
	}
	v := hs.Variants[0]
	if len(v.Nodes) != 3 || v.Nodes[0].Ops != 800 || v.Nodes[1].Ops != 1000 || v.Nodes[2].Ops != 200 {
		t.Errorf("nodes %+v", v.Nodes)
	}
	// mean 2000/3: max/mean = 1000/(2000/3) = 1.5; n3 is 70% below the mean, n2 50% above.
	if math.Abs(v.Balance.MaxOverMean-1.5) > 1e-12 || len(v.Balance.Over30) != 2 {
		t.Errorf("balance %+v", v.Balance)
	}
}
