package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/backend/sim"
	"github.com/shardbench/shardbench/internal/engine"
	"github.com/shardbench/shardbench/internal/live"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/yamlx"
)

// RunOptions are the inputs of `shardbench run`.
type RunOptions struct {
	IO           *IO
	ScenarioPath string
	Backend      string
	Target       string
	Out          string
	Duration     time.Duration
	DurationSet  bool
	RateScale    float64
	RateScaleSet bool
	// MeasureFrom and MeasureTo (both set, simulator only) restrict the summary, the
	// gate and the report's tables to the operations intended in that window of the
	// schedule, as a capacity search judges its whole-schedule probes.
	MeasureFrom, MeasureTo time.Duration
	Seed                   int64
	SeedSet                bool
	Quiet                  bool
	NoReport               bool
	// Recreate drops and recreates each variant's schema on real databases.
	Recreate bool
	// SkipLoad leaves out the load step on real databases: reuse one loaded before.
	SkipLoad bool
	// Gate evaluates SLO rules at the end of the run: gateScenario (--gate alone) for the
	// scenario's slo section, else a rules file (--gate=FILE). GateStrict fails on skipped
	// checks; JUnit writes the checks as JUnit XML.
	Gate       string
	GateStrict bool
	JUnit      string

	// signals delivers interrupts; tests substitute a channel.
	signals <-chan os.Signal
	// Spin: waits for the next intended start shorter than this are spun rather than
	// slept (0: never spin; SpinAuto: the engine chooses from the machine and where the
	// servers are). Passed to the engine as SpinBelow; tests under synctest set spinBelow -1.
	Spin      time.Duration
	SpinAuto  bool
	spinBelow time.Duration
	// MetricsAddr serves live metrics (Prometheus / OpenMetrics) on this address during the
	// run ("": none).
	MetricsAddr string
	// metricsReady and metricsDone (tests) are called with the live metrics address once it
	// serves and once the run has ended, before it stops serving.
	metricsReady, metricsDone func(addr string)
	// CPUProfile writes a Go CPU profile of the whole run (the harness's own cost: what
	// to look at when the simulator or the dispatcher is the bottleneck).
	CPUProfile string
	// Shard ("I/N") or Shards (N, the index from JOB_COMPLETION_INDEX) make the process
	// one shard of a distributed run; StartAt (RFC 3339) is the run's common clock.
	Shard   string
	Shards  int
	StartAt string
	// SetupOnly creates each variant's schema and runs the load step, then exits: the
	// once-only setup step of a distributed run, whose shards then skip it.
	SetupOnly bool
	skipSetup bool
	// getenv looks environment variables up (tests substitute it).
	getenv func(string) string
}

func newRunCmd(io *IO, runF func(*RunOptions) error) *cobra.Command {
	opts := &RunOptions{IO: io}
	cmd := &cobra.Command{
		Use:   "run SCENARIO",
		Short: "Drive a scenario's traffic against its design variants and record the results",
		Long: `run drives the scenario's operation stream against every design variant it lists,
with open-model timing: operations start at their scheduled times whatever the
backend does, and latency counts from that intended start (coordinated-omission
correct), beside service time and schedule lag.

Results go to a directory (summary.json, HdrHistogram interval logs, a per-second time
series, the scenario as run). Ctrl-C or SIGTERM stops scheduling, drains in-flight
operations and writes everything measured so far (a second Ctrl-C stops at once);
the exit code is then 1.`,
		Example: `  shardbench run scenarios/smoke.yaml
  shardbench run scenarios/black-friday.yaml --duration 2m --rate-scale 0.5 --out results/bf
  shardbench run scenarios/smoke.yaml --backend null --quiet
  shardbench run scenarios/smoke.yaml --gate --junit out/gate.xml
  shardbench run scenarios/smoke.yaml --gate=ci/gate.yaml
  shardbench run scenarios/black-friday.yaml --backend cassandra --target cassandra://db:9042 \
      --shard 2/4 --start-at 2026-11-28T10:00:00Z --out results/bf/shard-2`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 2 && opts.Gate == gateScenario {
				return usageErrorf("%s needs one scenario file (got 2 arguments); to name a rules file write --gate=FILE, with '='", c.CommandPath())
			}
			return exactArgs(1, "a scenario file")(c, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ScenarioPath = args[0]
			opts.SeedSet = cmd.Flags().Changed("seed")
			opts.DurationSet = cmd.Flags().Changed("duration")
			opts.RateScaleSet = cmd.Flags().Changed("rate-scale")
			if opts.Spin < 0 {
				return usageErrorf("--spin must not be negative, got %s (0 never spins)", opts.Spin)
			}
			if opts.JUnit != "" && opts.Gate == "" {
				return usageErrorf("--junit needs --gate")
			}
			if cmd.Flags().Changed("measure-from") != cmd.Flags().Changed("measure-to") {
				return usageErrorf("--measure-from and --measure-to go together (the window of the schedule the summary covers)")
			}
			if opts.SkipLoad && opts.Recreate {
				return usageErrorf("--skip-load reuses a loaded database, which --recreate drops: use one or the other")
			}
			if runF != nil {
				return runF(opts)
			}
			return runRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Backend, "backend", "b", "sim", "backend: "+strings.Join(backendNames(), ", "))
	f.StringVar(&opts.Target, "target", "", "database to connect to, e.g. cassandra://host1,host2:9042?dc=dc1 or mongodb://host:27017 (credentials from the environment, never the URL)")
	f.StringVarP(&opts.Out, "out", "o", "", "results directory (default results/<scenario>-<time>)")
	f.DurationVar(&opts.Duration, "duration", 0, "scale every phase so the schedule lasts this long")
	f.Float64Var(&opts.RateScale, "rate-scale", 0, "multiply every rate (0.1 = a tenth of the traffic)")
	f.Int64Var(&opts.Seed, "seed", 0, "override the scenario's seed")
	f.DurationVar(&opts.MeasureFrom, "measure-from", 0, "simulator: the summary, gate and tables cover only operations intended from this time of the schedule (with --measure-to; the time series keep every one)")
	f.DurationVar(&opts.MeasureTo, "measure-to", 0, "simulator: ... and before this time of the schedule (see --measure-from)")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "print nothing while running")
	opts.SpinAuto = true
	f.Var(&spinFlag{opts}, "spin",
		"auto, or a duration: dispatch waits shorter than this spin instead of sleeping (precise "+
			"starts for up to a core of client CPU); 0 never spins (starts up to ~1 ms late, "+
			"counted as schedule lag). auto spins "+engine.DefaultSpinBelow.String()+
			" unless a server of the run is on this machine or it has one CPU; the choice is "+
			"in summary.json")
	f.BoolVar(&opts.Recreate, "recreate", false, "real databases: drop and recreate each variant's keyspace or database before the run")
	f.BoolVar(&opts.SkipLoad, "skip-load", false,
		"real databases: do not load the scenario's population before measuring (reuse a "+
			"database loaded by an earlier run; the results say whether it holds this population)")
	f.BoolVar(&opts.NoReport, "no-report", false, "do not render the HTML report at the end")
	f.StringVar(&opts.CPUProfile, "cpuprofile", "", "write a Go CPU profile of the run to this file (go tool pprof reads it; -tags splits it by variant)")
	f.StringVar(&opts.MetricsAddr, "metrics-addr", "", "serve live metrics during the run on this address, e.g. :9464 (GET /metrics: Prometheus text format or OpenMetrics)")
	f.StringVar(&opts.Gate, "gate", "", "check the scenario's slo section at the end (exit 1 if a check fails); --gate=FILE checks the rules in FILE")
	f.Lookup("gate").NoOptDefVal = gateScenario
	f.BoolVar(&opts.GateStrict, "strict", false, "with --gate: fail when a check is skipped (insufficient sample)")
	f.StringVar(&opts.JUnit, "junit", "", "with --gate: write the checks as JUnit XML to this file")
	f.StringVar(&opts.Shard, "shard", "", "INDEX/COUNT: be one of COUNT processes that together send the scenario's one stream, each operation once (merge their directories)")
	f.IntVar(&opts.Shards, "shards", 0, "COUNT: as --shard, with the index from "+jobIndexEnv+" (a Kubernetes Indexed Job)")
	f.StringVar(&opts.StartAt, "start-at", "", "RFC 3339 time every shard's schedule starts at (the run's common clock); a shard ready late sends what is due at once, counted late")
	f.BoolVar(&opts.SetupOnly, "setup-only", false,
		"real databases: create each variant's schema (with --recreate: afresh) and run the load "+
			"step, then exit; the setup step of a distributed run, whose shards skip it")
	return cmd
}

// runGCPercent is the garbage collector's target during a run, unless GOGC is set. The
// harness's own GC pauses show up as schedule lag (operations released late); at 100K
// ops/s on two cores the default (100) put the lag p99 at 1.8–2.5 ms, 400 at 0.56 ms, for a
// few hundred MB more heap. A soft memory limit keeps the heap bounded all the same.
const (
	runGCPercent   = 400
	runMemoryLimit = 2 << 30
)

func runRun(ctx context.Context, opts *RunOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(runGCPercent))
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(runMemoryLimit))
	}
	stopProfile, err := startCPUProfile(opts.CPUProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	if backendOpeners[opts.Backend] == nil {
		return usageErrorf("unknown backend %q (choose from %s)", opts.Backend, strings.Join(backendNames(), ", "))
	}
	ov := runOverrides{Duration: opts.Duration, DurationSet: opts.DurationSet, RateScale: opts.RateScale, RateScaleSet: opts.RateScaleSet}
	if opts.SeedSet {
		ov.Seed = &opts.Seed
	}
	getenv := opts.getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	shard, err := parseShard(opts.Shard, opts.Shards, getenv)
	if err != nil {
		return err
	}
	startAt, err := parseStartAt(opts.StartAt)
	if err != nil {
		return err
	}
	if shard.Count > 1 && opts.Gate != "" {
		return usageErrorf("--gate checks a whole run, and shard %d/%d is a part of one: merge "+
			"the shards' directories, then gate the merged one (shardbench merge DIR... "+
			"--out ALL && shardbench gate ALL)",
			shard.Index, shard.Count)
	}
	if shard.Count > 1 && (opts.Recreate || opts.SetupOnly) {
		return usageErrorf("--shard: the shards of a run share one schema, set up once before them: run the scenario with --setup-only (and --recreate) first, without --shard")
	}
	opts.skipSetup = shard.Count > 1
	in, err := loadRun(opts.ScenarioPath, ov)
	if err != nil {
		return err
	}
	if opts.SetupOnly {
		return runSetup(ctx, opts, in)
	}
	if late := time.Since(startAt); !startAt.IsZero() && opts.Backend != "sim" && late > in.Schedule.Duration() {
		return usageErrorf("--start-at %s passed %s ago, more than the schedule's %s: this process would send the whole of its first variant at once; start the run again with a new --start-at",
			opts.StartAt, late.Round(time.Second), in.Schedule.Duration())
	}
	if opts.Backend == "sim" {
		if err := sim.CheckMemory(in.Scenario); err != nil {
			return usageError(err)
		}
	}
	if err := results.CheckRunSize(len(in.Variants), len(in.Ops), in.Schedule.Duration()); err != nil {
		if !opts.DurationSet {
			pos, path := in.Scenario.Load.Loc.At("phases")
			return usageError(yamlx.Errors{{Pos: pos, Path: path, Msg: err.Error()}})
		}
		return usageErrorf("--duration %s: %v", yamlx.FormatDuration(opts.Duration), err)
	}
	digest, err := runDigest(in)
	if err != nil {
		return err
	}
	gateRules, err := runGateRules(opts, in)
	if err != nil {
		return err
	}
	sc := in.Scenario
	measure, err := measureWindow(opts, in)
	if err != nil {
		return err
	}

	out := opts.Out
	if out == "" {
		out = filepath.Join("results", results.SafeName(sc.Name)+"-"+time.Now().Format("20060102-150405"))
		if shard.Count > 1 {
			out += fmt.Sprintf("-shard-%d-of-%d", shard.Index, shard.Count)
		}
	}
	dir, err := results.Create(out)
	if err != nil {
		return usageError(err)
	}
	defer dir.Close()
	dir.SetVariantOrder(in.VariantNames())
	asRun, err := sc.AsRun()
	if err != nil {
		return err
	}
	if err := dir.WriteFile(results.ScenarioFile, asRun); err != nil {
		return err
	}

	reg, stopMetrics, err := serveMetrics(opts, in)
	if err != nil {
		return err
	}
	defer stopMetrics()

	ctx, stop, hardStop := interruptContext(ctx, opts.signals, opts.IO.gone)
	defer stop()

	prog := newProgress(opts.IO, opts.Quiet)
	if !opts.Quiet {
		fmt.Fprintf(opts.IO.ErrOut, "shardbench: %s on %s: %d variant(s), %s, about %.0f operations each → %s\n",
			sc.Name, opts.Backend, len(in.Variants), in.Schedule.Duration(), in.Schedule.Expected(), out)
		if shard.Count > 1 {
			fmt.Fprintf(opts.IO.ErrOut, "shardbench: shard %d of %d: this process sends the operations it owns, about 1/%d of them\n", shard.Index, shard.Count, shard.Count)
		}
		if note := startAtNote(startAt); note != "" {
			fmt.Fprintf(opts.IO.ErrOut, "shardbench: %s\n", note)
		}
	}
	sum, runErr := driveRun(ctx, in, dir, drive{
		IO: opts.IO, Backend: opts.Backend, Target: opts.Target, Recreate: opts.Recreate, SkipLoad: opts.SkipLoad, Quiet: opts.Quiet,
		SpinBelow: spinBelow(opts), Progress: prog.update, HardStop: hardStop,
		Shard: shard, StartAt: startAt, Digest: digest, SkipSetup: opts.skipSetup, Metrics: reg,
		Measure: measure,
	})
	prog.done()
	if reg != nil {
		reg.Finish()
		if opts.metricsDone != nil {
			opts.metricsDone(opts.MetricsAddr)
		}
	}
	if sum == nil {
		return runErr // no backend could be opened: nothing ran
	}
	// The time series is buffered: flush it before the verdict, the gate and the report
	// read the directory, or they would find its last line cut short.
	closeErr := dir.Close()
	if closeErr != nil {
		fmt.Fprintf(opts.IO.ErrOut, "shardbench: %s: %v\n", out, closeErr)
	}
	if !opts.Quiet {
		printRunSummary(opts.IO.Out, sum, out)
	}
	writeVerdict(opts.IO, out, opts.Quiet)
	if !opts.Quiet {
		fmt.Fprintf(opts.IO.ErrOut, "results: %s\n", out)
	}
	var gateErr error
	if gateRules != nil {
		gateErr = gateAfterRun(opts, gateRules, out)
	}
	// After the gate, so the report shows its verdict. A run that wrote without an error
	// has logs the report need not read back to check.
	reportAfterRun(opts, out, runErr == nil && closeErr == nil)
	if gateErr != nil && runErr == nil {
		return gateErr
	}
	if runErr != nil {
		if errors.Is(runErr, engine.ErrInterrupted) {
			return fmt.Errorf("%w; results measured so far are in %s", runErr, out)
		}
		return runErr
	}
	return nil
}

// drive is how driveRun runs: the backend and its target, and what the run reports while
// it goes.
type drive struct {
	IO              *IO
	Backend, Target string
	Recreate        bool
	// SkipLoad: the real database already holds the population (--skip-load, or a
	// capacity search's later steps).
	SkipLoad  bool
	Quiet     bool
	SpinBelow time.Duration
	Progress  func(engine.Progress)
	HardStop  <-chan struct{}
	// Shard is the part of the stream this process sends (--shard), StartAt the agreed
	// start of a sharded run, Digest the scenario's (shards of one run share it);
	// SkipSetup: the shards' schema was set up once before them.
	Shard     shardSpec
	StartAt   time.Time
	Digest    string
	SkipSetup bool
	// Metrics, when set, serves the run's intervals live (--metrics-addr).
	Metrics *live.Registry
	// Measure restricts the summary to the operations intended in a window of the
	// schedule (a capacity search's whole-schedule probe on the simulator).
	Measure *results.MeasureWindow
}

// measureWindow is --measure-from/--measure-to as the engine takes it (nil: unset).
func measureWindow(opts *RunOptions, in *runInput) (*results.MeasureWindow, error) {
	if opts.MeasureFrom == 0 && opts.MeasureTo == 0 {
		return nil, nil
	}
	if opts.Backend != "sim" {
		return nil, usageErrorf("--measure-from/--measure-to need the simulator (a real run's summary is the whole run)")
	}
	m := &results.MeasureWindow{FromS: opts.MeasureFrom.Seconds(), ToS: opts.MeasureTo.Seconds()}
	if err := m.Within(in.Schedule.Duration()); err != nil {
		return nil, usageErrorf("--measure-from/--measure-to: %v", err)
	}
	return m, nil
}

// driveRun is the run path `run` and `capacity` share: it opens a backend for each of the
// input's variants, drives the schedule through the engine into dir and, for a real
// database, places the operations sent for the hot-partition report (hotspots.json). The
// summary is nil only when nothing ran (a backend could not be opened).
func driveRun(ctx context.Context, in *runInput, dir *results.Dir, d drive) (*results.Summary, error) {
	variants, info, err := openBackends(ctx, d, in)
	if err != nil {
		return nil, err
	}
	defer closeVariants(variants)
	cfg := engine.Config{
		Scenario: in.Scenario, Schedule: in.Schedule, Ops: in.Ops, NewSource: in.NewSource,
		Variants: variants, Dir: dir, Backend: info,
		Tool:      results.Tool{Name: "shardbench", Version: version, GoVersion: runtime.Version()},
		Progress:  d.Progress,
		HardStop:  d.HardStop,
		SpinBelow: d.SpinBelow,
		Shard:     d.Shard.engineShard(in.Prepared.Model),
		StartAt:   d.StartAt,
		Digest:    d.Digest,
		Measure:   d.Measure,
	}
	if cfg.SpinBelow == 0 {
		cfg.SpinBelow, cfg.SpinReason = engine.AutoSpin(variants)
	}
	if d.Metrics != nil {
		cfg.Intervals = d.Metrics.Observe
		if !info.Simulated {
			d.Metrics.SetDispatch(cfg.SpinBelow)
			d.Metrics.SetSequential(true)
		}
	}
	sum, runErr := engine.Run(ctx, cfg)
	if sum != nil && !info.Simulated && ctx.Err() == nil {
		// Simulators write hotspots.json themselves; for a real run it is computed from
		// the operations sent (skipped after an interrupt: the user asked to stop).
		if !d.Quiet {
			fmt.Fprintf(d.IO.ErrOut, "shardbench: placing the operations sent for the hot-partition report (hotspots.json)\n")
		}
		if err := placeRealRun(ctx, in, sum, dir, variants, d.Shard); err != nil {
			fmt.Fprintf(d.IO.ErrOut, "shardbench: hot-partition placement: %v\n", err)
		}
	}
	return sum, runErr
}

// serveMetrics starts the live metrics server of --metrics-addr (nil registry without it).
// It binds before any backend is opened, so a busy address fails the run at once.
func serveMetrics(opts *RunOptions, in *runInput) (*live.Registry, func(), error) {
	if opts.MetricsAddr == "" {
		return nil, func() {}, nil
	}
	names := make([]string, len(in.Variants))
	for i, v := range in.Variants {
		names[i] = v.Name
	}
	reg := live.New(live.Info{Version: version, Scenario: in.Scenario.Name, Backend: opts.Backend}, names, opNames(in.Ops))
	srv, err := live.Listen(opts.MetricsAddr, reg)
	if err != nil {
		return nil, nil, usageError(err)
	}
	opts.MetricsAddr = srv.Addr()
	if !opts.Quiet {
		fmt.Fprintf(opts.IO.ErrOut, "shardbench: live metrics on http://%s/metrics\n", srv.Addr())
	}
	if opts.metricsReady != nil {
		opts.metricsReady(srv.Addr())
	}
	return reg, func() { srv.Close() }, nil
}

func opNames(ops []engine.OpInfo) []string {
	out := make([]string, len(ops))
	for i, o := range ops {
		out[i] = o.Name
	}
	return out
}

// openBackends opens one backend per variant. On error the backends already opened are
// closed.
func openBackends(ctx context.Context, d drive, in *runInput) ([]engine.VariantBackend, results.BackendInfo, error) {
	info := results.BackendInfo{Name: d.Backend}
	open := backendOpeners[d.Backend]
	var out []engine.VariantBackend
	for _, spec := range in.Variants {
		v := engine.VariantBackend{Name: spec.Name, Design: spec.Design, Database: spec.Database, Params: spec.Params,
			Unserved: backend.Unserved(spec.Compiled, 0, d.Backend)}
		cfg := backend.Config{
			Scenario: in.Scenario, Model: in.Prepared.Model, Variant: spec.Variant, Compiled: spec.Compiled,
			VariantIndex: spec.Index, Target: d.Target, Options: in.Scenario.Backends[d.Backend],
			// A shard neither creates the schema nor loads (the setup step did both, once):
			// it reports what the database holds, as --skip-load does.
			Recreate: d.Recreate, SkipSetup: d.SkipSetup, SkipLoad: d.SkipLoad || d.SkipSetup, Log: d.IO.ErrOut,
		}
		if err := open(ctx, cfg, &v, &info); err != nil {
			closeVariants(out)
			return nil, info, err
		}
		out = append(out, v)
	}
	return out, info, nil
}

// runSetup is run --setup-only: it opens every variant's backend, which creates its schema
// and runs its load step, and closes them again.
func runSetup(ctx context.Context, opts *RunOptions, in *runInput) error {
	if opts.Backend == "sim" || opts.Backend == "null" || opts.Backend == "delay" {
		return usageErrorf("--setup-only sets up real databases; the %s backend has nothing to set up", opts.Backend)
	}
	variants, info, err := openBackends(ctx, drive{IO: opts.IO, Backend: opts.Backend, Target: opts.Target, Recreate: opts.Recreate, SkipLoad: opts.SkipLoad, Quiet: opts.Quiet}, in)
	if err != nil {
		return err
	}
	closeVariants(variants)
	if !opts.Quiet {
		fmt.Fprintf(opts.IO.ErrOut, "shardbench: set up %d variant(s) of %s on %s: the shards can run\n", len(variants), in.Scenario.Name, info.Name)
	}
	return nil
}

func closeVariants(vs []engine.VariantBackend) {
	for _, v := range vs {
		if v.Backend != nil {
			v.Backend.Close()
		}
		if v.Virtual != nil {
			v.Virtual.Close()
		}
	}
}

// interruptContext cancels ctx on the first SIGINT, SIGTERM or SIGHUP, or when the
// process's output finds its reader gone (gone; the cause says which), and closes
// hardStop on the second. A run stopped so drains and writes what it measured: a closed
// terminal or a broken pipe must not lose a run's results. SIGHUP is left alone when the
// process started with it ignored (nohup), and SIGPIPE is ignored from here on, so a
// write to a closed pipe fails (and closes gone) instead of killing the process.
func interruptContext(parent context.Context, sigs <-chan os.Signal, gone <-chan struct{}) (context.Context, func(), <-chan struct{}) {
	ctx, cancel := context.WithCancelCause(parent)
	hard := make(chan struct{})
	var ch chan os.Signal
	if sigs == nil {
		ch = make(chan os.Signal, 2)
		notify := []os.Signal{os.Interrupt, syscall.SIGTERM}
		if !signal.Ignored(syscall.SIGHUP) {
			notify = append(notify, syscall.SIGHUP)
		}
		signal.Notify(ch, notify...)
		signal.Ignore(syscall.SIGPIPE)
		sigs = ch
	}
	done := make(chan struct{})
	go func() {
		n := 0
		// interrupt cancels the run the first time and stops it hard the second
		// (reporting true: nothing is left to watch).
		interrupt := func(cause error) bool {
			if n++; n == 1 {
				cancel(cause)
				return false
			}
			close(hard)
			return true
		}
		for {
			select {
			case s := <-sigs:
				if interrupt(fmt.Errorf("received %s", signalName(s))) {
					return
				}
			case <-gone:
				gone = nil // closed once, for good
				if interrupt(errors.New("output closed (broken pipe)")) {
					return
				}
			case <-done:
				return
			}
		}
	}()
	return ctx, func() {
		close(done)
		if ch != nil {
			signal.Stop(ch)
		}
		cancel(nil)
	}, hard
}

func signalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return s.String()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// spinBelow maps --spin to the engine's SpinBelow (0: the engine chooses; negative: never
// spin).
func spinBelow(opts *RunOptions) time.Duration {
	switch {
	case opts.spinBelow != 0:
		return opts.spinBelow
	case opts.SpinAuto:
		return 0
	case opts.Spin == 0:
		return -1
	}
	return opts.Spin
}

// spinFlag is --spin: "auto" or a duration.
type spinFlag struct{ o *RunOptions }

func (f *spinFlag) String() string {
	if f.o == nil || f.o.SpinAuto {
		return "auto"
	}
	return f.o.Spin.String()
}

func (f *spinFlag) Set(s string) error {
	if s == "auto" {
		f.o.SpinAuto = true
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return fmt.Errorf("want auto or a non-negative duration such as 2ms or 0")
	}
	f.o.SpinAuto, f.o.Spin = false, d
	return nil
}

func (f *spinFlag) Type() string { return "auto|duration" }

// startCPUProfile writes a Go CPU profile to path until the returned function is called
// (path "": no profile, and a no-op to call).
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, usageError(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
