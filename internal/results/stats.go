package results

import (
	"fmt"
	"math"
	"sort"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/shardbench/shardbench/internal/metrics"
)

// Percentiles reported everywhere (summary, terminal, reports).
var Percentiles = []float64{50, 90, 99, 99.9, 99.99}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

// Summarize turns a histogram into a Latency, embedding the encoded histogram when embed.
func Summarize(h *hdr.Histogram, embed bool) Latency {
	if h == nil || h.TotalCount() == 0 {
		return Latency{}
	}
	p := h.ValueAtPercentiles(Percentiles)
	l := Latency{
		Count:  h.TotalCount(),
		Min:    ms(h.Min()),
		Mean:   round3(h.Mean() / 1e6),
		P50:    ms(p[50]),
		P90:    ms(p[90]),
		P99:    ms(p[99]),
		P999:   ms(p[99.9]),
		P9999:  ms(p[99.99]),
		Max:    ms(h.Max()),
		StdDev: round3(h.StdDev() / 1e6),
	}
	if embed {
		if b, err := encodeHistogram(h); err == nil {
			l.Histogram = string(b)
		}
	}
	return l
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// DecodeHistogram returns the histogram embedded in a Latency (an empty one when absent).
func (l Latency) DecodeHistogram() (*hdr.Histogram, error) {
	if l.Histogram == "" {
		if l.Count > 0 {
			return nil, fmt.Errorf("latency summary has %d values but no embedded histogram", l.Count)
		}
		return metrics.NewHistogram(), nil
	}
	h, err := hdr.Decode([]byte(l.Histogram))
	if err != nil {
		return nil, fmt.Errorf("decoding embedded histogram: %w", err)
	}
	return h, nil
}

// FromSet builds the stats of one operation from its cumulative set. The target rate is
// over the schedule's span (scheduleS: when operations were due), the achieved rate over
// the measured span (spanS: until the last one completed).
func FromSet(op, kind string, set *metrics.Set, spanS, scheduleS float64) OpStats {
	s := OpStats{Op: op, Kind: kind}
	if set == nil {
		return s
	}
	c := &set.Counters
	s.Scheduled, s.Completed, s.OK = c.Scheduled(), c.Completed, c.OK
	s.Late, s.Dropped, s.Abandoned, s.Unserved = c.Late, c.Dropped, c.Abandoned, c.Unserved
	s.Errors = ErrorMap(c)
	if s.Scheduled > 0 {
		s.ErrorRate = float64(c.ErrorCount()+c.Dropped+c.Abandoned) / float64(s.Scheduled)
	}
	if scheduleS > 0 {
		s.TargetRate = float64(s.Scheduled) / scheduleS
	}
	if spanS > 0 {
		s.AchievedRate = float64(s.Completed) / spanS
	}
	s.Response = Summarize(set.Response, true)
	s.Service = Summarize(set.Service, true)
	s.Lag = Summarize(set.Lag, true)
	return s
}

// ErrorMap lists the non-zero error counts by class name.
func ErrorMap(c *metrics.Counters) map[string]int64 {
	var m map[string]int64
	for i := 1; i < metrics.NumClasses; i++ {
		if c.Errors[i] > 0 {
			if m == nil {
				m = map[string]int64{}
			}
			m[metrics.Class(i).String()] = c.Errors[i]
		}
	}
	return m
}

// ToSet rebuilds the exact cumulative set from stats (histograms and counters), the
// inverse of FromSet: merge and gates work on it.
func (s *OpStats) ToSet() (*metrics.Set, error) {
	set := &metrics.Set{}
	var err error
	if set.Response, err = s.Response.DecodeHistogram(); err != nil {
		return nil, fmt.Errorf("%s response: %w", s.Op, err)
	}
	if set.Service, err = s.Service.DecodeHistogram(); err != nil {
		return nil, fmt.Errorf("%s service: %w", s.Op, err)
	}
	if set.Lag, err = s.Lag.DecodeHistogram(); err != nil {
		return nil, fmt.Errorf("%s lag: %w", s.Op, err)
	}
	c := &set.Counters
	c.Completed, c.OK, c.Late, c.Dropped, c.Abandoned, c.Unserved = s.Completed, s.OK, s.Late, s.Dropped, s.Abandoned, s.Unserved
	for name, n := range s.Errors {
		cl, ok := metrics.ParseClass(name)
		if !ok {
			cl = metrics.Server
		}
		c.Errors[cl] += n
	}
	return set, nil
}

// SortedErrorClasses returns the class names of m in a stable order.
func SortedErrorClasses(m map[string]int64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// CoverageOf is how much of the offered stream a variant with these operations serves.
func CoverageOf(ops []OpStats) Coverage {
	var c Coverage
	for i := range ops {
		o := &ops[i]
		if o.Scheduled+o.Unserved == 0 {
			continue
		}
		c.Ops++
		c.Offered += o.Scheduled + o.Unserved
		c.Unserved += o.Unserved
		if o.Served() {
			c.ServedOps++
		} else {
			c.UnservedOps = append(c.UnservedOps, o.Op)
		}
	}
	if c.Offered > 0 {
		c.ServedShare = float64(c.Offered-c.Unserved) / float64(c.Offered)
	}
	return c
}

// MergeOps is the named operations of v merged into one OpStats called name, exactly
// (from their embedded histograms), with rates over the variant's spans: what Totals
// would be if v had run only those operations.
func MergeOps(v *SummaryVariant, name string, ops []string) (OpStats, error) {
	total := &metrics.Set{Response: metrics.NewHistogram(), Service: metrics.NewHistogram(), Lag: metrics.NewHistogram()}
	for _, op := range ops {
		st := v.Op(op)
		if st == nil {
			continue
		}
		set, err := st.ToSet()
		if err != nil {
			return OpStats{}, fmt.Errorf("variant %s: %w", v.Name, err)
		}
		total.Merge(set)
	}
	return FromSet(name, "", total, v.DurationS, dueSeconds(v)), nil
}

// dueSeconds recovers the schedule span a variant's target rates were computed over.
func dueSeconds(v *SummaryVariant) float64 {
	for _, st := range append([]OpStats{v.Totals}, v.Ops...) {
		if st.TargetRate > 0 && st.Scheduled > 0 {
			return float64(st.Scheduled) / st.TargetRate
		}
	}
	return 0
}
