package results

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/shardbench/shardbench/internal/metrics"
)

// Reading a version-1 summary.
//
// Version 1 recorded an operation a variant does not serve as a completed operation of
// zero latency that failed not_supported: in every histogram, count and rate, "all"
// (Totals) and the time series included. convertV1 finds such operations and turns
// them into what version 2 writes: unserved, with no latency and no error, and Totals
// rebuilt exactly from the served operations' embedded histograms. ReadTimeseries
// rebuilds the time series' points from the served operations' interval logs.
//
// An operation of a version-1 run was unserved when every one of its completions failed
// not_supported (no success, no other class) and:
//   - the run was simulated: the simulator failed not_supported only an operation the
//     design does not serve, without simulating it (service time 0, recorded as 1 µs);
//   - or it was a real run whose backend said so: the note "the <name> backend ran none
//     of its operations" (a design without that database), an error example
//     "<op> step N runs on <database>", or the note that operations have steps on another
//     database together with a service time no server round trip has (under 100 µs at
//     p99: the backend refused it before sending anything).
//
// A real server's not_supported (FerretDB without hashed indexes) takes a round trip and
// stays an error, as it is one.

// v1NoSection and v1Foreign are what version-1 real backends wrote in a variant's notes.
const (
	v1NoSection = "operations (all counted not_supported)"
	v1Foreign   = "have steps on another database"
	// v1Reason is what a converted operation says, lacking the design's own reason.
	v1Reason = "reason not recorded (a version-1 results directory, which counted it as a failed operation of zero latency)"
	// v1MaxRefusal is the largest service-time p99 a real backend's refusal took.
	v1MaxRefusal = 0.1 // ms
)

// convertV1 rewrites a version-1 summary as version 2 in place. It reports, per
// variant, whether any operation became unserved (its time series points need
// rebuilding).
func convertV1(s *Summary) (map[string]bool, error) {
	simulated := s.Backend.Simulated || s.Backend.Name == "sim"
	changed := map[string]bool{}
	for vi := range s.Variants {
		v := &s.Variants[vi]
		var served []string
		n := 0
		for i := range v.Ops {
			st := &v.Ops[i]
			if !unservedV1(st, v, simulated) {
				served = append(served, st.Op)
				continue
			}
			*st = OpStats{Op: st.Op, Kind: st.Kind, Unserved: st.Scheduled, UnservedReason: v1Reason}
			n++
		}
		if n == 0 {
			continue
		}
		changed[v.Name] = true
		totals, err := MergeOps(v, "all", served)
		if err != nil {
			return nil, err
		}
		for _, st := range v.Ops {
			totals.Unserved += st.Unserved
		}
		v.Totals = totals
		dropV1Refusals(v)
		v.Notes = append(v.Notes,
			fmt.Sprintf("converted on reading (summary version 1): %d operation type(s) this "+
				"variant does not serve were counted as failed operations of zero latency; they "+
				"are shown as not served, and the totals and time series merge the served "+
				"operations only",
				n))
	}
	s.Version = Version
	return changed, nil
}

// unservedV1 tells whether a version-1 operation was one its variant does not serve.
func unservedV1(st *OpStats, v *SummaryVariant, simulated bool) bool {
	ns := st.Errors[metrics.NotSupported.String()]
	if st.Completed == 0 || st.OK > 0 || ns != st.Completed || len(st.Errors) != 1 {
		return false
	}
	if simulated {
		return st.Service.Max < 0.002 // 0 ns, recorded as 1 µs
	}
	for _, n := range v.Notes {
		if strings.Contains(n, v1NoSection) {
			return true
		}
	}
	for _, e := range v.ErrorExamples[metrics.NotSupported.String()] {
		if strings.HasPrefix(e, st.Op+" step ") && strings.Contains(e, " runs on ") {
			return true
		}
	}
	for _, n := range v.Notes {
		if strings.Contains(n, v1Foreign) {
			return st.Service.P99 < v1MaxRefusal
		}
	}
	return false
}

// dropV1Refusals removes what version 1 said about unserved operations as errors: the
// examples of backends refusing them, and the notes that counted them not_supported.
func dropV1Refusals(v *SummaryVariant) {
	cls := metrics.NotSupported.String()
	var keep []string
	for _, e := range v.ErrorExamples[cls] {
		if !strings.Contains(e, " runs on ") && !strings.Contains(e, v1NoSection) {
			keep = append(keep, e)
		}
	}
	if len(keep) == 0 {
		delete(v.ErrorExamples, cls)
	} else {
		v.ErrorExamples[cls] = keep
	}
	notes := v.Notes[:0]
	for _, n := range v.Notes {
		if !strings.Contains(n, "counted not_supported") {
			notes = append(notes, n)
		}
	}
	v.Notes = notes
}

// convertPointsV1 rebuilds the time-series points of the variants convertV1 changed
// from their served operations' interval logs: counts, rates and percentiles of the
// served operations only, the rest counted unserved. A point whose interval the logs do
// not cover keeps its counts less what it cannot tell apart, and loses its percentiles
// (they would include the unserved operations' zero latencies).
func convertPointsV1(dir string, s *Summary, changed map[string]bool, pts []Point) error {
	byVariant := map[string]map[int64]*metrics.Set{}
	for name := range changed {
		v := s.Variant(name)
		all := map[int64]*metrics.Set{}
		for _, st := range v.Ops {
			if !st.Served() || st.HistogramLog == "" {
				continue
			}
			lines, err := ReadHistogramLog(filepath.Join(dir, filepath.FromSlash(st.HistogramLog)))
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				return err
			}
			for _, l := range lines {
				k := int64(math.Round(l.StartS * 1000))
				set, ok := all[k]
				if !ok {
					set = newSet()
					all[k] = set
				}
				switch l.Tag {
				case "":
					set.Response.Merge(l.Hist)
				case "service":
					set.Service.Merge(l.Hist)
				case "lag":
					set.Lag.Merge(l.Hist)
				}
			}
		}
		byVariant[name] = all
	}
	for i := range pts {
		p := &pts[i]
		all, ok := byVariant[p.Variant]
		if !ok {
			continue
		}
		cls := metrics.NotSupported.String()
		secs := p.EndS - p.StartS
		set := all[int64(math.Round(p.StartS*1000))]
		p.P50, p.P90, p.P99, p.P999, p.Max, p.ServiceP99, p.LagP99 = 0, 0, 0, 0, 0, 0, 0
		if set == nil {
			// No served operation completed in the interval (or its logs are gone): its
			// not_supported completions are the unserved ones.
			set = newSet()
		}
		served := set.Response.TotalCount()
		u := min(max(p.Completed-served, 0), p.Errors[cls])
		p.Unserved = u
		p.Completed -= u
		if u > 0 {
			if p.Errors[cls] -= u; p.Errors[cls] == 0 {
				delete(p.Errors, cls)
			}
		}
		if secs > 0 {
			p.AchievedRate = float64(p.Completed) / secs
			p.TargetRate = ServedTarget(p.TargetRate*secs, u) / secs
		}
		if served > 0 && served == p.Completed {
			q := set.Response.ValueAtPercentiles([]float64{50, 90, 99, 99.9})
			p.P50, p.P90, p.P99, p.P999 = ms(q[50]), ms(q[90]), ms(q[99]), ms(q[99.9])
			p.Max = ms(set.Response.Max())
			p.ServiceP99 = ms(set.Service.ValueAtPercentile(99))
			p.LagP99 = ms(set.Lag.ValueAtPercentile(99))
		}
	}
	return nil
}
