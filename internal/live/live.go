// Package live serves a run's measurements while it runs, for Prometheus (text format
// 0.0.4) and OpenMetrics 1.0 scrapers: `shardbench run --metrics-addr :9464`.
//
// It is fed the engine's closed intervals (engine.Config.Intervals: once a second per
// variant, from the goroutine that closes them), never individual operations, so serving
// costs the hot path nothing. Every figure is the interval data the results directory is
// written from, accumulated: at the end of a run the counters equal summary.json's counts
// and each histogram's count its operation's completed count.
//
// Families, per variant and operation (labels variant, op):
//
//	shardbench_operations_scheduled_total     operations whose intended start came (the target)
//	shardbench_operations_total{class}        completed operations by outcome: ok or an error class
//	shardbench_operations_dropped_total       never started (pool full with on_full: drop, interrupt)
//	shardbench_operations_late_total          started more than load.late_after after the intended time
//	shardbench_operations_abandoned_total     still running at the drain timeout
//	shardbench_operations_unserved_total      offered, but the variant's design does not serve them:
//	                                          never dispatched, in no histogram (coverage, not errors)
//	shardbench_response_seconds               histogram: end − intended start
//	shardbench_service_seconds                histogram: end − actual start
//	shardbench_schedule_lag_seconds           histogram: actual start − intended start
//
// and per variant: shardbench_target_rate (operations per second the schedule intended
// over the last interval), shardbench_in_flight, shardbench_variant_running,
// shardbench_measured_seconds (the end of the last closed interval, run time); for the
// process: shardbench_run_info, shardbench_dispatch_spin_seconds and
// process_cpu_seconds_total (the client's own CPU: divided by the completion rate, the
// client CPU per operation).
//
// Histograms are classic Prometheus histograms with fixed buckets from 100 µs to 60 s. A
// value falls in a bucket as its HdrHistogram bucket's highest equivalent value (what the
// percentiles in summary.json report) compares with le; _sum adds each HdrHistogram
// bucket's median equivalent value, as HdrHistogram's mean does (within 0.1%).
package live

import (
	"sort"
	"sync"
	"time"

	"github.com/shardbench/shardbench/internal/metrics"
)

// Bounds are the classic histogram buckets' upper bounds, in seconds (+Inf follows).
var Bounds = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// boundsNS are Bounds in nanoseconds.
var boundsNS = func() []int64 {
	out := make([]int64, len(Bounds))
	for i, b := range Bounds {
		out[i] = int64(b * 1e9)
	}
	return out
}()

var geometry = metrics.NewGeometry(metrics.Lowest, metrics.SigFigs)

// Info describes the run for shardbench_run_info.
type Info struct {
	Version  string
	Scenario string
	Backend  string
}

// Registry holds what a scrape shows. Observe and the scrape handler may run at once.
type Registry struct {
	mu       sync.Mutex
	info     Info
	ops      []string
	variants []*variant
	spin     time.Duration
	spinSet  bool
	// sequential: the variants run one after another (real-time runs), so a variant's
	// first interval means the one before has ended. Simulated variants run at once.
	sequential bool
}

type variant struct {
	name       string
	ops        []*opSeries // by operation index; nil until the operation first appears
	running    bool
	seen       bool
	inFlight   int64
	targetRate float64
	measured   time.Duration
}

// opSeries is one operation's accumulated counts and histograms.
type opSeries struct {
	metrics.Counters
	response, service, lag histogram
}

// histogram is a classic Prometheus histogram: per-bucket (not cumulative) counts, the
// last one for values above every bound.
type histogram struct {
	counts [19]int64
	sum    float64 // seconds
	count  int64
}

// New is a registry for the run's variants (in run order) and operation names (by index).
func New(info Info, variants, ops []string) *Registry {
	r := &Registry{info: info, ops: append([]string(nil), ops...)}
	for _, v := range variants {
		r.variants = append(r.variants, &variant{name: v, ops: make([]*opSeries, len(ops))})
	}
	return r
}

// SetDispatch records the dispatcher's spin (negative or 0: it sleeps on timers).
func (r *Registry) SetDispatch(spinBelow time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.spin, r.spinSet = max(spinBelow, 0), true
}

// SetSequential says the variants run one after another (a real-time run): a variant's
// first interval ends the running and in-flight figures of the one before.
func (r *Registry) SetSequential(seq bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sequential = seq
}

// Observe adds one closed interval of variant vi: expected is the number of operations
// the schedule intended in it (engine.Config.Intervals).
func (r *Registry) Observe(vi int, expected float64, iv *metrics.Interval) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if vi < 0 || vi >= len(r.variants) {
		return
	}
	v := r.variants[vi]
	if !v.seen && r.sequential {
		for _, o := range r.variants {
			o.running = false
			if o.seen {
				o.inFlight = 0
			}
		}
	}
	v.seen = true
	v.running = true
	v.inFlight = iv.InFlight
	v.measured = iv.End
	if secs := (iv.End - iv.Start).Seconds(); secs > 0 {
		v.targetRate = expected / secs
	}
	for op, set := range iv.Ops {
		if set == nil || set.Offered() == 0 || op >= len(v.ops) {
			continue
		}
		s := v.ops[op]
		if s == nil {
			s = &opSeries{}
			v.ops[op] = s
		}
		s.Counters.Add(&set.Counters)
		s.response.add(&set.Response)
		s.service.add(&set.Service)
		s.lag.add(&set.Lag)
	}
}

// Finish marks every variant as no longer running (the run has ended).
func (r *Registry) Finish() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range r.variants {
		v.running = false
		v.inFlight = 0
	}
}

func (h *histogram) add(p *metrics.PagedHistogram) {
	for idx, n := range p.Buckets() {
		hi := geometry.HighestEquivalentValue(idx)
		lo := geometry.ValueFromIndex(idx)
		h.counts[bucketOf(hi)] += n
		h.sum += float64(n) * float64(lo+(hi-lo)/2) / 1e9
		h.count += n
	}
}

// bucketOf is the index of the first bound at or above ns (len(Bounds) for +Inf).
func bucketOf(ns int64) int {
	return sort.Search(len(boundsNS), func(i int) bool { return boundsNS[i] >= ns })
}
