package sim

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/metrics"
)

const ordersScenario = `
name: orders-broadcast
seed: 29
load:
  arrival: poisson
  max_in_flight: 8192
  phases:
    - {name: steady, type: constant, rate: 3000, duration: 4s}
population:
  users: 100000
  orders_per_user: 6
mix:
  MIX
designs:
  - design: DESIGNS/seed001-mongo.yaml
  - design: DESIGNS/seed001-mongo-orders-id-hashed.yaml
`

// openVariant opens the simulator of one variant and lays out its cluster, without
// running it.
func openVariant(t *testing.T, body, variant string) *Simulator {
	t.Helper()
	cfg, _ := configFor(t, writeScenario(t, body), variant, 0)
	s, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.prepare()
	if s.prepErr != nil {
		t.Fatal(s.prepErr)
	}
	return s
}

func stepOf(t *testing.T, s *Simulator, op string, i int) *design.Step {
	t.Helper()
	steps := s.cfg.Compiled.Steps(s.cfg.Model.OpIndex(op))
	if len(steps) <= i {
		t.Fatalf("%s has %d steps", op, len(steps))
	}
	return steps[i]
}

// A broadcast query is answered by each shard from its own indexes: "If the query does
// not include the shard key, mongos must perform a broadcast operation, querying all
// shards" (MongoDB manual, "Query Isolation" / targeted and broadcast operations), and
// each shard plans the query on its indexes like a standalone mongod, where a query can use
// any index whose prefix it names ("Compound Indexes", index prefixes) and _id always
// has its unique index. Only a filter that names no index's prefix scans the collection
// (COLLSCAN), examining every document the shard holds, unless it has no filter and a
// limit: every document then matches and the LIMIT stage stops the scan at the limit
// (explain's totalDocsExamined is the limit). Seed 001's findOne({_id: orderId}) under
// {user_id: hashed, created_at: 1} costs each shard an index lookup however many orders
// it holds, a period's listing uses the {created_at: -1} index, the store-wide popular
// products (no filter, the page's 20) cost a lookup of 20 documents, and a query without
// a filter or a limit costs the scan of every document.
func TestBroadcastQueriesUseTheShardsIndexes(t *testing.T) {
	s := openVariant(t, strings.Replace(ordersScenario, "MIX", "{orders.read: 1, orders.list_by_period: 1, catalog.popular: 1}", 1), "seed001-mongo")
	c := s.mongo
	m := &s.opt.MongoDB
	byID := stepOf(t, s, "orders.read", 0)
	period := stepOf(t, s, "orders.list_by_period", 0)
	top := stepOf(t, s, "catalog.popular", 1) // the store-wide top: no filter, a limit
	all := *top                               // the same without its limit: every hot product
	all.Limited = false
	if byID.Kind != design.Scan || period.Kind != design.Scan {
		t.Fatalf("orders by _id and by period must broadcast under the chosen key: %s, %s", byID.Kind, period.Kind)
	}
	if !c.indexed(byID) || !c.indexed(period) || c.indexed(top) || !top.Limited {
		t.Fatalf("index use: _id %v, created_at range (the created_at_-1 index) %v, no filter %v; the top limited %v", c.indexed(byID), c.indexed(period), c.indexed(top), top.Limited)
	}
	cost := func(st *design.Step, held int64, rows int32) time.Duration {
		c.vol = newVolume(s.cfg.Compiled.NumSteps())
		c.vol.add(st, 0, held)
		return c.readCost(&design.Access{Step: st, Rows: rows}, 0, 3, true)
	}
	if small, big := cost(byID, 1_000, 1), cost(byID, 10_000_000, 1); small != m.Find || big != m.Find {
		t.Errorf("findOne by _id on a shard of 1K and 10M orders: %s and %s, want an index lookup (%s) for both", small, big, m.Find)
	}
	want := m.Scan + 10_000_000*m.Examine
	if small, big := cost(&all, 1_000, 1), cost(&all, 10_000_000, 1); big != want || small >= big/100 {
		t.Errorf("collection scan of 1K and 10M documents: %s and %s, want %s for 10M", small, big, want)
	}
	// 20 documents over 3 shards: 6 from this one.
	if small, big, want := cost(top, 1_000, 20), cost(top, 10_000_000, 20), m.Find+6*m.Doc; small != want || big != want {
		t.Errorf("the top 20 without a filter on shards of 1K and 10M documents: %s and %s, want %s for both", small, big, want)
	}
}

// A broadcast update writes only where the document is: an updateOne by _id on a
// collection not sharded on _id is sent "to all shards, with the expectation that only one
// shard will contain a document with that _id" (SERVER-30970); the others look the _id up
// and match nothing (MongoDB manual, db.collection.updateOne, sharded collections). So
// seed 001's status changes cost one update and its replication, plus a lookup on each
// other shard, not an update on every shard.
func TestBroadcastUpdateWritesOnlyWhereTheDocumentIs(t *testing.T) {
	sc := writeScenario(t, strings.Replace(ordersScenario, "MIX", "{orders.place: 1, orders.status_change: 1}", 1))
	s, samples := simulate(t, sc, "seed001-mongo", 1<<30)
	var places, changes int64
	for _, smp := range samples {
		if metrics.Class(smp.Class) != metrics.OK {
			t.Fatalf("operation %d failed: %d", smp.Op, smp.Class)
		}
		switch s.cfg.Model.Ops[smp.Op].Name {
		case "orders.place":
			places++
		case "orders.status_change":
			changes++
		}
	}
	w := stepOf(t, s, "orders.status_change", 1)
	if w.Kind != design.BroadcastWrite {
		t.Fatalf("status change's update is %s, want a broadcast write", w.Kind)
	}
	var writes, lookups int64
	for _, rs := range s.mongo.shards {
		ns := s.nodes[rs.memberName(rs.primary)]
		writes += ns.jobs[StageWrite]
		lookups += ns.jobs[StageRead]
	}
	t.Logf("%d inserts, %d status changes: %d writes and %d reads on the primaries", places, changes, writes, lookups)
	if writes != places+changes {
		t.Errorf("primaries wrote %d times for %d inserts and %d updates: only the shard holding a document updates it", writes, places, changes)
	}
	// Each status change reads by _id on every shard (its findOne) and looks the _id up
	// on the two shards that do not hold it (its update).
	if want := changes * (3 + 2); lookups != want {
		t.Errorf("primaries served %d reads, want %d", lookups, want)
	}
}

// Seed 001's order status check, findOne({_id: orderId}), broadcasts under the chosen key
// {user_id: hashed, created_at: 1} and waits for the slowest of three shards, each doing
// the lookup; under {_id: hashed} it is targeted. The broadcast costs three lookups for
// one and its response is slower.
func TestBroadcastStatusReadsCostMoreThanTargeted(t *testing.T) {
	sc := writeScenario(t, strings.Replace(ordersScenario, "MIX", "{orders.read: 1}", 1))
	run := func(variant string) (time.Duration, int64) {
		s, samples := simulate(t, sc, variant, 1<<30)
		var sum int64
		for _, smp := range samples {
			sum += smp.End - smp.Start
		}
		var reads int64
		for _, ns := range s.nodes {
			reads += ns.jobs[StageRead]
		}
		return time.Duration(sum / int64(len(samples))), reads
	}
	bMean, bReads := run("seed001-mongo")
	tMean, tReads := run("seed001-mongo-orders-id-hashed")
	t.Logf("broadcast: mean %s, %d shard reads; targeted: mean %s, %d shard reads", bMean, bReads, tMean, tReads)
	if bReads != 3*tReads {
		t.Errorf("a broadcast read asks all three shards: %d shard reads against %d targeted", bReads, tReads)
	}
	if bMean <= tMean {
		t.Errorf("broadcast status read mean %s, targeted %s: waiting for the slowest shard costs more", bMean, tMean)
	}
}

// A Cassandra scan without the partition key reads, on each node, the rows of the token
// ranges the coordinator asks it for: every range of the ring is asked of as many
// replicas as the consistency level needs (StorageProxy.getRangeSlice over the ranges'
// replicas), so a node holding R rows of a table at RF 3 reads R/3 of them at ONE. The
// cost grows with the table.
func TestCassandraScanReadsTheRowsANodeHolds(t *testing.T) {
	body := `
name: scan
seed: 3
load:
  phases:
    - {name: steady, type: constant, rate: 100, duration: 1s}
population:
  users: 1000
mix:
  sessions.list_by_user: 1
designs:
  - design: DESIGNS/seed003.yaml
`
	s := openVariant(t, body, "seed003")
	c := s.cass
	m := &s.opt.Cassandra
	st := stepOf(t, s, "sessions.list_by_user", 0)
	if st.Kind != design.Scan {
		t.Fatalf("sessions.list_by_user is %s, want a scan", st.Kind)
	}
	k, rf := c.scanShare(st, 0)
	c.vol = newVolume(s.cfg.Compiled.NumSteps()) // without the population
	c.vol.add(st, 0, 3_000_000)
	got := c.scanCost(st, 0, k, rf)
	want := m.Scan + m.ScanRow*durationOf(int64(3_000_000*k/rf))
	t.Logf("consistency %s: k %d of rf %d; 3M rows held: %s", st.Consistency, k, rf, got)
	if got != want || k >= rf {
		t.Errorf("scan of a node holding 3M rows: %s, want %s (k %d of rf %d)", got, want, k, rf)
	}
	if empty := c.scanCost(st, 1, k, rf); empty != m.Scan {
		t.Errorf("scan of a node holding no rows: %s, want %s", empty, m.Scan)
	}
	// A replica aborts a read past the request timeout (read commands are monitored and
	// abandoned when they time out, Cassandra 3.10+): 30M rows held, 20 s of reading at
	// ONE, fail at the 5 s read timeout.
	c.vol.add(st, 0, 27_000_000)
	end, class := c.scan(st, 0, 0)
	if class != metrics.Timeout || time.Duration(end) != m.ReadTimeout {
		t.Errorf("scan of a node holding 30M rows: %s at %s, want a timeout at %s", class, time.Duration(end), m.ReadTimeout)
	}
}

// The data before the run is scanned too: a Cassandra table's loaded rows are on every
// node in proportion to its replicas (RF 3 of 6 nodes: half of them on each), a sharded
// collection's documents on the shards its chunks put them.
func TestScansReadThePopulation(t *testing.T) {
	s := openVariant(t, strings.Replace(ordersScenario, "MIX", "{orders.read: 1}", 1), "seed001-mongo")
	loaded := s.placer.Loaded["orders"]
	if loaded == nil || loaded.Rows < 100_000 {
		t.Fatalf("orders loaded before the run: %+v", loaded)
	}
	st := stepOf(t, s, "orders.read", 0)
	var sum int64
	for sh := range s.mongo.shards {
		n := s.mongo.vol.held(st, sh)
		if n < loaded.Rows/6 {
			t.Errorf("shard%d holds %d of %d orders: a hashed key spreads them", sh, n, loaded.Rows)
		}
		sum += n
	}
	if sum < loaded.Rows*99/100 || sum > loaded.Rows {
		t.Errorf("the shards hold %d orders, %d were loaded", sum, loaded.Rows)
	}

	body := strings.Replace(strings.Replace(ordersScenario, "MIX", "{orders.history_all: 1}", 1), "DESIGNS/seed001-mongo-orders-id-hashed.yaml", "DESIGNS/seed003.yaml", 1)
	s = openVariant(t, body, "seed003")
	st = stepOf(t, s, "orders.history_all", 0)
	rows := s.placer.Loaded[st.Target].Rows
	if rows == 0 {
		t.Fatalf("%s: nothing loaded", st.Target)
	}
	for i := range s.placer.Ring.Nodes {
		if got, want := s.cass.vol.held(st, i), rows*3/6; got != want {
			t.Errorf("node %d holds %d rows of %d, want %d (RF 3 of 6 nodes)", i, got, rows, want)
		}
	}
}
