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
	"github.com/spf13/pflag"

	"github.com/shardbench/shardbench/internal/analyze"
	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/backend/mongo"
	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/plan"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/units"
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
	// ServerCheck runs analyzeShardKey on the mongos at Target after a load of LoadOps
	// operations per variant, waiting at most SampleWait for sampled queries.
	ServerCheck bool
	Target      string
	LoadOps     int
	SampleWait  time.Duration
	PlacementOptions
}

// check completes the options once flags are parsed.
func (o *AnalyzeOptions) check(f *pflag.FlagSet) error {
	if err := o.PlacementOptions.check(f); err != nil {
		return err
	}
	switch {
	case o.ServerCheck && o.Target == "":
		return usageErrorf("--server-check needs --target mongodb://HOST:PORT (a mongos of MongoDB 7.0 or newer)")
	case !o.ServerCheck && (f.Changed("target") || f.Changed("load-ops") || f.Changed("sample-wait")):
		return usageErrorf("--target, --load-ops and --sample-wait apply only with --server-check: analyze alone uses no database")
	case o.LoadOps < 0:
		return usageErrorf("--load-ops must not be negative")
	case o.SampleWait < 0:
		return usageErrorf("--sample-wait must not be negative")
	}
	return nil
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
and prints a table. See docs/analyze.md.

With --server-check --target mongodb://HOST:PORT on a mongos of MongoDB 7.0 or newer, each
MongoDB variant is also set up in its own database (<run's database>_analyze, dropped
first), query sampling is enabled (configureQueryAnalyzer), the first --load-ops
operations of the stream run against it, and analyzeShardKey's own numbers are put
beside the prediction. Any other server (FerretDB, a replica set, an older mongos) gets
a message saying why not, and the prediction alone is the result (exit 0).
Credentials come from SHARDBENCH_MONGODB_USERNAME / SHARDBENCH_MONGODB_PASSWORD, as for run.`,
		Example: `  shardbench analyze scenarios/claims/orders-shard-keys.yaml --limit 50000
  shardbench analyze scenarios/claims/products-hot-category.yaml --entity products
  shardbench analyze scenarios/black-friday.yaml --design seed001-cassandra --entity carts
  shardbench analyze scenarios/claims/orders-shard-keys.yaml --server-check --target mongodb://mongos:27017`,
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
	f.BoolVar(&opts.ServerCheck, "server-check", false, "also run analyzeShardKey on the mongos at --target (MongoDB 7.0+) after a load phase")
	f.StringVar(&opts.Target, "target", "", "with --server-check: mongodb://host:port[,host:port]/?options (credentials from the environment)")
	f.IntVar(&opts.LoadOps, "load-ops", 10000, "with --server-check: operations of the stream each variant runs on the server before analyzeShardKey")
	f.DurationVar(&opts.SampleWait, "sample-wait", mongo.DefaultSampleWait, "with --server-check: how long to wait for the server to write its sampled queries")
	opts.PlacementOptions.bind(f, "analyze")
	return cmd
}

func runAnalyze(ctx context.Context, opts *AnalyzeOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	stopProfile, err := startCPUProfile(opts.CPUProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
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
	ctx, stop, _ := interruptContext(ctx, nil, opts.IO.gone)
	defer stop()

	if !opts.Quiet {
		fmt.Fprintf(opts.IO.ErrOut, "shardbench: analyze %s: %d variant(s), about %.0f operations each → %s\n", sc.Name, len(variants), in.Schedule.Expected(), out)
	}
	doc := &results.Analysis{Scenario: sc.Name, Variants: make([]results.AnalysisVariant, len(variants))}
	errs := make([]error, len(variants))
	counts := make([]int64, len(variants))
	started := time.Now()
	keys := analyzeVariants(ctx, variants, &cluster, run.newStream, opts.Limit, uint64(sc.Seed), doc.Variants, counts, errs)
	took := time.Since(started)
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
	doc.Notes = append(doc.Notes, "predicted from the scenario's operation stream with no database")
	var checkErr error
	if opts.ServerCheck && errors.Join(errs...) == nil {
		checkErr = serverCheck(ctx, opts, run, variants, doc)
	}
	if err := dir.WriteAnalysis(doc); err != nil {
		return err
	}
	if !opts.Quiet {
		fmt.Fprintf(opts.IO.ErrOut, "analysed %d operations per variant in %s (%s keys, %s keys/s, all variants)\n",
			doc.Operations, took.Round(time.Millisecond), units.Count(float64(keys)), units.Count(float64(keys)/took.Seconds()))
		printAnalysis(opts.IO.Out, doc)
		fmt.Fprintf(opts.IO.ErrOut, "results: %s\n", filepath.Join(out, results.AnalysisFile))
	}
	if checkErr != nil {
		var ee *exitError
		if errors.As(checkErr, &ee) {
			return checkErr
		}
		return fmt.Errorf("%w (the prediction alone is in %s)", checkErr, out)
	}
	if err := errors.Join(errs...); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted: %w; what was analysed so far is in %s", err, out)
		}
		return err
	}
	return nil
}

// serverCheckConfig is the mongo backend's configuration for the server check: the
// scenario's backends.mongo options and --target; the variant is filled in per variant.
func (o *AnalyzeOptions) serverCheckConfig(run *placementRun) backend.Config {
	sc := run.in.Scenario
	log := o.IO.ErrOut
	if o.Quiet {
		log = io.Discard
	}
	return backend.Config{Scenario: sc, Model: run.in.Prepared.Model, Target: o.Target, Options: sc.Backends["mongo"], Log: log}
}

// serverCheck puts a live mongos's analyzeShardKey numbers beside the prediction in doc.
// A server that cannot run the command (FerretDB, a replica set, a mongos older than 7.0)
// is no failure: doc says why, stderr too, and the prediction stands. An unreachable
// server or a check that breaks off is an error; doc.ServerCheck says which.
func serverCheck(ctx context.Context, opts *AnalyzeOptions, run *placementRun, variants []variantSpec, doc *results.Analysis) error {
	hosts := mongo.TargetHosts(opts.Target)
	chk := &results.ServerCheck{Target: hosts}
	doc.ServerCheck = chk
	fail := func(err error) error {
		chk.Status, chk.Message = results.ServerCheckFailed, "server check failed: "+err.Error()
		doc.Notes = append(doc.Notes, chk.Message)
		var ue *mongo.UsageError
		if errors.As(err, &ue) {
			return usageError(err)
		}
		return err
	}
	base := opts.serverCheckConfig(run)
	dep, err := mongo.Probe(ctx, base)
	if err != nil {
		return fail(err)
	}
	chk.Server = dep.String()
	if err := dep.AnalyzeShardKeySupport(hosts); err != nil {
		// Said even with --quiet: it answers what --server-check asked for.
		chk.Status, chk.Message = results.ServerCheckNotAvailable, err.Error()
		doc.Notes = append(doc.Notes, chk.Message)
		fmt.Fprintf(opts.IO.ErrOut, "shardbench: analyze: %s\n", chk.Message)
		return nil
	}
	chk.LoadOps = int64(opts.LoadOps)
	checked := 0
	for i, v := range variants {
		if v.Compiled == nil || v.Compiled.Design.MongoDB == nil {
			continue
		}
		cfg := base
		cfg.Variant, cfg.Compiled, cfg.VariantIndex = v.Variant, v.Compiled, i
		if !opts.Quiet {
			fmt.Fprintf(opts.IO.ErrOut, "shardbench: analyze: server check of %s on %s: load of %d operations, then analyzeShardKey\n", v.Name, hosts, opts.LoadOps)
		}
		res, err := mongo.CheckShardKeys(ctx, cfg, mongo.CheckOptions{
			LoadOps: opts.LoadOps, SamplesPerSecond: mongo.DefaultSamplesPerSecond,
			SamplerRefresh: mongo.DefaultSamplerRefresh, SampleWait: opts.SampleWait,
		})
		av := &doc.Variants[i]
		if res != nil {
			av.Notes = append(av.Notes, "server check in database "+res.Database+" on "+hosts)
			av.Notes = append(av.Notes, res.Notes...)
			for _, c := range res.Collections {
				if t := mongoTable(av, c.Collection); t != nil {
					sk := c.Server
					t.Server = &sk
				}
			}
		}
		if err != nil {
			return fail(fmt.Errorf("variant %s: %w", v.Name, err))
		}
		checked++
	}
	chk.Status = results.ServerCheckDone
	chk.Message = fmt.Sprintf("analyzeShardKey ran on %s (%s) for %d MongoDB variant(s), each after a load of the stream's first %d operations", hosts, chk.Server, checked, opts.LoadOps)
	doc.Notes = append(doc.Notes, chk.Message)
	return nil
}

// mongoTable is the variant's predicted MongoDB table for a collection name, or nil
// (--entity may have left it out).
func mongoTable(av *results.AnalysisVariant, coll string) *results.KeyAnalysis {
	for i := range av.Tables {
		t := &av.Tables[i]
		if t.Database == "mongodb" && (t.Table == coll || strings.HasSuffix(t.Table, "."+coll)) {
			return t
		}
	}
	return nil
}

// analyzeVariants runs every variant's placement and key analysis on one generation of
// the stream (plan.EachShared), filling out, counts and errs by variant. The placers
// start from the data that exists before the run (plan.Population). It returns how many
// keys were analysed, all variants together.
func analyzeVariants(ctx context.Context, variants []variantSpec, c *plan.Cluster, newStream func() plan.Stream, limit int64, seed uint64,
	out []results.AnalysisVariant, counts []int64, errs []error) (keys int64) {
	plans := make([]*design.Compiled, len(variants))
	for i, v := range variants {
		plans[i] = v.Compiled
	}
	if len(plans) > 0 {
		_ = plan.PopulationOf(plans[0].Model).Prepare(plans) // NewPlacer reports errors
	}
	as := make([]*analyze.Analyzer, len(variants))
	for i, v := range variants {
		pl, err := plan.NewPlacer(v.Compiled, c)
		if err != nil {
			out[i], errs[i] = results.AnalysisVariant{Variant: v.Name}, fmt.Errorf("variant %s: %w", v.Name, err)
			continue
		}
		as[i] = analyze.NewAnalyzer(v.Name, pl, seed)
	}
	_, err := plan.EachShared(ctx, newStream(), len(variants), limit, func(i int, ops []workloads.Op) {
		if a := as[i]; a != nil {
			for k := range ops {
				a.Op(&ops[k])
			}
		}
	})
	for i, a := range as {
		if a == nil {
			continue
		}
		out[i], counts[i] = a.Result(), a.Ops()
		keys += a.Keys()
		if err != nil {
			errs[i] = fmt.Errorf("variant %s: %w", variants[i].Name, err)
		}
	}
	return keys
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
				common = reports.Truncate(mc.Value, 36) + " " + units.Pct(mc.Share)
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
			if sk := t.Server; sk != nil && sk.Error == "" {
				fmt.Fprintf(tw, "  ↳ server\t%s\n", serverRow(sk))
			}
		}
		tw.Flush()
		for _, t := range v.Tables {
			for _, f := range t.Flags {
				fmt.Fprintf(w, "    %s %s: %s\n", t.Table, f.Severity, f.Reason)
			}
			if t.Server != nil && t.Server.Error != "" {
				fmt.Fprintf(w, "    %s server: analyzeShardKey failed: %s\n", t.Table, t.Server.Error)
			}
		}
	}
	if c := doc.ServerCheck; c != nil {
		fmt.Fprintf(w, "server check (%s): %s\n", c.Status, c.Message)
	}
	fmt.Fprintln(w, "ranking (best first):")
	for _, e := range doc.Ranking {
		var parts []string
		for _, r := range e.Variants {
			fan := ""
			if r.FanOut >= analyze.FanOutWarning {
				fan = fmt.Sprintf(", fan-out %.3g", r.FanOut)
			}
			parts = append(parts, fmt.Sprintf("%d. %s (%s, score %d%s)", r.Rank, r.Variant, r.Verdict, r.Score, fan))
		}
		fmt.Fprintf(w, "  %s: %s\n", e.Entity, strings.Join(parts, "; "))
	}
}

// serverRow is analyzeShardKey's numbers in the columns of the prediction's row (key to
// writes; no verdict: the server gives none).
func serverRow(sk *results.ServerKeyAnalysis) string {
	docs, distinct, common, mono := "-", "-", "-", "-"
	if kc := sk.KeyCharacteristics; kc != nil {
		docs, distinct = fmt.Sprint(kc.NumDocsTotal), fmt.Sprint(kc.NumDistinctValues)
		if len(kc.MostCommonValues) > 0 && kc.NumDocsTotal > 0 {
			mc := kc.MostCommonValues[0]
			common = reports.Truncate(mc.Value, 36) + " " + units.Pct(float64(mc.Frequency)/float64(kc.NumDocsTotal))
		}
		mono = fmt.Sprintf("%s %.2f", kc.Monotonicity.Type, kc.Monotonicity.RecordIDCorrelationCoefficient)
	}
	reads, writes := "-", "-"
	if rd := sk.ReadDistribution; rd != nil {
		reads = shares(rd.SampleSize.Total, rd.PercentageOfSingleShardReads, rd.PercentageOfMultiShardReads, rd.PercentageOfScatterGatherReads)
	}
	if wd := sk.WriteDistribution; wd != nil {
		writes = shares(wd.SampleSize.Total, wd.PercentageOfSingleShardWrites, wd.PercentageOfMultiShardWrites, wd.PercentageOfScatterGatherWrites)
	}
	return strings.Join([]string{sk.Key, docs, distinct, common, mono, reads, writes, "(analyzeShardKey)"}, "\t")
}

func shares(total int64, one, multi, all float64) string {
	if total == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f/%.0f/%.0f%%", one, multi, all)
}
