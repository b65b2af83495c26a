package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/shardbench/shardbench/internal/backend/sim"
	"github.com/shardbench/shardbench/internal/fidelity"
	"github.com/shardbench/shardbench/internal/results"
)

// FidelityOptions are the inputs of `shardbench fidelity`.
type FidelityOptions struct {
	IO           *IO
	ScenarioPath string
	Target       string
	Out          string
	Duration     time.Duration
	RateScale    float64
	Seed         int64
	SeedSet      bool
	// CalibrateOn is the variant whose real run the simulator's service times are fitted
	// to (default: the first variant with a Cassandra part). Calibration, when set, is a
	// parameter file to use instead: every variant is then a prediction.
	CalibrateOn string
	Calibration string
	// Network is the round trip to simulate (0: measured on the cluster after the run,
	// or the calibration file's).
	Network time.Duration
	// Limit caps each calibration trial's operations per variant.
	Limit     int64
	Tolerance results.FidelityTolerance
	Recreate  bool
	// Gate makes an unmet criterion exit 1.
	Gate     bool
	NoReport bool
	Quiet    bool
	Spin     time.Duration
}

func newFidelityCmd(io *IO, runF func(*FidelityOptions) error) *cobra.Command {
	opts := &FidelityOptions{IO: io, Tolerance: fidelity.DefaultTolerance}
	cmd := &cobra.Command{
		Use:   "fidelity SCENARIO --target cassandra://HOSTS",
		Short: "Run a scenario on a real Cassandra cluster and on its simulation, and compare them",
		Long: `fidelity runs the scenario's Cassandra design variants on the real cluster, then
simulates the same operation stream on that cluster's model: its ring (tokens, data
centres, racks, read from system.local/peers_v2), each keyspace's replication as the
cluster holds it, the measured round trip, and service times fitted to one variant's
real run (--calibrate-on, default the first) or read from a parameter file
(--calibration). It then compares, per variant:

  placement  each node's share of the replica requests, from the servers' own counters
             (system_views local reads and writes, per node and table, after − before)
             beside the simulated nodes'; coordinated requests likewise
  latency    per operation, service time mean, p50 and p99 predicted beside measured,
             judged on the variants not calibrated on, at simulated utilisations up to
             --max-utilisation
  ranking    for each design with several variants, and for all of them, the order by
             hottest node and by p99, real beside simulated

The results directory is the real run's (with its report), fidelity.json beside it, the
simulated run in simulated/ and the fitted parameter file. The report gets a fidelity
section. Exit 0 once compared; with --gate, 1 when a criterion is not met.
See docs/simulator.md#fidelity.`,
		Example: `  shardbench fidelity scenarios/fidelity.yaml --target 'cassandra://127.0.0.1,127.0.0.2,127.0.0.3?dc=dc1' --recreate
  shardbench fidelity scenarios/fidelity.yaml --target cassandra://10.0.0.1 --calibration c1-calibration.yaml --gate`,
		Args: exactArgs(1, "a scenario file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ScenarioPath = args[0]
			opts.SeedSet = cmd.Flags().Changed("seed")
			if err := opts.check(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runFidelity(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Target, "target", "", "the Cassandra cluster, e.g. cassandra://host1,host2:9042?dc=dc1 (credentials from the environment, never the URL)")
	f.StringVarP(&opts.Out, "out", "o", "", "results directory (default results/<scenario>-fidelity-<time>)")
	f.DurationVar(&opts.Duration, "duration", 0, "scale every phase so the schedule lasts this long")
	f.Float64Var(&opts.RateScale, "rate-scale", 0, "multiply every rate")
	f.Int64Var(&opts.Seed, "seed", 0, "override the scenario's seed")
	f.StringVar(&opts.CalibrateOn, "calibrate-on", "", "the variant whose real run the simulator is fitted to (default: the first Cassandra variant)")
	f.StringVar(&opts.Calibration, "calibration", "", "a parameter file from `shardbench calibrate` to simulate with instead of fitting (every variant is then a prediction)")
	f.DurationVar(&opts.Network, "network", 0, "round trip to simulate (default: measured on the cluster after the run, or the calibration file's)")
	f.Int64Var(&opts.Limit, "limit", defaultCalibrateLimit, "operations per variant in each calibration trial (0: the whole schedule)")
	f.Float64Var(&opts.Tolerance.SharePP, "share-pp", opts.Tolerance.SharePP, "largest node share difference that agrees, in percentage points")
	f.Float64Var(&opts.Tolerance.Latency, "latency-error", opts.Tolerance.Latency, "largest relative error of a predicted p50 or p99 that agrees")
	f.Float64Var(&opts.Tolerance.Utilisation, "max-utilisation", opts.Tolerance.Utilisation, "highest simulated node utilisation at which latency is judged")
	f.Int64Var(&opts.Tolerance.MinOps, "min-ops", opts.Tolerance.MinOps, "fewest measured operations for an operation's latency to be judged")
	f.BoolVar(&opts.Recreate, "recreate", false, "drop and recreate each variant's keyspace before its run")
	f.BoolVar(&opts.Gate, "gate", false, "exit 1 when a criterion (placement, latency, ranking) is not met")
	f.BoolVar(&opts.NoReport, "no-report", false, "do not render the HTML report")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "print nothing but errors")
	f.DurationVar(&opts.Spin, "spin", 0, "dispatch waits shorter than this spin instead of sleeping (0, the default here: never; a cluster on the same machine needs the CPU)")
	return cmd
}

func (o *FidelityOptions) check() error {
	switch {
	case o.CalibrateOn != "" && o.Calibration != "":
		return usageErrorf("--calibrate-on and --calibration exclude each other: fit to a variant of this run, or use a parameter file")
	case o.Limit < 0:
		return usageErrorf("--limit must not be negative")
	case o.Network < 0:
		return usageErrorf("--network must not be negative")
	case !(o.Tolerance.SharePP > 0) || !(o.Tolerance.Latency > 0) || !(o.Tolerance.Utilisation > 0) || o.Tolerance.MinOps < 1:
		return usageErrorf("--share-pp, --latency-error and --max-utilisation must be positive and --min-ops at least 1")
	}
	return nil
}

func runFidelity(ctx context.Context, opts *FidelityOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ov := runOverrides{Duration: opts.Duration, RateScale: opts.RateScale}
	if opts.SeedSet {
		ov.Seed = &opts.Seed
	}
	in, err := loadRun(opts.ScenarioPath, ov)
	if err != nil {
		return err
	}
	calOn, err := fidelityCalibrationVariant(in, opts)
	if err != nil {
		return err
	}
	var calFile *sim.Calibration
	if opts.Calibration != "" {
		if calFile, err = sim.ReadCalibration(opts.Calibration); err != nil {
			return usageError(err)
		}
	}
	sc := in.Scenario
	out := opts.Out
	if out == "" {
		out = filepath.Join("results", results.SafeName(sc.Name)+"-fidelity-"+time.Now().Format("20060102-150405"))
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
	ctx, stop, hardStop := interruptContext(ctx, nil, opts.IO.gone)
	defer stop()

	say := func(format string, args ...any) {
		if !opts.Quiet {
			fmt.Fprintf(opts.IO.ErrOut, "shardbench: "+format+"\n", args...)
		}
	}
	say("fidelity %s: %d variant(s), %s at about %.0f operations each, first on %s → %s", sc.Name, len(in.Variants), in.Schedule.Duration(), in.Schedule.Expected(), opts.Target, out)
	real, err := fidelityReal(ctx, opts, in, dir, hardStop)
	if err != nil {
		if errors.Is(err, context.Canceled) || ctx.Err() != nil {
			return fmt.Errorf("interrupted during the real run; what it measured is in %s: %w", out, err)
		}
		return err
	}
	twin := fidelityTwin{network: opts.Network, real: real}
	if calFile != nil {
		twin.cal = calFile
		if twin.network == 0 {
			twin.network = calFile.Network
		}
	}
	if twin.network == 0 {
		twin.network = real.roundTrip
	}
	if calFile == nil {
		say("fitting the simulator's service times to %s's real run", calOn)
		if twin.cal, err = fitFidelity(ctx, in, real, calOn, twin.network, opts.Limit); err != nil {
			return fmt.Errorf("calibrating on %s: %w (the real run is in %s)", calOn, err, out)
		}
		twin.cal.FittedFrom, twin.cal.Backend, twin.cal.Server, twin.cal.FittedAt = out, real.sum.Backend.Name, real.sum.Backend.Server, time.Now().UTC().Truncate(time.Second)
	}
	calPath := filepath.Join(out, "fidelity-calibration.yaml")
	if err := twin.cal.WriteFile(calPath); err != nil {
		return err
	}
	simOut := filepath.Join(out, fidelitySimDir)
	say("simulating the same stream on the cluster's model → %s", simOut)
	simmed, err := twin.run(ctx, opts, in, simOut)
	if err != nil {
		return fmt.Errorf("the simulation: %w (the real run is in %s)", err, out)
	}

	f := compareFidelity(in, real, simmed, calOn, opts.Tolerance)
	f.Simulated, f.Target, f.Server, f.At = fidelitySimDir, real.sum.Backend.Target, real.sum.Backend.Server, time.Now().UTC().Truncate(time.Second)
	f.Calibration = results.FidelityCalibration{Variant: calOn, File: opts.Calibration, Written: filepath.Base(calPath),
		NetworkMS: float64(twin.network) / 1e6, Model: calibrationModel(twin.cal), Notes: twin.cal.Notes}
	if opts.Network == 0 && calFile == nil {
		f.Notes = append(f.Notes,
			fmt.Sprintf("network round trip %s: the median of trivial requests (SELECT "+
				"release_version FROM system.local) to each node after the run",
				twin.network.Round(time.Microsecond)))
	}
	if err := results.At(out).WriteFidelity(f); err != nil {
		return err
	}
	if !opts.Quiet {
		printFidelity(opts.IO.Out, f)
		fmt.Fprintf(opts.IO.ErrOut, "results: %s (fidelity.json; the simulation in %s)\n", out, simOut)
	}
	reportAfterRun(&RunOptions{IO: opts.IO, NoReport: opts.NoReport, Quiet: opts.Quiet}, out, false)
	if opts.Gate && !f.Verdict.Pass() {
		return silentFailure
	}
	return nil
}

// fidelitySimDir is where the simulated twin's results go, inside the real run's.
const fidelitySimDir = "simulated"

// fidelityCalibrationVariant is the variant to fit to: --calibrate-on, or the first
// variant with a Cassandra part ("" with --calibration).
func fidelityCalibrationVariant(in *runInput, opts *FidelityOptions) (string, error) {
	var cass []string
	for _, v := range in.Variants {
		if v.Compiled != nil && v.Compiled.Design.Cassandra != nil {
			cass = append(cass, v.Name)
		}
	}
	if len(cass) == 0 {
		return "", usageErrorf("%s: no variant has a Cassandra design: fidelity compares a Cassandra cluster with its simulation", in.Scenario.File)
	}
	if opts.Calibration != "" {
		return "", nil
	}
	if opts.CalibrateOn == "" {
		return cass[0], nil
	}
	if !contains(cass, opts.CalibrateOn) {
		return "", usageErrorf("--calibrate-on %q: not a variant of %s with a Cassandra design (they are: %v)", opts.CalibrateOn, in.Scenario.File, cass)
	}
	return opts.CalibrateOn, nil
}
