package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/analyze"
	"github.com/shardbench/shardbench/internal/backend/mongo"
	"github.com/shardbench/shardbench/internal/itest"
	"github.com/shardbench/shardbench/internal/results"
)

// runAnalyzeTest analyses a shipped scenario and reads back analysis.json.
func runAnalyzeTest(t *testing.T, opts AnalyzeOptions) (*results.Analysis, string) {
	t.Helper()
	io, stdout, stderr := testIO()
	opts.IO = io
	opts.Out = filepath.Join(t.TempDir(), "analysis")
	if err := runAnalyze(context.Background(), &opts); err != nil {
		t.Fatalf("analyze %s: %v\n%s", opts.ScenarioPath, err, stderr)
	}
	doc, err := results.ReadAnalysis(opts.Out)
	if err != nil || doc == nil {
		t.Fatalf("analysis.json: %v", err)
	}
	return doc, stdout.String()
}

// keyOf finds a table of the variant whose name contains variant (exactly one).
func keyOf(t *testing.T, doc *results.Analysis, variant, table string) *results.KeyAnalysis {
	t.Helper()
	var found *results.KeyAnalysis
	for i := range doc.Variants {
		v := &doc.Variants[i]
		if !strings.Contains(v.Variant, variant) {
			continue
		}
		if found != nil {
			t.Fatalf("more than one variant contains %q", variant)
		}
		found = v.Table(table)
		if found == nil {
			t.Fatalf("variant %s has no table %s", v.Variant, table)
		}
	}
	if found == nil {
		t.Fatalf("no variant contains %q", variant)
	}
	return found
}

func flagReason(k *results.KeyAnalysis, code string) string {
	for _, f := range k.Flags {
		if f.Code == code {
			return f.Reason
		}
	}
	return ""
}

// The reasons seed 001 gives for rejecting orders keys, found from the stream alone; the
// accepted key is not flagged for any of them; seed 000's orders_by_period (a day per
// partition) is flagged.
func TestAnalyzeOrdersShardKeys(t *testing.T) {
	doc, stdout := runAnalyzeTest(t, AnalyzeOptions{ScenarioPath: "../../scenarios/claims/orders-shard-keys.yaml", PlacementOptions: PlacementOptions{Limit: 50000}})
	if len(doc.Variants) != 7 || doc.Operations != 50000 {
		t.Fatalf("%d variants, %d operations; want 7, 50000", len(doc.Variants), doc.Operations)
	}

	created := keyOf(t, doc, "{created_at: 1}", "orders")
	if m := created.KeyCharacteristics.Monotonicity; m.Type != analyze.Monotonic || m.RecordIDCorrelationCoefficient < analyze.MonotonicThreshold {
		t.Errorf("{created_at: 1}: monotonicity %+v, want monotonic", m)
	}
	if r := flagReason(created, analyze.FlagMonotonic); !strings.Contains(r, "last chunk") {
		t.Errorf("{created_at: 1} not flagged monotonic: %+v", created.Flags)
	}
	if h := created.HottestInsertRange; h == nil || h.Share < 0.5 {
		t.Errorf("{created_at: 1}: hottest chunk's share of inserts %+v, want most of them", h)
	}

	geo := keyOf(t, doc, "{geo_zone: 1, created_at: 1}", "orders")
	p := geo.PrefixCharacteristics
	if p == nil || len(p.MostCommonValues) == 0 || p.MostCommonValues[0].Value != "moscow" || p.MostCommonValues[0].Share < 0.35 || p.MostCommonValues[0].Share > 0.55 {
		t.Fatalf("{geo_zone, created_at}: prefix %+v, want moscow at ~45%%", p)
	}
	if m := geo.KeyCharacteristics.MonotonicityWithinPrefix; m == nil || m.Type != analyze.Monotonic {
		t.Errorf("{geo_zone, created_at}: within-zone monotonicity %+v, want monotonic", m)
	}
	if r := flagReason(geo, analyze.FlagHotPrefix); !strings.Contains(r, "moscow") || !strings.Contains(r, "last chunk") {
		t.Errorf("{geo_zone, created_at} not flagged for Moscow's monotonic inserts: %+v", geo.Flags)
	}

	hashedID := keyOf(t, doc, "{_id: hashed}", "orders")
	r := flagReason(hashedID, analyze.FlagScatterReads)
	if !strings.Contains(r, "user_id") || !strings.Contains(r, "orders.history_all") || !strings.Contains(r, "orders.history_by_month") {
		t.Errorf("{_id: hashed} not flagged for a user's history broadcasting: %q (%+v)", r, hashedID.Flags)
	}
	if !hashedID.KeyCharacteristics.IsUnique || hashedID.KeyCharacteristics.NumDistinctValues != hashedID.KeyCharacteristics.NumDocs {
		t.Errorf("{_id: hashed}: %+v, want unique", hashedID.KeyCharacteristics)
	}

	accepted := keyOf(t, doc, "{user_id: hashed, created_at: 1}", "orders")
	for _, code := range []string{analyze.FlagMonotonic, analyze.FlagHotPrefix, analyze.FlagMonotonicInZone, analyze.FlagLowCardinality, analyze.FlagHotValue} {
		if accepted.HasFlag(code) {
			t.Errorf("accepted key flagged %s: %+v", code, accepted.Flags)
		}
	}
	if r := flagReason(accepted, analyze.FlagScatterReads); strings.Contains(r, "history") {
		t.Errorf("accepted key flagged for history reads broadcasting: %q", r)
	}
	for _, o := range accepted.ReadDistribution.ByOperation {
		if strings.HasPrefix(o.Op, "orders.history") && o.ScatterGather != 0 {
			t.Errorf("accepted key: %s has %d scatter-gather reads", o.Op, o.ScatterGather)
		}
	}

	period := keyOf(t, doc, "seed000", "orders_by_period")
	if !period.HasFlag(analyze.FlagTimeBucket) || !period.HasFlag(analyze.FlagLowCardinality) || period.Verdict != analyze.VerdictAvoid {
		t.Errorf("seed000 orders_by_period: %s %+v, want flagged one partition per period", period.Verdict, period.Flags)
	}
	// Shares add up to 100% where there are requests.
	for _, v := range doc.Variants {
		for _, tb := range v.Tables {
			rd := tb.ReadDistribution
			if sum := rd.PercentageOfSingleShardReads + rd.PercentageOfMultiShardReads + rd.PercentageOfScatterGatherReads; rd.SampleSize.Total > 0 && (sum < 99.99 || sum > 100.01) {
				t.Errorf("%s %s: read shares add up to %v%%", v.Variant, tb.Table, sum)
			}
		}
	}

	if len(doc.Ranking) != 1 || doc.Ranking[0].Entity != "orders" || len(doc.Ranking[0].Variants) != 7 {
		t.Fatalf("ranking %+v, want the 7 variants of orders", doc.Ranking)
	}
	rank := map[string]int{}
	for _, rv := range doc.Ranking[0].Variants {
		rank[rv.Variant] = rv.Rank
	}
	for name, n := range rank {
		if strings.Contains(name, "{created_at: 1}") && n < rank["seed003"] {
			t.Errorf("{created_at: 1} ranks %d, above seed003 (%d)", n, rank["seed003"])
		}
	}
	for _, want := range []string{"mobilnymir.orders", "monotonic", "ranking", "orders_by_period"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("terminal output lacks %q", want)
		}
	}
}

// Seed 001's products keys: {category: 1} is flagged for its 6 values and electronics'
// ~70%, {_id: hashed} because reads by category broadcast, the accepted {category: 1,
// _id: hashed} for neither; seed 004's products_by_category is flagged.
func TestAnalyzeProductsHotCategory(t *testing.T) {
	doc, _ := runAnalyzeTest(t, AnalyzeOptions{ScenarioPath: "../../scenarios/claims/products-hot-category.yaml", Entity: "products", PlacementOptions: PlacementOptions{Limit: 50000}})

	cat := keyOf(t, doc, "{category: 1}]", "products")
	kc := cat.KeyCharacteristics
	if kc.NumDistinctValues != 6 || len(kc.MostCommonValues) == 0 || !strings.Contains(kc.MostCommonValues[0].Value, "electronics") ||
		kc.MostCommonValues[0].Share < 0.6 || kc.MostCommonValues[0].Share > 0.8 {
		t.Errorf("{category: 1}: %d values, most common %+v; want 6, electronics ~70%%", kc.NumDistinctValues, kc.MostCommonValues)
	}
	if r := flagReason(cat, analyze.FlagLowCardinality); !strings.Contains(r, "6 value") || !strings.Contains(r, "electronics") {
		t.Errorf("{category: 1} not flagged low cardinality: %+v", cat.Flags)
	}
	if !cat.HasFlag(analyze.FlagHotValue) {
		t.Errorf("{category: 1} not flagged for electronics' share: %+v", cat.Flags)
	}

	id := keyOf(t, doc, "{_id: hashed}]", "products")
	if r := flagReason(id, analyze.FlagScatterReads); !strings.Contains(r, "category") || !strings.Contains(r, "catalog.category_listing") {
		t.Errorf("{_id: hashed} not flagged for category reads broadcasting: %+v", id.Flags)
	}

	accepted := keyOf(t, doc, "{category: 1, _id: hashed}]", "products")
	for _, code := range []string{analyze.FlagLowCardinality, analyze.FlagHotValue, analyze.FlagHotPrefix} {
		if accepted.HasFlag(code) {
			t.Errorf("accepted {category: 1, _id: hashed} flagged %s: %+v", code, accepted.Flags)
		}
	}
	if r := flagReason(accepted, analyze.FlagScatterReads); strings.Contains(r, "category_listing") {
		t.Errorf("accepted key: category listings broadcast: %q", r)
	}
	if p := accepted.PrefixCharacteristics; p == nil || p.MostCommonValues[0].Value != "electronics" {
		t.Errorf("accepted key's prefix %+v, want electronics first", p)
	}

	byCat := keyOf(t, doc, "seed004", "products_by_category")
	if !byCat.HasFlag(analyze.FlagLowCardinality) || !byCat.HasFlag(analyze.FlagHotValue) {
		t.Errorf("seed004 products_by_category: %+v, want low cardinality and a hot value", byCat.Flags)
	}
	// Seed 002 with 128 category shards: no partition is hot, but every listing reads 128
	// of them (the variant that saturates on the simulator); it is flagged and not ranked
	// above seed 002's 8 shards, whose listings read 8.
	wide := keyOf(t, doc, "category_shards=128", "products")
	if f := flagReason(wide, analyze.FlagFanOut); wide.Verdict != analyze.VerdictAvoid || !strings.Contains(f, "catalog.category_listing reads 128 partitions per request") {
		t.Errorf("128 category shards: %s, fan-out %.1f, flags %+v; want avoid for a 128-way listing", wide.Verdict, wide.ReadDistribution.FanOut, wide.Flags)
	}
	narrow := keyOf(t, doc, "seed002[products.partition_key=[category, category_shard]]", "products")
	if narrow.ReadDistribution.FanOut >= wide.ReadDistribution.FanOut/4 || narrow.Verdict == analyze.VerdictAvoid {
		t.Errorf("8 category shards: %s, fan-out %.1f against 128's %.1f", narrow.Verdict, narrow.ReadDistribution.FanOut, wide.ReadDistribution.FanOut)
	}
	rank := map[string]int{}
	for _, e := range doc.Ranking {
		for _, rv := range e.Variants {
			rank[rv.Variant] = rv.Rank
		}
	}
	for name, r := range rank {
		if strings.Contains(name, "category_shards=128") && (r == 1 || r < rank["seed002[products.partition_key=[category, category_shard]]"]) {
			t.Errorf("128 category shards ranked %d: %v", r, rank)
		}
	}
	// --entity keeps only products tables.
	for _, v := range doc.Variants {
		for _, tb := range v.Tables {
			if tb.Entity != "products" {
				t.Errorf("--entity products kept %s (%s)", tb.Table, tb.Entity)
			}
		}
	}
}

// 100 session buckets spread the writes; one bucket puts every session in one partition.
func TestAnalyzeSessionBuckets(t *testing.T) {
	doc, _ := runAnalyzeTest(t, AnalyzeOptions{ScenarioPath: "../../scenarios/claims/session-buckets.yaml", Design: "seed000", PlacementOptions: PlacementOptions{Limit: 50000}})
	if len(doc.Variants) != 4 {
		t.Fatalf("--design seed000 kept %d variants, want the 4 bucket counts", len(doc.Variants))
	}
	hundred := keyOf(t, doc, "buckets=100]", "user_sessions")
	if hundred.KeyCharacteristics.NumDistinctValues != 100 {
		t.Errorf("100 buckets: %d distinct values", hundred.KeyCharacteristics.NumDistinctValues)
	}
	for _, f := range hundred.Flags {
		if f.Severity != analyze.SeverityInfo {
			t.Errorf("100 buckets flagged: %+v", f)
		}
	}
	one := keyOf(t, doc, "buckets=1]", "user_sessions")
	if !one.HasFlag(analyze.FlagLowCardinality) || !one.HasFlag(analyze.FlagHotValue) || one.Verdict != analyze.VerdictAvoid {
		t.Errorf("1 bucket: %s %+v", one.Verdict, one.Flags)
	}
}

// Seed 001's abandoned_carts puts a day's abandonments in one partition.
func TestAnalyzeAbandonedCarts(t *testing.T) {
	doc, _ := runAnalyzeTest(t, AnalyzeOptions{ScenarioPath: "../../scenarios/black-friday.yaml", Design: "seed001-cassandra", Entity: "carts", PlacementOptions: PlacementOptions{Limit: 200000}})
	ab := keyOf(t, doc, "seed001-cassandra", "abandoned_carts")
	if ab.KeyCharacteristics.NumDocs == 0 || !ab.HasFlag(analyze.FlagTimeBucket) {
		t.Errorf("abandoned_carts: %+v %+v, want one partition per day", ab.KeyCharacteristics, ab.Flags)
	}
	carts := keyOf(t, doc, "seed001-cassandra", "carts")
	if carts.HasFlag(analyze.FlagTimeBucket) || carts.HasFlag(analyze.FlagLowCardinality) {
		t.Errorf("carts by owner_key flagged: %+v", carts.Flags)
	}
}

// Filters that match nothing and a negative limit are usage errors (exit 2).
func TestAnalyzeBadInput(t *testing.T) {
	io, _, _ := testIO()
	for _, o := range []AnalyzeOptions{
		{ScenarioPath: "../../scenarios/claims/session-buckets.yaml", Design: "no-such-design", PlacementOptions: PlacementOptions{Limit: 10}},
		{ScenarioPath: "../../scenarios/claims/session-buckets.yaml", Entity: "no-such-entity", PlacementOptions: PlacementOptions{Limit: 10}},
	} {
		o.IO, o.Out = io, filepath.Join(t.TempDir(), "x")
		err := runAnalyze(context.Background(), &o)
		if err == nil || exitCode(err) != 2 {
			t.Errorf("%+v: err %v (exit %d), want a usage error", o, err, exitCode(err))
		}
	}
	root := newRootCmd(io)
	root.SetArgs([]string{"analyze", "../../scenarios/claims/session-buckets.yaml", "--limit", "-1"})
	if err := root.Execute(); exitCode(err) != 2 {
		t.Errorf("--limit -1: %v, want exit 2", err)
	}
}

// --server-check needs --target; --target and the load flags need --server-check; the
// flags reach AnalyzeOptions.
func TestAnalyzeServerCheckFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--server-check"},
		{"--target", "mongodb://127.0.0.1:27017"},
		{"--load-ops", "10"},
		{"--server-check", "--target", "mongodb://h:1", "--load-ops", "-1"},
	} {
		io, _, _ := testIO()
		cmd := newAnalyzeCmd(io, func(*AnalyzeOptions) error { t.Errorf("%v: ran", args); return nil })
		cmd.SetArgs(append([]string{"s.yaml"}, args...))
		cmd.SilenceErrors, cmd.SilenceUsage = true, true
		if err := cmd.Execute(); err == nil || exitCode(err) != 2 {
			t.Errorf("%v: err %v (exit %d), want a usage error", args, err, exitCode(err))
		}
	}
	io, _, _ := testIO()
	var got *AnalyzeOptions
	cmd := newAnalyzeCmd(io, func(o *AnalyzeOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"s.yaml", "--server-check", "--target", "mongodb://mongos:27017", "--load-ops", "500", "--sample-wait", "3s"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !got.ServerCheck || got.Target != "mongodb://mongos:27017" || got.LoadOps != 500 || got.SampleWait != 3*time.Second {
		t.Errorf("options %+v", got)
	}
}

// An unreachable server fails the check (exit 1) with an error naming the host and never
// the password, and the prediction is still written, saying the check failed.
func TestAnalyzeServerCheckUnreachable(t *testing.T) {
	noMongoCredentials(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	io, stdout, stderr := testIO()
	out := filepath.Join(t.TempDir(), "a")
	opts := &AnalyzeOptions{IO: io, ScenarioPath: "../../scenarios/claims/products-hot-category.yaml", ServerCheck: true,
		Target: "mongodb://bench:s3cret@" + addr + "/", LoadOps: 10, PlacementOptions: PlacementOptions{Limit: 300, Out: out}}
	err = runAnalyze(context.Background(), opts)
	if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), addr) {
		t.Fatalf("err %v (exit %d), want exit 1 naming %s", err, exitCode(err), addr)
	}
	doc, rerr := results.ReadAnalysis(out)
	if rerr != nil || doc == nil || len(doc.Variants) == 0 {
		t.Fatalf("analysis.json: %v", rerr)
	}
	if c := doc.ServerCheck; c == nil || c.Status != results.ServerCheckFailed || c.Target != addr || !strings.Contains(c.Message, addr) {
		t.Errorf("serverCheck %+v", doc.ServerCheck)
	}
	raw, _ := os.ReadFile(filepath.Join(out, results.AnalysisFile))
	for what, s := range map[string]string{"error": err.Error(), "stdout": stdout.String(), "stderr": stderr.String(), "analysis.json": string(raw)} {
		if strings.Contains(s, "s3cret") {
			t.Errorf("%s holds the password: %s", what, s)
		}
	}
}

// Against FerretDB (not a mongos) --server-check says analyzeShardKey is not available,
// naming the host and the reason, on stderr and in analysis.json's notes; the prediction
// is still the result (exit 0), and no server numbers are invented.
func TestAnalyzeServerCheckOnFerretDB(t *testing.T) {
	uri := itest.Env(t, "SHARDBENCH_MONGODB_URI", "FerretDB (testenv/ferretdb/start.sh)")
	noMongoCredentials(t)
	host := mongo.TargetHosts(uri)
	io, stdout, stderr := testIO()
	out := filepath.Join(t.TempDir(), "a")
	opts := &AnalyzeOptions{IO: io, ScenarioPath: "../../scenarios/claims/orders-shard-keys.yaml", ServerCheck: true, Target: uri,
		LoadOps: 100, PlacementOptions: PlacementOptions{Limit: 2000, Out: out}}
	if err := runAnalyze(context.Background(), opts); err != nil || exitCode(err) != 0 {
		t.Fatalf("analyze --server-check on FerretDB: %v\n%s", err, stderr)
	}
	doc, err := results.ReadAnalysis(out)
	if err != nil || doc == nil {
		t.Fatalf("analysis.json: %v", err)
	}
	// The prediction is complete.
	k := keyOf(t, doc, "{created_at: 1}", "orders")
	if k.KeyCharacteristics.NumDocs == 0 || !k.HasFlag(analyze.FlagMonotonic) || len(doc.Ranking) == 0 {
		t.Errorf("prediction missing: %+v", k)
	}
	for _, v := range doc.Variants {
		for _, tb := range v.Tables {
			if tb.Server != nil {
				t.Errorf("%s %s: server numbers from a server without analyzeShardKey: %+v", v.Variant, tb.Table, tb.Server)
			}
		}
	}
	c := doc.ServerCheck
	if c == nil || c.Status != results.ServerCheckNotAvailable || c.Target != host || !strings.Contains(c.Server, "FerretDB") {
		t.Fatalf("serverCheck %+v", c)
	}
	for _, want := range []string{"analyzeShardKey needs a mongos of MongoDB 7.0+", host + " is FerretDB", "not a mongos", "server check skipped, prediction only"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("message %q lacks %q", c.Message, want)
		}
	}
	noted := false
	for _, n := range doc.Notes {
		noted = noted || n == c.Message
	}
	if !noted || !strings.Contains(stderr.String(), c.Message) {
		t.Errorf("message not in notes %q or stderr:\n%s", doc.Notes, stderr)
	}
	if !strings.Contains(stdout.String(), "server check (not-available)") {
		t.Errorf("terminal table does not say the check was skipped:\n%s", stdout)
	}
	raw, _ := os.ReadFile(filepath.Join(out, results.AnalysisFile))
	for what, s := range map[string]string{"stdout": stdout.String(), "stderr": stderr.String(), "analysis.json": string(raw)} {
		if strings.Contains(s, "@") || strings.Contains(strings.ToLower(s), "password") {
			t.Errorf("%s mentions credentials", what)
		}
	}
}

// noMongoCredentials clears the credential variables for the test (restored after it).
func noMongoCredentials(t *testing.T) {
	for _, k := range []string{mongo.EnvUsername, mongo.EnvPassword, mongo.EnvPasswordFile} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
}
