// Package fidelity holds a simulated run against the real run it simulates: where the
// requests landed (each node's share, from the servers' own counters beside the
// simulated nodes'), per-operation latency predicted against measured, and whether the
// simulation orders the variants as the real cluster does. It compares numbers only:
// the command gathers them (cmd/shardbench/fidelity.go) and the report renders them.
package fidelity

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/shardbench/shardbench/internal/results"
)

// Count is one node's requests for one table: as a replica (reads asked of it, mutations
// applied) and as the coordinator.
type Count struct {
	Node, Table                         string
	Reads, Writes                       int64
	CoordinatorReads, CoordinatorWrites int64
}

// Op is one operation's service time: how many, mean, p50 and p99 in milliseconds.
type Op struct {
	Op             string
	Count          int64
	Mean, P50, P99 float64
}

// Side is one variant as run on one side, real or simulated.
type Side struct {
	Counts []Count
	Ops    []Op
	// All is every served operation together.
	All Op
	// Capacity is the largest multiple of the load within the SLO (nil: not searched).
	Capacity *float64
}

// Pair is one design variant's real run beside its simulation.
type Pair struct {
	Name, Design string
	// Calibrated: the simulation was fitted to this variant's real run.
	Calibrated bool
	Real, Sim  Side
	// Utilisation is the simulated busiest node's mean utilisation.
	Utilisation float64
	Notes       []string
}

// DefaultTolerance is the agreement the project holds the simulator to (issue 27): node
// shares within 2 percentage points, predicted p50 and p99 within 25%, judged at
// simulated utilisations up to 0.7 on operations measured at least 200 times.
var DefaultTolerance = results.FidelityTolerance{SharePP: 2, Latency: 0.25, Utilisation: 0.7, MinOps: 200}

// FromSummary is a summary variant's served operations (service time) and its totals.
func FromSummary(v *results.SummaryVariant) (ops []Op, all Op) {
	conv := func(name string, l results.Latency) Op {
		return Op{Op: name, Count: l.Count, Mean: l.Mean, P50: l.P50, P99: l.P99}
	}
	for i := range v.Ops {
		o := &v.Ops[i]
		if !o.Served() || o.Service.Count == 0 {
			continue
		}
		ops = append(ops, conv(o.Op, o.Service))
	}
	return ops, conv("all", v.Totals.Service)
}

// Compare holds every variant's simulation against its real run and ranks the variants
// of each design (and all of them) on both sides.
func Compare(vs []Pair, tol results.FidelityTolerance) ([]results.FidelityVariant, []results.FidelityRanking, results.FidelityVerdict) {
	out := make([]results.FidelityVariant, len(vs))
	for i := range vs {
		out[i] = compareVariant(&vs[i], tol)
	}
	ranks := rank(vs, out, tol)
	return out, ranks, verdict(out, ranks, tol)
}

func compareVariant(v *Pair, tol results.FidelityTolerance) results.FidelityVariant {
	fv := results.FidelityVariant{Name: v.Name, Design: v.Design, Calibrated: v.Calibrated, Utilisation: v.Utilisation, Notes: v.Notes}
	replica := func(c Count) int64 { return c.Reads + c.Writes }
	coord := func(c Count) int64 { return c.CoordinatorReads + c.CoordinatorWrites }
	fv.Nodes = shares(v.Real.Counts, v.Sim.Counts, replica, false)
	fv.Tables = shares(v.Real.Counts, v.Sim.Counts, replica, true)
	fv.Coordinators = shares(v.Real.Counts, v.Sim.Counts, coord, false)
	for _, s := range fv.Nodes {
		fv.MaxNodeDiffPP = max(fv.MaxNodeDiffPP, math.Abs(s.DiffPP))
		if s.Real > fv.HottestReal.Share {
			fv.HottestReal = results.FidelityHot{Node: s.Node, Share: s.Real}
		}
		if s.Sim > fv.HottestSim.Share {
			fv.HottestSim = results.FidelityHot{Node: s.Node, Share: s.Sim}
		}
	}
	sim := map[string]Op{}
	for _, o := range v.Sim.Ops {
		sim[o.Op] = o
	}
	for _, r := range v.Real.Ops {
		fv.Ops = append(fv.Ops, latency(r, sim[r.Op], v, tol))
	}
	fv.All = latency(v.Real.All, v.Sim.All, v, tol)
	fv.CapacityReal, fv.CapacitySim = v.Real.Capacity, v.Sim.Capacity
	return fv
}

// shares is each node's (perTable: each node and table's) share of the requests f counts,
// real beside simulated, nodes of both sides.
func shares(real, sim []Count, f func(Count) int64, perTable bool) []results.FidelityShare {
	type key struct{ node, table string }
	rows := map[key]*results.FidelityShare{}
	totals := map[[2]string]int64{} // by side ("r"/"s") and table ("" unless perTable)
	add := func(cs []Count, side string) {
		for _, c := range cs {
			k := key{node: c.Node}
			if perTable {
				k.table = c.Table
			}
			r := rows[k]
			if r == nil {
				r = &results.FidelityShare{Node: k.node, Table: k.table}
				rows[k] = r
			}
			n := f(c)
			if side == "r" {
				r.RealCount += n
			} else {
				r.SimCount += n
			}
			totals[[2]string{side, k.table}] += n
		}
	}
	add(real, "r")
	add(sim, "s")
	var out []results.FidelityShare
	for _, r := range rows {
		rt, st := totals[[2]string{"r", r.Table}], totals[[2]string{"s", r.Table}]
		if perTable && rt == 0 && st == 0 {
			continue // a table of the design this run never touched
		}
		if rt > 0 {
			r.Real = float64(r.RealCount) / float64(rt)
		}
		if st > 0 {
			r.Sim = float64(r.SimCount) / float64(st)
		}
		r.DiffPP = round(100*(r.Sim-r.Real), 3)
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b results.FidelityShare) int {
		return cmp.Or(cmp.Compare(a.Table, b.Table), cmp.Compare(a.Node, b.Node))
	})
	return out
}

// latency compares one operation; it is judged when it is a prediction, measured often
// enough, at a utilisation within the tolerance.
func latency(r, s Op, v *Pair, tol results.FidelityTolerance) results.FidelityLatency {
	l := results.FidelityLatency{Op: r.Op, Count: r.Count, SimCount: s.Count,
		Real: results.FidelityStat{Mean: r.Mean, P50: r.P50, P99: r.P99},
		Sim:  results.FidelityStat{Mean: s.Mean, P50: s.P50, P99: s.P99}}
	rel := func(sim, real float64) float64 {
		if real <= 0 {
			return 0
		}
		return round((sim-real)/real, 4)
	}
	l.Error = results.FidelityStat{Mean: rel(s.Mean, r.Mean), P50: rel(s.P50, r.P50), P99: rel(s.P99, r.P99)}
	switch {
	case v.Calibrated:
		l.Why = "calibration variant (in-sample)"
	case s.Count == 0:
		l.Why = "not simulated"
	case r.Count < tol.MinOps:
		l.Why = fmt.Sprintf("%d measured (fewer than %d)", r.Count, tol.MinOps)
	case v.Utilisation > tol.Utilisation:
		l.Why = fmt.Sprintf("simulated utilisation %.0f%% (above %.0f%%)", 100*v.Utilisation, 100*tol.Utilisation)
	default:
		l.Judged = true
		l.Within = math.Abs(l.Error.P50) <= tol.Latency && math.Abs(l.Error.P99) <= tol.Latency
	}
	return l
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// verdict says, per criterion, whether the simulation met it and by how much.
func verdict(vs []results.FidelityVariant, ranks []results.FidelityRanking, tol results.FidelityTolerance) results.FidelityVerdict {
	v := results.FidelityVerdict{Placement: len(vs) > 0, Latency: true, Ranking: true}
	worst, worstAt := -1.0, "" // the first node with the largest difference, in order
	for _, fv := range vs {
		if len(fv.Nodes) == 0 {
			v.Placement = false
			v.Lines = append(v.Lines, fmt.Sprintf("placement: %s has no per-node counts on one side", fv.Name))
			continue
		}
		for _, n := range fv.Nodes {
			if d := math.Abs(n.DiffPP); d > worst {
				worst, worstAt = d, fv.Name+" "+n.Node
			}
		}
	}
	if v.Placement {
		v.Placement = worst <= tol.SharePP
		word := "within"
		if !v.Placement {
			word = "NOT within"
		}
		v.Lines = append(v.Lines,
			fmt.Sprintf("placement: every node's share of the replica requests %s %.1f pp of the "+
				"servers' counters (largest difference %.2f pp, %s)",
				word, tol.SharePP, worst, worstAt))
	}

	judged, within := 0, 0
	worstErr, worstOp := 0.0, "" // the first figure with the largest error, in order
	for _, fv := range vs {
		for _, l := range fv.Ops {
			if !l.Judged {
				continue
			}
			judged++
			if l.Within {
				within++
			}
			for _, e := range []struct {
				what string
				err  float64
			}{{"p50", l.Error.P50}, {"p99", l.Error.P99}} {
				if worstOp == "" || math.Abs(e.err) > math.Abs(worstErr) {
					worstErr, worstOp = e.err, fmt.Sprintf("%s %s %s", fv.Name, l.Op, e.what)
				}
			}
		}
	}
	v.Latency = judged > 0 && within == judged
	switch {
	case judged == 0:
		v.Lines = append(v.Lines, "latency: no operation could be judged (see each row's reason)")
	default:
		v.Lines = append(v.Lines,
			fmt.Sprintf("latency: predicted p50 and p99 within %.0f%% for %d of %d operations "+
				"judged (largest error %+.0f%%, %s)",
				100*tol.Latency, within, judged, 100*worstErr, worstOp))
	}

	for _, r := range ranks {
		if !r.Agree {
			v.Ranking = false
		}
		word := "same order"
		if !r.Agree {
			word = "different order (" + strings.Join(r.Discordant, "; ") + ")"
		}
		v.Lines = append(v.Lines, fmt.Sprintf("ranking by %s, %s: %s", r.By, r.Group, word))
	}
	if len(ranks) == 0 {
		v.Lines = append(v.Lines, "ranking: fewer than two variants to order")
	}
	return v
}
