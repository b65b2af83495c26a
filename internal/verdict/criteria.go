package verdict

import (
	"cmp"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/units"
	"github.com/shardbench/shardbench/workloads"
	_ "github.com/shardbench/shardbench/workloads/all" // the registry entityOfOp reads
)

// The rules' thresholds (docs/verdict.md).
const (
	// Capacity: a design that does not sustain the scenario's own peak fails; one with
	// less than half again to spare is a caution (a forecast off by half breaks it).
	CapacityPass = 1.5
	CapacityWarn = 1.0
	// Size: a partition projected past its limit fails; past half of it is a caution.
	SizeWarn = 0.5
	// Hottest share: the heaviest partition's share of its table fails at 20% and is a
	// caution at 5%, each only when it is also more than twice its fair share (one over
	// the partitions, or over the nodes when there are fewer partitions than nodes).
	HotFail = 0.20
	HotWarn = 0.05
	// HotMinOps is the fewest operations a table needs for its hottest share to be judged.
	HotMinOps = 1000
	// Imbalance: busiest node or shard against the mean. Seed 001 alerts at 30% above
	// the mean; twice the mean fails.
	ImbalanceWarn = 1.3
	ImbalanceFail = 2.0
)

func unknown(name, why string) results.Criterion {
	return results.Criterion{Name: name, Status: results.VerdictUnknown, Text: "—", Reason: why}
}

// entityOfOp is the entity an operation acts on ("catalog.product_read" → products).
func entityOfOp(op string) string {
	if m, _, _ := workloads.LookupOp(op); m != nil {
		return m.Entity
	}
	return ""
}

// entityOfWorkload is the entity a workload's operations act on.
func entityOfWorkload(w string) string {
	if m := workloads.Lookup(w); m != nil {
		return m.Entity
	}
	return w
}

// capacityCriterion judges the largest multiple of the load at which the SLO held: the
// variant's answer, or for an entity the largest multiple at which the checks on the
// entity's operations held below the first at which they failed.
func capacityCriterion(c *results.Capacity, variant, entity string) results.Criterion {
	const name = results.CriterionCapacity
	if c == nil {
		return unknown(name, "no capacity search was given (shardbench capacity)")
	}
	cv := c.Variant(variant)
	if cv == nil {
		return unknown(name, "the capacity search did not include this variant")
	}
	cr := results.Criterion{Name: name, Evidence: results.CapacityFile, Anchor: "capacity"}
	var sustains, breaks float64
	above := false
	if entity == "" {
		sustains, breaks = cv.Sustains, cv.Breaks
		above = cv.Outcome == results.CapacityAboveRange
	} else {
		var ok bool
		if sustains, breaks, ok = entityCapacity(cv.Curve, entity); !ok {
			return unknown(name, "the capacity search has no per-workload figures for "+entity)
		}
		above = breaks == 0
	}
	cr.Value = sustains
	rate := func(m float64) string { return units.Count(m * c.PeakRate) }
	why := ""
	if entity == "" && cv.BreaksFirst != nil {
		why = "; breaks first: " + cv.BreaksFirst.Summary
	}
	switch {
	case above:
		cr.Text = fmt.Sprintf("≥ ×%s", mult(sustains))
		cr.Status = results.VerdictPass
		cr.Reason = fmt.Sprintf("held its SLO at every multiple tried, up to ×%s (%s ops/s at the peak)", mult(sustains), rate(sustains))
	case sustains == 0:
		cr.Text = "none"
		cr.Status = results.VerdictFail
		cr.Reason = fmt.Sprintf("failed its SLO at the smallest multiple tried (×%s)%s", mult(breaks), why)
	case sustains < CapacityWarn:
		cr.Text = "×" + mult(sustains)
		cr.Status = results.VerdictFail
		cr.Reason = fmt.Sprintf("breaks at ×%s (%s ops/s), short of the scenario's peak (%s ops/s)%s", mult(breaks), rate(breaks), rate(1), why)
	default:
		cr.Text = "×" + mult(sustains)
		cr.Status = results.VerdictPass
		if sustains < CapacityPass {
			cr.Status = results.VerdictWarn
		}
		cr.Reason = fmt.Sprintf("sustains ×%s (%s ops/s at the peak): %+.0f%% headroom%s", mult(sustains), rate(sustains), 100*(sustains-1), why)
	}
	if entity == "" && cv.Outcome != results.CapacityFound && cv.Outcome != results.CapacityAboveRange && cv.Outcome != results.CapacityBelowRange {
		cr.Reason += " (search " + cv.Outcome + ")"
	}
	return cr
}

// entityCapacity reads an entity's capacity off a variant's curve: the first multiple at
// which a check on one of its workloads failed, and the largest below it at which all
// held. ok is false when the curve has no per-workload figures for it.
func entityCapacity(curve []results.CapacityPoint, entity string) (sustains, breaks float64, ok bool) {
	pts := append([]results.CapacityPoint(nil), curve...)
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].Multiple < pts[j].Multiple })
	type at struct{ pass bool }
	byMult := map[float64]*at{}
	var mults []float64
	for _, p := range pts {
		if p.SetAside {
			continue // a failure the variant's search did not count
		}
		for w, wp := range p.Workloads {
			if entityOfWorkload(w) != entity {
				continue
			}
			a := byMult[p.Multiple]
			if a == nil {
				a = &at{pass: true}
				byMult[p.Multiple] = a
				mults = append(mults, p.Multiple)
			}
			a.pass = a.pass && wp.Pass
		}
	}
	if len(mults) == 0 {
		return 0, 0, false
	}
	for _, m := range mults {
		if !byMult[m].pass {
			return sustains, m, true
		}
		sustains = m
	}
	return sustains, 0, true
}

// sizeCriterion judges the largest projected partition against its limit.
func sizeCriterion(tables []results.TableHotspots) results.Criterion {
	const name = results.CriterionSize
	var best *results.SizeProjection
	var bestTable string
	bestRatio := -1.0
	split := 0
	for ti := range tables {
		for pi := range tables[ti].Projections {
			p := &tables[ti].Projections[pi]
			if p.Splittable {
				// A ranged chunk of many key values: the balancer splits it as it grows,
				// so its projected size is no partition past a limit (only a jumbo chunk,
				// one key value, is).
				split++
				continue
			}
			r := sizeRatio(p)
			if r > bestRatio {
				best, bestTable, bestRatio = p, tables[ti].Table, r
			}
		}
	}
	if best == nil && split > 0 {
		return results.Criterion{Name: name, Status: results.VerdictPass, Evidence: results.HotspotsFile, Anchor: "hot",
			Reason: fmt.Sprintf("%d projected chunk(s), each of many key values: they split as they grow, none is jumbo", split)}
	}
	if best == nil {
		return unknown(name, "no partition size was projected")
	}
	cr := results.Criterion{Name: name, Value: bestRatio, Evidence: results.HotspotsFile, Anchor: "hot"}
	cr.Text = ratioText(bestRatio)
	what := fmt.Sprintf("%s %s is projected to %s (%s rows) by %s", shortTable(bestTable), best.Key, units.Bytes(float64(best.ProjectedBytes)), units.Count(float64(best.ProjectedRows)), best.Horizon)
	switch {
	case best.Exceeds || bestRatio > 1:
		cr.Status = results.VerdictFail
		cr.Reason = what + ", past its " + limitText(best) + " limit"
	case bestRatio >= SizeWarn:
		cr.Status = results.VerdictWarn
		cr.Reason = what + ", over half its " + limitText(best) + " limit"
	default:
		cr.Status = results.VerdictPass
		cr.Reason = "largest: " + what + ", within its " + limitText(best) + " limit"
	}
	return cr
}

func sizeRatio(p *results.SizeProjection) float64 {
	r := 0.0
	if p.LimitBytes > 0 {
		r = float64(p.ProjectedBytes) / float64(p.LimitBytes)
	}
	if p.LimitRows > 0 {
		r = math.Max(r, float64(p.ProjectedRows)/float64(p.LimitRows))
	}
	return r
}

func limitText(p *results.SizeProjection) string {
	s := units.Bytes(float64(p.LimitBytes))
	if p.LimitRows > 0 {
		s += " / " + units.Count(float64(p.LimitRows)) + " rows"
	}
	return s
}

// hotShareCriterion judges the heaviest partition of the tables against its table (a
// MongoDB key over several chunks is no partition: TableHotspots.Hottest).
func hotShareCriterion(tables []results.TableHotspots, nodes int) results.Criterion {
	const name = results.CriterionHotShare
	type judged struct {
		t      *results.TableHotspots
		p      *results.PartitionLoad
		share  float64
		fair   float64
		status string
	}
	var worst *judged
	for i := range tables {
		t := &tables[i]
		p := t.Hottest()
		if t.Ops < HotMinOps || p == nil {
			continue
		}
		share := p.Share
		if share == 0 {
			share = float64(p.Ops) / float64(t.Ops)
		}
		spread := max(t.Partitions, int64(nodes), 1)
		fair := 1 / float64(spread)
		st := results.VerdictPass
		switch {
		case share >= HotFail && share > 2*fair:
			st = results.VerdictFail
		case share >= HotWarn && share > 2*fair:
			st = results.VerdictWarn
		}
		j := &judged{t, p, share, fair, st}
		if worst == nil || severity[st] > severity[worst.status] || (st == worst.status && share > worst.share) {
			worst = j
		}
	}
	if worst == nil {
		return unknown(name, fmt.Sprintf("no table took %d operations or more", HotMinOps))
	}
	cr := results.Criterion{Name: name, Status: worst.status, Value: worst.share, Evidence: results.HotspotsFile, Anchor: "hot"}
	cr.Text = units.Pct(worst.share)
	what := fmt.Sprintf("partition %s takes %s of %s's operations (fair share %s)", worst.p.Key, units.Pct(worst.share), shortTable(worst.t.Table), units.Pct(worst.fair))
	switch worst.status {
	case results.VerdictFail:
		cr.Reason = what + ": one partition's replicas carry it"
	case results.VerdictWarn:
		cr.Reason = what
	default:
		cr.Reason = "busiest: " + what
	}
	return cr
}

// imbalanceCriterion judges the busiest node or shard against the mean, as the headline
// imbalance measures it (results.NodeBalances: one database's nodes, one data center's,
// by the measure that is most unbalanced).
func imbalanceCriterion(hv *results.HotspotsVariant) results.Criterion {
	const name = results.CriterionImbalance
	if hv == nil || len(hv.Nodes) == 0 {
		return unknown(name, "no node or shard loads were recorded")
	}
	m := hv.Balance.MaxOverMean
	cr := results.Criterion{Name: name, Value: m, Text: fmt.Sprintf("%.2f×", m), Evidence: results.HotspotsFile, Anchor: "hot"}
	what := busiestText(hv, m)
	switch {
	case m >= ImbalanceFail:
		cr.Status, cr.Reason = results.VerdictFail, what
	case m >= ImbalanceWarn:
		cr.Status, cr.Reason = results.VerdictWarn, what+", more than 30% above the mean"
	default:
		cr.Status, cr.Reason = results.VerdictPass, what
	}
	return cr
}

// busiestText names the headline's busiest node or shard, the nodes it is measured
// among, and its share of the headline's measure.
func busiestText(hv *results.HotspotsVariant, m float64) string {
	b := hv.Balance
	if b.Busiest == "" { // written before the headline named it: the nodes by operations
		busiest := hv.Nodes[0]
		for _, n := range hv.Nodes[1:] {
			if n.Ops > busiest.Ops {
				busiest = n
			}
		}
		return fmt.Sprintf("busiest %s %s at %.2f× the mean of %d (%s of the operations)", nodeWord(hv.Database), busiest.Node, m, len(hv.Nodes), units.Pct(busiest.Share))
	}
	db := cmp.Or(b.Database, hv.Database)
	among := 0
	for _, n := range hv.Nodes {
		if (b.Database == "" || n.Database == b.Database) && n.DC == b.DC {
			among++
		}
	}
	s := fmt.Sprintf("busiest %s %s at %.2f× the mean of %d", nodeWord(db), b.Busiest, m, among)
	if b.DC != "" {
		s += " in " + b.DC
	}
	if b.Measure == "" || b.Measure == results.MeasureOps {
		return s + fmt.Sprintf(" (%s of the operations)", units.Pct(b.BusiestShare))
	}
	return s + fmt.Sprintf(" by %s (%s of them)", b.Measure, units.Pct(b.BusiestShare))
}

func nodeWord(db string) string {
	if db == "mongodb" {
		return "shard"
	}
	return "node"
}

// keysCriterion is the key analysis's worst verdict over the tables (good, caution,
// avoid), with its first flag as the reason.
func keysCriterion(a *results.Analysis, variant, entity string) results.Criterion {
	const name = results.CriterionKeys
	if a == nil {
		return unknown(name, "no key analysis was given (shardbench analyze)")
	}
	var av *results.AnalysisVariant
	for i := range a.Variants {
		if a.Variants[i].Variant == variant {
			av = &a.Variants[i]
		}
	}
	if av == nil {
		return unknown(name, "the key analysis did not include this variant")
	}
	rankOf := map[string]int{"good": 1, "caution": 2, "avoid": 3}
	var worst *results.KeyAnalysis
	for i := range av.Tables {
		t := &av.Tables[i]
		if entity != "" && t.Entity != entity {
			continue
		}
		if worst == nil || rankOf[t.Verdict] > rankOf[worst.Verdict] {
			worst = t
		}
	}
	if worst == nil {
		return unknown(name, "the key analysis has no table of "+entity)
	}
	status := map[string]string{"good": results.VerdictPass, "caution": results.VerdictWarn, "avoid": results.VerdictFail}[worst.Verdict]
	if status == "" {
		status = results.VerdictUnknown
	}
	cr := results.Criterion{Name: name, Status: status, Value: float64(rankOf[worst.Verdict]), Text: worst.Verdict, Evidence: results.AnalysisFile, Anchor: "keys"}
	cr.Reason = fmt.Sprintf("%s key %s: %s", shortTable(worst.Table), worst.Key, worst.Verdict)
	if len(worst.Flags) > 0 {
		cr.Reason += " (" + worst.Flags[0].Reason + ")"
	}
	return cr
}

// coverageCriterion is the share of the offered traffic (of the entity's operations)
// the variant serves: a design that leaves operations unserved is a caution, never a
// failure (it was not written to serve them), and it ranks after one that serves them.
func coverageCriterion(v *results.SummaryVariant, entity string) results.Criterion {
	cr := results.Criterion{Name: results.CriterionCoverage, Evidence: results.SummaryFile, Anchor: "overview"}
	var offered, unserved int64
	var ops, served int
	var missing []string
	for _, op := range v.Ops {
		if entity != "" && entityOfOp(op.Op) != entity {
			continue
		}
		ops++
		offered += op.Scheduled + op.Unserved
		if op.Unserved > 0 || op.UnservedReason != "" {
			unserved += op.Unserved
			missing = append(missing, op.Op)
			continue
		}
		served++
	}
	if offered == 0 {
		return unknown(results.CriterionCoverage, "no operation was offered")
	}
	cr.Value = float64(offered-unserved) / float64(offered)
	cr.Text = units.Pct(cr.Value)
	if len(missing) == 0 {
		cr.Status = results.VerdictPass
		cr.Reason = fmt.Sprintf("serves every operation type offered (%d)", ops)
		return cr
	}
	cr.Status = results.VerdictWarn
	cr.Reason = fmt.Sprintf("does not serve %d of %d operation types (%s of the offered traffic): %s", len(missing), ops, units.Pct(1-cr.Value), listText(missing, 4))
	return cr
}

func listText(s []string, n int) string {
	if len(s) <= n {
		return strings.Join(s, ", ")
	}
	return strings.Join(s[:n], ", ") + fmt.Sprintf(" and %d more", len(s)-n)
}

func shortTable(t string) string { return t[strings.LastIndex(t, ".")+1:] }

func mult(m float64) string {
	if m >= 1000 {
		return fmt.Sprintf("%.0f", m)
	}
	return fmt.Sprintf("%.3g", m)
}

// ratioText is a size against its limit: "42%" below twice it, "×230" above.
func ratioText(r float64) string {
	if r >= 2 {
		return "×" + mult(r)
	}
	return units.Pct(r)
}
