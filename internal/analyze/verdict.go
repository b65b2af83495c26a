package analyze

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/shardbench/shardbench/internal/results"
)

// Flag codes.
const (
	FlagMonotonic       = "monotonic"
	FlagTimeBucket      = "one-partition-per-period"
	FlagHotPrefix       = "hot-prefix-monotonic"
	FlagMonotonicInZone = "monotonic-within-prefix"
	FlagLowCardinality  = "low-cardinality"
	FlagHotValue        = "hot-value"
	FlagScatterReads    = "scatter-gather-reads"
	FlagScatterWrites   = "scatter-gather-writes"
	FlagShardKeyUpdates = "shard-key-updates"
	FlagFanOut          = "fan-out"
	FlagHotPrefixSplit  = "hot-prefix-split" // info: a hot first value spread by the next field
	FlagTooFewDocs      = "too-few-documents"
	SeverityProblem     = "problem"
	SeverityWarning     = "warning"
	SeverityInfo        = "info"
	VerdictGood         = "good"
	VerdictCaution      = "caution"
	VerdictAvoid        = "avoid"
	problemPoints       = 10
	warningPoints       = 3
	// Fewer distinct values than cardinalityPerTarget per shard (node) cannot spread
	// evenly: a warning; fewer than problemPerTarget: a problem.
	cardinalityPerTarget = 10
	problemPerTarget     = 3
)

// Thresholds behind the flags; each is a share (0..1) unless said otherwise.
const (
	// HotValueShare: one key value with this share of the documents makes a chunk that
	// cannot be split (jumbo) or a partition that takes that share of the writes.
	HotValueShare = 0.25
	// ScatterProblem / ScatterWarning: shares of reads (or writes) that reach every shard
	// or do a full scan.
	ScatterProblem = 0.20
	ScatterWarning = 0.05
	// KeyUpdateWarning: share of writes that change the shard key (each moves a document
	// between chunks, a distributed transaction).
	KeyUpdateWarning = 0.01
	// FanOutWarning: partition (shard) requests per read, on average over the table's
	// reads, from which reads cost the cluster at least twice what single-partition reads
	// would. From as many requests per read as the table has nodes (shards), a read costs
	// on average what a broadcast does: a problem, as a scatter-gather share is.
	FanOutWarning = 2.0
)

// Context is what Judge needs to know about the key beyond its numbers.
type Context struct {
	FirstHashed bool // the first key field is hashed
	Hashed      bool // some key field is hashed
	Columns     []string
	// HashedColumns marks the hashed fields, parallel to Columns.
	HashedColumns []bool
}

// Judge adds flags with reasons in plain words to k, its score and its verdict.
func Judge(k *results.KeyAnalysis, c Context) {
	k.Flags = k.Flags[:0]
	add := func(code, sev, format string, args ...any) {
		k.Flags = append(k.Flags, results.Flag{Code: code, Severity: sev, Reason: fmt.Sprintf(format, args...)})
	}
	kc := &k.KeyCharacteristics
	cass := k.Database == "cassandra"
	unit, units := "shard", "shards"
	docs, doc := "documents", "document"
	if cass {
		unit, units, docs, doc = "node", "nodes", "rows", "row"
	}
	targets := max(k.Targets, 1)
	top := func(list []results.ValueFrequency) (string, float64) {
		if len(list) == 0 {
			return "", 0
		}
		return list[0].Value, list[0].Share
	}
	topValue, topShare := top(kc.MostCommonValues)

	if kc.NumDocs > 0 && kc.NumDocs < int64(cardinalityPerTarget*targets) && kc.NumDistinctValues == kc.NumDocs {
		add(FlagTooFewDocs, SeverityInfo, "only %d %s written with the whole key: too few to judge cardinality", kc.NumDocs, docs)
	}
	judgeable := kc.NumDocs >= int64(cardinalityPerTarget*targets) || kc.NumDistinctValues < kc.NumDocs

	// Cardinality and frequency.
	if judgeable && kc.NumDistinctValues < int64(cardinalityPerTarget*targets) {
		sev := SeverityWarning
		if kc.NumDistinctValues < int64(problemPerTarget*targets) {
			sev = SeverityProblem
		}
		what := "chunks cannot be split finer than one value, so data cannot spread evenly over the " + units
		if cass {
			what = "every value is one partition on one replica set, so the writes cannot spread over the " + units
		}
		if topShare > 0 {
			add(FlagLowCardinality, sev, "low cardinality: %d value(s) for %d %s, %s holds %s; %s", kc.NumDistinctValues, targets, units, topValue, pctString(topShare), what)
		} else {
			add(FlagLowCardinality, sev, "low cardinality: %d value(s) for %d %s; %s", kc.NumDistinctValues, targets, units, what)
		}
	}
	if topShare >= HotValueShare && kc.NumDistinctValues > 1 || topShare >= HotValueShare && judgeable && kc.NumDistinctValues == 1 {
		what := "its chunk cannot be split (jumbo) and its shard takes that share of the inserts"
		if cass {
			what = "one partition (one replica set) takes that share of the writes and keeps growing"
		}
		add(FlagHotValue, SeverityProblem, "hot value: %s holds %s of the %s; %s", topValue, pctString(topShare), docs, what)
	}

	// Monotonicity.
	m := kc.Monotonicity
	switch {
	case m.Type == Monotonic && !cass && !c.FirstHashed:
		extra := ""
		if h := k.HottestInsertRange; h != nil && h.Ranges > 1 {
			extra = fmt.Sprintf(" (the hottest chunk took %s of the inserts, out of %d chunks)", pctString(h.Share), h.Ranges)
		}
		add(FlagMonotonic, SeverityProblem, "monotonic (%s, coefficient %.2f): every new %s goes to the %s chunk, on one shard%s",
			m.Direction, m.RecordIDCorrelationCoefficient, doc, map[bool]string{true: "last", false: "first"}[m.Direction != "decreasing"], extra)
	case m.Type == Monotonic && cass && kc.NumDistinctValues > 0 && kc.NumDocs >= 10*kc.NumDistinctValues:
		add(FlagTimeBucket, SeverityProblem, "the partition key follows time (coefficient %.2f, %d %s per value): all writes of a period go to one partition, on one replica set",
			m.RecordIDCorrelationCoefficient, kc.NumDocs/kc.NumDistinctValues, docs)
	case cass && judgeable && kc.NumDistinctValues == 1 && isTimeLike(topValue):
		add(FlagTimeBucket, SeverityProblem, "one partition per period: every %s written went to %s", doc, topValue)
	}

	// Compound keys: a hot first value and a monotonic next field.
	if p := k.PrefixCharacteristics; p != nil && !c.FirstHashed && !cass {
		pv, ps := top(p.MostCommonValues)
		within := kc.MonotonicityWithinPrefix
		monoWithin := within != nil && within.Type == Monotonic
		next, hashedField := "", ""
		if len(c.Columns) > 1 {
			next = c.Columns[1]
		}
		for i, h := range c.HashedColumns {
			if h && hashedField == "" {
				hashedField = c.Columns[i]
			}
		}
		switch {
		case monoWithin && ps >= HotValueShare:
			add(FlagHotPrefix, SeverityProblem, "%s=%s holds %s of the %s and %s increases within each %s (coefficient %.2f): every new %s %s goes to the last chunk of its range, on one shard",
				p.Field, pv, pctString(ps), docs, next, p.Field, within.RecordIDCorrelationCoefficient, pv, doc)
		case monoWithin:
			add(FlagMonotonicInZone, SeverityWarning, "monotonic within %s (coefficient %.2f): each %s value's new %s go to the last chunk of its range",
				p.Field, within.RecordIDCorrelationCoefficient, p.Field, docs)
		case ps >= HotValueShare && c.Hashed:
			add(FlagHotPrefixSplit, SeverityInfo, "%s=%s holds %s of the %s, but the hashed %s splits its range over the shards", p.Field, pv, pctString(ps), docs, hashedField)
		}
	}

	// Reads and writes that reach every shard.
	rd := &k.ReadDistribution
	if s := rd.PercentageOfScatterGatherReads / 100; s >= ScatterWarning {
		sev := SeverityWarning
		if s >= ScatterProblem {
			sev = SeverityProblem
		}
		ops, filters := scatterOps(rd.ByOperation)
		if cass {
			add(FlagScatterReads, sev, "%s of reads scan every node (no partition key: ALLOW FILTERING or a secondary index): %s", pctString(s), ops)
		} else {
			by := ""
			if filters != "" {
				by = " by " + filters
			}
			add(FlagScatterReads, sev, "reads%s must broadcast to all %d shards (scatter-gather, %s of reads): %s", by, targets, pctString(s), ops)
		}
	}
	judgeFanOut(k, add, unit, units, targets)
	wd := &k.WriteDistribution
	if s := wd.PercentageOfScatterGatherWrites / 100; s >= ScatterWarning {
		sev := SeverityWarning
		if s >= ScatterProblem {
			sev = SeverityProblem
		}
		ops, _ := scatterOps(wd.ByOperation)
		add(FlagScatterWrites, sev, "%s of writes lack the %s key and go to every %s: %s", pctString(s), map[bool]string{true: "partition", false: "shard"}[cass], unit, ops)
	}
	if s := wd.PercentageOfShardKeyUpdates / 100; s >= KeyUpdateWarning {
		add(FlagShardKeyUpdates, SeverityWarning, "%s of writes change the shard key: each moves a document to another chunk (a distributed transaction)", pctString(s))
	}

	k.Score, k.Verdict = 0, VerdictGood
	for _, f := range k.Flags {
		switch f.Severity {
		case SeverityProblem:
			k.Score += problemPoints
			k.Verdict = VerdictAvoid
		case SeverityWarning:
			k.Score += warningPoints
			if k.Verdict == VerdictGood {
				k.Verdict = VerdictCaution
			}
		}
	}
}

// judgeFanOut charges reads that reach many partitions or shards: each of them is a
// request the cluster serves, so a listing over 128 category shards costs 128 reads
// however evenly it spreads them (no partition is hot, yet the cluster saturates). It
// adds nothing where the scatter-gather flag already charged the same reads.
func judgeFanOut(k *results.KeyAnalysis, add func(code, sev, format string, args ...any), unit, units string, targets int) {
	rd := &k.ReadDistribution
	f := rd.FanOut
	if f < FanOutWarning || rd.SampleSize.Total == 0 {
		return
	}
	sev := SeverityWarning
	if f >= float64(targets) {
		sev = SeverityProblem
	}
	for _, fl := range k.Flags {
		if fl.Code == FlagScatterReads && (fl.Severity == SeverityProblem || fl.Severity == sev) {
			return
		}
	}
	// The operations that fan out most, with their requests per read.
	list := slices.Clone(rd.ByOperation)
	slices.SortStableFunc(list, func(a, b results.OpTargeting) int { return cmp.Compare(b.Fanned, a.Fanned) })
	var ops []string
	for _, o := range list {
		if o.Requests == 0 || o.Fanned <= o.Requests {
			continue
		}
		what := "partitions"
		if k.Database == "mongodb" {
			what = units
		}
		ops = append(ops, fmt.Sprintf("%s reads %.3g %s per request", o.Op, float64(o.Fanned)/float64(o.Requests), what))
	}
	per := "partition"
	if k.Database == "mongodb" {
		per = unit
	}
	add(FlagFanOut, sev, "fan-out: a read makes %.3g %s requests on average (%d %s): %s; the cluster serves %.3g× the reads the operations ask for",
		f, per, targets, units, strings.Join(ops, ", "), f)
}

// isTimeLike reports whether a rendered key value looks like a date (a day bucket).
func isTimeLike(s string) bool {
	s = strings.Trim(s[strings.LastIndexByte(s, '=')+1:], "' ")
	return len(s) >= 7 && s[4] == '-' && strings.Count(s[:min(len(s), 10)], "-") >= 1 && s[0] >= '1' && s[0] <= '2'
}

// scatterOps names the operations with scatter-gather requests, the heaviest first, and
// the fields they filter on.
func scatterOps(ops []results.OpTargeting) (names, filters string) {
	list := slices.Clone(ops)
	list = slices.DeleteFunc(list, func(o results.OpTargeting) bool { return o.ScatterGather == 0 })
	slices.SortStableFunc(list, func(a, b results.OpTargeting) int { return cmp.Compare(b.ScatterGather, a.ScatterGather) })
	var n, f []string
	for _, o := range list {
		if name := fmt.Sprintf("%s (%s)", o.Op, o.Statement); !slices.Contains(n, name) {
			n = append(n, name)
		}
		for _, x := range o.Filter {
			if !slices.Contains(f, x) {
				f = append(f, x)
			}
		}
	}
	return strings.Join(n, ", "), strings.Join(f, ", ")
}

func pctString(share float64) string {
	p := share * 100
	switch {
	case p >= 10 || p == 0:
		return fmt.Sprintf("%.0f%%", math.Round(p))
	case p >= 1:
		return fmt.Sprintf("%.1f%%", p)
	}
	return fmt.Sprintf("%.2f%%", p)
}

// Rank orders the variants for every entity, best first: by the sum of the scores of
// the variant's tables of that entity, then by their fan-out (partition or shard
// requests per read, which counts scatter-gather reads as one request per shard), then by
// the share of scatter-gather reads.
func Rank(vs []results.AnalysisVariant) []results.EntityRanking {
	var entities []string
	for _, v := range vs {
		for _, t := range v.Tables {
			if !slices.Contains(entities, t.Entity) {
				entities = append(entities, t.Entity)
			}
		}
	}
	slices.Sort(entities)
	var out []results.EntityRanking
	for _, e := range entities {
		type cand struct {
			r             results.RankedVariant
			scatter       float64
			reads, fanned float64
		}
		var cs []cand
		for _, v := range vs {
			c := cand{r: results.RankedVariant{Variant: v.Variant, Verdict: VerdictGood}}
			for _, t := range v.Tables {
				if t.Entity != e {
					continue
				}
				c.r.Tables = append(c.r.Tables, t.Table)
				c.r.Score += t.Score
				c.scatter += t.ReadDistribution.PercentageOfScatterGatherReads
				n := float64(t.ReadDistribution.SampleSize.Total)
				c.reads += n
				c.fanned += n * t.ReadDistribution.FanOut
				c.r.Verdict = worse(c.r.Verdict, t.Verdict)
			}
			if c.reads > 0 {
				c.r.FanOut = c.fanned / c.reads
			}
			if len(c.r.Tables) > 0 {
				cs = append(cs, c)
			}
		}
		slices.SortStableFunc(cs, func(a, b cand) int {
			if c := cmp.Compare(a.r.Score, b.r.Score); c != 0 {
				return c
			}
			if c := cmp.Compare(a.r.FanOut, b.r.FanOut); c != 0 {
				return c
			}
			return cmp.Compare(a.scatter, b.scatter)
		})
		er := results.EntityRanking{Entity: e}
		for i, c := range cs {
			c.r.Rank = i + 1
			er.Variants = append(er.Variants, c.r)
		}
		out = append(out, er)
	}
	return out
}

func worse(a, b string) string {
	rank := map[string]int{VerdictGood: 0, VerdictCaution: 1, VerdictAvoid: 2}
	if rank[b] > rank[a] {
		return b
	}
	return a
}
