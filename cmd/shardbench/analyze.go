package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/shardbench/shardbench/internal/analyze"
	"github.com/shardbench/shardbench/internal/plan"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/reports"
	"github.com/shardbench/shardbench/workloads"
)

// AnalyzeOptions are the flags of `shardbench analyze`.
type AnalyzeOptions struct {
	IO           *IO
	ScenarioPath string
	// Entity keeps only the tables of this entity (or this table name); Design only the
	// variants whose name or design file contains it.
	Entity string
	Design string
	PlacementOptions
}

func newAnalyzeCmd(io *IO, runF func(*AnalyzeOptions) error) *cobra.Command {
	opts := &AnalyzeOptions{IO: io}
	cmd := &cobra.Command{
		Use:   "analyze SCENARIO",
		Short: "Judge every design's shard and partition keys before any data exists",
		Long: `analyze runs the scenario's operation stream through every design variant's exact
placement (no database) and reports, per table or collection, what MongoDB's
analyzeShardKey reports only once data and queries are in a cluster:

  - key characteristics: documents (rows) written, distinct key values (exact up to
    65,536, then HyperLogLog, ±0.8%), the 5 most common values with their share,
    monotonicity (the correlation coefficient between key order and insertion order;
    |r| >= 0.7 is monotonic, as mongod decides), the average document size;
  - read and write distribution: single-shard / multi-shard / scatter-gather (MongoDB),
    single-partition / multi-partition / scan or index (Cassandra), per operation and
    per chunk range or node;
  - flags with reasons in plain words, a verdict per table (good, caution, avoid) and
    a ranking of the variants of each entity.

It writes analysis.json (field names as analyzeShardKey's) into the results directory
and prints a table. See docs/analyze.md.`,
		Example: `  shardbench analyze scenarios/claims/orders-shard-keys.yaml --limit 50000
  shardbench analyze scenarios/claims/products-hot-category.yaml --entity products
  shardbench analyze scenarios/black-friday.yaml --design seed001-cassandra --entity carts`,
		Args: exactArgs(1, "a scenario file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ScenarioPath = args[0]
			if err := opts.check(cmd.Flags()); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runAnalyze(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Entity, "entity", "", "analyse only the tables of this entity (or this table or collection)")
	f.StringVar(&opts.Design, "design", "", "analyse only the variants whose name or design file contains this")
	opts.PlacementOptions.bind(f, "analyze")
	return cmd
}

func runAnalyze(ctx context.Context, opts *AnalyzeOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	run, err := startPlacementRun(opts.ScenarioPath, opts.Out, "analyze", "analyze judges the keys of design variants", opts.overrides())
	if err != nil {
		return err
	}
	defer run.dir.Close()
	in, sc, out, dir, cluster := run.in, run.in.Scenario, run.out, run.dir, run.cluster
	var variants []variantSpec
	for _, v := range in.Variants {
		if opts.Design == "" || strings.Contains(v.Name, opts.Design) || strings.Contains(filepath.Base(v.Design), opts.Design) {
			variants = append(variants, v)
		}
	}
	if len(variants) == 0 {
		var names []string
		for _, v := range in.Variants {
			names = append(names, v.Name)
		}
		return usageErrorf("--design %q matches none of the variants of %s: %s", opts.Design, sc.File, strings.Join(names, ", "))
	}
	ctx, stop, _ := interruptContext(ctx, nil)
	defer stop()

	if !opts.Quiet {
		fmt.Fprintf(opts.IO.ErrOut, "shardbench: analyze %s: %d variant(s), about %.0f operations each → %s\n", sc.Name, len(variants), in.Schedule.Expected(), out)
	}
	doc := &results.Analysis{Scenario: sc.Name, Variants: make([]results.AnalysisVariant, len(variants))}
	errs := make([]error, len(variants))
	counts := make([]int64, len(variants))
	started := time.Now()
	eachInParallel(len(variants), func(i int) {
		v := variants[i]
		av, n, err := analyzeVariant(ctx, v, &cluster, run.newStream, opts.Limit, uint64(sc.Seed))
		if err != nil {
			err = fmt.Errorf("variant %s: %w", v.Name, err)
		}
		doc.Variants[i], counts[i], errs[i] = av, n, err
	})
	for i := range doc.Variants {
		doc.Operations = max(doc.Operations, counts[i])
		if opts.Entity != "" {
			av := &doc.Variants[i]
			kept := av.Tables[:0]
			for _, t := range av.Tables {
				if t.Entity == opts.Entity || t.Table == opts.Entity || strings.HasSuffix(t.Table, "."+opts.Entity) {
					kept = append(kept, t)
				}
			}
			av.Tables = kept
		}
	}
	if opts.Entity != "" {
		found := false
		for _, v := range doc.Variants {
			found = found || len(v.Tables) > 0
		}
		if !found && errors.Join(errs...) == nil {
			return usageErrorf("--entity %q matches no table or collection of %s's designs", opts.Entity, sc.File)
		}
	}
	doc.Ranking = analyze.Rank(doc.Variants)
	doc.Notes = append(doc.Notes, "predicted from the scenario's operation stream with no database; --server-check (analyzeShardKey on a live mongos) is not implemented")
	if err := dir.WriteAnalysis(doc); err != nil {
		return err
	}
	if !opts.Quiet {
		fmt.Fprintf(opts.IO.ErrOut, "analysed %d operations per variant in %s\n", doc.Operations, time.Since(started).Round(time.Millisecond))
		printAnalysis(opts.IO.Out, doc)
		fmt.Fprintf(opts.IO.ErrOut, "results: %s\n", filepath.Join(out, results.AnalysisFile))
	}
	if err := errors.Join(errs...); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted: %w; what was analysed so far is in %s", err, out)
		}
		return err
	}
	return nil
}

// analyzeVariant runs one variant's stream through its placement and its key analysis.
// newStream is called twice: once for the placer's sample (the data already in ranged
// collections), once for the analysis.
func analyzeVariant(ctx context.Context, v variantSpec, c *plan.Cluster, newStream func() plan.Stream, limit int64, seed uint64) (results.AnalysisVariant, int64, error) {
	pl, err := plan.NewPlacer(v.Plan, c, plan.Sample(newStream()))
	if err != nil {
		return results.AnalysisVariant{Variant: v.Name}, 0, err
	}
	a := analyze.NewVariant(v.Name, pl, seed)
	s := newStream()
	var op workloads.Op
	for s.Next(&op) {
		a.Op(&op)
		n := a.Ops()
		if limit > 0 && n >= limit {
			break
		}
		if n&0xffff == 0 && ctx.Err() != nil {
			return a.Result(), n, ctx.Err()
		}
	}
	return a.Result(), a.Ops(), nil
}

// printAnalysis prints per variant one line per table with its key characteristics and
// targeting, the reasons behind each verdict, then the ranking of every entity.
func printAnalysis(w io.Writer, doc *results.Analysis) {
	for _, v := range doc.Variants {
		if len(v.Tables) == 0 {
			continue
		}
		fmt.Fprintf(w, "%s (%s; %s)\n", v.Variant, v.Database, v.Topology)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  table\tkey\tdocs\tdistinct\tmost common\tmonotonicity\treads 1/n/all\twrites 1/n/all\tverdict")
		for _, t := range v.Tables {
			kc := t.KeyCharacteristics
			distinct := fmt.Sprint(kc.NumDistinctValues)
			if !kc.NumDistinctValuesExact && kc.NumDocs > 0 {
				distinct = fmt.Sprintf("≈%d ±%.1f%%", kc.NumDistinctValues, kc.NumDistinctValuesRelError*100)
			}
			common := "-"
			if len(kc.MostCommonValues) > 0 {
				mc := kc.MostCommonValues[0]
				common = reports.Truncate(mc.Value, 36) + " " + reports.FormatPct(mc.Share)
			}
			mono := fmt.Sprintf("%s %.2f", kc.Monotonicity.Type, kc.Monotonicity.RecordIDCorrelationCoefficient)
			if m := kc.MonotonicityWithinPrefix; m != nil {
				mono += fmt.Sprintf(" (within %s %.2f)", t.PrefixCharacteristics.Field, m.RecordIDCorrelationCoefficient)
			}
			rd, wd := t.ReadDistribution, t.WriteDistribution
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", t.Table, t.Key, kc.NumDocs, distinct, common, mono,
				shares(rd.SampleSize.Total, rd.PercentageOfSingleShardReads, rd.PercentageOfMultiShardReads, rd.PercentageOfScatterGatherReads),
				shares(wd.SampleSize.Total, wd.PercentageOfSingleShardWrites, wd.PercentageOfMultiShardWrites, wd.PercentageOfScatterGatherWrites),
				t.Verdict)
		}
		tw.Flush()
		for _, t := range v.Tables {
			for _, f := range t.Flags {
				fmt.Fprintf(w, "    %s %s: %s\n", t.Table, f.Severity, f.Reason)
			}
		}
	}
	fmt.Fprintln(w, "ranking (best first):")
	for _, e := range doc.Ranking {
		var parts []string
		for _, r := range e.Variants {
			parts = append(parts, fmt.Sprintf("%d. %s (%s, score %d)", r.Rank, r.Variant, r.Verdict, r.Score))
		}
		fmt.Fprintf(w, "  %s: %s\n", e.Entity, strings.Join(parts, "; "))
	}
}

func shares(total int64, one, multi, all float64) string {
	if total == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f/%.0f/%.0f%%", one, multi, all)
}
