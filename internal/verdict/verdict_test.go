package verdict

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardbench/shardbench/internal/results"
)

// variant builds a summary variant serving the given operations (and not the unserved
// ones), each scheduled n times.
func variant(name string, n int64, served []string, unserved ...string) results.SummaryVariant {
	v := results.SummaryVariant{Name: name}
	for _, op := range served {
		v.Ops = append(v.Ops, results.OpStats{Op: op, Scheduled: n, Completed: n})
	}
	for _, op := range unserved {
		v.Ops = append(v.Ops, results.OpStats{Op: op, Unserved: n, UnservedReason: "not in this design"})
	}
	return v
}

// hot builds a variant's hot spots: one table per entity with its hottest share over
// parts partitions, six nodes at the given imbalance, and a projection at size/limit.
func hot(name string, share float64, parts int64, imbalance, size float64, entities ...string) results.HotspotsVariant {
	hv := results.HotspotsVariant{Variant: name, Database: "cassandra", Balance: results.Imbalance{MaxOverMean: imbalance}}
	for i := range 6 {
		n := results.NodeLoad{Node: "dc1-n" + string(rune('1'+i)), Ops: 100}
		if i == 3 {
			n.Ops = int64(100 * imbalance)
		}
		hv.Nodes = append(hv.Nodes, n)
	}
	for _, e := range entities {
		t := results.TableHotspots{Table: "ks." + e, Entity: e, Ops: 100000, Partitions: parts,
			Top: []results.PartitionLoad{{Key: "k=1", Ops: int64(share * 100000), Share: share}}}
		t.Projections = []results.SizeProjection{{Key: "k=1", ProjectedBytes: int64(size * 100e6), LimitBytes: 100e6, Horizon: "1 year", Exceeds: size > 1}}
		hv.Tables = append(hv.Tables, t)
	}
	return hv
}

func capVariant(name string, sustains, breaks float64, outcome string) results.CapacityVariant {
	return results.CapacityVariant{Variant: name, Outcome: outcome, Sustains: sustains, Breaks: breaks, SustainedPeakRate: sustains * 100000,
		BreaksFirst: &results.CapacityCause{Kind: results.CauseNode, Summary: "node dc1-n4: its read stage saturated first"}}
}

var (
	sessOps = []string{"sessions.read", "sessions.touch"}
	allOps  = []string{"sessions.read", "sessions.touch", "orders.place", "catalog.product_read"}
)

func status(t *testing.T, c results.Criterion, want string) {
	t.Helper()
	if c.Status != want {
		t.Errorf("%s = %s (%s): status %s, want %s", c.Name, c.Text, c.Reason, c.Status, want)
	}
}

// Each rule at both sides of its thresholds.
func TestCriteriaThresholds(t *testing.T) {
	capy := &results.Capacity{PeakRate: 100000, Variants: []results.CapacityVariant{
		capVariant("short", 0.8, 0.84, results.CapacityFound),
		capVariant("tight", 1.2, 1.26, results.CapacityFound),
		capVariant("ample", 1.6, 1.68, results.CapacityFound),
		capVariant("none", 0, 0.01, results.CapacityBelowRange),
		capVariant("top", 32, 0, results.CapacityAboveRange),
	}}
	for name, want := range map[string]string{"short": results.VerdictFail, "tight": results.VerdictWarn, "ample": results.VerdictPass, "none": results.VerdictFail, "top": results.VerdictPass} {
		status(t, capacityCriterion(capy, name, ""), want)
	}
	if c := capacityCriterion(capy, "short", ""); !strings.Contains(c.Reason, "breaks first: node dc1-n4") || c.Text != "×0.8" {
		t.Errorf("capacity short: %q %q", c.Text, c.Reason)
	}
	status(t, capacityCriterion(nil, "short", ""), results.VerdictUnknown)
	status(t, capacityCriterion(capy, "absent", ""), results.VerdictUnknown)

	tbl := func(share float64, parts int64) []results.TableHotspots {
		return hot("x", share, parts, 1, 0.1, "sessions").Tables
	}
	status(t, hotShareCriterion(tbl(0.045, 100), 6), results.VerdictPass)    // 100 buckets, the busiest at 4.5%
	status(t, hotShareCriterion(tbl(0.06, 100), 6), results.VerdictWarn)     // over 5% and over twice fair
	status(t, hotShareCriterion(tbl(0.25, 100), 6), results.VerdictFail)     // a fifth of the table
	status(t, hotShareCriterion(tbl(0.30, 4), 6), results.VerdictPass)       // 4 partitions on 6 nodes: fair is 1/6, 30% < 2/6
	status(t, hotShareCriterion(tbl(1.0, 1), 6), results.VerdictFail)        // one partition a day: fair share is a node's
	status(t, hotShareCriterion(tbl(0.15, 10), 6), results.VerdictPass)      // ten shards: 15% is under twice fair (20%)
	status(t, hotShareCriterion(tbl(0.7, 6), 6), results.VerdictFail)        // electronics
	status(t, hotShareCriterion(tbl(0.7, 6)[:0], 6), results.VerdictUnknown) // nothing measured
	small := tbl(0.9, 100)
	small[0].Ops = HotMinOps - 1
	status(t, hotShareCriterion(small, 6), results.VerdictUnknown)

	for imb, want := range map[float64]string{1.09: results.VerdictPass, 1.3: results.VerdictWarn, 1.99: results.VerdictWarn, 2.0: results.VerdictFail} {
		hv := hot("x", 0.01, 100, imb, 0.1, "sessions")
		status(t, imbalanceCriterion(&hv), want)
	}
	status(t, imbalanceCriterion(nil), results.VerdictUnknown)

	for size, want := range map[float64]string{0.2: results.VerdictPass, 0.5: results.VerdictWarn, 0.99: results.VerdictWarn, 1.2: results.VerdictFail} {
		status(t, sizeCriterion(hot("x", 0.01, 100, 1, size, "orders").Tables), want)
	}
	// A ranged chunk of many key values projected past the chunk size splits as it grows:
	// no failure; a jumbo chunk (one key value) beside it still fails.
	chunks := hot("x", 0.01, 100, 1, 845, "orders").Tables
	chunks[0].Projections[0].Splittable = true
	status(t, sizeCriterion(chunks), results.VerdictPass)
	chunks[0].Projections = append(chunks[0].Projections, results.SizeProjection{Key: "k=2", ProjectedBytes: 2e8, LimitBytes: 1e8, Horizon: "1 year"})
	status(t, sizeCriterion(chunks), results.VerdictFail)

	a := &results.Analysis{Variants: []results.AnalysisVariant{{Variant: "v", Tables: []results.KeyAnalysis{
		{Table: "ks.sessions", Entity: "sessions", Key: "(bucket)", Verdict: "good"},
		{Table: "ks.orders", Entity: "orders", Key: "(day)", Verdict: "avoid", Flags: []results.Flag{{Reason: "every order of a day in one partition"}}},
	}}}}
	status(t, keysCriterion(a, "v", ""), results.VerdictFail)
	status(t, keysCriterion(a, "v", "sessions"), results.VerdictPass)
	if c := keysCriterion(a, "v", "orders"); !strings.Contains(c.Reason, "every order of a day") {
		t.Errorf("key analysis reason %q does not give the flag", c.Reason)
	}

	full := variant("v", 10, allOps)
	status(t, coverageCriterion(&full, ""), results.VerdictPass)
	part := variant("v", 10, sessOps, "orders.place", "catalog.product_read")
	c := coverageCriterion(&part, "")
	status(t, c, results.VerdictWarn)
	if c.Value != 0.5 || !strings.Contains(c.Reason, "orders.place") {
		t.Errorf("coverage of half the traffic: %v %q", c.Value, c.Reason)
	}
	status(t, coverageCriterion(&part, "sessions"), results.VerdictPass)
}

// A MongoDB key whose requests reach several chunks (a category listing's {category:
// electronics} under {category: 1, _id: hashed}) is no partition: the hottest share is
// the heaviest key in one chunk. Under {category: 1} the same key is one jumbo chunk.
func TestHotShareSkipsKeysOverSeveralChunks(t *testing.T) {
	tables := []results.TableHotspots{{Table: "shop.products", Entity: "products", Ops: 100000, Partitions: 150000, Top: []results.PartitionLoad{
		{Key: "{category: electronics}", Ops: 20600, Share: 0.206, Chunks: 46},
		{Key: "{category: electronics, _id: P0}", Ops: 3000, Share: 0.03, Shard: "shard1", Range: "[…)"},
	}}}
	c := hotShareCriterion(tables, 3)
	status(t, c, results.VerdictPass)
	if c.Value != 0.03 || !strings.Contains(c.Reason, "_id: P0") {
		t.Errorf("hottest share %v (%q), want the one-chunk key's 3%%", c.Value, c.Reason)
	}
	tables[0].Top[0].Chunks = 0 // one chunk: the partition it names is hot
	status(t, hotShareCriterion(tables, 3), results.VerdictFail)
	tables[0].Top = tables[0].Top[:1]
	tables[0].Top[0].Chunks = 46
	status(t, hotShareCriterion(tables, 3), results.VerdictUnknown)
}

// The imbalance names the node or shard its headline measured as busiest, among the nodes
// it was measured over, by its measure: a shard busiest by writes is not the shard with
// the most operations.
func TestImbalanceNamesTheHeadlinesBusiest(t *testing.T) {
	hv := results.HotspotsVariant{Variant: "v", Database: "mongodb", Nodes: []results.NodeLoad{
		{Node: "shard0", Database: "mongodb", Ops: 500, Writes: 300},
		{Node: "shard1", Database: "mongodb", Ops: 650, Writes: 150},
		{Node: "shard2", Database: "mongodb", Ops: 670, Writes: 111},
	}}
	hv.Balance, _ = results.NodeBalances(hv.Nodes)
	c := imbalanceCriterion(&hv)
	status(t, c, results.VerdictWarn)
	if want := "busiest shard shard0 at 1.60× the mean of 3 by writes (53.5% of them)"; !strings.HasPrefix(c.Reason, want) {
		t.Errorf("reason %q, want it to start %q", c.Reason, want)
	}
	// A Cassandra ring over two data centers: the headline is one DC's nodes.
	hv = results.HotspotsVariant{Variant: "w", Database: "cassandra"}
	for i, ops := range []int64{100, 100, 100, 300, 100, 100} {
		dc := "dc1"
		if i >= 3 {
			dc = "dc2"
		}
		hv.Nodes = append(hv.Nodes, results.NodeLoad{Node: fmt.Sprintf("%s-n%d", dc, i%3+1), Database: "cassandra", DC: dc, Ops: ops, Reads: ops})
	}
	hv.Balance, _ = results.NodeBalances(hv.Nodes)
	if want := "busiest node dc2-n1 at 1.80× the mean of 3 in dc2 (60.0% of the operations)"; !strings.HasPrefix(imbalanceCriterion(&hv).Reason, want) {
		t.Errorf("reason %q, want it to start %q", imbalanceCriterion(&hv).Reason, want)
	}
}

// The ranking: by status, then fewest failures, fewest cautions, capacity, coverage, heat;
// equal keys share a rank; the reason is the worst criterion's, in the order weighed.
func TestRanking(t *testing.T) {
	sum := &results.Summary{}
	sum.Scenario.Name = "bf"
	sum.Variants = []results.SummaryVariant{
		variant("hot-day", 10, allOps),                                          // a partition past its limit: fails
		variant("buckets", 10, allOps),                                          // holds everything, less capacity
		variant("roomy", 10, allOps),                                            // holds everything, more capacity
		variant("partial", 10, sessOps, "orders.place", "catalog.product_read"), // serves half
		variant("roomy-twin", 10, allOps),                                       // the same figures as roomy
	}
	hs := &results.Hotspots{Variants: []results.HotspotsVariant{
		hot("hot-day", 0.03, 100, 1.1, 3, "sessions", "orders", "products"),
		hot("buckets", 0.03, 100, 1.1, 0.2, "sessions", "orders", "products"),
		hot("roomy", 0.03, 100, 1.1, 0.2, "sessions", "orders", "products"),
		hot("partial", 0.03, 100, 1.1, 0.2, "sessions"),
		hot("roomy-twin", 0.03, 100, 1.1, 0.2, "sessions", "orders", "products"),
	}}
	capy := &results.Capacity{PeakRate: 100000, Variants: []results.CapacityVariant{
		capVariant("hot-day", 4, 4.2, results.CapacityFound),
		capVariant("buckets", 1.6, 1.7, results.CapacityFound),
		capVariant("roomy", 3, 3.1, results.CapacityFound),
		capVariant("partial", 3, 3.1, results.CapacityFound),
		capVariant("roomy-twin", 3, 3.1, results.CapacityFound),
	}}
	v := Judge(Inputs{Summary: sum, Hotspots: hs, Capacity: capy})
	var got []string
	for _, r := range v.Overall {
		got = append(got, r.Variant)
	}
	want := []string{"roomy", "roomy-twin", "buckets", "partial", "hot-day"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("overall ranking %v, want %v", got, want)
	}
	if v.Overall[0].Rank != 1 || v.Overall[1].Rank != 1 || v.Overall[2].Rank != 3 {
		t.Errorf("ranks %d %d %d: equal keys must share a rank, the next takes its place", v.Overall[0].Rank, v.Overall[1].Rank, v.Overall[2].Rank)
	}
	last := v.Overall[4]
	if last.Status != results.VerdictFail || !strings.HasPrefix(last.Reason, "partition_size: ") {
		t.Errorf("hot-day: %s %q, want a failure for its partition size", last.Status, last.Reason)
	}
	if v.Overall[3].Status != results.VerdictWarn || !strings.HasPrefix(v.Overall[3].Reason, "coverage: ") {
		t.Errorf("partial: %s %q, want a caution for its coverage", v.Overall[3].Status, v.Overall[3].Reason)
	}
	// Per entity: orders are not served by partial; the others rank on their tables.
	var orders *results.EntityVerdict
	for i := range v.Entities {
		if v.Entities[i].Entity == "orders" {
			orders = &v.Entities[i]
		}
	}
	if orders == nil || len(orders.NotServed) != 1 || orders.NotServed[0] != "partial" || len(orders.Ranks) != 4 {
		t.Fatalf("orders entity: %+v", orders)
	}
	if names := []string{v.Entities[0].Entity, v.Entities[1].Entity, v.Entities[2].Entity}; strings.Join(names, " ") != "sessions orders products" {
		t.Errorf("entities in order %v", names)
	}
	for _, r := range orders.Ranks {
		if r.Criterion(results.CriterionImbalance) != nil {
			t.Errorf("an entity's rank has the variant's node imbalance")
		}
	}
	if len(v.Missing) != 1 || !strings.Contains(v.Missing[0], "analysis.json") {
		t.Errorf("missing inputs %q, want only the key analysis", v.Missing)
	}
	var b bytes.Buffer
	Print(&b, v)
	for _, s := range []string{"1  roomy       HOLDS", "FAILS", "best per entity:", "orders    buckets (HOLDS)"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("terminal verdict lacks %q:\n%s", s, b.String())
		}
	}
}

// Per-entity capacity comes from the curve's per-workload verdicts.
func TestEntityCapacity(t *testing.T) {
	curve := []results.CapacityPoint{
		{Multiple: 1, Workloads: map[string]results.CapacityWorkloadPoint{"sessions": {Pass: true}, "catalog": {Pass: true}}},
		{Multiple: 2, Workloads: map[string]results.CapacityWorkloadPoint{"sessions": {Pass: true}, "catalog": {Pass: false}}},
		{Multiple: 1.5, Workloads: map[string]results.CapacityWorkloadPoint{"sessions": {Pass: true}, "catalog": {Pass: true}}},
		{Multiple: 4, Workloads: map[string]results.CapacityWorkloadPoint{"sessions": {Pass: true}, "catalog": {Pass: false}}},
	}
	if s, b, ok := entityCapacity(curve, "products"); !ok || s != 1.5 || b != 2 {
		t.Errorf("products (catalog workload): sustains %v breaks %v ok %v, want 1.5 and 2", s, b, ok)
	}
	if s, b, ok := entityCapacity(curve, "sessions"); !ok || s != 4 || b != 0 {
		t.Errorf("sessions: sustains %v breaks %v, want 4 and none", s, b)
	}
	if _, _, ok := entityCapacity(curve, "orders"); ok {
		t.Errorf("orders has no workload on the curve")
	}
	// A failure set aside (a cold cluster's first step, held when run again) is not
	// counted: sessions still hold to ×4.
	cold := append([]results.CapacityPoint{{Multiple: 0.5, SetAside: true, Workloads: map[string]results.CapacityWorkloadPoint{"sessions": {Pass: false}}}}, curve...)
	if s, b, ok := entityCapacity(cold, "sessions"); !ok || s != 4 || b != 0 {
		t.Errorf("sessions with a set-aside failure at ×0.5: sustains %v breaks %v, want 4 and none", s, b)
	}
	capy := &results.Capacity{PeakRate: 1000, Variants: []results.CapacityVariant{{Variant: "v", Outcome: results.CapacityFound, Sustains: 1.5, Breaks: 2, Curve: curve}}}
	status(t, capacityCriterion(capy, "v", "sessions"), results.VerdictPass)
	status(t, capacityCriterion(capy, "v", "products"), results.VerdictPass)
	if c := capacityCriterion(capy, "v", "sessions"); c.Text != "≥ ×4" {
		t.Errorf("sessions held at every multiple tried: %q", c.Text)
	}
}

// The catalog parses, and a claim is confirmed, refuted or untested by its checks on the
// variants that carry it and serve its entity.
func TestClaims(t *testing.T) {
	cs := Catalog()
	if len(cs) < 5 {
		t.Fatalf("the catalog has %d claims", len(cs))
	}
	sum := &results.Summary{Variants: []results.SummaryVariant{
		variant("seed000", 100, allOps),
		variant("seed002", 100, allOps),
		variant("seed002-products-category", 100, allOps), // carries no claim
		variant("seed001-mongo", 100, []string{"catalog.product_read"}, "sessions.read"),
	}}
	h0 := hot("seed000", 0.045, 100, 1.09, 0.2, "sessions")
	h0.Tables[0].Table = "mobile_world.user_sessions"
	h2 := hot("seed002", 0.7, 6, 1.2, 0.2, "products")
	h2.Tables[0].Table = "mobile_world.products"
	hs := &results.Hotspots{Variants: []results.HotspotsVariant{h0, h2, hot("seed002-products-category", 0.7, 6, 1.2, 0.2, "products"), hot("seed001-mongo", 0.1, 6, 2.4, 0.1, "products")}}
	capy := &results.Capacity{PeakRate: 100000, Variants: []results.CapacityVariant{capVariant("seed001-mongo", 0.6, 0.63, results.CapacityFound)}}
	got := map[string]results.ClaimVerdict{}
	for _, c := range judgeClaims(Inputs{Summary: sum, Hotspots: hs, Capacity: capy}, cs) {
		got[c.ID] = c
	}
	want := map[string]string{
		"seed000-session-buckets": results.ClaimConfirmed, // busiest bucket 4.5%, busiest node 1.09×
		"seed000-partition-limit": results.ClaimConfirmed,
		"seed002-category-shard":  results.ClaimRefuted, // 70% on one partition
		"seed001-products-key":    results.ClaimRefuted, // 2.4× the mean
		"seed001-ready-100k":      results.ClaimRefuted, // sustains 60K
	}
	for id, st := range want {
		if got[id].Status != st {
			t.Errorf("%s: %s (%s), want %s", id, got[id].Status, got[id].Measured, st)
		}
	}
	if m := got["seed000-session-buckets"].Measured; !strings.Contains(m, "hottest_share = 4.5%") || !strings.Contains(m, "imbalance = 1.09") {
		t.Errorf("measured figures: %q", m)
	}
	if _, ok := got["seed003-order-history"]; ok {
		t.Errorf("a claim no variant of the run carries is listed")
	}
	if v := got["seed002-category-shard"].Variants; len(v) != 1 || v[0] != "seed002" {
		t.Errorf("seed002 claim judged on %v, want only seed002", v)
	}
	// Without a capacity search the capacity claim cannot be judged.
	for _, c := range judgeClaims(Inputs{Summary: sum, Hotspots: hs}, cs) {
		if c.ID == "seed001-ready-100k" && c.Status != results.ClaimUntested {
			t.Errorf("capacity claim without a capacity search: %s", c.Status)
		}
	}
	if _, err := ParseClaims("bad.yaml", []byte("- id: x\n  claim: y\n  variants: [a]\n  checks: [\"table:t hottest_shar < 5%\"]\n")); err == nil {
		t.Errorf("a claim with a misspelt metric parsed")
	}
}

// FromDirs reads a run and refuses a capacity search of another scenario.
func TestFromDirs(t *testing.T) {
	dir := t.TempDir()
	d, err := results.Create(filepath.Join(dir, "run"))
	if err != nil {
		t.Fatal(err)
	}
	sum := &results.Summary{Variants: []results.SummaryVariant{variant("seed000", 100, sessOps)}}
	sum.Scenario.Name = "black-friday"
	if err := d.WriteSummary(sum); err != nil {
		t.Fatal(err)
	}
	d.Close()
	capDir := filepath.Join(dir, "cap")
	os.MkdirAll(capDir, 0o755)
	c := &results.Capacity{Variants: []results.CapacityVariant{capVariant("seed000", 2, 2.1, results.CapacityFound)}}
	c.Scenario.Name = "products-hot-category"
	if err := results.At(capDir).WriteCapacity(c); err != nil {
		t.Fatal(err)
	}
	if _, err := FromDirs(d.Path, "", capDir); err == nil || !strings.Contains(err.Error(), "not of black-friday") {
		t.Errorf("a capacity search of another scenario: %v", err)
	}
	c.Scenario.Name = "black-friday"
	results.At(capDir).WriteCapacity(c)
	v, err := FromDirs(d.Path, "", capDir)
	if err != nil {
		t.Fatal(err)
	}
	if cr := v.Overall[0].Criterion(results.CriterionCapacity); cr.Status != results.VerdictPass || cr.Value != 2 {
		t.Errorf("capacity from the search: %+v", cr)
	}
	if err := d.WriteVerdict(v); err != nil {
		t.Fatal(err)
	}
	back, err := results.ReadVerdict(d.Path)
	if err != nil || len(back.Overall) != 1 || back.Overall[0].Reason != v.Overall[0].Reason {
		t.Errorf("verdict.json round trip: %v %+v", err, back)
	}
}
