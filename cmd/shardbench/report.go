package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/reports"
)

// ReportOptions are the inputs of `shardbench report`.
type ReportOptions struct {
	IO         *IO
	ResultsDir string
	Out        string
	Embed      bool
	MaxOps     int
	MaxVars    int
	// AnalysisDir and CapacityDir add a key analysis and a capacity search to the
	// verdict of a run.
	AnalysisDir, CapacityDir string
}

func newReportCmd(io *IO, runF func(*ReportOptions) error) *cobra.Command {
	opts := &ReportOptions{IO: io}
	cmd := &cobra.Command{
		Use:   "report RESULTS_DIR",
		Short: "Render a results directory as an HTML report with PNG charts",
		Long: `report reads a results directory (a run, a merged run or a plan) and writes
report.html with its charts in charts/*.png beside it, by default into the results
directory itself. The page needs no network and no JavaScript; open it from disk.

A run's report opens with the verdict: the designs ranked overall and per entity on
capacity at the SLO, projected partition size, the hottest partition's share, node
imbalance, the key analysis and coverage, and the seed claims the scenario exercises
(also written as verdict.json; rules in docs/verdict.md). --capacity and --analysis add
a capacity search's and a key analysis's results directories to it.

It shows the run's metadata, the SLO verdict (gate.json, when the directory was gated),
latency percentile spectra per operation (response and service time), throughput and
p99 over time with phases and events, errors by class, the hot-partition analysis (top
partitions, cumulative share, load per node or shard against the ±30% band, partition
size projections) and server-side figures when the backend recorded them.

--embed puts the charts into the page as data: URIs: one file to mail around.`,
		Example: `  shardbench report results/bf
  shardbench report results/bf --out /tmp/bf-report
  shardbench report results/bf --embed --out out/
  shardbench report results/bf --capacity results/bf-capacity --analysis results/bf-keys`,
		Args: exactArgs(1, "a results directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ResultsDir = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runReport(opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Out, "out", "o", "", "directory for report.html and charts/ (default: the results directory)")
	f.BoolVar(&opts.Embed, "embed", false, "embed the charts in report.html (one self-contained file, no charts/ directory)")
	f.IntVar(&opts.MaxOps, "max-op-charts", reports.DefaultMaxOpCharts, "latency charts for at most this many operations (the busiest); tables list all")
	f.IntVar(&opts.MaxVars, "max-variant-charts", reports.DefaultMaxVariantCharts, "hot-partition charts for at most this many variants (worst imbalance first); tables list all")
	f.StringVar(&opts.CapacityDir, "capacity", "", "a capacity search of the same scenario (shardbench capacity --out DIR) for the verdict's capacity at the SLO")
	f.StringVar(&opts.AnalysisDir, "analysis", "", "a key analysis of the same scenario (shardbench analyze --out DIR) for the verdict's key-analysis criterion")
	return cmd
}

func runReport(opts *ReportOptions) error {
	if err := checkResultsDir(opts.ResultsDir); err != nil {
		return err
	}
	if opts.MaxOps < 1 || opts.MaxVars < 1 {
		return usageErrorf("--max-op-charts and --max-variant-charts must be at least 1")
	}
	ro := reportOptions(opts.Out, opts.Embed, opts.MaxOps, opts.MaxVars)
	ro.AnalysisDir, ro.CapacityDir = opts.AnalysisDir, opts.CapacityDir
	for _, d := range []string{opts.AnalysisDir, opts.CapacityDir} {
		if d == "" {
			continue
		}
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return usageErrorf("%s is not a results directory", d)
		}
	}
	out, err := reports.Render(opts.ResultsDir, ro)
	if err != nil {
		return err
	}
	for _, w := range out.Warnings {
		if strings.HasPrefix(w, "verdict: ") && (opts.AnalysisDir != "" || opts.CapacityDir != "") {
			return usageErrorf("%s", w)
		}
	}
	printReportDone(opts.IO.Out, opts.IO.ErrOut, out)
	return nil
}

// CompareOptions are the inputs of `shardbench compare`.
type CompareOptions struct {
	IO      *IO
	Dirs    []string
	Out     string
	Embed   bool
	MaxOps  int
	MaxVars int
}

func newCompareCmd(io *IO, runF func(*CompareOptions) error) *cobra.Command {
	opts := &CompareOptions{IO: io}
	cmd := &cobra.Command{
		Use:   "compare RESULTS_DIR...",
		Short: "Compare design variants side by side: overlaid charts and every figure with the winner",
		Long: `compare puts every variant of the given results directories side by side (one
directory with several variants compares its variants): the report's charts with one
line per variant, and a table of every figure — per operation achieved rate, p50 … p99.99,
max, service p99, error rate, late and dropped operations; node/shard imbalance; hottest
partition share and top-1% share per entity; projected partition sizes — with the
difference against the first variant and which variant wins.

Lower wins for latency, errors, late and dropped operations, hot-partition shares,
imbalance and projected sizes; higher wins for achieved throughput; values within 1%
of the best tie.`,
		Example: `  shardbench compare results/bf                       # the variants of one run
  shardbench compare results/bf-day results/bf-bucketed --out out/compare
  shardbench compare results/plan-a results/plan-b --embed --out out/`,
		Args: minArgs(1, "at least one results directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dirs = args
			if runF != nil {
				return runF(opts)
			}
			return runCompare(opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Out, "out", "o", "", "directory for report.html and charts/ (default: RESULTS_DIR/compare for one directory, compare-<time> for several)")
	f.BoolVar(&opts.Embed, "embed", false, "embed the charts in report.html (one self-contained file, no charts/ directory)")
	f.IntVar(&opts.MaxOps, "max-op-charts", reports.DefaultMaxOpCharts, "latency charts for at most this many operations (the busiest); tables list all")
	f.IntVar(&opts.MaxVars, "max-variant-charts", reports.DefaultMaxVariantCharts, "hot-partition charts for at most this many variants (worst imbalance first); tables list all")
	return cmd
}

func runCompare(opts *CompareOptions) error {
	for _, d := range opts.Dirs {
		if err := checkResultsDir(d); err != nil {
			return err
		}
	}
	if opts.MaxOps < 1 || opts.MaxVars < 1 {
		return usageErrorf("--max-op-charts and --max-variant-charts must be at least 1")
	}
	out := opts.Out
	if out == "" {
		if len(opts.Dirs) == 1 {
			out = filepath.Join(opts.Dirs[0], "compare")
		} else {
			out = "compare-" + time.Now().Format("20060102-150405")
		}
	}
	res, err := reports.Compare(opts.Dirs, reportOptions(out, opts.Embed, opts.MaxOps, opts.MaxVars))
	if err != nil {
		return err
	}
	printReportDone(opts.IO.Out, opts.IO.ErrOut, res)
	return nil
}

// checkResultsDir turns an unreadable results directory into a usage error (exit 2).
func checkResultsDir(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return usageError(err)
	}
	if !st.IsDir() {
		return usageErrorf("%s is not a directory", dir)
	}
	_, serr := os.Stat(filepath.Join(dir, results.SummaryFile))
	_, herr := os.Stat(filepath.Join(dir, results.HotspotsFile))
	_, aerr := os.Stat(filepath.Join(dir, results.AnalysisFile)) // shardbench analyze
	_, cerr := os.Stat(filepath.Join(dir, results.CapacityFile)) // shardbench capacity
	if errors.Is(serr, os.ErrNotExist) && errors.Is(herr, os.ErrNotExist) && errors.Is(aerr, os.ErrNotExist) && errors.Is(cerr, os.ErrNotExist) {
		if err := results.CheckRunTraces(dir); err != nil {
			return usageError(err)
		}
		return usageErrorf("%s is not a results directory (no %s, %s, %s or %s)", dir, results.SummaryFile, results.HotspotsFile, results.AnalysisFile, results.CapacityFile)
	}
	return nil
}

func reportOptions(out string, embed bool, maxOps, maxVars int) reports.Options {
	return reports.Options{Out: out, Embed: embed, MaxOpCharts: maxOps, MaxVariantCharts: maxVars, Version: version}
}

func printReportDone(w, errW io.Writer, out *reports.Output) {
	for _, warn := range out.Warnings {
		fmt.Fprintf(errW, "shardbench: warning: %s (the report shows what it could read)\n", warn)
	}
	fmt.Fprintf(w, "report: %s (%d charts)\n", out.HTML, len(out.Charts))
}

// reportAfterRun renders the report at the end of `run` (unless --no-report). A report
// that fails does not fail the run: the results are written; the user can re-render.
func reportAfterRun(opts *RunOptions, out string, logsWritten bool) {
	if opts.NoReport {
		return
	}
	ro := reportOptions("", false, reports.DefaultMaxOpCharts, reports.DefaultMaxVariantCharts)
	ro.LogsWritten = logsWritten
	res, err := reports.Render(out, ro)
	if err != nil {
		fmt.Fprintf(opts.IO.ErrOut, "shardbench: the report could not be rendered: %v (the results are intact; retry with: shardbench report %s)\n", err, out)
		return
	}
	if !opts.Quiet {
		printReportDone(opts.IO.ErrOut, opts.IO.ErrOut, res)
	}
}
