package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shardbench/shardbench/internal/engine"
	"github.com/shardbench/shardbench/internal/gate"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/scenario"
)

// GateOptions are the inputs of `shardbench gate`.
type GateOptions struct {
	IO         *IO
	ResultsDir string
	// GateFiles hold threshold rules; without them the rules come from the slo section of
	// the scenario as run (RESULTS_DIR/scenario.yaml).
	GateFiles []string
	Baseline  string
	Tolerance string
	JUnit     string
	Strict    bool
}

func newGateCmd(io *IO, runF func(*GateOptions) error) *cobra.Command {
	opts := &GateOptions{IO: io}
	cmd := &cobra.Command{
		Use:   "gate RESULTS_DIR",
		Short: "Check a results directory against SLO thresholds and a baseline run (for CI)",
		Long: `gate checks a results directory and prints one line per check: PASS, FAIL or SKIP,
the measured value and the threshold.

Threshold rules come from --gate files or, without them, from the slo section of the
scenario as run (RESULTS_DIR/scenario.yaml). A rule reads SUBJECT METRIC CMP THRESHOLD,
e.g. "carts.add_item p99 < 15ms"; see docs/gates.md.

--baseline compares with an older results directory: every percentile of the response
time spectrum (p50 … p99.99, each with a 99% confidence interval), a Mann–Whitney test
on the whole distribution, error rates, throughput and hot-partition figures. A check
fails only on a regression beyond --tolerance that is also statistically significant;
percentiles the sample is too small to judge are SKIP "insufficient sample".

The verdict goes to RESULTS_DIR/gate.json (reports show it) and, with --junit, to a
JUnit XML file where each check is a test case.

Exit codes: 0 every check passed (skips allowed unless --strict), 1 a check failed,
2 bad input (unreadable results, a rule that does not parse).`,
		Example: `  shardbench gate results/bf
  shardbench gate results/bf --gate ci/gate.yaml --junit out/gate.xml
  shardbench gate results/bf --baseline results/bf-main --tolerance 10%`,
		Args: exactArgs(1, "a results directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ResultsDir = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runGate(opts)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&opts.GateFiles, "gate", nil, "rules file (a list of rules, or a scenario file's slo section); repeatable")
	f.StringVar(&opts.Baseline, "baseline", "", "compare with this older results directory")
	f.StringVar(&opts.Tolerance, "tolerance", "10%", "relative regression allowed against the baseline, e.g. 10% or 0.1")
	f.StringVar(&opts.JUnit, "junit", "", "write the checks as JUnit XML to this file")
	f.BoolVar(&opts.Strict, "strict", false, "fail when a check is skipped (insufficient sample, no baseline)")
	return cmd
}

func runGate(opts *GateOptions) error {
	tol, err := parseTolerance(opts.Tolerance)
	if err != nil {
		return usageError(err)
	}
	run, err := gate.Load(opts.ResultsDir)
	if err != nil {
		return usageError(err)
	}
	var ruleSets []*gate.Rules
	for _, f := range opts.GateFiles {
		rs, err := gate.ParseFile(f)
		if err != nil {
			return usageError(err)
		}
		ruleSets = append(ruleSets, rs)
	}
	if len(opts.GateFiles) == 0 {
		rs, err := gate.ScenarioRules(opts.ResultsDir)
		if err != nil {
			return usageError(err)
		}
		if rs != nil && len(rs.Rules) > 0 {
			ruleSets = append(ruleSets, rs)
		}
	}
	if len(ruleSets) == 0 && opts.Baseline == "" {
		return usageErrorf("nothing to check: %s has no slo section; give --gate FILE or --baseline DIR", filepath.Join(opts.ResultsDir, results.ScenarioFile))
	}
	var old *gate.Run
	if opts.Baseline != "" {
		if old, err = gate.Load(opts.Baseline); err != nil {
			return usageError(fmt.Errorf("--baseline: %w", err))
		}
	}
	checks := gate.Completeness(run)
	var sources []string
	for _, rs := range ruleSets {
		checks = append(checks, gate.Evaluate(rs, run)...)
		sources = append(sources, rs.Source)
	}
	if old != nil {
		checks = append(checks, gate.CompareBaseline(run, old, gate.BaselineOptions{Tolerance: tol})...)
	}
	rep := gate.NewReport(opts.ResultsDir, checks, opts.Strict)
	rep.Sources = sources
	if old != nil {
		rep.Baseline, rep.Tolerance = opts.Baseline, tol
	}
	return finishGate(opts.IO, rep, opts.ResultsDir, opts.JUnit)
}

// finishGate prints the report, writes gate.json and the JUnit file, and turns the
// verdict into the exit code.
func finishGate(io *IO, rep *results.GateReport, dir, junit string) error {
	gate.Print(io.Out, rep)
	if err := results.At(dir).WriteGate(rep); err != nil {
		fmt.Fprintf(io.ErrOut, "shardbench: warning: could not write %s: %v\n", filepath.Join(dir, results.GateFile), err)
	}
	if junit != "" {
		if err := gate.WriteJUnit(junit, rep); err != nil {
			return fmt.Errorf("writing JUnit file: %w", err)
		}
	}
	if rep.Verdict != results.GatePass {
		what := plural(rep.Failed, "check", "checks") + " failed"
		if rep.Failed == 0 {
			what = plural(rep.Skipped, "check was", "checks were") + " skipped (--strict)"
		}
		return &exitError{code: exitFailure, err: errors.New("gate: " + what)}
	}
	return nil
}

// parseTolerance reads "10%" or "0.1".
func parseTolerance(s string) (float64, error) {
	t := strings.TrimSpace(s)
	div := 1.0
	if p, ok := strings.CutSuffix(t, "%"); ok {
		t, div = p, 100
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 || f != f || f > 1e6 {
		return 0, fmt.Errorf("--tolerance %q: expected a percentage such as 10%% or a fraction such as 0.1", s)
	}
	return f / div, nil
}

// gateScenario is --gate's value when given without a file: use the scenario's slo.
const gateScenario = "scenario"

// runGateRules parses the rules `run --gate` will check, before the run starts, so a
// bad rule or an operation the scenario does not have is an error (exit 2) up front.
func runGateRules(opts *RunOptions, in *runInput) (*gate.Rules, error) {
	if opts.Gate == "" {
		return nil, nil
	}
	var rs *gate.Rules
	var err error
	if opts.Gate == gateScenario {
		rs, err = gate.ParseRaw(in.Scenario.SLO)
		if err == nil && len(rs.Rules) == 0 {
			return nil, usageErrorf("--gate: %s has no slo section (add one, or give --gate=FILE)", opts.ScenarioPath)
		}
	} else {
		rs, err = gate.ParseFile(opts.Gate)
	}
	if err != nil {
		return nil, usageError(err)
	}
	names := make([]string, len(in.Ops))
	for i, o := range in.Ops {
		names[i] = o.Name
	}
	if len(names) > 0 {
		if err := rs.CheckOperations(names); err != nil {
			return nil, usageError(err)
		}
	}
	return rs, nil
}

// gateAfterRun evaluates the rules on the finished run's results directory.
func gateAfterRun(opts *RunOptions, rs *gate.Rules, out string) error {
	run, err := gate.Load(out)
	if err != nil {
		return err
	}
	rep := gate.NewReport(out, append(gate.Completeness(run), gate.Evaluate(rs, run)...), opts.GateStrict)
	rep.Sources = []string{rs.Source}
	return finishGate(opts.IO, rep, out, opts.JUnit)
}

// checkSLO decodes a scenario's slo section strictly (validate and run report its
// problems with the rest of the scenario's) and checks that the operations it names are
// ones the scenario runs.
func checkSLO(sc *scenario.Scenario, ops []engine.OpInfo) error {
	rs, err := gate.ParseRaw(sc.SLO)
	if err != nil || len(ops) == 0 {
		return err
	}
	names := make([]string, len(ops))
	for i, o := range ops {
		names[i] = o.Name
	}
	return rs.CheckOperations(names)
}
