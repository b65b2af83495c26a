package capacity

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/results"
)

// step is a failing step's results directory, built by hand.
type step struct {
	sum    results.Summary
	server *results.ServerReport
	hot    *results.Hotspots
	points []results.Point
}

func (s *step) write(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "step")
	d, err := results.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	s.sum.Complete = true
	if err := d.WriteSummary(&s.sum); err != nil {
		t.Fatal(err)
	}
	if s.server != nil {
		if err := d.WriteServer(s.server); err != nil {
			t.Fatal(err)
		}
	}
	if s.hot != nil {
		if err := d.WriteHotspots(s.hot); err != nil {
			t.Fatal(err)
		}
	}
	var lines []byte
	for _, p := range s.points {
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(append(lines, b...), '\n')
	}
	if err := d.WriteFile(results.TimeseriesFile, lines); err != nil {
		t.Fatal(err)
	}
	return dir
}

func op(name string, respP99, svcP99, lagP99 float64, late int64, errs map[string]int64) results.OpStats {
	return results.OpStats{Op: name, Scheduled: 100000, Completed: 100000, Late: late, Errors: errs,
		Response: results.Latency{Count: 100000, P99: respP99}, Service: results.Latency{Count: 100000, P99: svcP99}, Lag: results.Latency{Count: 100000, P99: lagP99}}
}

func sat(at float64) *float64 { return &at }

func stage(name string, peak float64, first *float64) results.ServerStage {
	s := results.ServerStage{Stage: name, Workers: 32, Requests: 1000, PeakUtilisation: peak, MeanUtilisation: peak / 2, PeakQueue: 3, TickS: 1}
	if first != nil {
		s.FirstSaturatedS, s.SaturatedS, s.PeakQueue = first, 12, 400
	}
	return s
}

var catalogInfo = VariantInfo{Name: "v", MaxInFlight: 4096, P99Bound: 50 * time.Millisecond, Ops: map[string][]StepInfo{
	"catalog.product_read":    {{Table: "shop.products", Kind: "read", Database: "cassandra"}},
	"catalog.stock_decrement": {{Table: "shop.products", Kind: KindLWT, Database: "cassandra"}},
	"sessions.read":           {{Table: "shop.sessions", Kind: "read", Database: "cassandra"}},
}}

func failedP99(opName, value string) []results.GateCheck {
	return []results.GateCheck{{Name: "[v] " + opName + " p99 < 50ms", Variant: "v", Subject: opName, Metric: "p99", Status: results.GateFail,
		Value: 900, Threshold: 50, ValueText: value, ThresholdText: "< 50ms"}}
}

func hotProducts() *results.Hotspots {
	return &results.Hotspots{Variants: []results.HotspotsVariant{{Variant: "v", Database: "cassandra",
		Tables: []results.TableHotspots{{Table: "shop.products", Key: "((category))", Ops: 1000, Reads: 1000, Partitions: 6, Top: []results.PartitionLoad{
			{Key: "category='electronics'", Replicas: []string{"dc1-n4", "dc1-n2", "dc1-n5"}, Ops: 700, Reads: 700, Share: 0.7},
			{Key: "category='books'", Replicas: []string{"dc1-n1", "dc1-n3", "dc1-n6"}, Ops: 30, Reads: 30, Share: 0.03},
		}}},
		Nodes: []results.NodeLoad{{Node: "dc1-n4", Ops: 800, Share: 0.27, Deviation: 0.6}, {Node: "dc1-n1", Ops: 300, Share: 0.1, Deviation: -0.4}}}}}
}

func diagnose(t *testing.T, s *step, failed []results.GateCheck) *results.CapacityCause {
	t.Helper()
	c, err := Diagnose(s.write(t), catalogInfo, failed)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s %s: %s", c.Kind, c.Subject, c.Summary)
	return c
}

func sumOf(ops ...results.OpStats) results.Summary {
	return results.Summary{Backend: results.BackendInfo{Name: "sim", Simulated: true}, Variants: []results.SummaryVariant{{Name: "v", Ops: ops}}}
}

// The node whose stage saturated first, and the hot partition it holds a replica of.
func TestDiagnoseSaturatedNodeAndItsHotPartition(t *testing.T) {
	s := &step{sum: sumOf(op("catalog.product_read", 900, 880, 300, 5000, nil)), hot: hotProducts(),
		server: &results.ServerReport{Variants: []results.ServerVariant{{Variant: "v", Nodes: []results.ServerNode{
			{Node: "dc1-n1", Stages: []results.ServerStage{stage("read", 0.3, nil), stage("write", 0.1, nil)}},
			{Node: "dc1-n2", Stages: []results.ServerStage{stage("read", 1, sat(397)), stage("write", 0.1, nil)}},
			{Node: "dc1-n4", Stages: []results.ServerStage{stage("read", 1, sat(391)), stage("write", 0.1, nil)}},
		}}}}}
	c := diagnose(t, s, failedP99("catalog.product_read", "900ms"))
	if c.Kind != results.CauseNode || c.Subject != "dc1-n4" || !strings.Contains(c.Summary, "read stage saturated first") ||
		!strings.Contains(c.Summary, "products category='electronics' takes 70.0% of the reads of products") || !strings.Contains(c.Summary, "then dc1-n2 read at 6m37s") {
		t.Errorf("cause %+v", c)
	}
	sources := map[string]bool{}
	for _, e := range c.Evidence {
		sources[e.Source] = true
	}
	// A partition past its size limit in the failed operation's table is evidence too.
	s.hot.Variants[0].Tables[0].Projections = []results.SizeProjection{{Key: "category='electronics'", ProjectedBytes: 3e8, LimitBytes: 1e8, Horizon: "1 year", Exceeds: true}}
	if c := diagnose(t, s, failedP99("catalog.product_read", "900ms")); c.Kind != results.CauseNode || !strings.Contains(c.Evidence[len(c.Evidence)-2].Figure, "projected size of products category='electronics'") {
		t.Errorf("oversized partition not in the evidence: %+v", c.Evidence)
	}
	if !sources[results.ServerFile] || !sources[results.HotspotsFile] || !sources[results.GateFile] {
		t.Errorf("evidence from %v, want server.json, hotspots.json and gate.json", sources)
	}
}

// A saturated node with an even load is the cluster at capacity, not a hot spot.
func TestDiagnoseEvenLoadIsTheCluster(t *testing.T) {
	hot := hotProducts()
	hot.Variants[0].Tables[0].Top = hot.Variants[0].Tables[0].Top[1:] // no hot partition
	hot.Variants[0].Nodes[0].Deviation = 0.05
	s := &step{sum: sumOf(op("sessions.read", 900, 880, 300, 5000, nil)), hot: hot,
		server: &results.ServerReport{Variants: []results.ServerVariant{{Variant: "v", Nodes: []results.ServerNode{
			{Node: "dc1-n4", Stages: []results.ServerStage{stage("read", 1, sat(30))}},
		}}}}}
	if c := diagnose(t, s, failedP99("sessions.read", "900ms")); c.Kind != results.CauseCluster || !strings.Contains(c.Summary, "not a hot spot") {
		t.Errorf("cause %+v", c)
	}
}

// Nodes saturated evenly by a design's full scans (a query it has no table for) are the
// scans, named with their rate, not a cluster at capacity.
func TestDiagnoseFullScansSaturateEveryNode(t *testing.T) {
	hot := hotProducts()
	hot.Variants[0].Tables[0].Top = hot.Variants[0].Tables[0].Top[1:]
	hot.Variants[0].Nodes[0].Deviation = 0.05
	list := op("sessions.list_by_user", 30000, 29000, 1000, 10, nil)
	list.Completed = 120
	sum := sumOf(op("sessions.read", 900, 880, 300, 5000, nil), list)
	sum.Variants[0].DurationS = 60
	s := &step{sum: sum, hot: hot,
		server: &results.ServerReport{Variants: []results.ServerVariant{{Variant: "v", Nodes: []results.ServerNode{
			{Node: "dc1-n4", Stages: []results.ServerStage{stage("read", 1, sat(30))}},
		}}}}}
	info := catalogInfo
	info.Ops = map[string][]StepInfo{
		"sessions.read":         {{Table: "shop.sessions", Kind: "read", Database: "cassandra"}},
		"sessions.list_by_user": {{Table: "shop.sessions", Kind: "scan", Database: "cassandra"}},
	}
	c, err := Diagnose(s.write(t), info, failedP99("sessions.read", "900ms"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Kind != results.CauseScan || c.Subject != "sessions.list_by_user" ||
		!strings.Contains(c.Summary, "sessions.list_by_user scans all of sessions (2 a second)") {
		t.Errorf("cause %+v", c)
	}
	// A MongoDB query without the shard key is each shard's own work, not a table scan;
	// without a Cassandra scan the same figures are the cluster at capacity.
	info.Ops["sessions.list_by_user"][0].Database = "mongodb"
	if c, err := Diagnose(s.write(t), info, failedP99("sessions.read", "900ms")); err != nil || c.Kind != results.CauseCluster {
		t.Errorf("a MongoDB scan: %+v %v", c, err)
	}
	info.Ops["sessions.list_by_user"][0] = StepInfo{Table: "shop.sessions", Kind: "read", Database: "cassandra"}
	if c, err := Diagnose(s.write(t), info, failedP99("sessions.read", "900ms")); err != nil || c.Kind != results.CauseCluster {
		t.Errorf("without a scan: %+v %v", c, err)
	}
}

// A MongoDB shard: the member saturated, the chunk of a single ranged shard-key value.
func TestDiagnoseShardWithAJumboChunk(t *testing.T) {
	hot := &results.Hotspots{Variants: []results.HotspotsVariant{{Variant: "v", Database: "mongodb",
		Tables: []results.TableHotspots{{Table: "shop.products", Key: "{category: 1}", Ops: 1000, Reads: 1000, Partitions: 6, Top: []results.PartitionLoad{
			{Key: "{category: electronics}", Shard: "shard0", Range: "[{category: \"electronics\"}, {category: \"home\"})", Ops: 700, Reads: 700, Share: 0.7}}}},
		Nodes: []results.NodeLoad{{Node: "shard0", Ops: 800, Deviation: 1.4}}}}}
	s := &step{sum: sumOf(op("catalog.product_read", 900, 880, 300, 5000, nil)), hot: hot,
		server: &results.ServerReport{Variants: []results.ServerVariant{{Variant: "v", Nodes: []results.ServerNode{
			{Node: "shard0-m0", Shard: "shard0", Stages: []results.ServerStage{stage("member", 1, sat(200))}},
			{Node: "shard1-m0", Shard: "shard1", Stages: []results.ServerStage{stage("member", 0.4, nil)}},
		}}}}}
	c := diagnose(t, s, failedP99("catalog.product_read", "900ms"))
	if c.Kind != results.CauseShard || c.Subject != "shard0" || !strings.Contains(c.Summary, "jumbo") || !strings.Contains(c.Summary, "{category: electronics}") {
		t.Errorf("cause %+v", c)
	}
	// A hashed suffix makes the chunk splittable: no jumbo.
	hot.Variants[0].Tables[0].Key = "{category: 1, _id: hashed}"
	if c := diagnose(t, s, failedP99("catalog.product_read", "900ms")); strings.Contains(c.Summary, "jumbo") {
		t.Errorf("hashed key called jumbo: %s", c.Summary)
	}
}

// Late operations with idle servers: the harness is the limit.
func TestDiagnoseClientLimit(t *testing.T) {
	s := &step{sum: sumOf(op("sessions.read", 900, 2, 890, 250000, nil)), hot: hotProducts(),
		server: &results.ServerReport{Variants: []results.ServerVariant{{Variant: "v", Nodes: []results.ServerNode{
			{Node: "dc1-n4", Stages: []results.ServerStage{stage("read", 0.35, nil)}},
		}}}}}
	c := diagnose(t, s, failedP99("sessions.read", "900ms"))
	if c.Kind != results.CauseClient || !strings.Contains(c.Summary, "the harness, not the design") || !strings.Contains(c.Summary, "max_in_flight 4096") {
		t.Errorf("cause %+v", c)
	}
	// The same lag with a saturated server is the server's doing.
	s.server.Variants[0].Nodes[0].Stages[0] = stage("read", 1, sat(10))
	if c := diagnose(t, s, failedP99("sessions.read", "900ms")); c.Kind == results.CauseClient {
		t.Errorf("blamed the client with a saturated server: %+v", c)
	}
	// A real database (no utilisation): operations dropped (on_full: drop) while the
	// servers answered fast is the client; dropped while they answered slowly is not.
	dropped := op("sessions.read", 3, 2, 0, 0, nil)
	dropped.Dropped = 5000
	r := &step{sum: sumOf(dropped), hot: hotProducts()}
	r.sum.Backend = results.BackendInfo{Name: "cassandra"}
	share := []results.GateCheck{{Name: "[v] all dropped_share == 0", Variant: "v", Subject: "all", Metric: "dropped_share", Status: results.GateFail, Value: 5, Threshold: 0, ValueText: "5%"}}
	if c := diagnose(t, r, share); c.Kind != results.CauseClient {
		t.Errorf("dropped with fast servers: %+v", c)
	}
	r.sum.Variants[0].Ops[0].Service.P99, r.sum.Variants[0].Ops[0].Response.P99 = 700, 720
	if c := diagnose(t, r, share); c.Kind == results.CauseClient {
		t.Errorf("dropped with servers at 700 ms blamed on the client: %+v", c)
	}
}

// Compare-and-set timeouts on an LWT operation.
func TestDiagnoseLWTContention(t *testing.T) {
	s := &step{sum: sumOf(op("catalog.stock_decrement", 2000, 1990, 10, 0, map[string]int64{"timeout": 800, "conflict": 120})), hot: hotProducts()}
	c := diagnose(t, s, failedP99("catalog.stock_decrement", "2s"))
	if c.Kind != results.CauseLWT || c.Subject != "products category='electronics'" || !strings.Contains(c.Summary, "800 timeouts and 120 conflicts") {
		t.Errorf("cause %+v", c)
	}
	// A slow LWT on a saturated node with no conflict is the node's doing.
	s.sum.Variants[0].Ops[0].Errors = map[string]int64{"timeout": 800}
	s.server = &results.ServerReport{Variants: []results.ServerVariant{{Variant: "v", Nodes: []results.ServerNode{
		{Node: "dc1-n4", Stages: []results.ServerStage{stage("read", 0.5, nil), stage("write", 1, sat(40))}}}}}}
	if c := diagnose(t, s, failedP99("catalog.stock_decrement", "2s")); c.Kind != results.CauseNode || !strings.Contains(c.Summary, "write stage saturated first") {
		t.Errorf("timeouts on a saturated node: %+v", c)
	}
}

// LWTs that lose Paxos rounds to each other and retry them are slow without failing: the
// server's contention figures name the cause when 1% or more lost a round and no server
// saturated (seed 002's category shards at SERIAL: 6,491 of 23,812, p99 506 ms).
func TestDiagnoseLWTRoundsLostWithoutFailures(t *testing.T) {
	lwts := func(contended int64, saturated bool) *results.ServerReport {
		write := stage("write", 0.6, nil)
		if saturated {
			write = stage("write", 1, sat(40))
		}
		return &results.ServerReport{Variants: []results.ServerVariant{{Variant: "v",
			Nodes:      []results.ServerNode{{Node: "dc1-n4", Stages: []results.ServerStage{stage("read", 0.5, nil), write}}},
			Contention: []results.ServerContention{{Kind: results.ContentionLWT, Requests: 23812, Contended: contended, Retries: 12419, TimedOut: 0}}}}}
	}
	s := &step{sum: sumOf(op("catalog.stock_decrement", 506, 500, 1, 0, nil)), hot: hotProducts(), server: lwts(6491, false)}
	c := diagnose(t, s, failedP99("catalog.stock_decrement", "506ms"))
	if c.Kind != results.CauseLWT || c.Subject != "products category='electronics'" || !strings.Contains(c.Summary, "6.49k of 23.8k lost a Paxos round") {
		t.Errorf("rounds lost without failures: %+v", c)
	}
	if !slices.ContainsFunc(c.Evidence, func(ev results.CapacityEvidence) bool {
		return ev.Source == results.ServerFile && ev.Value == "6491 of 23812"
	}) {
		t.Errorf("no server.json evidence of the lost rounds: %+v", c.Evidence)
	}
	// Under 1% of them: not what puts the p99 past its bound.
	s.server = lwts(200, false)
	if c := diagnose(t, s, failedP99("catalog.stock_decrement", "506ms")); c.Kind == results.CauseLWT {
		t.Errorf("0.8%% of LWTs lost a round, blamed: %+v", c)
	}
	// A saturated node is the node's doing.
	s.server = lwts(6491, true)
	if c := diagnose(t, s, failedP99("catalog.stock_decrement", "506ms")); c.Kind != results.CauseNode {
		t.Errorf("lost rounds on a saturated node: %+v", c)
	}
	// Lost rounds do not explain a read's failed p99.
	s.server = lwts(6491, false)
	s.sum = sumOf(op("catalog.product_read", 506, 500, 1, 0, nil))
	if c := diagnose(t, s, failedP99("catalog.product_read", "506ms")); c.Kind == results.CauseLWT {
		t.Errorf("a read's p99 blamed on LWTs: %+v", c)
	}
}

// A real database reports no utilisation: service time says the servers were the limit,
// the placement which node took more than its share.
func TestDiagnoseRealServers(t *testing.T) {
	s := &step{sum: sumOf(op("sessions.read", 900, 850, 20, 40, nil)), hot: hotProducts()}
	s.sum.Backend = results.BackendInfo{Name: "cassandra"}
	c := diagnose(t, s, failedP99("sessions.read", "900ms"))
	if c.Kind != results.CauseNode || c.Subject != "dc1-n4" || !strings.Contains(c.Summary, "service time p99 850.0ms") {
		t.Errorf("cause %+v", c)
	}
	s.hot.Variants[0].Nodes[0].Deviation = 0.02
	if c := diagnose(t, s, failedP99("sessions.read", "900ms")); c.Kind != results.CauseCluster {
		t.Errorf("even load: %+v", c)
	}
	// error_rate failed by drops (it counts them), the servers slow: the servers, and the
	// drops named; without drops nothing explains it, and the summary does not say there
	// were no errors.
	s.sum.Variants[0].Ops[0].Dropped = 15_000
	failed := []results.GateCheck{{Name: "[v] all error_rate < 1%", Variant: "v", Subject: "all", Metric: "error_rate", Status: results.GateFail, ValueText: "15.6%"}}
	if c := diagnose(t, s, failed); c.Kind != results.CauseCluster || !strings.Contains(c.Summary, "15.0k operations were dropped and 0 abandoned") {
		t.Errorf("drops: %+v", c)
	}
	s.sum.Variants[0].Ops[0].Dropped = 0
	if c := diagnose(t, s, failed); c.Kind != results.CauseSLO || !strings.Contains(c.Summary, "none of the causes looked for fits it") {
		t.Errorf("no drops: %+v", c)
	}
	// The wait moved into the client (lag 1.3 s, service 200 ms, as on the test cluster at
	// ×9.5): the servers when requests waiting on them held every in-flight slot; the
	// client (the harness did not start them) when slots were free.
	s.sum.Variants[0].Ops[0] = op("sessions.read", 1400, 200, 1330, 22000, nil)
	s.sum.Variants[0].Ops[0].Dropped = 6000
	s.points = []results.Point{{Variant: "v", InFlight: 100}, {Variant: "v", InFlight: 4096}}
	if c := diagnose(t, s, failed); c.Kind != results.CauseCluster || !strings.Contains(c.Summary, "held all 4096 of the client's in-flight slots") {
		t.Errorf("slots held: %+v", c)
	}
	s.points = s.points[:1]
	if c := diagnose(t, s, failed); c.Kind != results.CauseClient {
		t.Errorf("slots free: the harness did not start them on time; %+v", c)
	}
}

func TestDiagnosePartitionSizeAndErrors(t *testing.T) {
	hot := hotProducts()
	hot.Variants[0].Tables[0].Projections = []results.SizeProjection{{Key: "category='electronics'", ProjectedBytes: 1288490188, ProjectedRows: 3_000_000, Horizon: "1 year", LimitBytes: 100 << 20, Exceeds: true}}
	s := &step{sum: sumOf(op("catalog.product_read", 2, 2, 0, 0, nil)), hot: hot}
	failed := []results.GateCheck{{Name: "[v] table:products partition_size < 100MB", Variant: "v", Subject: "table:products", Metric: "partition_size", Status: results.GateFail, ValueText: "1.2GB"}}
	if c := diagnose(t, s, failed); c.Kind != results.CausePartitionSize || !strings.Contains(c.Summary, "1.2 GiB (3.00M rows)") || !strings.Contains(c.Summary, "past the 100 MiB limit") {
		t.Errorf("cause %+v", c)
	}
	s = &step{sum: sumOf(op("sessions.read", 2, 2, 0, 0, map[string]int64{"unavailable": 400}))}
	s.sum.Variants[0].Events = []results.Event{{AtS: 30, Action: "node_down", Target: "dc1-n2"}}
	failed = []results.GateCheck{{Name: "[v] all error_rate < 0.1%", Variant: "v", Subject: "all", Metric: "error_rate", Status: results.GateFail, ValueText: "0.4%"}}
	if c := diagnose(t, s, failed); c.Kind != results.CauseErrors || !strings.Contains(c.Summary, "node_down dc1-n2 at 30s") {
		t.Errorf("cause %+v", c)
	}
}
