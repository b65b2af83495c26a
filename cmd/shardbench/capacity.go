package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/shardbench/shardbench/internal/capacity"
	"github.com/shardbench/shardbench/internal/engine"
	"github.com/shardbench/shardbench/internal/gate"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/units"
	"github.com/shardbench/shardbench/reports"
)

// CapacityOptions are the inputs of `shardbench capacity`.
type CapacityOptions struct {
	IO           *IO
	ScenarioPath string
	Backend      string
	Target       string
	Out          string
	Seed         int64
	SeedSet      bool
	// Variants keeps the variants matching any of these patterns (variant names hold
	// commas, so each pattern is its own flag).
	Variants []string
	// SLOFile holds the rules to hold variants to (default: the scenario's slo section,
	// else the default SLO with P99 as its bound).
	SLOFile string
	P99     time.Duration
	// Precision is the relative width of each answer's bracket.
	Precision float64
	// Start, Growth, Min and Max: the first multiple, the bracketing factor and the range.
	// Zero: the backend's default (defaultsFor).
	Start, Growth, Min, Max float64
	// LeadIn: simulated probes start this long before the peak.
	LeadIn time.Duration
	// Warmup and Step: each real step runs Warmup unmeasured, then Step measured.
	Warmup, Step time.Duration
	// MaxDuration bounds the whole search (0: no bound).
	MaxDuration time.Duration
	Recreate    bool
	Quiet       bool
	NoReport    bool
	Spin        time.Duration

	signals <-chan os.Signal
	now     func() time.Time
}

func newCapacityCmd(io *IO, runF func(*CapacityOptions) error) *cobra.Command {
	opts := &CapacityOptions{IO: io}
	var precision string
	cmd := &cobra.Command{
		Use:   "capacity SCENARIO",
		Short: "Find the largest multiple of a scenario's load each design variant sustains within its SLO, and what breaks first",
		Long: `capacity searches, for every design variant of the scenario, the largest multiple of
the scenario's load shape at which its SLO holds: the scenario's slo section, a --slo
file, or the default SLO (every served operation's p99 under --p99, error rate under
0.1%, at least 99% of the offered rate achieved, nothing dropped). Operations a design
does not serve are left out of every figure.

It brackets (multiplying by --growth from --start) and then bisects until the first
failing multiple is within --precision of the last passing one. On the simulator each
probe runs a window around the schedule's peak (--lead-in before it), variants due at the
same multiple share a run, and each answer is confirmed on the schedule from its start
to the window's end, judged over the window: its multiple passes and the next step up
fails. On a real database (--backend cassandra or
mongo) each variant is stepped on its own: constant-rate steps at multiples of the
scenario's peak rate, each after a --warmup, up to the first breach, then bisected, within
--max-duration.

For each variant it reports the multiple sustained, the served operations per second at
the peak, the headroom against the scenario's own peak, and what breaks first at the first
failing step (a saturated node or shard and the hot partition on it, LWT contention, the
client, a partition past its size limit) with the figures from that step's results.
Everything goes to a directory: capacity.json, the capacity curve, a report, and each
probe's own results directory under steps/. See docs/capacity.md.`,
		Example: `  shardbench capacity scenarios/black-friday.yaml
  shardbench capacity scenarios/claims/products-hot-category.yaml --precision 10% --variants 'seed001*'
  shardbench capacity scenarios/bench/cassandra-sessions.yaml --backend cassandra --target cassandra://127.0.0.1 --start 0.2 --step 20s`,
		Args: exactArgs(1, "a scenario file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ScenarioPath = args[0]
			opts.SeedSet = cmd.Flags().Changed("seed")
			if precision != "" {
				p, err := parsePrecision(precision)
				if err != nil {
					return usageErrorf("--precision: %v", err)
				}
				opts.Precision = p
			}
			if runF != nil {
				return runF(opts)
			}
			return runCapacity(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Backend, "backend", "b", "sim", "backend: sim, cassandra or mongo")
	f.StringVar(&opts.Target, "target", "", "real database to step, e.g. cassandra://host1,host2:9042?dc=dc1 or mongodb://host:27017 (credentials from the environment, never the URL)")
	f.StringVarP(&opts.Out, "out", "o", "", "directory for capacity.json, the report and every step's results (default results/<scenario>-capacity-<time>)")
	f.Int64Var(&opts.Seed, "seed", 0, "override the scenario's seed")
	f.StringArrayVar(&opts.Variants, "variant", nil, "only the variants matching this pattern (* and ? match; repeat for more)")
	f.StringVar(&opts.SLOFile, "slo", "", "rules file to hold the variants to (default: the scenario's slo section, else the default SLO)")
	f.DurationVar(&opts.P99, "p99", capacity.Defaults.P99, "the default SLO's bound on every served operation's p99 response time")
	f.StringVar(&precision, "precision", "5%", "how close the first failing multiple is to the last passing one (5% or 0.05)")
	f.Float64Var(&opts.Start, "start", 0, "the first multiple tried (default 1 on the simulator, 0.1 on a real database)")
	f.Float64Var(&opts.Growth, "growth", 0, "factor between multiples while bracketing (default 2 on the simulator, 1.5 on a real database)")
	f.Float64Var(&opts.Min, "min-multiple", 0, "smallest multiple tried (default 0.01)")
	f.Float64Var(&opts.Max, "max-multiple", 0, "largest multiple tried (default 32)")
	f.DurationVar(&opts.LeadIn, "lead-in", 30*time.Second, "simulator: how much of the schedule before the peak each probe runs, for queues to build")
	f.DurationVar(&opts.Warmup, "warmup", 10*time.Second, "real database: unmeasured time at each step's rate before it is measured")
	f.DurationVar(&opts.Step, "step", 30*time.Second, "real database: measured time of each step")
	f.DurationVar(&opts.MaxDuration, "max-duration", 30*time.Minute, "stop starting probes after this long and report what is known (0: no bound)")
	f.BoolVar(&opts.Recreate, "recreate", false, "real databases: drop and recreate each variant's keyspace or database before its first step")
	f.DurationVar(&opts.Spin, "spin", engine.DefaultSpinBelow, "real database: dispatch waits shorter than this spin (0: never; kinder to a server on the same machine)")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "print only the answer")
	f.BoolVar(&opts.NoReport, "no-report", false, "do not render the HTML report")
	return cmd
}

// parsePrecision reads "5%" or "0.05".
func parsePrecision(s string) (float64, error) {
	t := strings.TrimSpace(s)
	div := 1.0
	if strings.HasSuffix(t, "%") {
		t, div = strings.TrimSuffix(t, "%"), 100
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v <= 0 || v/div >= 1 {
		return 0, fmt.Errorf("want a share above 0 and below 100%%, such as 5%% or 0.05; got %q", s)
	}
	return v / div, nil
}

// defaultsFor fills the search settings the user left at zero.
func (o *CapacityOptions) defaultsFor(simulated bool) {
	if o.Precision == 0 {
		o.Precision = 0.05
	}
	set := func(p *float64, sim, real float64) {
		if *p == 0 {
			*p = real
			if simulated {
				*p = sim
			}
		}
	}
	set(&o.Start, 1, 0.1)
	set(&o.Growth, 2, 1.5)
	set(&o.Min, 0.01, 0.01)
	set(&o.Max, 32, 32)
}

func (o *CapacityOptions) check() error {
	switch {
	case backendOpeners[o.Backend] == nil:
		return usageErrorf("unknown backend %q (choose from sim, cassandra, mongo)", o.Backend)
	case o.Backend == "null" || o.Backend == "delay":
		return usageErrorf("--backend %s has no capacity to find (it is a test backend); use sim, cassandra or mongo", o.Backend)
	case o.Growth <= 1:
		return usageErrorf("--growth must be above 1, got %g", o.Growth)
	case o.Min <= 0 || o.Max < o.Min:
		return usageErrorf("--min-multiple and --max-multiple must satisfy 0 < min ≤ max (got %g, %g)", o.Min, o.Max)
	case o.Start < o.Min || o.Start > o.Max:
		return usageErrorf("--start %g is outside [--min-multiple %g, --max-multiple %g]", o.Start, o.Min, o.Max)
	case o.LeadIn < 0 || o.Warmup < 0 || o.Step <= 0 || o.MaxDuration < 0 || o.Spin < 0:
		return usageErrorf("--lead-in, --warmup, --max-duration and --spin must not be negative, --step must be positive")
	case o.P99 <= 0:
		return usageErrorf("--p99 must be positive")
	}
	return nil
}

// capacityRun is one search's inputs once loaded.
type capacityRun struct {
	opts      *CapacityOptions
	in        *runInput
	simulated bool
	slo       *capacity.SLO
	served    capacity.Served
	infos     map[string]capacity.VariantInfo
	peak      capacity.Peak
	window    capacity.Window
	out       string
	recreated sync.Map // variant index → true once its schema was recreated
	loaded    sync.Map // variant index → true once its population was loaded (real databases)
	hardStop  <-chan struct{}
}

func runCapacity(ctx context.Context, opts *CapacityOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if opts.now == nil {
		opts.now = time.Now
	}
	simulated := opts.Backend == "sim"
	opts.defaultsFor(simulated)
	if err := opts.check(); err != nil {
		return err
	}
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(runGCPercent))
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(runMemoryLimit))
	}
	cr, err := loadCapacity(opts, simulated)
	if err != nil {
		return err
	}
	ctx, stop, hardStop := interruptContext(ctx, opts.signals, opts.IO.gone)
	defer stop()
	cr.hardStop = hardStop
	started := opts.now()
	doc := cr.document(started)
	search := cr.search(started)
	search.Progress = func(p results.CapacityProbe, ans []capacity.Answer) {
		cr.printProbe(p)
		if sum, err := results.Read(filepath.Join(cr.out, results.CapacityStepsDir, p.Step)); err == nil {
			doc.Backend = sum.Backend // the target as the backend redacted it, the server's version
		}
		doc.Probes = append(doc.Probes, p)
		doc.Variants = cr.answers(ans, false)
		doc.EndedAt = opts.now()
		if err := results.At(cr.out).WriteCapacity(doc); err != nil {
			fmt.Fprintf(opts.IO.ErrOut, "shardbench: writing %s: %v\n", results.CapacityFile, err)
		}
	}
	if !opts.Quiet {
		cr.printStart()
	}
	ans, probes, searchErr := search.Do(ctx)
	doc.Probes = probes
	doc.Variants = cr.answers(ans, true)
	doc.EndedAt = opts.now()
	doc.Complete = searchErr == nil && ctx.Err() == nil
	if ctx.Err() != nil {
		doc.Interrupted = interruptReason(ctx)
	} else if searchErr != nil {
		doc.Interrupted = searchErr.Error()
	} else if n := countOutcome(doc.Variants, results.CapacityIncomplete, results.CapacityUnconfirmed); n > 0 {
		doc.Notes = append(doc.Notes,
			fmt.Sprintf("the search reached --max-duration %s before %d variant(s) were "+
				"bracketed to the precision and confirmed: their figures are what was known then",
				opts.MaxDuration, n))
	}
	if err := results.At(cr.out).WriteCapacity(doc); err != nil {
		return err
	}
	reports.WriteCapacityText(opts.IO.Out, doc)
	if !opts.NoReport {
		res, err := reports.RenderCapacity(cr.out, reportOptions("", false, reports.DefaultMaxOpCharts, reports.DefaultMaxVariantCharts))
		if err != nil {
			fmt.Fprintf(opts.IO.ErrOut, "shardbench: the capacity report could not be rendered: %v (capacity.json is intact; retry with: shardbench report %s)\n", err, cr.out)
		} else if !opts.Quiet {
			printReportDone(opts.IO.ErrOut, opts.IO.ErrOut, res)
		}
	}
	if !opts.Quiet {
		fmt.Fprintf(opts.IO.ErrOut, "capacity: %s\n", filepath.Join(cr.out, results.CapacityFile))
	}
	if searchErr != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w: %s; what was found so far is in %s", engine.ErrInterrupted, doc.Interrupted, cr.out)
		}
		return fmt.Errorf("capacity search stopped: %w; what was found so far is in %s", searchErr, cr.out)
	}
	return nil
}

func countOutcome(vs []results.CapacityVariant, outcomes ...string) int {
	n := 0
	for _, v := range vs {
		for _, o := range outcomes {
			if v.Outcome == o {
				n++
			}
		}
	}
	return n
}

func interruptReason(ctx context.Context) string {
	if c := context.Cause(ctx); c != nil && !errors.Is(c, context.Canceled) {
		return c.Error()
	}
	return "interrupted"
}

// loadCapacity loads the scenario, picks the variants and the SLO, and makes the output
// directory.
func loadCapacity(opts *CapacityOptions, simulated bool) (*capacityRun, error) {
	ov := runOverrides{}
	if opts.SeedSet {
		ov.Seed = &opts.Seed
	}
	in, err := loadRun(opts.ScenarioPath, ov)
	if err != nil {
		return nil, err
	}
	cr := &capacityRun{opts: opts, in: in, simulated: simulated, infos: map[string]capacity.VariantInfo{}}
	if err := cr.pickVariants(); err != nil {
		return nil, err
	}
	if cr.slo, err = capacitySLO(opts, in); err != nil {
		return nil, err
	}
	cr.served = servedBy(in)
	for _, v := range in.Variants {
		cr.infos[v.Name] = variantInfo(in, v, cr.slo.P99Bound)
	}
	cr.peak = capacity.FindPeak(in.Scenario.Load.Phases)
	if cr.peak.Rate <= 0 {
		return nil, usageErrorf("%s: the schedule offers no operations (every rate is 0)", opts.ScenarioPath)
	}
	cr.window = capacity.PeakWindow(cr.peak, opts.LeadIn)
	cr.out = opts.Out
	if cr.out == "" {
		cr.out = filepath.Join("results", results.SafeName(in.Scenario.Name)+"-capacity-"+opts.now().Format("20060102-150405"))
	}
	if _, err := os.Stat(filepath.Join(cr.out, results.CapacityFile)); err == nil {
		return nil, usageErrorf("%s already holds a capacity search (capacity.json); choose another --out", cr.out)
	}
	if err := os.MkdirAll(filepath.Join(cr.out, results.CapacityStepsDir), 0o755); err != nil {
		return nil, usageError(err)
	}
	return cr, nil
}

// pickVariants keeps the variants --variant names.
func (cr *capacityRun) pickVariants() error {
	if len(cr.opts.Variants) == 0 {
		return nil
	}
	var keep []variantSpec
	for _, v := range cr.in.Variants {
		for _, pat := range cr.opts.Variants {
			if gate.Match(pat, v.Name) {
				keep = append(keep, v)
				break
			}
		}
	}
	if len(keep) == 0 {
		var names []string
		for _, v := range cr.in.Variants {
			names = append(names, v.Name)
		}
		return usageErrorf("--variant %q matches none of the scenario's variants (%s)", strings.Join(cr.opts.Variants, `", "`), strings.Join(names, ", "))
	}
	cr.in.Variants = keep
	return nil
}

// capacitySLO is the --slo file, the scenario's slo section, or the default SLO.
func capacitySLO(opts *CapacityOptions, in *runInput) (*capacity.SLO, error) {
	var rs *gate.Rules
	var err error
	switch {
	case opts.SLOFile != "":
		rs, err = gate.ParseFile(opts.SLOFile)
	case !in.Scenario.SLO.IsZero():
		rs, err = gate.ParseRaw(in.Scenario.SLO)
	default:
		s, err := capacity.DefaultSLO(capacity.DefaultBounds{P99: opts.P99, ErrorRate: capacity.Defaults.ErrorRate, Achieved: capacity.Defaults.Achieved})
		return s, usageError(err)
	}
	if err != nil {
		return nil, usageError(err)
	}
	if len(rs.Rules) == 0 {
		return nil, usageErrorf("%s holds no rules", rs.Source)
	}
	names := make([]string, len(in.Ops))
	for i, o := range in.Ops {
		names[i] = o.Name
	}
	if err := rs.CheckOperations(names); err != nil {
		return nil, usageError(err)
	}
	return capacity.RulesSLO(rs), nil
}

// servedBy says which operations each variant's design serves.
func servedBy(in *runInput) capacity.Served {
	served := map[string]map[string]bool{}
	for _, v := range in.Variants {
		m := map[string]bool{}
		for i, op := range in.Ops {
			ok := v.Compiled == nil
			if v.Compiled != nil {
				ok, _ = v.Compiled.Served(i)
			}
			m[op.Name] = ok
		}
		served[v.Name] = m
	}
	return func(variant, op string) bool { return served[variant][op] }
}

// variantInfo is what the diagnosis needs of a variant's design.
func variantInfo(in *runInput, v variantSpec, p99 time.Duration) capacity.VariantInfo {
	info := capacity.VariantInfo{Name: v.Name, Ops: map[string][]capacity.StepInfo{}, MaxInFlight: in.Scenario.Load.MaxInFlight, P99Bound: p99}
	for i, op := range in.Ops {
		if v.Compiled == nil {
			info.Ops[op.Name] = nil
			continue
		}
		if ok, _ := v.Compiled.Served(i); !ok {
			continue
		}
		var steps []capacity.StepInfo
		for _, s := range v.Compiled.Steps(i) {
			steps = append(steps, capacity.StepInfo{Table: s.Namespace + "." + s.Target, Kind: s.Kind.String(), Database: s.Database.String()})
		}
		info.Ops[op.Name] = steps
	}
	return info
}

// search sets the search up for the backend.
func (cr *capacityRun) search(started time.Time) *capacity.Search {
	o := cr.opts
	s := &capacity.Search{
		PeakRate: cr.peak.Rate, Start: o.Start, Growth: o.Growth, Precision: o.Precision, Min: o.Min, Max: o.Max,
		Window: cr.simulated && !cr.wholeWindow(), Whole: cr.simulated && cr.wholeWindow(), OnePerProbe: !cr.simulated, Concurrency: 1,
		Run: cr.probe, Judge: cr.judge,
	}
	if cr.simulated {
		// Two probes at once keep both cores busy when a round's probes hold a variant or
		// two each; the budget keeps the variants simulated at once to what one run of a
		// scenario holds (engine: groups of 16), so memory stays what a run needs.
		s.Concurrency, s.VariantBudget = max(1, runtime.GOMAXPROCS(0)), 16
		if l := cr.window.Length(); l > 0 {
			s.ConfirmCost = cr.window.To.Seconds() / l.Seconds()
		}
	}
	if o.MaxDuration > 0 {
		s.Deadline = started.Add(o.MaxDuration)
		if !cr.simulated {
			// A step that would end past the bound is not started.
			s.Deadline = s.Deadline.Add(-(o.Warmup + o.Step))
		}
	}
	for _, v := range cr.in.Variants {
		s.Variants = append(s.Variants, v.Name)
	}
	return s
}

// wholeWindow: the window around the peak is the whole schedule (a single constant
// phase, a peak that starts within the lead-in and lasts to the end), so the probes run
// the whole schedule and need no confirming.
func (cr *capacityRun) wholeWindow() bool {
	return cr.window.From == 0 && cr.window.To >= cr.peak.Schedule
}

// probe runs one probe of the search into steps/<name>.
func (cr *capacityRun) probe(ctx context.Context, p capacity.ProbeSpec) (capacity.Ran, error) {
	base := cr.in.Scenario
	dir := filepath.Join(cr.out, results.CapacityStepsDir, p.Step)
	switch p.Kind {
	case results.ProbeWindow:
		w := cr.window
		sc := capacity.Probe(base, p.Multiple, &w)
		err := cr.drive(ctx, sc, p.Variants, dir, nil)
		return capacity.Ran{Dir: dir, PeakFrom: w.PeakFrom - w.From, PeakTo: w.To - w.From}, err
	case results.ProbeFull:
		// The schedule from its start to the window's end, judged over the window the
		// window probes run (see capacity.Search): its history leads into the window and
		// its quiet hours do not dilute it; what comes after the window is not judged, so
		// it is not run.
		var m *results.MeasureWindow
		var upTo *capacity.Window
		if !cr.wholeWindow() {
			m = &results.MeasureWindow{FromS: cr.window.From.Seconds(), ToS: cr.window.To.Seconds()}
			upTo = &capacity.Window{From: 0, To: cr.window.To, PeakFrom: cr.window.PeakFrom}
		}
		err := cr.drive(ctx, capacity.Probe(base, p.Multiple, upTo), p.Variants, dir, m)
		return capacity.Ran{Dir: dir, PeakFrom: cr.peak.From, PeakTo: cr.peak.To}, err
	}
	rate := p.Multiple * cr.peak.Rate
	if !cr.opts.Quiet {
		fmt.Fprintf(cr.opts.IO.ErrOut, "  %s: %s at %s ops/s: %s warm-up, %s measured\n", p.Step, cr.in.Variants[p.Variants[0]].Name, units.Count(rate), cr.opts.Warmup, cr.opts.Step)
	}
	if cr.opts.Warmup > 0 {
		if err := cr.drive(ctx, capacity.Steady(base, "warm-up", rate, cr.opts.Warmup), p.Variants, dir+"-warmup", nil); err != nil {
			return capacity.Ran{}, fmt.Errorf("warm-up: %w", err)
		}
	}
	err := cr.drive(ctx, capacity.Steady(base, "step", rate, cr.opts.Step), p.Variants, dir, nil)
	return capacity.Ran{Dir: dir, PeakFrom: 0, PeakTo: cr.opts.Step}, err
}

// drive runs the scenario sc for the variants (indices into the search's variants) into
// dir through the run path `run` uses, its summary restricted to the measure window m when
// set. --recreate applies to each variant's first run.
func (cr *capacityRun) drive(ctx context.Context, sc *scenario.Scenario, idx []int, dir string, m *results.MeasureWindow) error {
	in, err := prepareRun(sc)
	if err != nil {
		return err
	}
	var keep []variantSpec
	for _, i := range idx {
		want := cr.in.Variants[i]
		for _, v := range in.Variants {
			if v.Index == want.Index {
				keep = append(keep, v)
			}
		}
	}
	in.Variants = keep
	// A real database is loaded with the population before a variant's first step; its
	// later steps reuse it.
	skipLoad := !cr.simulated
	if !cr.simulated {
		for _, i := range idx {
			if _, done := cr.loaded.LoadOrStore(i, true); !done {
				skipLoad = false
			}
		}
	}
	recreate := false
	if cr.opts.Recreate && !cr.simulated {
		for _, i := range idx {
			if _, done := cr.recreated.LoadOrStore(i, true); !done {
				recreate = true
			}
		}
	}
	rd, err := results.Create(dir)
	if err != nil {
		return err
	}
	defer rd.Close()
	asRun, err := sc.AsRun()
	if err != nil {
		return err
	}
	if err := rd.WriteFile(results.ScenarioFile, asRun); err != nil {
		return err
	}
	spin := cr.opts.Spin
	if spin == 0 {
		spin = -1
	}
	_, err = driveRun(ctx, in, rd, drive{IO: cr.quietIO(), Backend: cr.opts.Backend, Target: cr.opts.Target, Recreate: recreate, SkipLoad: skipLoad, Quiet: true, SpinBelow: spin, HardStop: cr.hardStop, Measure: m})
	return err
}

// quietIO keeps the backends' own messages (keyspaces created, notes) on stderr unless
// --quiet.
func (cr *capacityRun) quietIO() *IO {
	if cr.opts.Quiet {
		return &IO{Out: io.Discard, ErrOut: io.Discard}
	}
	return cr.opts.IO
}

// judge evaluates a probe.
func (cr *capacityRun) judge(r capacity.Ran) (map[string]capacity.Verdict, error) {
	return capacity.Judge(r.Dir, cr.slo, cr.served, r.PeakFrom, r.PeakTo)
}

// document is capacity.json before the first probe.
func (cr *capacityRun) document(started time.Time) *results.Capacity {
	o, sc := cr.opts, cr.in.Scenario
	doc := &results.Capacity{
		Tool:      results.Tool{Name: "shardbench", Version: version, GoVersion: runtime.Version()},
		StartedAt: started, EndedAt: started,
		Scenario: results.ScenarioInfo{Name: sc.Name, Description: sc.Description, Source: sc.File, Seed: sc.Seed,
			DurationS: cr.in.Schedule.Duration().Seconds(), ExpectedOps: cr.in.Schedule.Expected(), Arrival: sc.Load.Arrival, MaxInFlight: sc.Load.MaxInFlight},
		Backend:   results.BackendInfo{Name: o.Backend, Simulated: cr.simulated}, // the backend's own description after the first probe
		SLO:       results.CapacitySLO{Source: cr.slo.Source, Rules: cr.slo.Texts(), P99BoundMs: float64(cr.slo.P99Bound) / 1e6, Served: true},
		Precision: o.Precision, MinMultiple: o.Min, MaxMultiple: o.Max,
		PeakRate: cr.peak.Rate, PeakPhase: cr.peak.Phase,
	}
	if cr.simulated {
		doc.Method = results.CapacitySimulated
		doc.Window = &results.CapacityWindow{FromS: cr.window.From.Seconds(), ToS: cr.window.To.Seconds(), PeakFromS: cr.window.PeakFrom.Seconds(),
			LeadInS: (cr.window.PeakFrom - cr.window.From).Seconds(), ScheduleS: cr.peak.Schedule.Seconds()}
	} else {
		doc.Method = results.CapacityStepped
		doc.Stepping = &results.CapacityStepping{WarmupS: o.Warmup.Seconds(), StepS: o.Step.Seconds(), MaxDurationS: o.MaxDuration.Seconds(), Growth: o.Growth, StartMultiple: o.Start}
		if len(sc.Events) > 0 {
			doc.Notes = append(doc.Notes, fmt.Sprintf("the scenario's %d event(s) are not run: a step is a constant rate, not the scenario's timeline", len(sc.Events)))
		}
	}
	doc.Variants = cr.answers(nil, false)
	return doc
}

// answers turns the search's answers into capacity.json's variants; with diagnose, what
// breaks first is read from each failing step.
func (cr *capacityRun) answers(ans []capacity.Answer, diagnose bool) []results.CapacityVariant {
	byName := map[string]capacity.Answer{}
	for _, a := range ans {
		byName[a.Variant] = a
	}
	var out []results.CapacityVariant
	for _, v := range cr.in.Variants {
		cv := results.CapacityVariant{Variant: v.Name, Design: v.Design, Database: v.Database, Params: v.Params, Outcome: results.CapacityIncomplete, Curve: []results.CapacityPoint{}}
		a, ok := byName[v.Name]
		if ok {
			cv.Outcome, cv.Sustains, cv.Breaks = a.Outcome, a.Sustains, a.Breaks
			cv.Confirmed, cv.Confirmation, cv.Curve = a.Confirmed, a.Confirmation, a.Curve
			cv.SustainedPeakRate = a.Sustains * cr.peak.Rate
			cv.Headroom = a.Sustains - 1
			if a.Pass != nil {
				cv.PassStep = filepath.Join(results.CapacityStepsDir, a.Pass.Step)
				cv.ServedPeakRate = a.Pass.Verdict.ServedPeakRate
			}
			if a.Fail != nil {
				cv.FailStep = filepath.Join(results.CapacityStepsDir, a.Fail.Step)
				for _, c := range a.Fail.Verdict.Failed {
					cv.Failed = append(cv.Failed, results.CapacityCheck{Name: c.Name, Value: c.ValueText, Threshold: c.ThresholdText, Detail: c.Detail})
				}
				if diagnose {
					cause, err := capacity.Diagnose(a.Fail.Ran.Dir, cr.infos[v.Name], a.Fail.Verdict.Failed)
					if err != nil {
						cause = &results.CapacityCause{Kind: results.CauseSLO, Summary: "the failing step could not be read: " + err.Error()}
					}
					cv.BreaksFirst = cause
				}
			}
		}
		out = append(out, cv)
	}
	return out
}

func (cr *capacityRun) printStart() {
	o := cr.opts
	how := fmt.Sprintf("window %s–%s of the %s schedule (peak %s/s in %s, %s lead-in), confirmed on the schedule from its start to the window's end",
		mmss(cr.window.From), mmss(cr.window.To), mmss(cr.peak.Schedule), units.Count(cr.peak.Rate), cr.peak.Phase, cr.window.PeakFrom-cr.window.From)
	if !cr.simulated {
		how = fmt.Sprintf("steps of %s after %s warm-up at multiples of the peak %s/s, one variant after another, within %s", o.Step, o.Warmup, units.Count(cr.peak.Rate), o.MaxDuration)
	}
	fmt.Fprintf(o.IO.ErrOut, "shardbench: capacity of %s on %s: %d variant(s); SLO %s; from ×%s (growth %g, precision %s) → %s\n  %s\n",
		cr.in.Scenario.Name, o.Backend, len(cr.in.Variants), cr.slo.Source, capacity.MultipleText(o.Start), o.Growth, units.Pct(o.Precision), cr.out, how)
}

func (cr *capacityRun) printProbe(p results.CapacityProbe) {
	if cr.opts.Quiet {
		return
	}
	verdict := fmt.Sprintf("%d pass", len(p.Variants)-len(p.Failed))
	if len(p.Failed) > 0 {
		verdict += fmt.Sprintf(", %d fail (%s)", len(p.Failed), strings.Join(p.Failed, ", "))
	}
	if p.Error != "" {
		verdict = "error: " + p.Error
	}
	fmt.Fprintf(cr.opts.IO.ErrOut, "  %s: %d variant(s), %.1f s: %s\n", p.Step, len(p.Variants), p.WallS, verdict)
}
