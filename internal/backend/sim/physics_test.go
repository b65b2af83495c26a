package sim

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/results"
)

// The default servers are sized from published measurements of 8-vCPU, SSD nodes: the
// capacity the model assumes (cores / mean cost) must be those figures.
//   - Instaclustr, Cassandra on 3 × c3.2xlarge (8 vCPU, SSD), RF 3, QUORUM,
//     cassandra-stress: 45,252 inserts/s, 73,172 reads/s; on i2.2xlarge (8 vCPU, SSD)
//     44,687 and 66,226. Every insert is a mutation on all three nodes: 44.7–45.3K
//     mutations per node and second; every QUORUM read asks two replicas: 44.2–48.8K
//     replica reads per node and second.
//   - Huawei Cloud DDS 4.0 (MongoDB), replica set of 8 vCPU / 16 GB, YCSB 1 KB
//     documents, small data set: 77,401 reads/s (workload s6), 34,262 inserts/s (s1),
//     32,177 ops/s at half reads, half updates (s5).
func TestDefaultCapacityMatchesPublishedFigures(t *testing.T) {
	var o Options
	o.applyDefaults()
	caps := o.Capacities()
	rate := func(c Capacity, prefix string) float64 {
		for _, r := range c.Rows {
			if strings.HasPrefix(r.Request, prefix) {
				return r.PerSec
			}
		}
		t.Fatalf("%s: no %q row", c.Server, prefix)
		return 0
	}
	within := func(what string, got, lo, hi float64) {
		if got < lo*0.97 || got > hi*1.03 {
			t.Errorf("%s: the model sustains %.0f/s per server, published %.0f–%.0f", what, got, lo, hi)
		}
	}
	cass, mongo := caps[0], caps[1]
	within("Cassandra mutations", rate(cass, "single-row write"), 44_687, 45_252)
	within("Cassandra replica reads", rate(cass, "point read"), 66_226*2/3.0, 73_172*2/3.0)
	within("MongoDB finds", rate(mongo, "find"), 77_401, 77_401)
	within("MongoDB inserts", rate(mongo, "insert"), 34_262, 34_262)
	// Half finds, half updates: the cores split between them.
	find, update := o.MongoDB.Find.Seconds(), o.MongoDB.Update.Seconds()
	within("MongoDB half reads, half updates", float64(o.MongoDB.Cores)/(0.5*find+0.5*update), 32_177, 32_177)
	if got := cass.Summary(); !strings.Contains(got, "8 cores") || !strings.Contains(got, "44.4K/s") {
		t.Errorf("capacity summary %q", got)
	}
}

const capacityScenario = `
name: capacity
seed: 5
load:
  arrival: poisson
  max_in_flight: 8192
  phases:
    - {name: steady, type: constant, rate: RATE, duration: 8s}
population:
  users: 1000000
  sessions: 2000000
mix:
  MIX: 1
designs:
  - design: DESIGNS/seed003.yaml
    name: quorum
    set: {sessions.consistency: QUORUM}
backends:
  sim:
    cluster: {dcs: [{name: dc1, nodes: 3, racks: 3}]}
`

// meanUtilisation is the nodes' mean utilisation over the run's whole seconds but the
// first and last.
func meanUtilisation(s *Simulator) float64 {
	var sum float64
	n := 0
	for _, ns := range s.nodes {
		for i, p := range ns.util {
			if i > 0 && i < len(ns.util)-2 {
				sum += p[1]
				n++
			}
		}
	}
	return sum / float64(n)
}

// The three-node cluster Instaclustr measured: RF 3, QUORUM. Inserts cost each node a
// mutation, so 30,000 inserts/s keep the nodes 30,000 / 44,444 = 68% busy and 60,000/s,
// past the 44–45K/s the nodes sustain, saturate them; QUORUM reads cost two replica reads,
// so 40,000 reads/s keep the nodes 40,000 × 2 / 3 / 44,444 = 60% busy.
func TestThreeNodesSustainThePublishedRates(t *testing.T) {
	for _, c := range []struct {
		mix        string
		rate       int
		util, tol  float64
		saturation bool
	}{
		{"sessions.create", 30_000, 30_000.0 / 44_444, 0.03, false},
		{"sessions.create", 60_000, 1, 0.02, true},
		{"sessions.read", 40_000, 40_000.0 * 2 / 3 / 44_444, 0.03, false},
	} {
		t.Run(fmt.Sprintf("%s-%d", c.mix, c.rate), func(t *testing.T) {
			body := strings.NewReplacer("RATE", fmt.Sprint(c.rate), "MIX", c.mix).Replace(capacityScenario)
			s, samples := simulate(t, writeScenario(t, body), "quorum", 1<<30)
			u := meanUtilisation(s)
			if math.Abs(u-c.util) > c.tol {
				t.Errorf("mean utilisation %.3f, want %.3f", u, c.util)
			}
			var lat []int64
			for _, smp := range samples {
				lat = append(lat, smp.End-smp.Intended)
			}
			slices.Sort(lat)
			p99 := time.Duration(lat[len(lat)*99/100])
			t.Logf("utilisation %.3f, response p99 %s", u, p99)
			if c.saturation != (p99 > 100*time.Millisecond) {
				t.Errorf("response p99 %s: saturated %v", p99, c.saturation)
			}
		})
	}
}

const lwtScenario = `
name: lwt
seed: 7
load:
  arrival: poisson
  max_in_flight: 8192
  phases:
    - {name: steady, type: constant, rate: 2000, duration: 10s}
population:
  users: 100000
  products: 100000
  categories: {electronics: 100}
mix:
  catalog.stock_decrement: 1
designs:
  - design: DESIGNS/seed002.yaml
    sweep:
      products.partition_key: [[category], [category, category_shard]]
      products.category_shards: [128]
      stock.serial_consistency: [LOCAL_SERIAL]
backends:
  sim:
    cluster:
      clients: {DC1: 100}
`

// Cassandra's lightweight transactions on one partition serialise: Paxos v1 (Cassandra
// 5.0's default, StorageProxy.cas) makes four round trips to the replicas ("prepare/
// promise, read/results, propose/accept, commit/acknowledge": DataStax, "How are
// lightweight transactions implemented"), and "lightweight transactions will block other
// lightweight transactions from occurring": a round that meets another on its partition
// sleeps a random time in [0, 100 ms) and retries until cas_contention_timeout (1 s),
// then fails with a write timeout of type CAS. 2,000 stock decrements/s on one partition
// (a round takes about 1.5 ms: at most ~650 rounds/s) contend and time out after about a
// second; the same rate over 128 partitions hardly contends (only when two happen to
// overlap). The project's 3-node cluster shows the same rule
// (TestLWTContentionOnOnePartition in internal/backend/cassandra: in five runs one
// partition applied 13–86 LWTs/s against 63–293/s over 32 partitions, and 5.6–40% of its
// LWTs gave up against 0–2.2%).
func TestLWTContentionSerialisesOnePartition(t *testing.T) {
	sc := writeScenario(t, lwtScenario)
	type result struct {
		lwts, contended, timeouts int64
		p50ok, p50timeout         time.Duration
	}
	run := func(variant string) result {
		s, samples := simulate(t, sc, variant, 1<<30)
		var ok, to []int64
		for _, smp := range samples {
			switch metrics.Class(smp.Class) {
			case metrics.OK:
				ok = append(ok, smp.End-smp.Start)
			case metrics.Timeout:
				to = append(to, smp.End-smp.Start)
			}
		}
		// As server.json reports them (capacity's diagnosis reads them there).
		var lwt results.ServerContention
		for _, c := range s.serverView().Contention {
			if c.Kind == results.ContentionLWT {
				lwt = c
			}
		}
		r := result{lwts: lwt.Requests, contended: lwt.Contended, timeouts: lwt.TimedOut}
		if len(ok) > 0 {
			slices.Sort(ok)
			r.p50ok = time.Duration(ok[len(ok)/2])
		}
		if len(to) > 0 {
			slices.Sort(to)
			r.p50timeout = time.Duration(to[len(to)/2])
		}
		t.Logf("%s: %+v", variant, r)
		return r
	}
	var hot, spread result
	for _, v := range []string{"seed002[products.partition_key=[category],products.category_shards=128,stock.serial_consistency=LOCAL_SERIAL]",
		"seed002[products.partition_key=[category, category_shard],products.category_shards=128,stock.serial_consistency=LOCAL_SERIAL]"} {
		if strings.Contains(v, "category_shard]") {
			spread = run(v)
		} else {
			hot = run(v)
		}
	}
	if hot.lwts < 15_000 || hot.timeouts < hot.lwts/4 || hot.contended < hot.lwts/2 {
		t.Errorf("2,000 LWTs/s on one partition: %d contended and %d timed out of %d", hot.contended, hot.timeouts, hot.lwts)
	}
	if hot.p50timeout < time.Second || hot.p50timeout > 1200*time.Millisecond {
		t.Errorf("a contended LWT times out after cas_contention_timeout (1 s) and its last backoff: p50 %s", hot.p50timeout)
	}
	// 16 LWTs/s per partition whose rounds take 1.6 ms overlap about 16 × 2 × 1.6 ms = 5%
	// of the time.
	if spread.timeouts != 0 || spread.contended > spread.lwts/10 {
		t.Errorf("2,000 LWTs/s over 128 partitions: %d contended and %d timed out of %d", spread.contended, spread.timeouts, spread.lwts)
	}
	// Uncontended, an LWT is four round trips of 0.2 ms and four quorum services of about
	// 0.2 ms each.
	if spread.p50ok < 1400*time.Microsecond || spread.p50ok > 3*time.Millisecond {
		t.Errorf("an uncontended LWT took %s, four round trips and services take about 1.6 ms", spread.p50ok)
	}
}

const serialScenario = `
name: lwt-serial
seed: 11
load:
  arrival: poisson
  max_in_flight: 8192
  phases:
    - {name: steady, type: constant, rate: 100, duration: 10s}
population:
  users: 100000
  products: 100000
  categories: {electronics: 100}
mix:
  catalog.stock_decrement: 1
designs:
  - design: DESIGNS/seed002.yaml
    sweep:
      products.partition_key: [[category]]
      stock.serial_consistency: [SERIAL, LOCAL_SERIAL]
backends:
  sim:
    inter_dc_network: 10ms
    cluster:
      clients: {DC1: 100}
`

// SERIAL's Paxos quorum is a quorum of every data center's replicas, LOCAL_SERIAL's of
// the local data center's only (DataStax, "Serial consistency levels": SERIAL "achieves
// linearizable consistency ... across all datacenters", LOCAL_SERIAL "confined to the
// datacenter"). Under NetworkTopologyStrategy DC1: 3, DC2: 3 a SERIAL round needs 4 of 6
// replicas, so prepare, read and propose each wait for DC2 (the commit waits for the
// statement's LOCAL_QUORUM): an LWT takes at least three inter-DC round trips, 30 ms at
// 10 ms, and one partition serialises at most about 30 a second. 100 stock decrements/s
// on one partition then contend and time out at SERIAL, and hardly wait at LOCAL_SERIAL,
// whose rounds take about 1.6 ms.
func TestSerialPaxosCrossesDataCenters(t *testing.T) {
	sc := writeScenario(t, serialScenario)
	for _, c := range []struct {
		level  string
		remote bool
	}{{"SERIAL", true}, {"LOCAL_SERIAL", false}} {
		s, samples := simulate(t, sc, "seed002[products.partition_key=[category],stock.serial_consistency="+c.level+"]", 1<<30)
		var ok []int64
		for _, smp := range samples {
			if metrics.Class(smp.Class) == metrics.OK {
				ok = append(ok, smp.End-smp.Start)
			}
		}
		st := s.paxos
		if len(ok) == 0 {
			t.Fatalf("%s: no LWT applied (%+v)", c.level, st)
		}
		slices.Sort(ok)
		fastest, p50 := time.Duration(ok[0]), time.Duration(ok[len(ok)/2])
		t.Logf("%s: %d LWTs, %d contended, %d timed out; applied: fastest %s, p50 %s", c.level, st.lwts, st.contended, st.timeouts, fastest, p50)
		if st.lwts < 800 {
			t.Fatalf("%s: %d LWTs", c.level, st.lwts)
		}
		if c.remote {
			if fastest < 30*time.Millisecond || fastest > 40*time.Millisecond {
				t.Errorf("SERIAL: the fastest LWT took %s; three rounds across 10 ms take 30 ms", fastest)
			}
			if st.timeouts < st.lwts/4 || st.contended < st.lwts/2 {
				t.Errorf("SERIAL, 100 LWTs/s on one partition: %d contended and %d timed out of %d", st.contended, st.timeouts, st.lwts)
			}
			continue
		}
		if p50 > 3*time.Millisecond {
			t.Errorf("LOCAL_SERIAL: p50 %s, four local rounds take about 1.6 ms", p50)
		}
		if st.timeouts != 0 || st.contended > st.lwts/2 {
			t.Errorf("LOCAL_SERIAL, 100 LWTs/s on one partition: %d contended and %d timed out of %d", st.contended, st.timeouts, st.lwts)
		}
	}
}

const dcScenario = `
name: data-centers
seed: 9
load:
  arrival: poisson
  max_in_flight: 4096
  phases:
    - {name: steady, type: constant, rate: 5000, duration: 6s}
population:
  users: 1000000
mix:
  orders.place: 1
  orders.read: 1
designs:
  - design: DESIGNS/seed002.yaml
    sweep:
      orders.consistency: [LOCAL_QUORUM, QUORUM, EACH_QUORUM]
backends:
  sim:
    inter_dc_network: 10ms
    cluster:
      clients: {DC1: 100}
`

// Consistency levels across data centers (DataStax, "How is the consistency level
// configured?"): LOCAL_QUORUM waits for a quorum of replicas in the coordinator's data
// center and "avoids latency of inter-data center communication"; QUORUM waits for a
// quorum of all replicas (4 of 6 with NetworkTopologyStrategy DC1: 3, DC2: 3, so at least
// one in the other data center); EACH_QUORUM for a quorum in each data center. Writes go
// to every replica in every data center whatever the level. With clients in DC1 only and
// data centers 10 ms apart: LOCAL_QUORUM reads and writes take well under a round trip
// between data centers and DC2 serves no reads (it still takes every write); QUORUM and
// EACH_QUORUM take at least one.
func TestConsistencyLevelsAcrossDataCenters(t *testing.T) {
	sc := writeScenario(t, dcScenario)
	for _, c := range []struct {
		level      string
		crossesDCs bool
	}{{"LOCAL_QUORUM", false}, {"QUORUM", true}, {"EACH_QUORUM", true}} {
		variant := "seed002[orders.consistency=" + c.level + "]"
		s, samples := simulate(t, sc, variant, 1<<30)
		p50 := map[string]time.Duration{}
		for _, op := range []string{"orders.place", "orders.read"} {
			var lat []int64
			for _, smp := range samples {
				if s.cfg.Model.Ops[smp.Op].Name == op && metrics.Class(smp.Class) == metrics.OK {
					lat = append(lat, smp.End-smp.Start)
				}
			}
			if len(lat) < 1000 {
				t.Fatalf("%s %s: %d operations served", c.level, op, len(lat))
			}
			slices.Sort(lat)
			p50[op] = time.Duration(lat[len(lat)/2])
			if crossed := p50[op] >= 10*time.Millisecond; crossed != c.crossesDCs || p50[op] > 13*time.Millisecond {
				t.Errorf("%s %s: p50 %s; crosses data centers: %v", c.level, op, p50[op], c.crossesDCs)
			}
		}
		var dc2Reads, dc2Writes, dc1Reads int64
		for name, ns := range s.nodes {
			if strings.HasPrefix(name, "DC2") {
				dc2Reads += ns.jobs[StageRead]
				dc2Writes += ns.jobs[StageWrite]
			} else {
				dc1Reads += ns.jobs[StageRead]
			}
		}
		hv := result(s)
		var obsDC2Reads int64
		for _, n := range hv.Nodes {
			if n.DC == "DC2" {
				obsDC2Reads += n.Reads
			}
		}
		t.Logf("%s: p50 %v; DC1 reads %d, DC2 reads %d (hotspots.json %d), DC2 writes %d", c.level, p50, dc1Reads, dc2Reads, obsDC2Reads, dc2Writes)
		if dc2Writes < 25_000 {
			t.Errorf("%s: DC2 took %d replica writes: every write replicates to both data centers", c.level, dc2Writes)
		}
		if !c.crossesDCs && (dc2Reads != 0 || obsDC2Reads != 0) {
			t.Errorf("%s with clients in DC1: DC2 served %d reads (hot-partition analysis: %d)", c.level, dc2Reads, obsDC2Reads)
		}
		if c.crossesDCs && dc2Reads == 0 {
			t.Errorf("%s: a quorum of 6 replicas needs DC2's, yet it served no read", c.level)
		}
	}
}

// A node whose cores reads saturate shows it: utilisation is busy core time over all its
// cores, reads and writes together (they share the cores), not an average of a busy read
// stage and an idle write stage. 120,000 QUORUM reads/s need 120,000 × 2 / 3 = 80,000
// replica reads per node, past the 44,444 it sustains.
func TestSaturatedReadStageShowsFullUtilisation(t *testing.T) {
	body := strings.NewReplacer("RATE", "120000", "MIX", "sessions.read", "duration: 8s", "duration: 3s").Replace(capacityScenario)
	s, _ := simulate(t, writeScenario(t, body), "quorum", 1<<30)
	sv := s.serverView()
	tbl := sv.Tables[0]
	col := func(name string) int { return slices.Index(tbl.Columns, name) }
	for _, row := range tbl.Rows {
		if row[col("peak utilisation")] != "100.0%" || row[col("peak read stage")] != "100.0%" || row[col("peak write stage")] != "0.0%" {
			t.Errorf("%s: peak utilisation %s, read stage %s, write stage %s; want 100%%, 100%%, 0%%", row[0],
				row[col("peak utilisation")], row[col("peak read stage")], row[col("peak write stage")])
		}
	}
}

// MongoDB's drivers spread reads with read preference secondary over the eligible
// secondaries ("select randomly from the eligible servers within the latency window":
// the server selection specification): each of two secondaries takes half, each of four a
// quarter, and the one left when another is down all of them.
func TestSecondaryReadsSpreadEvenly(t *testing.T) {
	for _, c := range []struct {
		members int
		down    int // a secondary down (-1: none)
	}{{3, -1}, {5, -1}, {3, 2}} {
		rs := &replicaSet{primary: 0}
		for i := 0; i < c.members; i++ {
			rs.members = append(rs.members, NewStation(8))
			rs.up = append(rs.up, i != c.down)
		}
		counts := make([]int, c.members)
		const n = 60_000
		for seq := uint64(0); seq < n; seq++ {
			counts[rs.readMember("secondary", 0, seq)]++
		}
		live := c.members - 1
		if c.down >= 0 {
			live--
		}
		for i, got := range counts {
			want := n / live
			if i == 0 || i == c.down {
				want = 0
			}
			if math.Abs(float64(got-want)) > 0.01*n {
				t.Errorf("%d members, member %d down: member %d took %d of %d secondary reads, want %d", c.members, c.down, i, got, n, want)
			}
		}
	}
}

const conflictScenario = `
name: hot-document
seed: 13
load:
  arrival: poisson
  max_in_flight: 8192
  phases:
    - {name: steady, type: constant, rate: 1500, duration: 6s}
population:
  users: 100000
  products: PRODUCTS
  product_popularity: {distribution: uniform}
  geo_zones: {moscow: 100}
mix:
  catalog.stock_decrement: 1
designs:
  - design: DESIGNS/seed001-mongo.yaml
`

// WiredTiger's concurrency control is optimistic: "When the storage engine detects
// conflicts between two operations, one will incur a write conflict causing MongoDB to
// transparently retry that operation" (MongoDB manual, WiredTiger storage engine), after
// mongod's backoff (logAndBackoff: at once for three attempts, then 1 ms, 5 ms ...).
// Updates of one document therefore serialise: 1,500 stock decrements/s of one product in
// one zone, each holding the document for an update's 390 µs (about 2,500 a second at
// most), conflict (a third of them) and retry, and their p99 is more than twice that of
// the same rate over 1,000 products, which hardly conflicts. The client sees no error
// either way.
func TestHotDocumentUpdatesConflict(t *testing.T) {
	run := func(products string) (conflictStats, time.Duration, int) {
		sc := writeScenario(t, strings.Replace(conflictScenario, "PRODUCTS", products, 1))
		s, samples := simulate(t, sc, "seed001-mongo", 1<<30)
		var lat []int64
		failed := 0
		for _, smp := range samples {
			if metrics.Class(smp.Class) != metrics.OK {
				failed++
			}
			lat = append(lat, smp.End-smp.Start)
		}
		slices.Sort(lat)
		p99 := time.Duration(lat[len(lat)*99/100])
		t.Logf("%s products: %+v, p99 %s, %d failed", products, s.conflicts, p99, failed)
		return s.conflicts, p99, failed
	}
	hot, hotP99, hotFailed := run("1")
	spread, spreadP99, spreadFailed := run("1000")
	if hot.writes < 8_000 || hot.conflicted < hot.writes/4 || hot.retries < hot.conflicted {
		t.Errorf("one hot document: %+v: updates must conflict and be retried", hot)
	}
	if spread.conflicted > spread.writes/100 {
		t.Errorf("1,000 documents: %+v: too many conflicts", spread)
	}
	if hotP99 < 2*spreadP99 {
		t.Errorf("one hot document's p99 %s against %s spread: conflicting updates wait", hotP99, spreadP99)
	}
	if hotFailed != 0 || spreadFailed != 0 {
		t.Errorf("write conflicts are retried by the server: %d and %d operations failed", hotFailed, spreadFailed)
	}
}
