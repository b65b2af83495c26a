package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/hotspot"
	"github.com/shardbench/shardbench/internal/plan"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/units"
	"github.com/shardbench/shardbench/reports"
)

// PlanOptions are the flags of `shardbench plan`.
type PlanOptions struct {
	IO           *IO
	ScenarioPath string
	PlacementOptions
	NoReport bool
}

func newPlanCmd(io *IO, runF func(*PlanOptions) error) *cobra.Command {
	opts := &PlanOptions{IO: io}
	cmd := &cobra.Command{
		Use:   "plan SCENARIO",
		Short: "Place every key of a scenario on each design's cluster layout, with no database",
		Long: `plan runs the scenario's whole operation stream through every design variant's
exact placement — Murmur3 tokens, vnode ranges and replicas on a Cassandra ring; hashed
values, chunks and shards on a MongoDB cluster — without timing and without a database.
It writes hotspots.json (the heaviest partitions of every table with their token,
replicas, chunk or shard; distinct partitions; load per node and shard with the seed's
30% rule; partition sizes projected to each table's bucket or TTL) and an HTML report.

The layout is the scenario's backends.sim.cluster section (see docs/simulator.md), so
plan and the simulator place keys the same way.`,
		Example: `  shardbench plan scenarios/claims/orders-shard-keys.yaml
  shardbench plan scenarios/black-friday.yaml --duration 2m --out results/bf-plan`,
		Args: exactArgs(1, "a scenario file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ScenarioPath = args[0]
			if err := opts.check(cmd.Flags()); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runPlan(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	opts.PlacementOptions.bind(f, "plan")
	f.BoolVar(&opts.NoReport, "no-report", false, "do not render the HTML report")
	return cmd
}

func runPlan(ctx context.Context, opts *PlanOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	stopProfile, err := startCPUProfile(opts.CPUProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	run, err := startPlacementRun(opts.ScenarioPath, opts.Out, "plan", "plan places keys on design variants", opts.overrides())
	if err != nil {
		return err
	}
	defer run.dir.Close()
	in, sc, out, dir := run.in, run.in.Scenario, run.out, run.dir
	ctx, stop, _ := interruptContext(ctx, nil, opts.IO.gone)
	defer stop()

	if !opts.Quiet {
		fmt.Fprintf(opts.IO.ErrOut, "shardbench: plan %s: %d variant(s), about %.0f operations each → %s\n", sc.Name, len(in.Variants), in.Schedule.Expected(), out)
	}
	started := time.Now()
	variants, n, runErr := run.placeVariants(ctx, opts.Limit)
	hot := &results.Hotspots{Variants: variants}
	errs := []error{runErr}
	if !opts.Quiet {
		fmt.Fprintf(opts.IO.ErrOut, "  %d operations placed per variant\n", n)
	}
	took := time.Since(started)
	if err := dir.WriteHotspots(hot); err != nil {
		return err
	}
	if !opts.Quiet {
		keys := float64(placedKeys(variants))
		fmt.Fprintf(opts.IO.ErrOut, "placed in %s (%s keys, %s keys/s, all variants)\n", took.Round(time.Millisecond), units.Count(keys), units.Count(keys/took.Seconds()))
		printPlan(opts.IO.Out, hot)
		if err := reports.WriteText(opts.IO.Out, &results.Summary{}, hot); err != nil {
			return err
		}
		fmt.Fprintf(opts.IO.ErrOut, "results: %s\n", out)
	}
	if !opts.NoReport {
		res, err := reports.Render(out, reportOptions("", false, reports.DefaultMaxOpCharts, reports.DefaultMaxVariantCharts))
		if err != nil {
			fmt.Fprintf(opts.IO.ErrOut, "shardbench: the report could not be rendered: %v (retry with: shardbench report %s)\n", err, out)
		} else if !opts.Quiet {
			printReportDone(opts.IO.ErrOut, opts.IO.ErrOut, res)
		}
	}
	if err := errors.Join(errs...); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted: %w; what was placed so far is in %s", err, out)
		}
		return err
	}
	return nil
}

// placeVariants places the keys of every variant at once, on one generation of the
// stream ([plan.Variants]), up to limit operations each (0: all).
func (r *placementRun) placeVariants(ctx context.Context, limit int64) ([]results.HotspotsVariant, int64, error) {
	names := make([]string, len(r.in.Variants))
	plans := make([]*design.Compiled, len(r.in.Variants))
	for i, v := range r.in.Variants {
		names[i], plans[i] = v.Name, v.Compiled
	}
	return plan.Variants(ctx, names, plans, &r.cluster, r.newStream, limit)
}

// placedKeys is how many keys (accesses to a table or collection) the variants placed.
func placedKeys(variants []results.HotspotsVariant) int64 {
	var n int64
	for _, v := range variants {
		for _, t := range v.Tables {
			n += t.Ops
		}
	}
	return n
}

// printPlan prints, per variant, every table's key, distinct partitions and hottest
// partition with where it lives.
func printPlan(w io.Writer, hot *results.Hotspots) {
	for _, hv := range hot.Variants {
		fmt.Fprintf(w, "%s (%s; %s)\n", hv.Variant, hv.Database, hv.Topology)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  table\tkey\tops\tpartitions\thottest partition\tshare\twhere")
		for _, t := range hv.Tables {
			parts := fmt.Sprint(t.Partitions)
			if !t.PartitionsExact {
				parts = fmt.Sprintf("≈%d", t.Partitions)
			}
			hottest, share, where := "-", "-", "-"
			if p := t.Hottest(); p != nil {
				hottest, share = reports.Truncate(p.Key, 48), units.Pct(p.Share)
				switch {
				case len(p.Replicas) > 0:
					where = "token " + p.Token + " on " + strings.Join(p.Replicas, ",")
				case p.Shard != "":
					where = p.Shard + " " + reports.Truncate(p.Range, 40)
				}
			}
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\t%s\t%s\t%s\n", t.Table, t.Key, t.Ops, parts, hottest, share, where)
		}
		tw.Flush()
		for _, t := range hv.Tables {
			if line := shardLine(&t); line != "" {
				fmt.Fprintf(w, "  %s by shard: %s\n", t.Table, line)
			}
		}
	}
}

// shardLine is a sharded collection's split over its shards as the run started: each
// shard's share of the collection's operations, its chunks (jumbo ones counted) and
// loaded data. Empty for a collection on one shard.
func shardLine(t *results.TableHotspots) string {
	if len(t.Shards) < 2 {
		return ""
	}
	var ops int64
	for _, s := range t.Shards {
		ops += s.Ops
	}
	var parts []string
	for _, s := range t.Shards {
		share := "-"
		if ops > 0 {
			share = units.Pct(float64(s.Ops) / float64(ops))
		}
		chunks := fmt.Sprintf("%d chunks", s.Chunks)
		if len(s.Jumbo) > 0 {
			chunks += fmt.Sprintf(" (%d jumbo)", len(s.Jumbo))
		}
		parts = append(parts, fmt.Sprintf("%s %s of ops, %s, %s", s.Shard, share, chunks, hotspot.Bytes(s.LoadedBytes)))
	}
	return strings.Join(parts, "; ")
}
