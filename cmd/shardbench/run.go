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
	Seed         int64
	SeedSet      bool
	Quiet        bool
	NoReport     bool
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
	// slept (0: never spin). Passed to the engine as SpinBelow; tests under synctest set
	// spinBelow -1.
	Spin      time.Duration
	spinBelow time.Duration
	// CPUProfile writes a Go CPU profile of the whole run (the harness's own cost: what
	// to look at when the simulator or the dispatcher is the bottleneck).
	CPUProfile string
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
  shardbench run scenarios/smoke.yaml --gate=ci/gate.yaml`,
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
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "print nothing while running")
	f.DurationVar(&opts.Spin, "spin", engine.DefaultSpinBelow, "dispatch waits shorter than this spin instead of sleeping: precise starts at high rates for up to a core of client CPU; 0 never spins (cheaper beside a server on the same machine; starts up to a timer tick late, still counted from the intended time)")
	f.BoolVar(&opts.Recreate, "recreate", false, "real databases: drop and recreate each variant's keyspace or database before the run")
	f.BoolVar(&opts.SkipLoad, "skip-load", false, "real databases: do not load the scenario's population before measuring (reuse a database loaded by an earlier run; the results say whether it holds this population)")
	f.BoolVar(&opts.NoReport, "no-report", false, "do not render the HTML report at the end")
	f.StringVar(&opts.CPUProfile, "cpuprofile", "", "write a Go CPU profile of the run to this file (go tool pprof reads it)")
	f.StringVar(&opts.Gate, "gate", "", "check the scenario's slo section at the end (exit 1 if a check fails); --gate=FILE checks the rules in FILE")
	f.Lookup("gate").NoOptDefVal = gateScenario
	f.BoolVar(&opts.GateStrict, "strict", false, "with --gate: fail when a check is skipped (insufficient sample)")
	f.StringVar(&opts.JUnit, "junit", "", "with --gate: write the checks as JUnit XML to this file")
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
	in, err := loadRun(opts.ScenarioPath, ov)
	if err != nil {
		return err
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
	gateRules, err := runGateRules(opts, in)
	if err != nil {
		return err
	}
	sc := in.Scenario

	out := opts.Out
	if out == "" {
		out = filepath.Join("results", results.SafeName(sc.Name)+"-"+time.Now().Format("20060102-150405"))
	}
	dir, err := results.Create(out)
	if err != nil {
		return usageError(err)
	}
	defer dir.Close()
	asRun, err := sc.AsRun()
	if err != nil {
		return err
	}
	if err := dir.WriteFile(results.ScenarioFile, asRun); err != nil {
		return err
	}

	variants, info, err := openBackends(ctx, opts, in)
	if err != nil {
		return err
	}
	defer closeVariants(variants)

	ctx, stop, hardStop := interruptContext(ctx, opts.signals)
	defer stop()

	prog := newProgress(opts.IO, opts.Quiet)
	cfg := engine.Config{
		Scenario: sc, Schedule: in.Schedule, Ops: in.Ops, NewSource: in.NewSource,
		Variants: variants, Dir: dir, Backend: info,
		Tool:      results.Tool{Name: "shardbench", Version: version, GoVersion: runtime.Version()},
		Progress:  prog.update,
		HardStop:  hardStop,
		SpinBelow: spinBelow(opts),
	}
	if !opts.Quiet {
		fmt.Fprintf(opts.IO.ErrOut, "shardbench: %s on %s: %d variant(s), %s, about %.0f operations each → %s\n",
			sc.Name, info.Name, len(variants), in.Schedule.Duration(), in.Schedule.Expected(), out)
	}
	sum, runErr := engine.Run(ctx, cfg)
	prog.done()
	if sum != nil && !info.Simulated && ctx.Err() == nil {
		// Simulators write hotspots.json themselves; for a real run it is computed from
		// the operations sent (skipped after an interrupt: the user asked to stop).
		if !opts.Quiet {
			fmt.Fprintf(opts.IO.ErrOut, "shardbench: placing the operations sent for the hot-partition report (hotspots.json)\n")
		}
		if err := placeRealRun(ctx, in, sum, dir, variants); err != nil {
			fmt.Fprintf(opts.IO.ErrOut, "shardbench: hot-partition placement: %v\n", err)
		}
	}
	if sum != nil && !opts.Quiet {
		printRunSummary(opts.IO.Out, sum, out)
	}
	if !opts.Quiet {
		fmt.Fprintf(opts.IO.ErrOut, "results: %s\n", out)
	}
	var gateErr error
	if gateRules != nil && sum != nil {
		gateErr = gateAfterRun(opts, gateRules, out)
	}
	if sum != nil {
		reportAfterRun(opts, out) // after the gate, so the report shows its verdict
	}
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

// openBackends opens one backend per variant. On error the backends already opened are
// closed.
func openBackends(ctx context.Context, opts *RunOptions, in *runInput) ([]engine.Variant, results.BackendInfo, error) {
	info := results.BackendInfo{Name: opts.Backend}
	open := backendOpeners[opts.Backend]
	var out []engine.Variant
	for i, spec := range in.Variants {
		v := engine.Variant{Name: spec.Name, Design: spec.Design, Database: spec.Database, Params: spec.Params,
			Unserved: backend.Unserved(spec.Plan, 0, opts.Backend)}
		cfg := backend.Config{
			Scenario: in.Scenario, Model: in.Prepared.Model, Variant: spec.Variant, Plan: spec.Plan,
			VariantIndex: i, Target: opts.Target, Options: in.Scenario.Backends[opts.Backend],
			Recreate: opts.Recreate, SkipLoad: opts.SkipLoad, Log: opts.IO.ErrOut,
		}
		if err := open(ctx, cfg, &v, &info); err != nil {
			closeVariants(out)
			return nil, info, err
		}
		out = append(out, v)
	}
	return out, info, nil
}

func closeVariants(vs []engine.Variant) {
	for _, v := range vs {
		if v.Backend != nil {
			v.Backend.Close()
		}
		if v.Virtual != nil {
			v.Virtual.Close()
		}
	}
}

// interruptContext cancels ctx on the first SIGINT/SIGTERM (with the signal as the cause)
// and closes hardStop on the second.
func interruptContext(parent context.Context, sigs <-chan os.Signal) (context.Context, func(), <-chan struct{}) {
	ctx, cancel := context.WithCancelCause(parent)
	hard := make(chan struct{})
	var ch chan os.Signal
	if sigs == nil {
		ch = make(chan os.Signal, 2)
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
		sigs = ch
	}
	done := make(chan struct{})
	go func() {
		n := 0
		for {
			select {
			case s := <-sigs:
				n++
				if n == 1 {
					cancel(fmt.Errorf("received %s", signalName(s)))
				} else {
					close(hard)
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

// spinBelow maps --spin to the engine's SpinBelow (negative: never spin).
func spinBelow(opts *RunOptions) time.Duration {
	switch {
	case opts.spinBelow != 0:
		return opts.spinBelow
	case opts.Spin == 0:
		return -1
	}
	return opts.Spin
}

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
