package fidelity

import (
	"math"
	"strings"
	"testing"

	"github.com/shardbench/shardbench/internal/results"
)

// counts is a variant's per-node counts of one table: replica requests (reads) and
// coordinated requests, by node.
func counts(table string, replica, coord map[string]int64) []Count {
	var out []Count
	for n, r := range replica {
		out = append(out, Count{Node: n, Table: table, Reads: r, CoordinatorReads: coord[n]})
	}
	return out
}

func variant(name, design string, real, sim map[string]int64, realOps, simOps []Op) Pair {
	v := Pair{Name: name, Design: design}
	v.Real.Counts = counts("t", real, real)
	v.Sim.Counts = counts("t", sim, sim)
	v.Real.Ops, v.Sim.Ops = realOps, simOps
	v.Real.All, v.Sim.All = sumOp(realOps), sumOp(simOps)
	return v
}

// sumOp stands for a variant's totals: the largest p99 of its operations.
func sumOp(ops []Op) Op {
	all := Op{Op: "all"}
	for _, o := range ops {
		all.Count += o.Count
		all.P50, all.P99, all.Mean = max(all.P50, o.P50), max(all.P99, o.P99), max(all.Mean, o.Mean)
	}
	return all
}

func ops(p50, p99 float64) []Op {
	return []Op{{Op: "sessions.read", Count: 1000, Mean: p50 * 1.2, P50: p50, P99: p99}}
}

// Shares are of all the variant's replica requests per node; the difference is in
// percentage points; the verdict holds while every node is within the tolerance and
// fails (naming the node) when one is not.
func TestPlacementShares(t *testing.T) {
	real := map[string]int64{"a": 500, "b": 300, "c": 200}
	near := map[string]int64{"a": 5100, "b": 2950, "c": 1950} // 51.0, 29.5, 19.5 %
	vs := []Pair{variant("v1", "d1", real, near, ops(2, 10), ops(2, 10))}
	fv, _, verdict := Compare(vs, DefaultTolerance)
	got := map[string]results.FidelityShare{}
	for _, s := range fv[0].Nodes {
		got[s.Node] = s
	}
	if a := got["a"]; a.Real != 0.5 || a.Sim != 0.51 || math.Abs(a.DiffPP-1) > 1e-9 || a.RealCount != 500 || a.SimCount != 5100 {
		t.Errorf("node a: %+v", a)
	}
	if fv[0].HottestReal.Node != "a" || fv[0].HottestSim.Node != "a" || math.Abs(fv[0].MaxNodeDiffPP-1) > 1e-9 {
		t.Errorf("hottest %+v / %+v, max diff %v", fv[0].HottestReal, fv[0].HottestSim, fv[0].MaxNodeDiffPP)
	}
	if !verdict.Placement {
		t.Errorf("1 pp off should pass: %v", verdict.Lines)
	}
	far := map[string]int64{"a": 530, "b": 270, "c": 200} // a +3 pp
	vs = append(vs, variant("v2", "d1", real, far, ops(2, 10), ops(2, 10)))
	_, _, verdict = Compare(vs, DefaultTolerance)
	if verdict.Placement || !strings.Contains(verdict.Lines[0], "v2 a") || !strings.Contains(verdict.Lines[0], "3.00 pp") {
		t.Errorf("3 pp off must fail and name v2's node a: %v", verdict.Lines)
	}
}

// A node one side never saw counts as a share of 0 on that side; a table neither side
// touched is left out of the per-table rows.
func TestSharesOfMissingNodesAndTables(t *testing.T) {
	v := Pair{Name: "v", Design: "d"}
	v.Real.Counts = []Count{{Node: "a", Table: "t", Writes: 10}, {Node: "b", Table: "t", Writes: 10}, {Node: "a", Table: "idle"}}
	v.Sim.Counts = []Count{{Node: "a", Table: "t", Writes: 20}}
	fv, _, _ := Compare([]Pair{v}, DefaultTolerance)
	for _, s := range fv[0].Nodes {
		if s.Node == "b" && (s.Real != 0.5 || s.Sim != 0 || s.DiffPP != -50) {
			t.Errorf("node b: %+v", s)
		}
	}
	for _, s := range fv[0].Tables {
		if s.Table == "idle" {
			t.Errorf("untouched table listed: %+v", s)
		}
	}
}

// Latency is judged on predictions only: not on the calibration variant, not on
// operations measured too rarely, not above the utilisation limit. A p99 30% off fails.
func TestLatencyJudgement(t *testing.T) {
	even := map[string]int64{"a": 1, "b": 1}
	cal := variant("cal", "d1", even, even, ops(2, 10), ops(2, 10))
	cal.Calibrated = true
	good := variant("good", "d2", even, even, ops(2, 10), ops(2.2, 11)) // +10%
	bad := variant("bad", "d3", even, even, ops(2, 10), ops(2, 13))     // p99 +30%
	rare := variant("rare", "d4", even, even, []Op{{Op: "x", Count: 50, P50: 1, P99: 2}}, []Op{{Op: "x", Count: 50, P50: 9, P99: 9}})
	hot := variant("hot", "d5", even, even, ops(2, 10), ops(9, 90))
	hot.Utilisation = 0.9
	fv, _, verdict := Compare([]Pair{cal, good, bad, rare, hot}, DefaultTolerance)
	want := map[string]struct {
		judged, within bool
		why            string
	}{
		"cal":  {false, false, "calibration"},
		"good": {true, true, ""},
		"bad":  {true, false, ""},
		"rare": {false, false, "fewer than 200"},
		"hot":  {false, false, "utilisation 90%"},
	}
	for _, v := range fv {
		l, w := v.Ops[0], want[v.Name]
		if l.Judged != w.judged || l.Within != w.within || !strings.Contains(l.Why, w.why) {
			t.Errorf("%s: judged %v within %v why %q; want %+v", v.Name, l.Judged, l.Within, l.Why, w)
		}
	}
	if e := fv[2].Ops[0].Error.P99; math.Abs(e-0.3) > 1e-9 {
		t.Errorf("bad p99 error %v, want +0.3", e)
	}
	if verdict.Latency || !strings.Contains(verdict.Lines[1], "1 of 2 operations judged") || !strings.Contains(verdict.Lines[1], "bad sessions.read p99") {
		t.Errorf("latency verdict: %v", verdict.Lines)
	}
	_, _, verdict = Compare([]Pair{cal, good}, DefaultTolerance)
	if !verdict.Latency {
		t.Errorf("only good predictions: %v", verdict.Lines)
	}
	_, _, verdict = Compare([]Pair{cal}, DefaultTolerance)
	if verdict.Latency {
		t.Errorf("nothing judged must not pass: %v", verdict.Lines)
	}
}

// Rankings: per design with several variants and over all; a pair the cluster tells
// apart but the simulation orders the other way is discordant; a pair the cluster does
// not tell apart (within the tie) is not judged.
func TestRankings(t *testing.T) {
	mk := func(name, design string, realHot, simHot int64, realP99, simP99 float64) Pair {
		r := map[string]int64{"a": realHot, "b": 100 - realHot}
		s := map[string]int64{"a": simHot, "b": 100 - simHot}
		return variant(name, design, r, s, ops(1, realP99), ops(1, simP99))
	}
	vs := []Pair{
		mk("s1-one", "s1", 90, 88, 10, 10),
		mk("s1-many", "s1", 60, 61, 20, 20),
		mk("s2", "s2", 70, 55, 30, 31), // the simulation puts s2 below s1-many by hottest node
		mk("s3", "s3", 71, 71, 40, 40), // ties s2 on the cluster (within 2 pp)
	}
	_, ranks, verdict := Compare(vs, DefaultTolerance)
	find := func(group, by string) results.FidelityRanking {
		for _, r := range ranks {
			if r.Group == group && r.By == by {
				return r
			}
		}
		t.Fatalf("no ranking %s by %s in %+v", group, by, ranks)
		return results.FidelityRanking{}
	}
	s1 := find("s1", "hottest node")
	if !s1.Agree || strings.Join(s1.Real, ",") != "s1-many,s1-one" {
		t.Errorf("s1 by hottest node: %+v", s1)
	}
	all := find("all", "hottest node")
	if all.Agree || len(all.Discordant) != 1 || !strings.Contains(all.Discordant[0], "puts s1-many (60.0%) before s2 (70.0%)") {
		t.Errorf("all by hottest node: %+v", all)
	}
	p99 := find("all", "p99")
	if !p99.Agree || strings.Join(p99.Sim, ",") != "s1-one,s1-many,s2,s3" {
		t.Errorf("all by p99: %+v", p99)
	}
	for _, r := range ranks {
		if r.By == "capacity" {
			t.Errorf("capacity ranked without capacities: %+v", r)
		}
	}
	if verdict.Ranking {
		t.Errorf("a discordant pair must fail the ranking: %v", verdict.Lines)
	}

	// Two variants the cluster cannot tell apart (70% and 71%: within 2 pp) may come in
	// either order from the simulation.
	_, ranks, verdict = Compare([]Pair{mk("x", "s4", 70, 80, 10, 10), mk("y", "s5", 71, 60, 10, 10)}, DefaultTolerance)
	if !verdict.Ranking || !ranks[0].Agree || ranks[0].Sim[0] != "y" {
		t.Errorf("a tie on the cluster must not be judged: %+v", ranks)
	}

	// With capacities on both sides they are ranked too, highest first.
	for i, c := range []float64{4, 2, 1, 3} {
		real, sim := c, c*1.01
		vs[i].Real.Capacity, vs[i].Sim.Capacity = &real, &sim
	}
	_, ranks, _ = Compare(vs, DefaultTolerance)
	capAll := results.FidelityRanking{}
	for _, r := range ranks {
		if r.Group == "all" && r.By == "capacity" {
			capAll = r
		}
	}
	if !capAll.Agree || strings.Join(capAll.Real, ",") != "s1-one,s3,s1-many,s2" {
		t.Errorf("capacity ranking: %+v", capAll)
	}
}

// FromSummary keeps served operations with service times and takes the totals.
func TestFromSummary(t *testing.T) {
	v := &results.SummaryVariant{Totals: results.OpStats{Service: results.Latency{Count: 3, Mean: 2, P50: 1, P99: 5}},
		Ops: []results.OpStats{
			{Op: "a", Scheduled: 3, Service: results.Latency{Count: 3, Mean: 2, P50: 1, P99: 5}},
			{Op: "b", Unserved: 7},
		}}
	ops, all := FromSummary(v)
	if len(ops) != 1 || ops[0] != (Op{Op: "a", Count: 3, Mean: 2, P50: 1, P99: 5}) || all.P99 != 5 || all.Op != "all" {
		t.Errorf("ops %+v all %+v", ops, all)
	}
}
