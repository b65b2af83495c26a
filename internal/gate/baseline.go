package gate

import (
	"fmt"

	"github.com/shardbench/shardbench/internal/results"
)

// SpectrumPercentiles are the percentiles a baseline comparison judges one by one.
var SpectrumPercentiles = []float64{50, 90, 99, 99.9, 99.99}

// Significance is the p-value below which a baseline difference counts as real.
const Significance = 0.001

// BaselineOptions configure a baseline comparison.
type BaselineOptions struct {
	// Tolerance is the relative regression allowed (0.1 = 10%).
	Tolerance float64
}

// CompareBaseline compares a run with an older one, variant by variant and operation by
// operation (plus each variant's totals), on the response-time distribution, the error
// rate, the throughput and the hot-partition figures.
func CompareBaseline(cur, old *Run, o BaselineOptions) []results.GateCheck {
	var out []results.GateCheck
	for i := range old.Summary.Variants {
		ov := &old.Summary.Variants[i]
		nv := cur.Summary.Variant(ov.Name)
		if nv == nil {
			out = append(out, baseCheck(ov.Name, "*", "variant", results.GateFail,
				fmt.Sprintf("variant %s is in the baseline but not in these results (variants: %s)", ov.Name, joinNames(variantNames(cur.Summary)))))
			continue
		}
		nt, ot, err := comparableTotals(nv, ov)
		if err != nil {
			out = append(out, baseCheck(nv.Name, "all", "response", results.GateFail, err.Error()))
			continue
		}
		pairs := [][2]*results.OpStats{{nt, ot}}
		for j := range ov.Ops {
			oo := &ov.Ops[j]
			no := nv.Op(oo.Op)
			switch {
			case no == nil:
				out = append(out, baseCheck(ov.Name, oo.Op, "operation", results.GateFail,
					fmt.Sprintf("operation %s is in the baseline but was not recorded in these results", oo.Op)))
			case oo.Served() && !no.Served():
				out = append(out, baseCheck(ov.Name, oo.Op, "coverage", results.GateFail,
					fmt.Sprintf("served in the baseline, not served in these results: %s", no.UnservedReason)))
			case !oo.Served() && no.Served():
				out = append(out, baseCheck(ov.Name, oo.Op, "coverage", results.GateSkip,
					fmt.Sprintf("no baseline: the baseline's design did not serve it (%s)", oo.UnservedReason)))
			case oo.Served():
				pairs = append(pairs, [2]*results.OpStats{no, oo})
			} // served by neither: nothing to compare
		}
		for _, p := range pairs {
			out = append(out, compareOp(cur, old, nv.Name, p[0], p[1], o)...)
		}
		for j := range nv.Ops {
			if ov.Op(nv.Ops[j].Op) == nil && nv.Ops[j].Served() {
				out = append(out, baseCheck(nv.Name, nv.Ops[j].Op, "operation", results.GateSkip, "no baseline: the operation is not in the baseline run"))
			}
		}
		out = append(out, compareHotspots(cur, old, nv.Name, o)...)
	}
	for i := range cur.Summary.Variants {
		if old.Summary.Variant(cur.Summary.Variants[i].Name) == nil {
			out = append(out, baseCheck(cur.Summary.Variants[i].Name, "*", "variant", results.GateSkip, "no baseline: the variant is not in the baseline run"))
		}
	}
	return out
}

// comparableTotals are the totals of a variant in both runs over the same operations:
// the totals themselves when both runs served the same ones, else the operations both
// served, merged exactly from their histograms (named for what they hold).
func comparableTotals(nv, ov *results.SummaryVariant) (*results.OpStats, *results.OpStats, error) {
	var both []string
	same := true
	for i := range nv.Ops {
		no := &nv.Ops[i]
		oo := ov.Op(no.Op)
		if no.Served() && oo != nil && oo.Served() {
			both = append(both, no.Op)
		} else if no.Served() || (oo != nil && oo.Served()) {
			same = false
		}
	}
	for i := range ov.Ops {
		if ov.Ops[i].Served() && nv.Op(ov.Ops[i].Op) == nil {
			same = false
		}
	}
	if same {
		return &nv.Totals, &ov.Totals, nil
	}
	name := "all served by both"
	nt, err := results.MergeOps(nv, name, both)
	if err != nil {
		return nil, nil, err
	}
	ot, err := results.MergeOps(ov, name, both)
	if err != nil {
		return nil, nil, fmt.Errorf("baseline: %w", err)
	}
	return &nt, &ot, nil
}

func joinNames(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	out := s[0]
	for _, x := range s[1:] {
		out += ", " + x
	}
	return out
}

func baseCheck(variant, subject, metric, status, detail string) results.GateCheck {
	c := results.GateCheck{
		Name:    fmt.Sprintf("[%s] %s %s vs baseline", variant, subject, metric),
		Kind:    results.GateBaseline,
		Variant: variant, Subject: subject, Metric: metric, Status: status, Detail: detail,
	}
	if status == results.GateFail {
		c.ValueText = Absent
	}
	return c
}

func ptr(f float64) *float64 { return &f }

func compareOp(cur, old *Run, variant string, n, o *results.OpStats, opt BaselineOptions) []results.GateCheck {
	var out []results.GateCheck
	tol := opt.Tolerance
	hn, errN := cur.histogram(variant, n, "response")
	ho, errO := old.histogram(variant, o, "response")
	if errN != nil || errO != nil {
		c := baseCheck(variant, n.Op, "response", results.GateFail, fmt.Sprint(firstErr(errN, errO)))
		return append(out, c)
	}
	bn, bo := binsOf(hn), binsOf(ho)
	for _, p := range SpectrumPercentiles {
		metric := "p" + trimFloat(p, 4)
		c := baseCheck(variant, n.Op, metric, results.GateSkip, "")
		c.Unit = "ms"
		c.Comparator = "<="
		needN := need(p)
		if bn.n < needN || bo.n < needN {
			c.Detail = fmt.Sprintf("insufficient sample: %s needs at least %s values in both runs (these results %s, baseline %s)",
				metric, groupInt(needN), groupInt(bn.n), groupInt(bo.n))
			c.ValueText, c.ThresholdText = "-", "-"
			if bn.n > 0 {
				v := float64(hn.ValueAtPercentile(p))
				c.Value, c.ValueText = v/1e6, formatDuration(v)
			}
			if bo.n > 0 {
				bv := float64(ho.ValueAtPercentile(p))
				c.BaselineValue = ptr(bv / 1e6)
			}
			out = append(out, c)
			continue
		}
		vn, vo := float64(hn.ValueAtPercentile(p)), float64(ho.ValueAtPercentile(p))
		loN, hiN := quantileCI(bn, p, z99)
		loO, hiO := quantileCI(bo, p, z99)
		limit := float64(hiO) * (1 + tol)
		c.Value, c.BaselineValue, c.Threshold = vn/1e6, ptr(vo/1e6), limit/1e6
		c.ValueText = formatDuration(vn)
		c.ThresholdText = fmt.Sprintf("baseline %s +%s", formatDuration(vo), pct(tol))
		change := vn/vo - 1
		ci := fmt.Sprintf("99%% CIs [%s, %s] vs baseline [%s, %s]", formatDuration(float64(loN)), formatDuration(float64(hiN)), formatDuration(float64(loO)), formatDuration(float64(hiO)))
		switch {
		case float64(loN) > limit:
			c.Status = results.GateFail
			c.Detail = fmt.Sprintf("regression: %s %s (%s), beyond the %s tolerance with 99%% confidence (new lower bound %s > baseline upper bound +%s = %s); %s",
				metric, signedPct(change), formatDuration(vn)+" vs "+formatDuration(vo), pct(tol), formatDuration(float64(loN)), pct(tol), formatDuration(limit), ci)
		case change > tol:
			c.Status = results.GatePass
			c.Detail = fmt.Sprintf("%s %s but within noise (intervals overlap): %s", metric, signedPct(change), ci)
		default:
			c.Status = results.GatePass
			c.Detail = fmt.Sprintf("%s %s; %s", metric, signedPct(change), ci)
		}
		out = append(out, c)
	}

	// The whole distribution: Mann-Whitney U and the Hodges-Lehmann factor.
	c := baseCheck(variant, n.Op, "distribution", results.GateSkip, "")
	c.Unit, c.Comparator = "x", "<="
	if bn.n < 20 || bo.n < 20 {
		c.Detail = fmt.Sprintf("insufficient sample: the rank test needs at least 20 values in both runs (these results %s, baseline %s)", groupInt(bn.n), groupInt(bo.n))
		c.ValueText, c.ThresholdText = "-", "-"
	} else {
		z, pv, sup := mannWhitney(bo, bn)
		hl := hodgesLehmannRatio(bo, bn)
		c.Value, c.BaselineValue, c.Threshold = hl, ptr(1), 1+tol
		c.ValueText = "×" + trimFloat(hl, 3)
		c.ThresholdText = "×" + trimFloat(1+tol, 3) + " when significant (p < " + trimFloat(Significance, 4) + ")"
		desc := fmt.Sprintf("typical slowdown ×%s (Hodges–Lehmann), P(new > old) = %.3f, Mann–Whitney z = %.2f, one-sided p = %.2g (%s vs %s values)",
			trimFloat(hl, 3), sup, z, pv, groupInt(bn.n), groupInt(bo.n))
		if pv < Significance && hl > 1+tol {
			c.Status, c.Detail = results.GateFail, "regression: "+desc
		} else {
			c.Status, c.Detail = results.GatePass, desc
		}
	}
	out = append(out, c)

	// Error rate: exact conditional binomial test.
	if n.Scheduled > 0 && o.Scheduled > 0 {
		en := n.Scheduled - n.OK
		eo := o.Scheduled - o.OK
		rn, ro := float64(en)/float64(n.Scheduled), float64(eo)/float64(o.Scheduled)
		c := baseCheck(variant, n.Op, "error_rate", results.GatePass, "")
		c.Unit, c.Comparator = "ratio", "<="
		c.Value, c.BaselineValue, c.Threshold = rn, ptr(ro), ro*(1+tol)
		c.ValueText = formatValue(UnitRatio, rn)
		c.ThresholdText = "baseline " + formatValue(UnitRatio, ro) + " +" + pct(tol) + " when significant (p < " + trimFloat(Significance, 4) + ")"
		k := en + eo
		q := float64(n.Scheduled) / float64(n.Scheduled+o.Scheduled)
		pv := binomialSF(k, en, q)
		desc := fmt.Sprintf("%s of %s failed vs %s of %s in the baseline (conditional binomial p = %.2g)", groupInt(en), groupInt(n.Scheduled), groupInt(eo), groupInt(o.Scheduled), pv)
		if rn > ro*(1+tol) && pv < Significance {
			c.Status, c.Detail = results.GateFail, "regression: "+desc
		} else {
			c.Detail = desc
		}
		out = append(out, c)
	}

	// Throughput: achieved / target.
	if n.TargetRate > 0 && o.TargetRate > 0 {
		an, ao := n.AchievedRate/n.TargetRate, o.AchievedRate/o.TargetRate
		c := baseCheck(variant, n.Op, "achieved_ratio", results.GatePass, "")
		c.Unit, c.Comparator = "x", ">="
		c.Value, c.BaselineValue, c.Threshold = an, ptr(ao), ao*(1-tol)
		c.ValueText = trimFloat(an, 4)
		c.ThresholdText = ">= " + trimFloat(ao*(1-tol), 4)
		c.Detail = fmt.Sprintf("achieved %s of target %s (baseline %s of %s)",
			formatValue(UnitRate, n.AchievedRate), formatValue(UnitRate, n.TargetRate),
			formatValue(UnitRate, o.AchievedRate), formatValue(UnitRate, o.TargetRate))
		if an < ao*(1-tol) {
			c.Status, c.Detail = results.GateFail, "regression: "+c.Detail
		}
		out = append(out, c)
	}
	return out
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func pct(f float64) string { return trimFloat(f*100, 2) + "%" }

func signedPct(f float64) string {
	if f >= 0 {
		return "+" + pct(f)
	}
	return pct(f)
}

// compareHotspots compares each table's hottest-partition share and the node imbalance.
func compareHotspots(cur, old *Run, variant string, o BaselineOptions) []results.GateCheck {
	hn, ho := cur.Hotspots.Variant(variant), old.Hotspots.Variant(variant)
	if ho == nil {
		return nil
	}
	if hn == nil {
		return []results.GateCheck{baseCheck(variant, "hotspots", "hotspots", results.GateFail, "the baseline has a hot-partition analysis for this variant; these results have none")}
	}
	tol := o.Tolerance
	var out []results.GateCheck
	for _, to := range ho.Tables {
		var tn *results.TableHotspots
		for i := range hn.Tables {
			if hn.Tables[i].Table == to.Table {
				tn = &hn.Tables[i]
			}
		}
		subject := "table:" + to.Table
		if tn == nil {
			out = append(out, baseCheck(variant, subject, "hottest_share", results.GateFail, "the table is in the baseline's analysis but not in these results"))
			continue
		}
		pn, po := tn.Hottest(), to.Hottest()
		if po == nil || pn == nil || to.Ops == 0 || tn.Ops == 0 {
			continue
		}
		sn, so := float64(pn.Ops)/float64(tn.Ops), float64(po.Ops)/float64(to.Ops)
		c := baseCheck(variant, subject, "hottest_share", results.GatePass, "")
		c.Unit, c.Comparator = "ratio", "<="
		c.Value, c.BaselineValue, c.Threshold = sn, ptr(so), so*(1+tol)
		c.ValueText, c.ThresholdText = formatValue(UnitRatio, sn), "<= "+formatValue(UnitRatio, so*(1+tol))
		c.Detail = fmt.Sprintf("hottest partition %s (baseline %s)", pn.Key, po.Key)
		if sn > so*(1+tol) {
			// Is the new share improbably large given both counts? (conditional binomial)
			k := pn.Ops + po.Ops
			q := float64(tn.Ops) / float64(tn.Ops+to.Ops)
			pv := binomialSF(k, pn.Ops, q)
			if pv < Significance {
				c.Status = results.GateFail
				c.Detail = fmt.Sprintf("regression: hottest partition takes %s of %s (was %s; binomial p = %.2g)", pct(sn), to.Table, pct(so), pv)
			} else {
				c.Detail += fmt.Sprintf("; %s but within noise (binomial p = %.2g)", signedPct(sn/so-1), pv)
			}
		}
		out = append(out, c)
	}
	if len(hn.Nodes) > 0 && len(ho.Nodes) > 0 {
		ln, lo := make([]float64, len(hn.Nodes)), make([]float64, len(ho.Nodes))
		for i, x := range hn.Nodes {
			ln[i] = float64(x.Ops)
		}
		for i, x := range ho.Nodes {
			lo[i] = float64(x.Ops)
		}
		in, io := Balance(ln).MaxOverMean, Balance(lo).MaxOverMean
		c := baseCheck(variant, "nodes", "imbalance", results.GatePass, "max/mean load over nodes or shards")
		c.Unit, c.Comparator = "x", "<="
		c.Value, c.BaselineValue, c.Threshold = in, ptr(io), io*(1+tol)
		c.ValueText, c.ThresholdText = trimFloat(in, 3), "<= "+trimFloat(io*(1+tol), 3)
		if in > io*(1+tol) {
			c.Status = results.GateFail
			c.Detail = fmt.Sprintf("regression: busiest node carries ×%s the mean (baseline ×%s)", trimFloat(in, 3), trimFloat(io, 3))
		}
		out = append(out, c)
	}
	return out
}
