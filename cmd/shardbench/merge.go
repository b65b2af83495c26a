package main

import (
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shardbench/shardbench/internal/results"
)

// MergeOptions are the inputs of `shardbench merge`.
type MergeOptions struct {
	IO      *IO
	Dirs    []string
	Out     string
	Quiet   bool
	Partial bool
}

func newMergeCmd(io *IO, runF func(*MergeOptions) error) *cobra.Command {
	opts := &MergeOptions{IO: io}
	cmd := &cobra.Command{
		Use:   "merge DIR... --out DIR",
		Short: "Merge the shards of a distributed run, or repeated runs of one scenario, exactly",
		Long: `merge combines results directories into one, exactly: counters add, HdrHistograms
merge bucket by bucket and every percentile is recomputed from the merged histograms
(percentiles are never averaged); interval logs merge interval by interval and the time
series second by second, aligned on each run's schedule start, with each second's
percentiles recomputed from the merged intervals.

Two kinds of input make sense, and anything else is refused:

  shards     the N directories of one distributed run (run --shard I/N): one scenario
             (same file, overrides and designs), seed, shard count, --start-at and build,
             every shard once. Together they are the whole run: for the sim and null
             backends the merge equals the single-process run, counts, histograms and hot
             partitions alike. Rates add.
  repeats    whole runs of one scenario (any seeds), pooled for more samples: counts and
             histograms pool, rates are the runs' mean, hot-partition counts add with
             honest top-K error bounds.

A missing shard, or runs of which only some have a hot-partition analysis, are refused
unless --partial is given; the merged summary then lists what is missing and is marked
incomplete (gates fail on it).

The merged directory is an ordinary results directory: gate, report and compare read it.

Exit codes: 0 ok, 1 failure writing the output, 2 bad input (inputs that do not belong
together among it).`,
		Example: `  shardbench merge results/bf/shard-0 results/bf/shard-1 results/bf/shard-2 results/bf/shard-3 --out results/bf/all
  shardbench gate results/bf/all
  shardbench merge results/nightly-1 results/nightly-2 results/nightly-3 --out results/nightly`,
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
	f.BoolVar(&opts.Partial, "partial", false, "merge an incomplete set (missing shards, runs without hotspots.json) and mark the result incomplete")
	return cmd
}

func runMerge(opts *MergeOptions) error {
	if opts.Out == "" {
		return usageErrorf("merge needs --out DIR")
	}
	sum, err := results.Merge(opts.Dirs, opts.Out, results.MergeOptions{
		Tool:    results.Tool{Name: "shardbench", Version: version, GoVersion: runtime.Version()},
		Partial: opts.Partial,
	})
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
		what := fmt.Sprintf("%d repeated runs", sum.Merge.Runs)
		if sum.Merge.Kind == results.MergeShards {
			what = fmt.Sprintf("%d of %d shards", len(opts.Dirs), sum.Merge.Runs)
		}
		fmt.Fprintf(opts.IO.ErrOut, "merged %s into %s\n", what, opts.Out)
	}
	if len(sum.Merge.Missing) > 0 {
		// Said even with --quiet: the result is not the whole.
		fmt.Fprintf(opts.IO.ErrOut, "merge: partial: missing %s; the merged summary is marked incomplete\n", strings.Join(sum.Merge.Missing, "; "))
	}
	return nil
}
