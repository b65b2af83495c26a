package analyze

import (
	"strings"
	"testing"

	"github.com/shardbench/shardbench/internal/results"
)

func flagged(k *results.KeyAnalysis, code string) *results.Flag {
	for i := range k.Flags {
		if k.Flags[i].Code == code {
			return &k.Flags[i]
		}
	}
	return nil
}

// Each rule fires on numbers just past its threshold and stays quiet just before it.
func TestJudgeThresholds(t *testing.T) {
	base := func() results.KeyAnalysis {
		return results.KeyAnalysis{
			Table: "db.c", Database: "mongodb", Targets: 3,
			KeyCharacteristics: results.KeyCharacteristics{
				NumDocs: 10_000, NumDistinctValues: 9_000, NumDistinctValuesExact: true,
				MostCommonValues: []results.ValueFrequency{{Value: "v", Frequency: 10, Share: 0.001}},
				Monotonicity:     results.Monotonicity{Type: NotMonotonic, RecordIDCorrelationCoefficient: 0.1},
			},
		}
	}
	// A healthy key: good, score 0.
	k := base()
	Judge(&k, Context{})
	if k.Verdict != VerdictGood || k.Score != 0 || len(k.Flags) != 0 {
		t.Fatalf("healthy key: %s %d %+v", k.Verdict, k.Score, k.Flags)
	}

	// Low cardinality: 6 values on 3 shards (< 3 per shard) is a problem, with the value
	// and its share in the reason; 20 values (< 10 per shard) a warning; 30 nothing.
	k = base()
	k.KeyCharacteristics.NumDistinctValues = 6
	k.KeyCharacteristics.MostCommonValues = []results.ValueFrequency{{Value: "electronics", Frequency: 7000, Share: 0.7}}
	Judge(&k, Context{})
	f := flagged(&k, FlagLowCardinality)
	if f == nil || f.Severity != SeverityProblem || !strings.Contains(f.Reason, "6 value") || !strings.Contains(f.Reason, "electronics holds 70%") {
		t.Errorf("6 values: %+v", k.Flags)
	}
	if h := flagged(&k, FlagHotValue); h == nil || !strings.Contains(h.Reason, "70%") {
		t.Errorf("70%% on one value not flagged hot: %+v", k.Flags)
	}
	if k.Verdict != VerdictAvoid || k.Score != 2*problemPoints {
		t.Errorf("verdict %s score %d, want avoid %d", k.Verdict, k.Score, 2*problemPoints)
	}
	k = base()
	k.KeyCharacteristics.NumDistinctValues = 20
	Judge(&k, Context{})
	if f := flagged(&k, FlagLowCardinality); f == nil || f.Severity != SeverityWarning || k.Verdict != VerdictCaution {
		t.Errorf("20 values on 3 shards: %+v (%s)", k.Flags, k.Verdict)
	}
	k = base()
	k.KeyCharacteristics.NumDistinctValues = 30
	Judge(&k, Context{})
	if flagged(&k, FlagLowCardinality) != nil {
		t.Errorf("30 values on 3 shards flagged: %+v", k.Flags)
	}

	// Hot value just under and at 25%.
	for _, c := range []struct {
		share float64
		want  bool
	}{{0.24, false}, {0.25, true}} {
		k = base()
		k.KeyCharacteristics.MostCommonValues[0].Share = c.share
		Judge(&k, Context{})
		if got := flagged(&k, FlagHotValue) != nil; got != c.want {
			t.Errorf("top share %.2f: hot-value flagged %v, want %v", c.share, got, c.want)
		}
	}

	// Monotonic: flagged for a ranged key, not for a hashed first field.
	k = base()
	k.KeyCharacteristics.Monotonicity = results.Monotonicity{Type: Monotonic, RecordIDCorrelationCoefficient: 0.98, Direction: "increasing"}
	k.HottestInsertRange = &results.RangeShare{Range: "[x, MaxKey)", Share: 0.8, Ranges: 6}
	Judge(&k, Context{})
	if f := flagged(&k, FlagMonotonic); f == nil || !strings.Contains(f.Reason, "last chunk") || !strings.Contains(f.Reason, "80%") {
		t.Errorf("monotonic key: %+v", k.Flags)
	}
	Judge(&k, Context{FirstHashed: true})
	if flagged(&k, FlagMonotonic) != nil {
		t.Errorf("hashed first field flagged monotonic: %+v", k.Flags)
	}

	// Scatter-gather reads: 4% nothing, 5% a warning, 20% a problem naming the operation
	// and the fields it filters on.
	for _, c := range []struct {
		pct  float64
		want string
	}{{4, ""}, {5, SeverityWarning}, {20, SeverityProblem}} {
		k = base()
		k.ReadDistribution = results.ReadDistribution{
			SampleSize: results.ReadSampleSize{Total: 100}, PercentageOfSingleShardReads: 100 - c.pct, PercentageOfScatterGatherReads: c.pct,
			ByOperation: []results.OpTargeting{
				{Op: "orders.read", Statement: "findOne", Filter: []string{"_id"}, Requests: 80, SingleShard: 80},
				{Op: "orders.history_all", Statement: "find", Filter: []string{"user_id"}, Requests: 20, ScatterGather: 20},
			},
		}
		Judge(&k, Context{})
		f := flagged(&k, FlagScatterReads)
		switch {
		case c.want == "" && f != nil:
			t.Errorf("%v%% scatter flagged: %+v", c.pct, f)
		case c.want != "" && (f == nil || f.Severity != c.want || !strings.Contains(f.Reason, "by user_id") || !strings.Contains(f.Reason, "orders.history_all") || strings.Contains(f.Reason, "orders.read")):
			t.Errorf("%v%% scatter: %+v, want a %s naming orders.history_all by user_id only", c.pct, f, c.want)
		}
	}
}

// A compound key: a hot first value with a monotonic next field is a problem; the same
// hot value split by a hashed field is only information.
func TestJudgeCompoundKeys(t *testing.T) {
	k := results.KeyAnalysis{
		Database: "mongodb", Targets: 3,
		KeyCharacteristics: results.KeyCharacteristics{
			NumDocs: 10_000, NumDistinctValues: 9_000,
			Monotonicity:             results.Monotonicity{Type: NotMonotonic, RecordIDCorrelationCoefficient: 0.3},
			MonotonicityWithinPrefix: &results.Monotonicity{Type: Monotonic, RecordIDCorrelationCoefficient: 0.99},
		},
		PrefixCharacteristics: &results.PrefixCharacteristics{Field: "geo_zone", NumDistinctValues: 5,
			MostCommonValues: []results.ValueFrequency{{Value: "moscow", Share: 0.45}}},
	}
	Judge(&k, Context{Columns: []string{"geo_zone", "created_at"}, HashedColumns: []bool{false, false}})
	f := flagged(&k, FlagHotPrefix)
	if f == nil || f.Severity != SeverityProblem || !strings.Contains(f.Reason, "moscow holds 45%") || !strings.Contains(f.Reason, "created_at increases") {
		t.Errorf("geo_zone, created_at: %+v", k.Flags)
	}

	k.KeyCharacteristics.MonotonicityWithinPrefix = &results.Monotonicity{Type: NotMonotonic, RecordIDCorrelationCoefficient: 0.01}
	k.PrefixCharacteristics = &results.PrefixCharacteristics{Field: "category", NumDistinctValues: 6,
		MostCommonValues: []results.ValueFrequency{{Value: "electronics", Share: 0.7}}}
	Judge(&k, Context{Hashed: true, Columns: []string{"category", "_id"}, HashedColumns: []bool{false, true}})
	if k.Verdict != VerdictGood || flagged(&k, FlagHotPrefixSplit) == nil || flagged(&k, FlagHotPrefix) != nil {
		t.Errorf("category, _id hashed: %s %+v, want good with an info note", k.Verdict, k.Flags)
	}
}

// Variants rank by their tables' scores per entity, then by scatter-gather reads.
func TestRank(t *testing.T) {
	tbl := func(entity string, score int, scatter float64) results.KeyAnalysis {
		return results.KeyAnalysis{Table: "t-" + entity, Entity: entity, Score: score, Verdict: VerdictGood,
			ReadDistribution: results.ReadDistribution{PercentageOfScatterGatherReads: scatter}}
	}
	vs := []results.AnalysisVariant{
		{Variant: "a", Tables: []results.KeyAnalysis{tbl("orders", 10, 0), tbl("carts", 0, 0)}},
		{Variant: "b", Tables: []results.KeyAnalysis{tbl("orders", 0, 30)}},
		{Variant: "c", Tables: []results.KeyAnalysis{tbl("orders", 0, 5), tbl("orders", 3, 0)}},
		{Variant: "d", Tables: []results.KeyAnalysis{tbl("orders", 0, 5)}},
	}
	r := Rank(vs)
	if len(r) != 2 || r[0].Entity != "carts" || r[1].Entity != "orders" {
		t.Fatalf("entities %+v", r)
	}
	var order []string
	for _, v := range r[1].Variants {
		order = append(order, v.Variant)
	}
	if got := strings.Join(order, ","); got != "d,b,c,a" {
		t.Errorf("orders ranking %s, want d,b,c,a", got)
	}
	if r[1].Variants[2].Score != 3 || len(r[1].Variants[2].Tables) != 2 || r[1].Variants[0].Rank != 1 {
		t.Errorf("ranked entries %+v", r[1].Variants)
	}
}

// Fan-out: a read that reaches many partitions costs one request per partition. Below 2
// per read nothing; from 2 a warning; from as many as the table has nodes a problem,
// naming the operation and its partitions per request; none where scatter-gather reads
// already charged the same reads.
func TestJudgeFanOut(t *testing.T) {
	listing := func(perRequest int64) results.KeyAnalysis {
		// 60 point reads and 25 listings of perRequest partitions each, on 6 nodes.
		return results.KeyAnalysis{
			Table: "ks.products", Database: "cassandra", Targets: 6,
			KeyCharacteristics: results.KeyCharacteristics{NumDocs: 10_000, NumDistinctValues: 9_000, NumDistinctValuesExact: true},
			ReadDistribution: results.ReadDistribution{
				SampleSize: results.ReadSampleSize{Total: 85, Find: 85},
				FanOut:     float64(60+25*perRequest) / 85,
				ByOperation: []results.OpTargeting{
					{Op: "catalog.product_read", Requests: 60, SingleShard: 60, Fanned: 60},
					{Op: "catalog.category_listing", Requests: 25, MultiShard: 25, Fanned: 25 * perRequest},
				},
			},
		}
	}
	k := listing(1)
	Judge(&k, Context{})
	if flagged(&k, FlagFanOut) != nil || k.Verdict != VerdictGood {
		t.Errorf("one partition per read: %+v", k.Flags)
	}
	k = listing(4) // 160/85 = 1.88 per read: under 2
	Judge(&k, Context{})
	if flagged(&k, FlagFanOut) != nil {
		t.Errorf("1.88 per read flagged: %+v", k.Flags)
	}
	k = listing(8) // seed 002's 8 category shards: 260/85 = 3.06 per read
	Judge(&k, Context{})
	if f := flagged(&k, FlagFanOut); f == nil || f.Severity != SeverityWarning || k.Verdict != VerdictCaution ||
		!strings.Contains(f.Reason, "catalog.category_listing reads 8 partitions per request") {
		t.Errorf("8 shards: %s %+v", k.Verdict, k.Flags)
	}
	k = listing(128) // 128 category shards: 38.4 per read, more than the 6 nodes
	Judge(&k, Context{})
	if f := flagged(&k, FlagFanOut); f == nil || f.Severity != SeverityProblem || k.Verdict != VerdictAvoid || k.Score != problemPoints ||
		!strings.Contains(f.Reason, "128 partitions per request") {
		t.Errorf("128 shards: %s %d %+v", k.Verdict, k.Score, k.Flags)
	}
	// A MongoDB key whose reads broadcast is charged once, by the scatter-gather flag.
	k = listing(3)
	k.Database, k.Targets = "mongodb", 3
	k.ReadDistribution.PercentageOfScatterGatherReads = 25.0 / 85 * 100
	k.ReadDistribution.ByOperation[1].ScatterGather, k.ReadDistribution.ByOperation[1].MultiShard = 25, 0
	Judge(&k, Context{})
	if flagged(&k, FlagFanOut) != nil || flagged(&k, FlagScatterReads) == nil || k.Score != problemPoints {
		t.Errorf("broadcast charged twice or not at all: %d %+v", k.Score, k.Flags)
	}
}

// Among variants of equal score, less fan-out ranks first, ahead of the scatter share.
func TestRankFanOut(t *testing.T) {
	tbl := func(score int, fan, scatter float64) results.KeyAnalysis {
		return results.KeyAnalysis{Table: "t", Entity: "products", Score: score, Verdict: VerdictGood,
			ReadDistribution: results.ReadDistribution{SampleSize: results.ReadSampleSize{Total: 100}, FanOut: fan, PercentageOfScatterGatherReads: scatter}}
	}
	vs := []results.AnalysisVariant{
		{Variant: "shards-128", Tables: []results.KeyAnalysis{tbl(0, 38, 0)}},
		{Variant: "shards-8", Tables: []results.KeyAnalysis{tbl(0, 3, 0)}},
		{Variant: "broadcast", Tables: []results.KeyAnalysis{tbl(0, 1.5, 20)}},
	}
	var order []string
	for _, v := range Rank(vs)[0].Variants {
		order = append(order, v.Variant)
	}
	if got := strings.Join(order, ","); got != "broadcast,shards-8,shards-128" {
		t.Errorf("ranking %s, want broadcast,shards-8,shards-128", got)
	}
}
