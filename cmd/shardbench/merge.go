package main

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/shardbench/shardbench/internal/results"
)

// MergeOptions are the inputs of `shardbench merge`.
type MergeOptions struct {
	IO    *IO
	Dirs  []string
	Out   string
	Quiet bool
}

func newMergeCmd(io *IO, runF func(*MergeOptions) error) *cobra.Command {
	opts := &MergeOptions{IO: io}
	cmd := &cobra.Command{
		Use:   "merge DIR... --out DIR",
		Short: "Merge results directories of concurrent load generators, exactly",
		Long: `merge combines results directories written by several load generators that drove
the same scenario at the same time (each a share of the traffic) into one results
directory, exactly: counters add, HdrHistograms merge bucket by bucket and every
percentile is recomputed from the merged histograms (percentiles are never averaged).
Interval logs merge interval by interval and the time series sums each second's counts
and rates, aligned on each run's schedule start, with the second's percentiles
recomputed from the merged intervals. hotspots.json sums per-node and per-table counts;
top-K partition lists merge with their error bounds widened so they stay true bounds.

The merged directory is an ordinary results directory: gate, report and compare read it.

Exit codes: 0 ok, 1 failure writing the output, 2 bad input.`,
		Example: `  shardbench merge results/gen1 results/gen2 results/gen3 --out results/all
  shardbench gate results/all`,
		Args: minArgs(2, "at least two results directories"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dirs = args
			if runF != nil {
				return runF(opts)
			}
			return runMerge(opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Out, "out", "o", "", "merged results directory (required; must not hold results)")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "print nothing on success")
	return cmd
}

func runMerge(opts *MergeOptions) error {
	if opts.Out == "" {
		return usageErrorf("merge needs --out DIR")
	}
	sum, err := results.Merge(opts.Dirs, opts.Out, results.Tool{Name: "shardbench", Version: version, GoVersion: runtime.Version()})
	if err != nil {
		if errors.Is(err, results.ErrMergeInput) {
			return usageError(err)
		}
		return err
	}
	if !opts.Quiet {
		for _, v := range sum.Variants {
			fmt.Fprintf(opts.IO.Out, "%s: %d operations (%d completed), p50 %.3fms p99 %.3fms p99.9 %.3fms max %.3fms\n",
				v.Name, v.Totals.Scheduled, v.Totals.Completed, v.Totals.Response.P50, v.Totals.Response.P99, v.Totals.Response.P999, v.Totals.Response.Max)
		}
		fmt.Fprintf(opts.IO.ErrOut, "merged %d results directories into %s\n", len(opts.Dirs), opts.Out)
	}
	return nil
}
