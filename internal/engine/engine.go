// Package engine drives the operation stream against backends with open-model timing.
//
// The schedule fixes when each operation is intended to start. In real time, a single
// dispatcher releases each operation at its intended time to a bounded worker pool
// (max_in_flight); it never waits silently: an operation that finds every worker busy
// either waits (on_full: queue — counted late, and its response time still counts from
// the intended start) or is dropped and counted (on_full: drop). In virtual time, a
// simulator consumes the same stream and reports timings itself.
//
// Workers record samples into their own recorders (no lock on the hot path); a ticker
// merges them into interval histograms once per tick, which go to the results directory
// as they are made, so an interrupted run keeps everything measured so far.
package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/schedule"
	"github.com/shardbench/shardbench/workloads"
)

// Source yields the operation stream, in intended-time order. The engine calls Next from a
// single goroutine.
type Source interface {
	Next(op *workloads.Op) bool
}

// OpInfo names an operation type; Op.Type indexes a slice of them.
type OpInfo struct {
	Name string
	Kind string // read | write
}

// VariantBackend is one design variant to drive: what the results name it by and the
// backend its operations go to. Exactly one of Backend and Virtual is set.
type VariantBackend struct {
	Name     string
	Design   string
	Database string
	Params   map[string]string
	Notes    []string
	Backend  backend.Backend
	Virtual  backend.Virtual
	// Unserved is, by operation type, why the variant does not serve it ("" where it
	// does; nil: it serves every one). An unserved operation is never dispatched: it is
	// counted unserved when it comes due. A Virtual backend decides the same itself
	// (backend.Virtual); these are the reasons the results give.
	Unserved []string
}

// unserved reports whether the variant does not serve operation type t.
func (v *VariantBackend) unserved(t uint16) bool {
	return int(t) < len(v.Unserved) && v.Unserved[t] != ""
}

// Config is everything one run needs.
type Config struct {
	Scenario *scenario.Scenario
	Schedule *schedule.Schedule
	Ops      []OpInfo
	// NewSource returns a fresh stream; every call must yield the same operations.
	NewSource func() (Source, error)
	Variants  []VariantBackend
	Dir       *results.Dir
	Backend   results.BackendInfo
	Tool      results.Tool
	// Progress, when set, is called once per tick with the latest figures.
	Progress func(Progress)
	// Tick is the interval length (1 s unless a test shortens it).
	Tick time.Duration
	// HardStop, when closed, abandons in-flight operations without waiting for the drain
	// (a second Ctrl-C).
	HardStop <-chan struct{}
	// SpinBelow overrides how short a wait is spun rather than slept (0: AutoSpin chooses;
	// negative: never spin, as tests under testing/synctest need). SpinReason says why, for
	// the results (AutoSpin's reason, or the caller's).
	SpinBelow  time.Duration
	SpinReason string
	// Intervals, when set, sees every closed interval of every variant (live metrics), after
	// the results writer, from the goroutine that closes intervals: expected is the number
	// of operations the schedule intended in it. iv is reused after the call.
	Intervals func(variant int, expected float64, iv *metrics.Interval)
	// Shard, when on, makes this process one shard of a distributed run (run --shard).
	Shard Shard
	// StartAt, when set, is the common clock of a distributed run (run --start-at): the
	// wall-clock instant the first real-time variant's schedule starts at in every shard
	// (see VariantGap for the next ones). A shard ready late sends the operations already
	// due at once, counted late from their intended times.
	StartAt time.Time
	// Digest identifies the scenario as run and its designs (results.ScenarioInfo.Digest).
	Digest string
	// Measure, when set, restricts the summary's figures to the operations intended in
	// its window (simulated variants only); the time series and histogram logs keep
	// every operation.
	Measure *results.MeasureWindow
}

// Progress is a snapshot for the progress line.
type Progress struct {
	Variant      string
	VariantIndex int
	Variants     int
	Virtual      bool
	Elapsed      time.Duration
	Total        time.Duration
	Phase        string
	TargetRate   float64
	AchievedRate float64
	P99          time.Duration
	ErrorsPerSec float64
	Late         int64
	Dropped      int64
	InFlight     int64
}

// ErrInterrupted is returned (wrapped) when the run stopped early on a signal.
var ErrInterrupted = errors.New("interrupted")

// Run drives every variant and writes the results directory. Real-time variants run one
// after another, each with the whole schedule (so they never compete for the same
// server); simulated variants run in parallel, in groups sharing one generated stream. On interrupt, what was
// measured is written and the error wraps ErrInterrupted.
func Run(ctx context.Context, cfg Config) (*results.Summary, error) {
	if cfg.Tick <= 0 {
		cfg.Tick = time.Second
	}
	// Intervals of whole grains (backend.VirtualGrain), which the histogram logs state
	// exactly.
	cfg.Tick = max(cfg.Tick.Round(backend.VirtualGrain), backend.VirtualGrain)
	if cfg.SpinBelow == 0 {
		cfg.SpinBelow, cfg.SpinReason = AutoSpin(cfg.Variants)
	}
	rcfg, err := applyShard(&cfg)
	if err != nil {
		return nil, err
	}
	if err := checkMeasure(&cfg); err != nil {
		return nil, err
	}
	sum := newSummary(&cfg)
	var mu sync.Mutex // guards sum across parallel simulated variants
	checkpoint := func() {
		mu.Lock()
		defer mu.Unlock()
		_ = cfg.Dir.WriteSummary(sum)
	}
	checkpoint()

	var runErr error
	var virtuals []int
	for i := range cfg.Variants {
		if cfg.Variants[i].Virtual != nil {
			virtuals = append(virtuals, i)
			continue
		}
		if ctx.Err() != nil {
			break
		}
		var vr results.SummaryVariant
		var err error
		labelled(ctx, cfg.Variants[i].Name, func(ctx context.Context) {
			vr, err = runRealtime(ctx, rcfg, i, func(v results.SummaryVariant) {
				mu.Lock()
				sum.Variants[i] = v
				mu.Unlock()
				checkpoint()
			})
		})
		mu.Lock()
		sum.Variants[i] = vr
		mu.Unlock()
		checkpoint()
		if err != nil {
			runErr = errors.Join(runErr, fmt.Errorf("variant %s: %w", cfg.Variants[i].Name, err))
		}
	}
	// Simulated variants run in groups that share one generated stream: the variants of a
	// group run at once (the Go scheduler keeps GOMAXPROCS of them busy) and the stream is
	// generated once per group, not per variant. The group size bounds memory: every
	// simulator of a group holds its cluster and hot-partition state at the same time.
	group := simGroupSize()
	for len(virtuals) > 0 && ctx.Err() == nil {
		n := min(group, len(virtuals))
		batch := virtuals[:n]
		virtuals = virtuals[n:]
		var readers []*workloads.SharedReader
		src, srcErr := cfg.NewSource()
		if srcErr == nil {
			readers = workloads.Share(ctx, src, len(batch), shareWork(ctx, &cfg, batch))
		}
		var wg sync.WaitGroup
		var errMu sync.Mutex
		for k, i := range batch {
			wg.Add(1)
			go func(k, i int) {
				defer wg.Done()
				var vr results.SummaryVariant
				var err error
				if srcErr != nil {
					vr, err = results.SummaryVariant{Name: cfg.Variants[i].Name, Interrupted: true}, srcErr
				} else {
					defer readers[k].Close()
					labelled(ctx, cfg.Variants[i].Name, func(ctx context.Context) {
						vr, err = runVirtual(ctx, &cfg, i, readers[k])
					})
				}
				mu.Lock()
				sum.Variants[i] = vr
				mu.Unlock()
				checkpoint()
				if err != nil {
					errMu.Lock()
					runErr = errors.Join(runErr, fmt.Errorf("variant %s: %w", cfg.Variants[i].Name, err))
					errMu.Unlock()
				}
			}(k, i)
		}
		wg.Wait()
	}

	sum.EndedAt = time.Now()
	if ctx.Err() != nil {
		sum.Interrupted = interruptReason(ctx)
		runErr = errors.Join(fmt.Errorf("%w: %s", ErrInterrupted, sum.Interrupted), runErr)
	}
	sum.Complete = sum.Interrupted == ""
	mu.Lock()
	err = cfg.Dir.WriteSummary(sum)
	mu.Unlock()
	return sum, errors.Join(runErr, err)
}

// labelled runs f with the variant's name as the profiler label "variant" (pprof.Do),
// which the goroutines f starts inherit: a CPU profile of the run (run --cpuprofile)
// then tells the variants apart (go tool pprof -tags; -tagfocus=variant=NAME). Work done
// once for a group of simulated variants falls under the variant that did it: a shared
// block's placements under the first to reach it; the shared stream's generator has no
// label.
func labelled(ctx context.Context, variant string, f func(context.Context)) {
	pprof.Do(ctx, pprof.Labels("variant", variant), f)
}

// checkMeasure refuses a measure window a run cannot honour: one outside the schedule,
// or on a real database (whose operations the engine sends in real time, one variant
// after another, and whose summary is the whole run's).
func checkMeasure(cfg *Config) error {
	m := cfg.Measure
	if m == nil {
		return nil
	}
	if err := m.Within(cfg.Schedule.Duration()); err != nil {
		return err
	}
	for _, v := range cfg.Variants {
		if v.Virtual == nil {
			return fmt.Errorf("variant %s: a measure window needs a simulated backend", v.Name)
		}
	}
	return nil
}

func interruptReason(ctx context.Context) string {
	if c := context.Cause(ctx); c != nil && !errors.Is(c, context.Canceled) {
		return c.Error()
	}
	return "interrupted"
}

func newSummary(cfg *Config) *results.Summary {
	sc := cfg.Scenario
	s := &results.Summary{
		Tool:      cfg.Tool,
		StartedAt: time.Now(),
		Backend:   cfg.Backend,
		Scenario: results.ScenarioInfo{
			Name: sc.Name, Description: sc.Description, Source: sc.File, Seed: sc.Seed, Digest: cfg.Digest,
			DurationS: cfg.Schedule.Duration().Seconds(), ExpectedOps: cfg.Schedule.Expected() * cfg.share(),
			Arrival: sc.Load.Arrival, MaxInFlight: sc.Load.MaxInFlight,
		},
		Measured: cfg.Measure,
		Shard:    cfg.shardInfo(),
	}
	if s.Tool.Host == "" {
		s.Tool.Host, _ = os.Hostname()
	}
	for _, p := range cfg.Schedule.Phases() {
		s.Phases = append(s.Phases, results.Phase{Name: p.Name, Type: p.Type, StartS: p.Start.Seconds(), EndS: p.End.Seconds(), ExpectedOps: p.Expected * cfg.share()})
	}
	for _, v := range cfg.Variants {
		s.Variants = append(s.Variants, results.SummaryVariant{Name: v.Name, Design: v.Design, Database: v.Database, Params: v.Params, Notes: v.Notes, Interrupted: true})
		if v.Backend != nil && s.Dispatch == nil {
			s.Dispatch = dispatchInfo(cfg)
		}
	}
	return s
}

// dispatchInfo records how the dispatcher waits, for the summary.
func dispatchInfo(cfg *Config) *results.Dispatch {
	d := &results.Dispatch{Reason: cfg.SpinReason, CPUs: runtime.GOMAXPROCS(0)}
	if cfg.SpinBelow > 0 {
		d.SpinBelowMS = cfg.SpinBelow.Seconds() * 1e3
	}
	if d.Reason == "" {
		if cfg.SpinBelow > 0 {
			d.Reason = fmt.Sprintf("spins the last %s before each start (set by the caller)", cfg.SpinBelow)
		} else {
			d.Reason = "sleeps on timers, no spin (set by the caller); starts may be up to ~1 ms late, counted as schedule lag"
		}
	}
	return d
}

// timeline adapts the schedule for the results writer: the run's operations, the part
// this process is to send (a shard's even share of the run) and the phase names.
func timeline(cfg *Config) results.Timeline {
	s := cfg.Schedule
	return results.Timeline{
		Expected: func(from, to time.Duration) float64 { return s.CountAt(to) - s.CountAt(from) },
		Share:    cfg.share(),
		Phase:    func(t time.Duration) string { return s.Phases()[s.PhaseAt(t)].Name },
	}
}

// variantResult assembles a variant's summary from the collector's cumulative sets.
// span is the measured time (until the last completion), due the time operations were due
// (the schedule, or until an interrupt).
func variantResult(cfg *Config, i int, col *metrics.Collector, started time.Time, span, due time.Duration) results.SummaryVariant {
	v := cfg.Variants[i]
	out := results.SummaryVariant{Name: v.Name, Design: v.Design, Database: v.Database, Params: v.Params, Notes: v.Notes, StartedAt: started, DurationS: span.Seconds()}
	total := &metrics.Set{Response: metrics.NewHistogram(), Service: metrics.NewHistogram(), Lag: metrics.NewHistogram()}
	for op, set := range col.Totals() {
		if set == nil || set.Offered() == 0 {
			continue
		}
		st := results.FromSet(cfg.Ops[op].Name, cfg.Ops[op].Kind, set, span.Seconds(), due.Seconds())
		if set.Scheduled() > 0 {
			st.HistogramLog = results.HistogramLogPath(v.Name, cfg.Ops[op].Name)
		}
		if st.Unserved > 0 {
			st.UnservedReason = "not served by this backend"
			if v.unserved(uint16(op)) {
				st.UnservedReason = v.Unserved[op]
			}
		}
		out.Ops = append(out.Ops, st)
		total.Merge(set) // an unserved operation adds its count only
	}
	out.Totals = results.FromSet("all", "", total, span.Seconds(), due.Seconds())
	out.Coverage = results.CoverageOf(out.Ops)
	return out
}

// progressSink wraps a results sink to report progress and hand each interval to
// Config.Intervals.
func progressSink(cfg *Config, i int, virtual bool, sink metrics.Sink) metrics.Sink {
	if cfg.Progress == nil && cfg.Intervals == nil {
		return sink
	}
	tl := timeline(cfg)
	var late, dropped int64
	return func(iv *metrics.Interval) error {
		err := sink(iv)
		if cfg.Intervals != nil {
			cfg.Intervals(i, tl.Expected(iv.Start, iv.End), iv)
		}
		if cfg.Progress == nil {
			return err
		}
		secs := (iv.End - iv.Start).Seconds()
		a := iv.All
		late += a.Late
		dropped += a.Dropped
		p := Progress{
			Variant: cfg.Variants[i].Name, VariantIndex: i, Variants: len(cfg.Variants), Virtual: virtual,
			Elapsed: iv.End, Total: cfg.Schedule.Duration(), Phase: tl.Phase(iv.Start),
			Late: late, Dropped: dropped, InFlight: iv.InFlight,
		}
		if secs > 0 {
			p.TargetRate = tl.Target(iv) / secs
			p.AchievedRate = float64(a.Completed) / secs
			p.ErrorsPerSec = float64(a.ErrorCount()) / secs
		}
		if a.Response.TotalCount() > 0 {
			p.P99 = time.Duration(a.Response.ValueAtPercentile(99))
		}
		cfg.Progress(p)
		return err
	}
}

// shareWork lets a group's simulators share what they would each compute alike
// (backend.Sharing): the function the shared stream runs on every block, or nil.
func shareWork(ctx context.Context, cfg *Config, batch []int) func([]workloads.Op) {
	sh, ok := cfg.Variants[batch[0]].Virtual.(backend.Sharing)
	if !ok || len(batch) < 2 {
		return nil
	}
	members := make([]backend.Virtual, len(batch))
	for k, i := range batch {
		members[k] = cfg.Variants[i].Virtual
	}
	return sh.Share(ctx, members, func() (workloads.Source, error) { return cfg.NewSource() })
}

// simGroupSize is how many simulated variants share a stream: at least 16, and two per
// CPU beyond that. A group generates the stream once and places the tables its variants
// define alike once (backend.Sharing), so larger groups save more; the bound keeps memory
// in check for long sweeps, since every simulator of a group holds its cluster and
// hot-partition state at once (black-friday.yaml's 14 variants: one group, 1.22 GB peak RSS).
func simGroupSize() int { return max(16, 2*runtime.GOMAXPROCS(0)) }
