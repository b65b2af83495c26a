package results

import (
	"math"
	"testing"
)

// The headline imbalance measures what a reader assumes it measures: one database's nodes
// or shards, one data center, and the most unbalanced of every request, reads, writes and
// bytes written.
func TestNodeBalances(t *testing.T) {
	node := func(name, db, dc string, ops, reads, writes, bytes int64) NodeLoad {
		return NodeLoad{Node: name, Database: db, DC: dc, Ops: ops, Reads: reads, Writes: writes, Bytes: bytes}
	}
	for _, c := range []struct {
		name            string
		nodes           []NodeLoad
		db, dc, measure string
		busiest         string
		maxOverMean     float64
		busiestShare    float64
	}{
		{
			// A mixed design (seed 004): idle MongoDB shards say nothing about the
			// Cassandra nodes, whose busiest is 1.25× their mean (mixed with the shards'
			// zeros it would be 2.08×).
			name: "mixed design",
			nodes: []NodeLoad{
				node("dc1-n1", "cassandra", "dc1", 1000, 1000, 0, 0), node("dc1-n2", "cassandra", "dc1", 1000, 1000, 0, 0),
				node("dc1-n3", "cassandra", "dc1", 1000, 1000, 0, 0), node("dc1-n4", "cassandra", "dc1", 1000, 1000, 0, 0),
				node("dc1-n5", "cassandra", "dc1", 1000, 1000, 0, 0), node("dc1-n6", "cassandra", "dc1", 1500, 1500, 0, 0),
				node("shard0", "mongodb", "", 0, 0, 0, 0), node("shard1", "mongodb", "", 0, 0, 0, 0),
			},
			db: "cassandra", dc: "dc1", measure: MeasureOps, busiest: "dc1-n6", maxOverMean: 1.5 / (6.5 / 6), busiestShare: 1.5 / 6.5,
		},
		{
			// orders {created_at: 1}: 249 MB of 250 MB inserted on shard0 while broadcast
			// status reads and updates reach every shard: by operations shard0 is 1.04× the
			// mean, by writes 2.18×, by bytes written it takes 99.6% (2.99×).
			name: "monotonic shard key",
			nodes: []NodeLoad{
				node("shard0", "mongodb", "", 11_600, 10_000, 1_600, 249e6), node("shard1", "mongodb", "", 10_300, 10_000, 300, 0.5e6),
				node("shard2", "mongodb", "", 10_300, 10_000, 300, 0.5e6),
			},
			db: "mongodb", measure: MeasureBytes, busiest: "shard0", maxOverMean: 249 / (250 / 3.0), busiestShare: 249.0 / 250,
		},
		{
			// Clients in DC1 only: DC2 serves no reads by design; each data center is
			// measured apart, and a handful of writes is not a headline.
			name: "two data centers",
			nodes: []NodeLoad{
				node("DC1-n1", "cassandra", "DC1", 2000, 1800, 200, 0), node("DC1-n2", "cassandra", "DC1", 2400, 2200, 200, 0),
				node("DC2-n1", "cassandra", "DC2", 200, 0, 200, 0), node("DC2-n2", "cassandra", "DC2", 200, 0, 200, 0),
			},
			db: "cassandra", dc: "DC1", measure: MeasureReads, busiest: "DC1-n2", maxOverMean: 2200 / 2000.0, busiestShare: 2200 / 4000.0,
		},
	} {
		nodes := append([]NodeLoad(nil), c.nodes...)
		h, all := NodeBalances(nodes)
		if h.Database != c.db || h.DC != c.dc || h.Measure != c.measure || h.Busiest != c.busiest ||
			math.Abs(h.MaxOverMean-c.maxOverMean) > 1e-9 || math.Abs(h.BusiestShare-c.busiestShare) > 1e-9 {
			t.Errorf("%s: headline %+v, want %s %s %s busiest %s %.3f× %.3f", c.name, h, c.db, c.dc, c.measure, c.busiest, c.maxOverMean, c.busiestShare)
		}
		if len(all) == 0 {
			t.Errorf("%s: no balances", c.name)
		}
		for _, n := range nodes {
			if n.Database == c.db && n.DC == c.dc && n.Node == c.busiest && n.Share <= 0 {
				t.Errorf("%s: %s has no share of its group's operations", c.name, n.Node)
			}
		}
	}
}
