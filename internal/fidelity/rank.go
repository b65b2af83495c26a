package fidelity

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/shardbench/shardbench/internal/results"
)

// capacityTie is how close two capacities may be and still tie: the precision a capacity
// search bisects to is of that order.
const capacityTie = 0.10

// measure is one way of ordering variants, best first.
type measure struct {
	by string
	// value is the variant's figure on the real (real=true) or simulated side; ok=false
	// when that side has none.
	value      func(fv *results.FidelityVariant, real bool) (float64, bool)
	lowerFirst bool
	// tie is the tolerance within which two real values tie, absolute or relative to the
	// smaller.
	tie      float64
	relative bool
}

func measures(tol results.FidelityTolerance) []measure {
	return []measure{
		{by: "hottest node", lowerFirst: true, tie: tol.SharePP / 100, value: func(fv *results.FidelityVariant, real bool) (float64, bool) {
			if real {
				return fv.HottestReal.Share, fv.HottestReal.Node != ""
			}
			return fv.HottestSim.Share, fv.HottestSim.Node != ""
		}},
		{by: "p99", lowerFirst: true, tie: tol.Latency, relative: true, value: func(fv *results.FidelityVariant, real bool) (float64, bool) {
			if real {
				return fv.All.Real.P99, fv.All.Count > 0
			}
			return fv.All.Sim.P99, fv.All.SimCount > 0
		}},
		{by: "capacity", tie: capacityTie, relative: true, value: func(fv *results.FidelityVariant, real bool) (float64, bool) {
			c := fv.CapacitySim
			if real {
				c = fv.CapacityReal
			}
			if c == nil {
				return 0, false
			}
			return *c, true
		}},
	}
}

// rank orders the variants of every design with several (a sweep) and, when the run
// holds more than one design, all of them, by every measure both sides have for each.
func rank(vs []Pair, fvs []results.FidelityVariant, tol results.FidelityTolerance) []results.FidelityRanking {
	var groups []string
	members := map[string][]int{}
	for i, v := range vs {
		if _, ok := members[v.Design]; !ok {
			groups = append(groups, v.Design)
		}
		members[v.Design] = append(members[v.Design], i)
	}
	var out []results.FidelityRanking
	for _, m := range measures(tol) {
		for _, g := range groups {
			if len(members[g]) >= 2 {
				if r, ok := order(g, members[g], fvs, m); ok {
					out = append(out, r)
				}
			}
		}
		if len(groups) > 1 {
			all := make([]int, len(fvs))
			for i := range all {
				all[i] = i
			}
			if r, ok := order("all", all, fvs, m); ok {
				out = append(out, r)
			}
		}
	}
	return out
}

// order ranks the group's variants by m on both sides; ok=false when a variant lacks the
// figure on either side.
func order(group string, idx []int, fvs []results.FidelityVariant, m measure) (results.FidelityRanking, bool) {
	type row struct {
		name      string
		real, sim float64
	}
	rows := make([]row, len(idx))
	for k, i := range idx {
		r, ok1 := m.value(&fvs[i], true)
		s, ok2 := m.value(&fvs[i], false)
		if !ok1 || !ok2 {
			return results.FidelityRanking{}, false
		}
		rows[k] = row{fvs[i].Name, r, s}
	}
	sorted := func(val func(row) float64) []row {
		out := slices.Clone(rows)
		slices.SortStableFunc(out, func(a, b row) int {
			c := cmp.Compare(val(a), val(b))
			if !m.lowerFirst {
				c = -c
			}
			return cmp.Or(c, cmp.Compare(a.name, b.name))
		})
		return out
	}
	r := results.FidelityRanking{Group: group, By: m.by, Tie: m.tie, Agree: true}
	for _, x := range sorted(func(x row) float64 { return x.real }) {
		r.Real, r.RealValues = append(r.Real, x.name), append(r.RealValues, x.real)
	}
	for _, x := range sorted(func(x row) float64 { return x.sim }) {
		r.Sim, r.SimValues = append(r.Sim, x.name), append(r.SimValues, x.sim)
	}
	for i := range rows {
		for j := i + 1; j < len(rows); j++ {
			a, b := rows[i], rows[j]
			if m.tied(a.real, b.real) {
				continue // the cluster does not tell them apart: no order to reproduce
			}
			if math.Signbit(a.real-b.real) != math.Signbit(a.sim-b.sim) || a.sim == b.sim {
				if a.real > b.real == m.lowerFirst {
					a, b = b, a // name the one the cluster puts first first
				}
				r.Agree = false
				r.Discordant = append(r.Discordant, fmt.Sprintf("the cluster puts %s (%s) before %s (%s), the simulation does not (%s, %s)",
					a.name, m.format(a.real), b.name, m.format(b.real), m.format(a.sim), m.format(b.sim)))
			}
		}
	}
	return r, true
}

func (m measure) tied(a, b float64) bool {
	d := math.Abs(a - b)
	if m.relative {
		return d <= m.tie*math.Min(math.Abs(a), math.Abs(b))
	}
	return d <= m.tie
}

func (m measure) format(x float64) string {
	switch m.by {
	case "hottest node":
		return fmt.Sprintf("%.1f%%", 100*x)
	case "p99":
		return fmt.Sprintf("%.3g ms", x)
	}
	return fmt.Sprintf("%.3g×", x)
}
