package reports

import (
	"fmt"
	"strings"

	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/units"
)

// The key analysis section renders analysis.json (`shardbench analyze`): per variant, one
// table per table or collection with the predicted key characteristics and read/write
// distribution — and analyzeShardKey's own numbers beside them when --server-check ran
// on a mongos — the verdict with its reasons, then the ranking of each entity.

type flagView struct {
	Severity, Class, Reason string
}

type keyTableView struct {
	Name, Key           string
	Verdict, BadgeClass string
	Sub                 string
	Table               *table
	Flags               []flagView
	ServerError         string
}

type keySideView struct {
	ID, Label string
	Color     int
	Summary   string
	Tables    []keyTableView
	Notes     []string
}

type keysView struct {
	Intro   string
	Checks  []banner
	Sides   []keySideView
	Ranking *table
	Notes   []string
}

// verdictBadge maps a key verdict to the badge colours of the gate verdicts.
func verdictBadge(v string) string {
	switch v {
	case "good":
		return "pass"
	case "caution":
		return "skip"
	case "avoid":
		return "fail"
	}
	return "none"
}

func (r *renderer) keys() *keysView {
	var kv keysView
	multi := len(r.runs) > 1
	for _, run := range r.runs {
		a := run.Analysis
		if a == nil {
			continue
		}
		prefix := ""
		if multi {
			prefix = run.Label + ": "
		}
		if c := a.ServerCheck; c != nil {
			class, strong := "info", "Server check skipped."
			switch c.Status {
			case results.ServerCheckDone:
				class, strong = "good", "Server check done."
			case results.ServerCheckFailed:
				class, strong = "bad", "Server check failed."
			}
			kv.Checks = append(kv.Checks, banner{class, prefix + strong, c.Message})
		}
		for i := range a.Variants {
			av := &a.Variants[i]
			if len(av.Tables) == 0 {
				continue
			}
			kv.Sides = append(kv.Sides, r.keySide(run, av))
		}
		for _, n := range a.Notes {
			kv.Notes = append(kv.Notes, prefix+n)
		}
	}
	if len(kv.Sides) == 0 && len(kv.Checks) == 0 {
		return nil
	}
	kv.Intro = "What MongoDB's analyzeShardKey reports once data and queries are in a cluster, " +
		"predicted from the scenario's operation stream before any data exists (shardbench " +
		"analyze): per table or collection, the key's documents, distinct values, most " +
		"common values, monotonicity (the correlation between key order and insertion order; " +
		"|r| ≥ 0.7 is monotonic), and how reads and writes target one shard (partition), " +
		"several, or all of them."
	kv.Ranking = r.keyRanking()
	return &kv
}

func (r *renderer) keySide(run *run, av *results.AnalysisVariant) keySideView {
	sv := keySideView{Label: av.Variant, Notes: av.Notes}
	if s := r.findSide(run, av.Variant); s != nil {
		sv.ID, sv.Label, sv.Color = "keys-"+s.ID, s.Label, s.Index%10
	} else {
		sv.ID = "keys-" + r.ids.name(av.Variant)
	}
	worst, n := "", map[string]int{}
	rank := map[string]int{"good": 0, "caution": 1, "avoid": 2}
	for i := range av.Tables {
		t := &av.Tables[i]
		n[t.Verdict]++
		if worst == "" || rank[t.Verdict] > rank[worst] {
			worst = t.Verdict
		}
		sv.Tables = append(sv.Tables, keyTable(t))
	}
	var parts []string
	for _, v := range []string{"avoid", "caution", "good"} {
		if n[v] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[v], v))
		}
	}
	sv.Summary = fmt.Sprintf("%s; %d table(s) or collection(s): %s.", strings.TrimSpace(av.Database+", "+av.Topology), len(av.Tables), strings.Join(parts, ", "))
	return sv
}

// keyTable is one table's figures: a row per metric, the prediction in one column and
// analyzeShardKey's number beside it when the server was asked.
func keyTable(t *results.KeyAnalysis) keyTableView {
	v := keyTableView{Name: t.Table, Key: t.Key, Verdict: t.Verdict, BadgeClass: verdictBadge(t.Verdict), Sub: keyTableSub(t)}
	if sk := t.Server; sk != nil && sk.Error != "" {
		v.ServerError = sk.Error
	}
	rows := newKeyRows(t.Server)
	rows.characteristics(t)
	rows.distribution(t)
	v.Table = rows.tb
	for _, f := range t.Flags {
		cls := map[string]string{"problem": "bad", "warning": "skip", "info": "muted"}[f.Severity]
		v.Flags = append(v.Flags, flagView{Severity: f.Severity, Class: cls, Reason: f.Reason})
	}
	return v
}

// keyTableSub is the line under a key table's name: the entity, where the table lives
// and what its key values come from.
func keyTableSub(t *results.KeyAnalysis) string {
	kc := t.KeyCharacteristics
	basis := "values from " + firstNonEmpty(kc.Basis, "inserts")
	if kc.NumDocs == 0 {
		basis = "no document or row written or requested with the whole key"
	}
	return fmt.Sprintf("Entity %s; %s over %d %s; %s.", t.Entity, t.Database, t.Targets, map[bool]string{true: "nodes", false: "shards"}[t.Database == "cassandra"], basis)
}

// keyRows builds a key table: the metric, the prediction and, when the server answered,
// analyzeShardKey's figure.
type keyRows struct {
	tb     *table
	server *results.ServerKeyAnalysis // nil: no server column
}

func newKeyRows(sk *results.ServerKeyAnalysis) *keyRows {
	r := &keyRows{}
	head := []string{"metric", "predicted"}
	if sk != nil && sk.Error == "" {
		r.server = sk
		head = append(head, "analyzeShardKey")
	}
	r.tb = &table{Head: heads(head...)}
	return r
}

// add appends one metric's row; server (nil: "—") gives analyzeShardKey's figure.
func (r *keyRows) add(metric, pred string, server func(*results.ServerKeyAnalysis) string) {
	c := []cell{{Text: metric}, {Text: pred, Class: "wrap"}}
	if r.server != nil {
		s := "—"
		if server != nil {
			s = server(r.server)
		}
		c = append(c, cell{Text: s, Class: "wrap"})
	}
	r.tb.Rows = append(r.tb.Rows, row{Cells: c})
}

// characteristics are the key's rows: documents, distinct and most common values,
// monotonicity, the first field of a compound key, the average size.
func (r *keyRows) characteristics(t *results.KeyAnalysis) {
	kc := &t.KeyCharacteristics
	docs := "documents"
	if t.Database == "cassandra" {
		docs = "rows"
	}
	r.add(docs, fmt.Sprint(kc.NumDocs), serverDocs)
	r.add("distinct values", predictedDistinct(kc), serverDistinct)
	r.add("most common values", predictedCommon(kc), serverCommon)
	r.add("monotonicity", predictedMonotonicity(t), serverMonotonicity)
	if p := t.PrefixCharacteristics; p != nil {
		top := ""
		if len(p.MostCommonValues) > 0 {
			top = "; most common " + Truncate(p.MostCommonValues[0].Value, 40) + " " + units.Pct(p.MostCommonValues[0].Share)
		}
		r.add("first field "+p.Field, fmt.Sprintf("%d distinct%s", p.NumDistinctValues, top), nil)
	}
	r.add("average size", units.Bytes(float64(kc.AvgDocSizeBytes)), func(s *results.ServerKeyAnalysis) string {
		if s.KeyCharacteristics == nil {
			return "—"
		}
		return units.Bytes(float64(s.KeyCharacteristics.AvgDocSizeBytes))
	})
}

func serverDocs(s *results.ServerKeyAnalysis) string {
	if s.KeyCharacteristics == nil {
		return "—"
	}
	out := fmt.Sprint(s.KeyCharacteristics.NumDocsTotal)
	if c := s.KeyCharacteristics; c.NumDocsSampled > 0 && c.NumDocsSampled != c.NumDocsTotal {
		out += fmt.Sprintf(" (%d sampled)", c.NumDocsSampled)
	}
	return out
}

func predictedDistinct(kc *results.KeyCharacteristics) string {
	distinct := fmt.Sprint(kc.NumDistinctValues)
	if !kc.NumDistinctValuesExact && kc.NumDocs > 0 {
		distinct = fmt.Sprintf("≈%d ±%s (HyperLogLog)", kc.NumDistinctValues, units.Pct(kc.NumDistinctValuesRelError))
	}
	if kc.IsUnique {
		distinct += ", unique"
	}
	return distinct
}

func serverDistinct(s *results.ServerKeyAnalysis) string {
	if s.KeyCharacteristics == nil {
		return "—"
	}
	out := fmt.Sprint(s.KeyCharacteristics.NumDistinctValues)
	if s.KeyCharacteristics.IsUnique {
		out += ", unique index"
	}
	return out
}

// predictedCommon is the three most common predicted values with their shares.
func predictedCommon(kc *results.KeyCharacteristics) string {
	var common []string
	for i, mc := range kc.MostCommonValues {
		if i == 3 {
			break
		}
		s := Truncate(mc.Value, 60) + " " + units.Pct(mc.Share)
		if mc.FrequencyError > 0 {
			s += fmt.Sprintf(" (+≤%d)", mc.FrequencyError)
		}
		common = append(common, s)
	}
	return firstNonEmpty(strings.Join(common, "; "), "—")
}

// serverCommon is analyzeShardKey's three most common values, with the share of the
// documents each one has.
func serverCommon(s *results.ServerKeyAnalysis) string {
	c := s.KeyCharacteristics
	if c == nil || len(c.MostCommonValues) == 0 {
		return "—"
	}
	var out []string
	for i, mc := range c.MostCommonValues {
		if i == 3 {
			break
		}
		share := "—"
		if c.NumDocsTotal > 0 {
			share = units.Pct(float64(mc.Frequency) / float64(c.NumDocsTotal))
		}
		out = append(out, Truncate(mc.Value, 60)+" "+share)
	}
	return strings.Join(out, "; ")
}

func predictedMonotonicity(t *results.KeyAnalysis) string {
	kc := &t.KeyCharacteristics
	mono := fmt.Sprintf("%s, r = %.2f", kc.Monotonicity.Type, kc.Monotonicity.RecordIDCorrelationCoefficient)
	if kc.Monotonicity.Direction != "" && kc.Monotonicity.Type == "monotonic" {
		mono += " (" + kc.Monotonicity.Direction + ")"
	}
	if m := kc.MonotonicityWithinPrefix; m != nil && t.PrefixCharacteristics != nil {
		mono += fmt.Sprintf("; within each %s: r = %.2f", t.PrefixCharacteristics.Field, m.RecordIDCorrelationCoefficient)
	}
	return mono
}

func serverMonotonicity(s *results.ServerKeyAnalysis) string {
	if s.KeyCharacteristics == nil {
		return "—"
	}
	m := s.KeyCharacteristics.Monotonicity
	return fmt.Sprintf("%s, r = %.2f", m.Type, m.RecordIDCorrelationCoefficient)
}

// distribution are the targeting rows: how reads and writes reach one shard
// (partition), several or all, the shard key updates, the hottest insert range.
func (r *keyRows) distribution(t *results.KeyAnalysis) {
	cass := t.Database == "cassandra"
	dist := targetingText(cass)
	rd, wd := t.ReadDistribution, t.WriteDistribution
	r.add("reads", dist(rd.SampleSize.Total, rd.PercentageOfSingleShardReads, rd.PercentageOfMultiShardReads, rd.PercentageOfScatterGatherReads), func(s *results.ServerKeyAnalysis) string {
		sr := s.ReadDistribution
		if sr == nil {
			return "—"
		}
		return dist(sr.SampleSize.Total, sr.PercentageOfSingleShardReads, sr.PercentageOfMultiShardReads, sr.PercentageOfScatterGatherReads) + " sampled"
	})
	r.add("writes", dist(wd.SampleSize.Total, wd.PercentageOfSingleShardWrites, wd.PercentageOfMultiShardWrites, wd.PercentageOfScatterGatherWrites), func(s *results.ServerKeyAnalysis) string {
		sw := s.WriteDistribution
		if sw == nil {
			return "—"
		}
		return dist(sw.SampleSize.Total, sw.PercentageOfSingleShardWrites, sw.PercentageOfMultiShardWrites, sw.PercentageOfScatterGatherWrites) + " sampled (no inserts)"
	})
	if !cass {
		upd := "—"
		if wd.SampleSize.Total > 0 {
			upd = pct100(wd.PercentageOfShardKeyUpdates) + " of writes"
		}
		r.add("shard key updates", upd, func(s *results.ServerKeyAnalysis) string {
			if s.WriteDistribution == nil || s.WriteDistribution.SampleSize.Total == 0 {
				return "—"
			}
			return pct100(s.WriteDistribution.PercentageOfShardKeyUpdates) + " of sampled writes"
		})
	}
	if h := t.HottestInsertRange; h != nil {
		r.add("hottest insert range", fmt.Sprintf("%s: %s of inserts, of %d ranges", Truncate(h.Range, 80), units.Pct(h.Share), h.Ranges), nil)
	}
}

// targetingText formats a read or write distribution (0–100 percentages) in the
// database's words: one shard, several, all of them (MongoDB); one partition, several,
// a scan or an index (Cassandra).
func targetingText(cass bool) func(total int64, one, several, all float64) string {
	oneName, severalName, allName := "one shard", "several", "all shards (scatter-gather)"
	if cass {
		oneName, severalName, allName = "one partition", "several", "scan or index"
	}
	return func(total int64, one, several, all float64) string {
		if total == 0 {
			return "—"
		}
		return fmt.Sprintf("%s %s · %s %s · %s %s, of %d", oneName, pct100(one), severalName, pct100(several), allName, pct100(all), total)
	}
}

// pct100 prints a 0–100 percentage.
func pct100(p float64) string { return units.Pct(p / 100) }

// keyRanking is the ranking of every entity's variants, best first, one group per entity
// (and run, when several are shown).
func (r *renderer) keyRanking() *table {
	t := &table{Caption: "Best first: fewest penalty points (problem 10, warning 3), then the smallest scatter-gather read share.", Head: heads("variant", "#", "verdict", "score", "tables")}
	for _, run := range r.runs {
		if run.Analysis == nil {
			continue
		}
		for _, e := range run.Analysis.Ranking {
			g := e.Entity
			if len(r.runs) > 1 {
				g = run.Label + ": " + g
			}
			t.Rows = append(t.Rows, row{Group: g})
			for _, rv := range e.Variants {
				vc := cell{Text: rv.Variant}
				if s := r.findSide(run, rv.Variant); s != nil {
					vc = sideCell(s)
				}
				cls := map[string]string{"good": "good", "caution": "skip", "avoid": "bad"}[rv.Verdict]
				t.Rows = append(t.Rows, row{Cells: []cell{vc, num(fmt.Sprint(rv.Rank)), {Text: rv.Verdict, Class: cls}, num(fmt.Sprint(rv.Score)), {Text: strings.Join(rv.Tables, ", "), Class: "wrap"}}})
			}
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// keyVerdict is a side's worst key verdict, for the overview.
func keyVerdict(av *results.AnalysisVariant) (string, string) {
	if av == nil || len(av.Tables) == 0 {
		return "—", "muted"
	}
	rank := map[string]int{"good": 0, "caution": 1, "avoid": 2}
	worst := av.Tables[0].Verdict
	bad := 0
	for _, t := range av.Tables {
		if rank[t.Verdict] > rank[worst] {
			worst = t.Verdict
		}
		if t.Verdict != "good" {
			bad++
		}
	}
	text := worst
	if bad > 0 && len(av.Tables) > 1 {
		text = fmt.Sprintf("%s (%d of %d tables)", worst, bad, len(av.Tables))
	}
	return text, map[string]string{"good": "good", "caution": "skip", "avoid": "bad"}[worst]
}
