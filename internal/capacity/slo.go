package capacity

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/shardbench/shardbench/internal/gate"
	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/results"
)

// SLO is what a capacity search holds every variant to at every multiple: gate rules,
// judged on the operations each variant's design serves.
type SLO struct {
	Rules *gate.Rules
	// Source is "default" or where the rules came from.
	Source string
	// P99Bound is the bound drawn on the capacity curve: the default SLO's p99, or the
	// tightest p99 rule on every operation (0: none).
	P99Bound time.Duration
}

// Texts lists the rules as written.
func (s *SLO) Texts() []string {
	out := make([]string, len(s.Rules.Rules))
	for i, r := range s.Rules.Rules {
		out[i] = r.Text
		if r.Variant != "*" && r.Variant != "" && !strings.Contains(r.Text, "@") {
			out[i] += " (variants " + r.Variant + ")"
		}
	}
	return out
}

// DefaultBounds are the thresholds of the default SLO.
type DefaultBounds struct {
	P99       time.Duration // every served operation's p99 response time is below it
	ErrorRate float64       // errors, drops and abandons among served operations stay below it
	Achieved  float64       // achieved rate over target rate of the served operations, at least
}

// Defaults of the default SLO: p99 under 50 ms (a page makes a few database calls in
// turn and must stay well under a second), fewer than 0.1% of operations failing, at
// least 99% of the offered rate achieved, nothing dropped.
var Defaults = DefaultBounds{P99: 50 * time.Millisecond, ErrorRate: 0.001, Achieved: 0.99}

// DefaultSLO is the SLO a scenario without an slo section is held to: each served
// operation's p99 response time under b.P99; the served operations' error rate (errors,
// dropped and abandoned over scheduled) under b.ErrorRate; their achieved rate at least
// b.Achieved of the target; nothing dropped.
func DefaultSLO(b DefaultBounds) (*SLO, error) {
	if b.P99 <= 0 || b.ErrorRate <= 0 || b.Achieved <= 0 || b.Achieved > 1 {
		return nil, fmt.Errorf("default SLO bounds must be positive (achieved at most 1): %+v", b)
	}
	text := fmt.Sprintf("slo:\n  - \"* p99 < %s\"\n  - \"all error_rate < %s%%\"\n  - \"all achieved_ratio >= %s\"\n  - \"all dropped_share == 0\"\n",
		durationText(b.P99), strconv.FormatFloat(100*b.ErrorRate, 'g', -1, 64), strconv.FormatFloat(b.Achieved, 'g', -1, 64))
	rs, err := gate.ParseBytes("default SLO", []byte(text))
	if err != nil {
		return nil, err
	}
	return &SLO{Rules: rs, Source: "default", P99Bound: b.P99}, nil
}

// durationText writes d as the gate rules read it.
func durationText(d time.Duration) string {
	switch {
	case d%time.Millisecond == 0:
		return strconv.FormatInt(int64(d/time.Millisecond), 10) + "ms"
	case d%time.Microsecond == 0:
		return strconv.FormatInt(int64(d/time.Microsecond), 10) + "us"
	}
	return strconv.FormatInt(int64(d), 10) + "ns"
}

// RulesSLO holds variants to the given rules (a scenario's slo section, a --slo file).
func RulesSLO(rs *gate.Rules) *SLO {
	s := &SLO{Rules: rs, Source: rs.Source}
	for _, r := range rs.Rules {
		all := r.Variant == "*" || r.Variant == ""
		if r.Kind != gate.SubjectOp || !all || (r.Target != "*" && r.Target != "all") ||
			r.Metric.Name != "p99" || (r.Cmp != "<" && r.Cmp != "<=") {
			continue
		}
		if b := time.Duration(r.Threshold); s.P99Bound == 0 || b < s.P99Bound {
			s.P99Bound = b
		}
	}
	return s
}

// Served says whether a variant's design serves an operation.
type Served func(variant, op string) bool

// Verdict is one variant's result at one probe.
type Verdict struct {
	Pass bool
	// Failed are the SLO checks that failed.
	Failed []results.GateCheck
	// WorstP99Ms is the highest p99 response time among the served operations, WorstOp
	// the operation.
	WorstP99Ms float64
	WorstOp    string
	// ServedPeakRate is served operations completed per second over the probe's peak.
	ServedPeakRate float64
	// Workloads is the same per workload (the operation's prefix: sessions, carts,
	// catalog, ...): whether the checks on its operations passed, and its worst p99.
	Workloads map[string]results.CapacityWorkloadPoint
}

// Judge evaluates the SLO on one probe's results directory for every variant in it, and
// writes the checks to the directory's gate.json so the step's own report shows them.
// peakFrom and peakTo delimit the peak in the probe's time line.
func Judge(dir string, slo *SLO, served Served, peakFrom, peakTo time.Duration) (map[string]Verdict, error) {
	run, err := gate.Load(dir)
	if err != nil {
		return nil, err
	}
	view, err := ServedView(run.Summary, served)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	vrun := &gate.Run{Dir: dir, Summary: view, Hotspots: run.Hotspots}
	checks := append(gate.Completeness(vrun), gate.Evaluate(slo.Rules, vrun)...)
	rep := gate.NewReport(dir, checks, false)
	rep.Sources = []string{slo.Source + " (capacity SLO, on the operations each design serves)"}
	if err := results.At(dir).WriteGate(rep); err != nil {
		return nil, err
	}
	points, err := results.ReadTimeseries(dir)
	if err != nil {
		return nil, err
	}
	out := map[string]Verdict{}
	for _, v := range view.Variants {
		vd := Verdict{Pass: true}
		for _, c := range rep.Checks {
			if c.Status == results.GateFail && (c.Variant == v.Name || c.Variant == "") {
				vd.Pass = false
				vd.Failed = append(vd.Failed, c)
			}
		}
		vd.Workloads = map[string]results.CapacityWorkloadPoint{}
		for _, op := range v.Ops {
			w, seen := vd.Workloads[workloadOf(op.Op)]
			if !seen {
				w.Pass = true // until one of its checks fails
			}
			if op.Response.Count > 0 && (vd.WorstOp == "" || op.Response.P99 > vd.WorstP99Ms) {
				vd.WorstP99Ms, vd.WorstOp = op.Response.P99, op.Op
			}
			if op.Response.Count > 0 && (w.Op == "" || op.Response.P99 > w.P99Ms) {
				w.P99Ms, w.Op = op.Response.P99, op.Op
			}
			vd.Workloads[workloadOf(op.Op)] = w
		}
		for _, c := range vd.Failed {
			if w, ok := vd.Workloads[workloadOf(c.Subject)]; ok {
				w.Pass = false
				vd.Workloads[workloadOf(c.Subject)] = w
			}
		}
		vd.ServedPeakRate = servedRate(points, v.Name, peakFrom, peakTo)
		out[v.Name] = vd
	}
	return out, nil
}

// workloadOf is an operation's workload: the prefix of its name ("carts.add_item":
// "carts"). Subjects that are not operations ("all", "table:…", "nodes") have none.
func workloadOf(op string) string {
	w, _, ok := strings.Cut(op, ".")
	if !ok || strings.Contains(w, ":") {
		return ""
	}
	return w
}

// servedRate is the served operations completed per second in the intervals of
// [from, to) of one variant's time series.
func servedRate(points []results.Point, variant string, from, to time.Duration) float64 {
	var n int64
	var secs float64
	for _, p := range points {
		if p.Variant != variant || p.StartS < from.Seconds()-1e-9 || p.EndS > to.Seconds()+1e-9 {
			continue
		}
		n += p.Completed - p.Errors[metrics.NotSupported.String()]
		secs += p.EndS - p.StartS
	}
	if secs <= 0 {
		return 0
	}
	return float64(n) / secs
}

// ServedView is the summary with only what each variant's design serves: operations it
// does not serve are left out, and so are operations failed as not_supported (a real
// backend that cannot run a design's requests), which are not measurements of the design.
// The totals are recomputed from what is left, exactly (histograms merged).
func ServedView(s *results.Summary, served Served) (*results.Summary, error) {
	out := *s
	out.Variants = make([]results.SummaryVariant, len(s.Variants))
	ns := metrics.NotSupported.String()
	for i, v := range s.Variants {
		nv := v
		nv.Ops = nil
		total := &metrics.Set{Response: metrics.NewHistogram(), Service: metrics.NewHistogram(), Lag: metrics.NewHistogram()}
		for _, op := range v.Ops {
			skip := op.Errors[ns]
			if !served(v.Name, op.Op) || (op.Completed > 0 && skip >= op.Completed) {
				if op.Unserved > 0 && !op.Served() {
					// Kept, outside the totals: a rule naming an operation the design does
					// not serve is then skipped as not served, not failed as absent.
					nv.Ops = append(nv.Ops, op)
				}
				continue
			}
			set, err := op.ToSet()
			if err != nil {
				return nil, fmt.Errorf("variant %s: %w", v.Name, err)
			}
			if skip > 0 {
				// Some requests of a served operation could not be sent (a step on the other
				// database): counted apart, not as the design's errors. Their samples stay in
				// the histograms, at the time it took to refuse them.
				set.Counters.Completed -= skip
				set.Counters.Errors[metrics.NotSupported] = 0
				hlog := op.HistogramLog
				op = results.FromSet(op.Op, op.Kind, set, v.DurationS, s.DueS())
				op.HistogramLog = hlog
			}
			nv.Ops = append(nv.Ops, op)
			total.Merge(set)
		}
		nv.Totals = results.FromSet("all", "", total, v.DurationS, s.DueS())
		out.Variants[i] = nv
	}
	return &out, nil
}

// roundMultiple keeps a multiple to 4 significant digits: the names of steps stay short,
// and variants bisecting the same bracket meet at the same multiple.
func roundMultiple(m float64) float64 {
	if m <= 0 {
		return m
	}
	e := math.Pow(10, math.Floor(math.Log10(m))-3)
	return math.Round(m/e) * e
}
