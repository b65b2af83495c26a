package gate

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/shardbench/shardbench/internal/results"
)

// Run is a loaded results directory: what gates read.
type Run struct {
	Dir      string
	Summary  *results.Summary
	Hotspots *results.Hotspots // nil when the run has no hotspots.json

	hists map[string]*hdr.Histogram
}

// Load reads a results directory.
func Load(dir string) (*Run, error) {
	sum, err := results.Read(dir)
	if err != nil {
		return nil, err
	}
	hs, err := results.ReadHotspots(dir)
	if err != nil {
		return nil, err
	}
	return &Run{Dir: dir, Summary: sum, Hotspots: hs}, nil
}

// histogram decodes (once) one of an operation's embedded histograms.
func (r *Run) histogram(variant string, st *results.OpStats, which string) (*hdr.Histogram, error) {
	key := variant + "\x00" + st.Op + "\x00" + which
	if h, ok := r.hists[key]; ok {
		return h, nil
	}
	var l results.Latency
	switch which {
	case "service":
		l = st.Service
	case "lag":
		l = st.Lag
	default:
		l = st.Response
	}
	h, err := l.DecodeHistogram()
	if err != nil {
		return nil, fmt.Errorf("variant %s, %s %s: %w", variant, st.Op, which, err)
	}
	if r.hists == nil {
		r.hists = map[string]*hdr.Histogram{}
	}
	r.hists[key] = h
	return h, nil
}

func variantNames(s *results.Summary) []string {
	out := make([]string, len(s.Variants))
	for i, v := range s.Variants {
		out[i] = v.Name
	}
	return out
}

func opNames(v *results.SummaryVariant) []string {
	out := make([]string, len(v.Ops))
	for i, o := range v.Ops {
		out[i] = o.Op
	}
	return out
}

// Completeness is a failing check when the results are of a run that did not finish
// (interrupted, killed, or still running): thresholds on part of a run prove nothing
// about the whole. It returns nothing for complete results.
//
// A directory whose interval logs are missing, cut short or corrupt fails the same way,
// one check per damaged log naming it: the gate cannot vouch for results it cannot read
// whole, even though its thresholds are judged on summary.json's own histograms.
func Completeness(run *Run) []results.GateCheck {
	s := run.Summary
	var out []results.GateCheck
	if !s.Complete {
		why := s.Interrupted
		if why == "" {
			why = "summary.json is not marked complete (the run was killed or is still running)"
		}
		out = append(out, results.GateCheck{
			Name: "[*] results complete", Kind: results.GateThreshold, Subject: "run", Metric: "complete",
			Status: results.GateFail, ValueText: "incomplete", Detail: "the run did not finish: " + why,
		})
	}
	for _, p := range results.CheckHistogramLogs(run.Dir, s) {
		out = append(out, results.GateCheck{
			Name: "[*] results intact", Kind: results.GateThreshold, Subject: "run", Metric: "intact",
			Status: results.GateFail, ValueText: "damaged", Detail: "cannot judge results it cannot read whole: " + p,
		})
	}
	return out
}

// Evaluate checks every rule against a run. Checks come out in rule order, then variant
// order, then operation order.
func Evaluate(rs *Rules, run *Run) []results.GateCheck {
	var out []results.GateCheck
	for i := range rs.Rules {
		out = append(out, evalRule(&rs.Rules[i], run)...)
	}
	return out
}

func evalRule(r *Rule, run *Run) []results.GateCheck {
	base := results.GateCheck{
		Kind: results.GateThreshold, Subject: r.Subject(), Metric: r.Metric.Name, Comparator: r.Cmp,
		Threshold: displayValue(r.Metric.Unit, r.Threshold), Unit: displayUnit(r.Metric.Unit),
		ThresholdText: r.Cmp + " " + r.ThresholdText, Rule: r.Text, Source: r.Pos.String(),
	}
	var variants []*results.SummaryVariant
	for i := range run.Summary.Variants {
		if Match(r.Variant, run.Summary.Variants[i].Name) {
			variants = append(variants, &run.Summary.Variants[i])
		}
	}
	if len(variants) == 0 {
		c := base
		c.Name = fmt.Sprintf("[%s] %s", r.Variant, r.Text)
		c.Status = results.GateFail
		c.ValueText = Absent
		c.Detail = fmt.Sprintf("no variant matches %q (variants: %s)", r.Variant, strings.Join(variantNames(run.Summary), ", "))
		return []results.GateCheck{c}
	}
	var out []results.GateCheck
	for _, v := range variants {
		switch r.Kind {
		case SubjectOp:
			out = append(out, evalOpRule(r, run, v, base)...)
		case SubjectTable:
			out = append(out, evalTableRule(r, run, v, base)...)
		case SubjectNodes:
			out = append(out, evalNodesRule(r, run, v, base))
		}
	}
	return out
}

func ruleName(r *Rule, variant, subject string) string {
	return fmt.Sprintf("[%s] %s %s %s %s", variant, subject, r.Metric.Name, r.Cmp, r.ThresholdText)
}

func absent(c results.GateCheck, detail string) results.GateCheck {
	c.Status, c.ValueText, c.Detail = results.GateFail, Absent, detail
	return c
}

// Absent is the value of a failed check whose subject the results do not have: nothing
// was measured.
const Absent = "absent"

func evalOpRule(r *Rule, run *Run, v *results.SummaryVariant, base results.GateCheck) []results.GateCheck {
	var ops []*results.OpStats
	switch {
	case r.Target == "all":
		ops = []*results.OpStats{&v.Totals}
	default:
		for i := range v.Ops {
			if Match(r.Target, v.Ops[i].Op) {
				ops = append(ops, &v.Ops[i])
			}
		}
	}
	if len(ops) == 0 {
		c := base
		c.Variant, c.Name = v.Name, ruleName(r, v.Name, r.Target)
		if IsPattern(r.Target) {
			return []results.GateCheck{absent(c, fmt.Sprintf("pattern %q matches no operation recorded in variant %s (recorded: %s)", r.Target, v.Name, strings.Join(opNames(v), ", ")))}
		}
		return []results.GateCheck{absent(c, fmt.Sprintf("operation %q was not recorded in variant %s%s", r.Target, v.Name, suggestName(r.Target, opNames(v))))}
	}
	var out []results.GateCheck
	var unserved []string // matched by a pattern, not served by the variant
	for _, st := range ops {
		c := base
		c.Variant, c.Subject = v.Name, st.Op
		c.Name = ruleName(r, v.Name, st.Op)
		switch {
		case st.Served() || r.Metric.Name == "served_share":
			out = append(out, evalOp(r, run, v, st, c))
		case IsPattern(r.Target):
			unserved = append(unserved, st.Op)
		default:
			out = append(out, notServed(c, v, st))
		}
	}
	if len(out) == 0 && len(unserved) > 0 {
		// A pattern judges the operations the variant serves; matching none of them, the
		// rule is not judged on this variant.
		c := base
		c.Variant, c.Name = v.Name, ruleName(r, v.Name, r.Target)
		c.Status, c.ValueText = results.GateSkip, "not served"
		c.Detail = fmt.Sprintf("pattern %q matches only operations this design does not serve: %s", r.Target, strings.Join(unserved, ", "))
		out = append(out, c)
	}
	return out
}

// notServed is the check of a rule on an operation the variant does not serve: not a
// measurement, so not judged (SKIP, which --strict fails), with the design's reason.
func notServed(c results.GateCheck, v *results.SummaryVariant, st *results.OpStats) results.GateCheck {
	c.Status, c.ValueText = results.GateSkip, "not served"
	c.Detail = fmt.Sprintf("not served by this design (%s operations offered, none sent): %s", groupInt(st.Unserved), st.UnservedReason)
	return c
}

// servedOnly says, for a rule on a variant's totals, that they hold the served
// operations only when the variant does not serve every one.
func servedOnly(v *results.SummaryVariant, st *results.OpStats) string {
	if st != &v.Totals || v.Coverage.Full() {
		return ""
	}
	c := v.Coverage
	return fmt.Sprintf("served operations only: this design serves %d of %d operations, %s of the offered traffic (not served: %s)",
		c.ServedOps, c.Ops, formatValue(UnitRatio, c.ServedShare), strings.Join(c.UnservedOps, ", "))
}

// withDetail joins two parts of a check's detail.
func withDetail(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

func evalOp(r *Rule, run *Run, v *results.SummaryVariant, st *results.OpStats, c results.GateCheck) results.GateCheck {
	m := r.Metric
	if m.Unit == UnitNanos {
		return evalLatency(r, run, v, st, c)
	}
	share := func(n int64) (float64, bool) {
		if st.Scheduled == 0 {
			return 0, false
		}
		return float64(n) / float64(st.Scheduled), true
	}
	var val float64
	ok := true
	switch m.Name {
	case "error_rate":
		val, ok = st.ErrorRate, st.Scheduled > 0
	case "achieved_ratio":
		ok = st.TargetRate > 0
		if ok {
			val = st.AchievedRate / st.TargetRate
		}
	case "achieved_rate":
		val = st.AchievedRate
	case "target_rate":
		val = st.TargetRate
	case "dropped_share":
		val, ok = share(st.Dropped)
	case "late_share":
		val, ok = share(st.Late)
	case "abandoned_share":
		val, ok = share(st.Abandoned)
	case "count":
		val = float64(st.Completed)
	case "scheduled":
		val = float64(st.Scheduled)
	case "served_share":
		val, ok = servedShare(v, st)
	default:
		if m.Class != "" {
			val, ok = share(st.Errors[m.Class])
		}
	}
	if !ok {
		return absent(c, fmt.Sprintf("%s has no scheduled operations in variant %s", st.Op, v.Name))
	}
	if m.Name == "served_share" {
		return judge(r, c, val, "")
	}
	return judge(r, c, val, servedOnly(v, st))
}

// servedShare is the share of the offered operations the variant served: of every
// operation for its totals, of one operation's (1 or 0) for that operation.
func servedShare(v *results.SummaryVariant, st *results.OpStats) (float64, bool) {
	if st == &v.Totals {
		return v.Coverage.ServedShare, v.Coverage.Offered > 0
	}
	offered := st.Scheduled + st.Unserved
	if offered == 0 {
		return 0, false
	}
	return float64(st.Scheduled) / float64(offered), true
}

// judge compares a value (in the rule's unit) with the threshold.
func judge(r *Rule, c results.GateCheck, val float64, detail string) results.GateCheck {
	c.Value = displayValue(r.Metric.Unit, val)
	c.ValueText = formatValue(r.Metric.Unit, val)
	if compare(val, r.Cmp, r.Threshold) {
		c.Status = results.GatePass
	} else {
		c.Status = results.GateFail
	}
	c.Detail = detail
	return c
}

func compare(v float64, cmp string, t float64) bool {
	switch cmp {
	case "<":
		return v < t
	case "<=":
		return v <= t
	case ">":
		return v > t
	case ">=":
		return v >= t
	case "==":
		return v == t
	}
	return false
}

func evalLatency(r *Rule, run *Run, v *results.SummaryVariant, st *results.OpStats, c results.GateCheck) results.GateCheck {
	m := r.Metric
	h, err := run.histogram(v.Name, st, m.Hist)
	if err != nil {
		return absent(c, err.Error())
	}
	n := h.TotalCount()
	if n == 0 {
		return absent(c, fmt.Sprintf("%s has no completed operations in variant %s (scheduled %d, dropped %d, abandoned %d)", st.Op, v.Name, st.Scheduled, st.Dropped, st.Abandoned))
	}
	var val float64
	switch m.Stat {
	case "max":
		val = float64(h.Max())
	case "min":
		val = float64(h.Min())
	case "mean":
		val = h.Mean()
	default:
		val = float64(h.ValueAtPercentile(m.Pct))
		if needN := need(m.Pct); n < needN {
			return smallSample(r, c, h, val, needN)
		}
	}
	return judge(r, c, val, withDetail(fmt.Sprintf("%s values", groupInt(n)), servedOnly(v, st)))
}

// smallSample handles a percentile rule on fewer values than the percentile needs: it
// fails when the values already beyond the threshold make the SLO improbable, else it is
// not judged.
func smallSample(r *Rule, c results.GateCheck, h *hdr.Histogram, val float64, needN int64) results.GateCheck {
	n := h.TotalCount()
	c.Value = displayValue(UnitNanos, val)
	c.ValueText = formatValue(UnitNanos, val)
	c.Status = results.GateSkip
	c.Detail = fmt.Sprintf("insufficient sample: %s values, %s needs at least %s", groupInt(n), r.Metric.Name, groupInt(needN))
	if r.Cmp == "<" || r.Cmp == "<=" {
		b := binsOf(h)
		t := int64(math.Ceil(r.Threshold))
		var k int64
		if r.Cmp == "<" {
			k = b.countAtLeast(t)
		} else {
			k = b.countAbove(int64(math.Floor(r.Threshold)))
		}
		q := 1 - r.Metric.Pct/100
		if p := binomialSF(n, k, q); k > 0 && p < 0.001 {
			c.Status = results.GateFail
			c.Detail = fmt.Sprintf("fails even on a small sample: %s of %s values are beyond %s where at most %.1f are expected (binomial p = %.2g); %s would need %s values to pass",
				groupInt(k), groupInt(n), r.ThresholdText, q*float64(n), p, r.Metric.Name, groupInt(needN))
		}
	}
	return c
}

func evalTableRule(r *Rule, run *Run, v *results.SummaryVariant, base results.GateCheck) []results.GateCheck {
	c := base
	c.Variant, c.Name = v.Name, ruleName(r, v.Name, "table:"+r.Target)
	hv := run.Hotspots.Variant(v.Name)
	if hv == nil {
		why := "the results have no hotspots.json"
		if run.Hotspots != nil {
			why = "hotspots.json has no analysis for this variant"
		}
		return []results.GateCheck{absent(c, why+" (hot-partition figures come from the simulator, real backends, or shardbench plan)")}
	}
	var tables []*results.TableHotspots
	var names []string
	for i := range hv.Tables {
		t := &hv.Tables[i]
		names = append(names, t.Table)
		short := t.Table[strings.LastIndex(t.Table, ".")+1:]
		if Match(r.Target, t.Table) || Match(r.Target, short) || (t.Entity != "" && Match(r.Target, t.Entity)) {
			tables = append(tables, t)
		}
	}
	if len(tables) == 0 {
		return []results.GateCheck{absent(c, fmt.Sprintf("no table matches %q in variant %s (tables: %s)", r.Target, v.Name, strings.Join(names, ", ")))}
	}
	var out []results.GateCheck
	for _, t := range tables {
		c := base
		c.Variant, c.Subject = v.Name, "table:"+t.Table
		c.Name = ruleName(r, v.Name, "table:"+t.Table)
		var val float64
		detail := ""
		switch r.Metric.Name {
		case "hottest_share":
			top := t.Hottest()
			if top == nil || t.Ops == 0 {
				out = append(out, absent(c, "no partition loads recorded for "+t.Table))
				continue
			}
			val = top.Share
			if val == 0 {
				val = float64(top.Ops) / float64(t.Ops)
			}
			detail = fmt.Sprintf("hottest partition %s: %s of %s operations", top.Key, groupInt(top.Ops), groupInt(t.Ops))
			if top.ErrorBound > 0 {
				detail += fmt.Sprintf(" (Space-Saving overcount at most %s: share at least %.2f%%)", groupInt(top.ErrorBound), 100*float64(top.Ops-top.ErrorBound)/float64(t.Ops))
			}
		case "partition_size", "partition_rows", "over_limit":
			var best float64
			var key, horizon string
			var over int
			for _, p := range t.Projections {
				x := float64(p.ProjectedBytes)
				if r.Metric.Name == "partition_rows" {
					x = float64(p.ProjectedRows)
				}
				if x >= best {
					best, key, horizon = x, p.Key, p.Horizon
				}
				if p.Exceeds {
					over++
				}
			}
			if len(t.Projections) == 0 {
				out = append(out, absent(c, "no partition size projections recorded for "+t.Table))
				continue
			}
			val = best
			detail = fmt.Sprintf("largest: %s at %s", key, horizon)
			if r.Metric.Name == "over_limit" {
				val = float64(over)
				detail = fmt.Sprintf("%d of %d projected partitions exceed their limit", over, len(t.Projections))
			}
		case "ops":
			val = float64(t.Ops)
		}
		out = append(out, judge(r, c, val, detail))
	}
	return out
}

func evalNodesRule(r *Rule, run *Run, v *results.SummaryVariant, base results.GateCheck) results.GateCheck {
	c := base
	c.Variant, c.Name = v.Name, ruleName(r, v.Name, "nodes")
	var loads []float64
	var names []string
	var bal results.Imbalance
	source := ""
	if hv := run.Hotspots.Variant(v.Name); hv != nil && len(hv.Nodes) > 0 {
		// The headline imbalance's nodes and measure (one database's nodes or shards; by
		// every request, reads, writes or bytes written), so that every metric of the rule
		// judges the same loads.
		bal, source = hv.Balance, "hotspots.json"
		for _, n := range hv.Nodes {
			if (bal.Database == "" || n.Database == bal.Database) && (bal.DC == "" || n.DC == bal.DC) {
				loads, names = append(loads, nodeLoad(&n, bal.Measure)), append(names, n.Node)
			}
		}
		if bal.Measure != "" {
			source = strings.TrimSpace(fmt.Sprintf("hotspots.json, %s %s %s", bal.Database, bal.DC, bal.Measure))
		}
	} else if len(v.Nodes) > 0 {
		for _, n := range v.Nodes {
			loads, names = append(loads, float64(n.Ops)), append(names, n.Node)
		}
		source = "client-side node counts"
	}
	if len(loads) == 0 {
		return absent(c, "no per-node or per-shard load recorded for variant "+v.Name+" (hotspots.json or summary nodes)")
	}
	computed := Balance(loads)
	if bal.MaxOverMean == 0 {
		bal = computed
	}
	var val float64
	switch r.Metric.Name {
	case "imbalance":
		val = bal.MaxOverMean
	case "cv":
		val = bal.CV
	case "gini":
		val = bal.Gini
	case "over_30pct":
		val = float64(overCount(loads))
	case "max_share":
		var total, mx float64
		for _, l := range loads {
			total += l
			mx = math.Max(mx, l)
		}
		if total > 0 {
			val = mx / total
		}
	}
	busiest := 0
	for i := range loads {
		if loads[i] > loads[busiest] {
			busiest = i
		}
	}
	return judge(r, c, val, fmt.Sprintf("%d nodes (%s), busiest %s", len(loads), source, names[busiest]))
}

// nodeLoad is a node's load by an imbalance measure (results.Measure*; operations when
// empty).
func nodeLoad(n *results.NodeLoad, measure string) float64 {
	switch measure {
	case results.MeasureReads:
		return float64(n.Reads)
	case results.MeasureWrites:
		return float64(n.Writes)
	case results.MeasureBytes:
		return float64(n.Bytes)
	}
	return float64(n.Ops)
}

func overCount(loads []float64) int {
	var mean float64
	for _, l := range loads {
		mean += l
	}
	mean /= float64(len(loads))
	n := 0
	for _, l := range loads {
		if mean > 0 && math.Abs(l-mean)/mean > 0.30 {
			n++
		}
	}
	return n
}

// Balance computes imbalance figures from per-node loads (max/mean, coefficient of
// variation, Gini; Over30 is left empty: the caller has the names).
func Balance(loads []float64) results.Imbalance {
	var b results.Imbalance
	if len(loads) == 0 {
		return b
	}
	var sum, mx float64
	for _, l := range loads {
		sum += l
		mx = math.Max(mx, l)
	}
	mean := sum / float64(len(loads))
	if mean == 0 {
		return b
	}
	var ss float64
	for _, l := range loads {
		ss += (l - mean) * (l - mean)
	}
	b.MaxOverMean = mx / mean
	b.CV = math.Sqrt(ss/float64(len(loads))) / mean
	s := append([]float64(nil), loads...)
	sort.Float64s(s)
	var g float64
	for i, l := range s {
		g += float64(2*(i+1)-len(s)-1) * l
	}
	b.Gini = g / (float64(len(s)) * sum)
	return b
}

// displayValue converts a value in a metric's unit to the unit gate.json shows (ms for
// latencies).
func displayValue(unit string, v float64) float64 {
	if unit == UnitNanos {
		return v / 1e6
	}
	return v
}

func displayUnit(unit string) string {
	if unit == UnitNanos {
		return "ms"
	}
	return unit
}

// formatValue formats a value in a metric's unit for people.
func formatValue(unit string, v float64) string {
	switch unit {
	case UnitNanos:
		return formatDuration(v)
	case UnitRatio:
		return trimFloat(v*100, 4) + "%"
	case UnitFactor:
		return trimFloat(v, 4)
	case UnitBytes:
		return formatBytes(v)
	case UnitRate:
		return trimFloat(v, 1) + "/s"
	}
	return trimFloat(v, 2)
}

func formatDuration(ns float64) string {
	d := time.Duration(ns)
	switch {
	case d >= time.Second:
		return trimFloat(ns/1e9, 4) + "s"
	case d >= time.Millisecond:
		return trimFloat(ns/1e6, 3) + "ms"
	case d >= time.Microsecond:
		return trimFloat(ns/1e3, 3) + "µs"
	}
	return trimFloat(ns, 0) + "ns"
}

func formatBytes(b float64) string {
	for _, u := range []struct {
		s string
		f float64
	}{{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}} {
		if math.Abs(b) >= u.f {
			return trimFloat(b/u.f, 2) + u.s
		}
	}
	return trimFloat(b, 0) + "B"
}

// trimFloat formats with up to prec significant decimals, without trailing zeros.
func trimFloat(v float64, prec int) string {
	s := fmt.Sprintf("%.*f", prec, v)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

func groupInt(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, ch := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(ch)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
