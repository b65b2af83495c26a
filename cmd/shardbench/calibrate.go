package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/shardbench/shardbench/internal/backend/sim"
	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/scenario"
)

// CalibrateOptions are the inputs of `shardbench calibrate`.
type CalibrateOptions struct {
	IO         *IO
	ResultsDir string
	// Out is the parameter file to write (default RESULTS_DIR/sim-calibration.yaml).
	Out string
	// ScenarioPath is the scenario the run used, when the design files cannot be found
	// from the summary's record of it.
	ScenarioPath string
	// Limit caps each trial simulation's operations per variant.
	Limit int64
	Quiet bool
}

// defaultCalibrateLimit keeps a fit to seconds: about a dozen trials of a million
// simulated operations per variant.
const defaultCalibrateLimit = 1_000_000

func newCalibrateCmd(io *IO, runF func(*CalibrateOptions) error) *cobra.Command {
	opts := &CalibrateOptions{IO: io}
	cmd := &cobra.Command{
		Use:   "calibrate RESULTS_DIR",
		Short: "Fit the simulator's service times to a real run's and write a parameter file",
		Long: `calibrate reads a real run's results directory (summary.json and the scenario as run)
and fits the simulated cluster to it: the node model's read-side and write-side service
times per database, then a scale per operation type, until the simulator, running the
same scenario at the same rates, reproduces each operation's measured mean service
time. It writes a parameter file and prints, per operation, measured against simulated
mean and p99 service time.

Use the file from a scenario (paths relative to the scenario file):

  backends:
    sim:
      calibration: bf-cassandra-calibration.yaml

The network round trip (backends.sim.network) is not fitted: set it to the real
network's before calibrating. See docs/simulator.md.`,
		Example: `  shardbench run scenarios/smoke.yaml --backend cassandra --target cassandra://127.0.0.1 --out results/c1
  shardbench calibrate results/c1 --out scenarios/c1-calibration.yaml`,
		Args: exactArgs(1, "a results directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ResultsDir = args[0]
			if opts.Limit < 0 {
				return usageErrorf("--limit must not be negative")
			}
			if runF != nil {
				return runF(opts)
			}
			return runCalibrate(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Out, "out", "o", "", "parameter file to write (default RESULTS_DIR/sim-calibration.yaml)")
	f.StringVar(&opts.ScenarioPath, "scenario", "", "the scenario file the run used, if its design files are not where summary.json's scenario.source says")
	f.Int64Var(&opts.Limit, "limit", defaultCalibrateLimit, "operations per variant in each trial simulation (0: the whole schedule)")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "print nothing but errors")
	return cmd
}

func runCalibrate(ctx context.Context, opts *CalibrateOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	sum, err := results.Read(opts.ResultsDir)
	if err != nil {
		return usageError(err)
	}
	sc, prep, err := loadRunScenario(opts.ResultsDir, sum, opts.ScenarioPath)
	if err != nil {
		return err
	}
	var measured []sim.Measured
	for _, v := range sum.Variants {
		for _, op := range v.Ops {
			if !op.Served() {
				continue // never sent: nothing measured (sim.Fit also skips what the design does not serve)
			}
			measured = append(measured, sim.Measured{Variant: v.Name, Op: op.Op, Count: op.Service.Count,
				Mean: msDuration(op.Service.Mean), P99: msDuration(op.Service.P99)})
		}
	}
	ctx, stop, _ := interruptContext(ctx, nil, opts.IO.gone)
	defer stop()
	in := sim.FitInput{Scenario: sc, Prepared: prep, Measured: measured, Limit: opts.Limit}
	if !opts.Quiet {
		fmt.Fprintf(opts.IO.ErrOut, "shardbench: calibrate %s: %s run of %s, %d variant(s)\n", opts.ResultsDir, sum.Backend.Name, sum.Scenario.Name, len(sum.Variants))
		in.Progress = func(s string) { fmt.Fprintf(opts.IO.ErrOut, "  %s\n", s) }
	}
	started := time.Now()
	cal, err := sim.Fit(ctx, in)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted: %w", err)
		}
		return usageError(fmt.Errorf("%s: %w", opts.ResultsDir, err))
	}
	cal.FittedFrom, cal.Backend, cal.Server, cal.FittedAt = opts.ResultsDir, sum.Backend.Name, sum.Backend.Server, time.Now().UTC().Truncate(time.Second)
	if sum.Backend.Simulated {
		cal.Notes = append(cal.Notes, "fitted to a simulated run (a round trip check), not to a real cluster")
	}
	out := opts.Out
	if out == "" {
		out = filepath.Join(opts.ResultsDir, "sim-calibration.yaml")
	}
	if err := cal.WriteFile(out); err != nil {
		return err
	}
	if !opts.Quiet {
		fmt.Fprintf(opts.IO.ErrOut, "fitted in %s\n", time.Since(started).Round(time.Millisecond))
		printCalibration(opts.IO.Out, cal)
		fmt.Fprintf(opts.IO.ErrOut, "parameters: %s (use it with backends.sim.calibration)\n", out)
	}
	return nil
}

// loadRunScenario reads the scenario as a run used it (RESULTS_DIR/scenario.yaml: every
// override applied) with its relative paths resolved where the original scenario was.
func loadRunScenario(dir string, sum *results.Summary, original string) (*scenario.Scenario, *design.Prepared, error) {
	sc, err := scenario.ReadFile(filepath.Join(dir, results.ScenarioFile))
	if err != nil {
		return nil, nil, usageError(err)
	}
	if original == "" {
		original = sum.Scenario.Source
	}
	sc.BaseDir = filepath.Dir(original)
	if _, err := os.Stat(sc.BaseDir); original == "" || err != nil {
		return nil, nil, usageErrorf("%s: the run's scenario was %q; its design files resolve from that directory, which is not here: pass --scenario FILE", dir, sum.Scenario.Source)
	}
	prep, err := design.Prepare(sc)
	if err != nil {
		return nil, nil, usageError(fmt.Errorf("%w (design paths resolve from %s; pass --scenario FILE to change that)", err, sc.BaseDir))
	}
	return sc, prep, nil
}

func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

func printCalibration(w io.Writer, c *sim.Calibration) {
	if c.Cassandra != nil {
		m := c.Cassandra
		fmt.Fprintf(w, "cassandra: read %s, row %s, sstable %s, scan %s, write %s\n", m.Read, m.Row, m.SSTable, m.Scan, m.Write)
	}
	if c.MongoDB != nil {
		m := c.MongoDB
		fmt.Fprintf(w, "mongodb: find %s, doc %s, scan %s, write %s, apply %s\n", m.Find, m.Doc, m.Scan, m.Write, m.Apply)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "variant\toperation\tcount\tscale\tmeasured mean\tsimulated mean\terror\tmeasured p99\tsimulated p99\t")
	for _, r := range c.Fit {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.3f\t%s\t%s\t%+.1f%%\t%s\t%s\t\n", r.Variant, r.Op, r.Count, c.OperationScale[sim.ScaleKey(r.Op, r.Variant)],
			r.MeasuredMean.Round(time.Microsecond), r.SimulatedMean.Round(time.Microsecond), r.Error*100,
			r.MeasuredP99.Round(time.Microsecond), r.SimulatedP99.Round(time.Microsecond))
	}
	tw.Flush()
	for _, n := range c.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}
