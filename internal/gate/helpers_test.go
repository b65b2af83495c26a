package gate

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/results"
)

// opSpec describes an operation's recorded values for an in-memory run.
type opSpec struct {
	name      string
	values    []int64 // response times in ns (service = response, lag = 1µs)
	errors    int64   // failed with class "server"
	dropped   int64
	late      int64
	target    float64 // target rate
	spanS     float64
	scheduleS float64
	unserved  int64  // offered but not served by the variant (values must be empty)
	reason    string // why
}

// opStats builds an operation's stats exactly as the engine does (FromSet).
func opStats(t testing.TB, s opSpec) results.OpStats {
	t.Helper()
	set := &metrics.Set{Response: metrics.NewHistogram(), Service: metrics.NewHistogram(), Lag: metrics.NewHistogram()}
	for _, v := range s.values {
		if err := set.Response.RecordValue(metrics.Clamp(v)); err != nil {
			t.Fatal(err)
		}
		_ = set.Service.RecordValue(metrics.Clamp(v))
		_ = set.Lag.RecordValue(metrics.Lowest)
	}
	set.Completed = int64(len(s.values))
	set.Errors[metrics.Server] = s.errors
	set.OK = set.Completed - s.errors
	set.Dropped = s.dropped
	set.Late = s.late
	set.Unserved = s.unserved
	span, sched := s.spanS, s.scheduleS
	if span == 0 {
		span = 10
	}
	if sched == 0 {
		sched = 10
	}
	st := results.FromSet(s.name, "read", set, span, sched)
	st.UnservedReason = s.reason
	return st
}

// memRun is a run with one or more variants built from specs.
func memRun(t testing.TB, variants map[string][]opSpec, order ...string) *Run {
	t.Helper()
	sum := &results.Summary{Schema: results.Schema, Version: results.Version}
	for _, name := range order {
		v := results.SummaryVariant{Name: name}
		total := &metrics.Set{Response: metrics.NewHistogram(), Service: metrics.NewHistogram(), Lag: metrics.NewHistogram()}
		for _, s := range variants[name] {
			st := opStats(t, s)
			v.Ops = append(v.Ops, st)
			set, err := st.ToSet()
			if err != nil {
				t.Fatal(err)
			}
			total.Merge(set)
		}
		v.Totals = results.FromSet("all", "", total, 10, 10)
		v.Coverage = results.CoverageOf(v.Ops)
		sum.Variants = append(sum.Variants, v)
	}
	return &Run{Dir: "mem", Summary: sum}
}

// lognormal draws n latencies with the given median (ns) and log-sd, times factor.
func lognormal(seed uint64, n int, median float64, sigma, factor float64) []int64 {
	r := rand.New(rand.NewPCG(seed, seed*7919+1))
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(factor * median * math.Exp(sigma*r.NormFloat64()))
	}
	return out
}

func constant(n int, v int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func mustRules(t testing.TB, text string) *Rules {
	t.Helper()
	rs, err := ParseBytes("gate.yaml", []byte(text))
	if err != nil {
		t.Fatalf("parse:\n%s\n%v", text, err)
	}
	return rs
}

// byName indexes checks by name.
func byName(cs []results.GateCheck) map[string]results.GateCheck {
	m := map[string]results.GateCheck{}
	for _, c := range cs {
		m[c.Name] = c
	}
	return m
}

func statuses(cs []results.GateCheck) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString(Line(c))
		b.WriteByte('\n')
	}
	return b.String()
}
