package sim

import (
	"slices"
	"time"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/workloads"
)

// Scans and broadcasts cost what the node or shard reads: docs/simulator.md, "Scans and
// broadcasts", names the source of each rule.

// cassScanCost is one node's share of a request without its partition key: a range read
// over the node's token ranges (ALLOW FILTERING). The coordinator asks each range of as
// many replicas as the level needs, so of the rows the node holds it reads k in rf (k the
// level's count, rf the replication factor in its data center), each row costing ScanRow,
// the request's fixed part Scan.
func (c *cassCluster) scanCost(s *design.Step, node int32, k, rf int) time.Duration {
	m := &c.sim.opt.Cassandra
	rows := c.vol.held(s, int(node))
	if rf > 0 && k < rf {
		rows = rows * int64(k) / int64(rf)
	}
	return m.Scan + m.ScanRow*durationOf(rows)
}

// scanShare is the level's count k and the replication factor rf in data center dc, for
// scanCost.
func (c *cassCluster) scanShare(s *design.Step, dc int) (k, rf int) {
	q := c.quota(s, dc)
	rep := c.pl.Replicas.Replication
	k, rf = q.level.Total, rep.Total()
	if c.multi {
		rf = rep.Factor(c.cl.DCs[dc])
		if q.level.PerDC != nil && dc < len(q.level.PerDC) {
			k = q.level.PerDC[dc]
		}
	}
	return max(min(k, rf), 1), rf
}

// Index use of MongoDB steps, by Step.ID.
const (
	ixUnknown uint8 = iota
	ixUsed
	ixNone
)

// indexed reports whether each shard answers the step's query from an index: the
// filter's equality fields include _id (every collection's unique index), the first
// field of the shard key (the index shardCollection requires) or the first field of one
// of the collection's indexes (a query can use an index whose prefix it names). Else the
// shard scans the collection (COLLSCAN), examining every document it holds.
func (c *mongoCluster) indexed(s *design.Step) bool {
	if v := c.ix[s.ID]; v != ixUnknown {
		return v == ixUsed
	}
	used := slices.Contains(s.Filter, "_id") || len(s.KeyColumns) > 0 && slices.Contains(s.Filter, s.KeyColumns[0])
	if spec := c.pl.Compiled.Design.MongoDB; !used && spec != nil {
		if coll, ok := spec.Collections.Get(s.Target); ok {
			for _, ix := range coll.Indexes {
				if len(ix.Key) > 0 && slices.Contains(s.Filter, ix.Key[0].Key) {
					used = true
					break
				}
			}
		}
	}
	c.ix[s.ID] = ixNone
	if used {
		c.ix[s.ID] = ixUsed
	}
	return used
}

// readCost is one shard's CPU for a read: a targeted find, or its part of a broadcast:
// an index lookup returning its share of the documents, or a collection scan examining
// every document the shard holds.
func (c *mongoCluster) readCost(a *design.Access, shard, shards int, broadcast bool) time.Duration {
	m := &c.sim.opt.MongoDB
	rows := max(int64(a.Rows), 1)
	step := a.Step
	if !broadcast && step.Kind != design.Scan {
		return m.Find + m.Doc*durationOf(rows-1)
	}
	share := rows / int64(max(shards, 1))
	if c.indexed(step) || len(step.Filter) == 0 && step.Limited {
		// Without a filter every document matches, so a limited query's collection scan
		// stops at its limit (a LIMIT stage over COLLSCAN: docsExamined is the limit): it
		// costs what an index lookup of as many documents does.
		return m.Find + m.Doc*durationOf(share)
	}
	return m.Scan + m.Examine*durationOf(c.vol.held(step, shard)) + m.Doc*durationOf(share)
}

// holder is the shard holding the document a broadcast update or delete finds: mongos
// sends the write to every shard, each looks the document up, and only the one holding
// it writes. The document's shard follows its shard key, which the request does not
// give: it is drawn for the operation in proportion to the documents each asked shard
// holds (evenly while none holds any).
func (c *mongoCluster) holder(a *design.Access, op *workloads.Op, shards []int) int {
	var total int64
	for _, sh := range shards {
		total += c.vol.held(a.Step, sh)
	}
	h := mix64(op.Seq ^ uint64(a.Step.ID)<<48)
	if total == 0 {
		return shards[int(h%uint64(len(shards)))]
	}
	x := int64(h % uint64(total))
	for _, sh := range shards {
		x -= c.vol.held(a.Step, sh)
		if x < 0 {
			return sh
		}
	}
	return shards[len(shards)-1]
}

// mix64 is SplitMix64's finaliser: a well-spread hash of an operation's sequence number.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
