package sim

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/metrics"
	pm "github.com/shardbench/shardbench/internal/placement/mongo"
	"github.com/shardbench/shardbench/internal/plan"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/workloads"
)

// mongoCluster is a sharded cluster: a mongos in front of shard replica sets, each member
// a Station. mongos routes with the exact chunk table (package plan); a broadcast waits
// for the slowest shard. A write runs on the shard's primary and is applied by every live
// secondary from the oplog (load on the secondaries whatever the write concern); the
// client waits for as many members as the write concern asks (w: majority: a majority of
// the members, the primary included). Reads go where the read preference sends them.
// When a primary goes down the shard has none for the election time: its writes and
// primary reads fail as unavailable. add_shard starts the balancer: chunks move one at a
// time to the new shard, each migration occupying part of the donor's and recipient's
// workers, until the new shard holds its share of each collection's chunks.
type mongoCluster struct {
	sim        *Simulator
	pl         *plan.Placer
	shards     []*replicaSet
	migrations []migration
	acks       []int64   // a write's acknowledgement times, reused
	docs       holdTable // the documents updates hold (conflict.go)
	// docWrite is, by Step.ID, whether a step's writes name their document by the shard
	// key (1), do not (2), or is not worked out yet (0): see documentOf.
	docWrite []uint8
	vol      *volume // documents per shard of each collection (volume.go)
	ix       []uint8 // by Step.ID: whether shards answer the step from an index (scan.go)
}

type replicaSet struct {
	name     string
	members  []*Station
	up       []bool
	primary  int   // -1 during an election
	electsAt int64 // when the election ends
}

type migration struct {
	start, end int64
	table      *pm.ChunkTable
	chunk      int
	from, to   int
	started    bool
}

func newMongoCluster(s *Simulator, pl *plan.Placer) *mongoCluster {
	n := pl.Compiled.NumSteps()
	c := &mongoCluster{sim: s, pl: pl, docs: newHoldTable(), docWrite: make([]uint8, n), vol: newVolume(n), ix: make([]uint8, n)}
	for _, name := range pl.Shards {
		c.shards = append(c.shards, c.newReplicaSet(name))
	}
	return c
}

func (c *mongoCluster) newReplicaSet(name string) *replicaSet {
	m := &c.sim.opt.MongoDB
	rs := &replicaSet{name: name}
	for i := 0; i < m.Members; i++ {
		st := NewStation(m.Cores)
		st.Follow(&c.sim.now)
		rs.members = append(rs.members, st)
		rs.up = append(rs.up, true)
	}
	return rs
}

func (rs *replicaSet) memberName(i int) string { return rs.name + "-m" + strconv.Itoa(i) }

// primaryAt is the primary at t, electing one when an election has ended.
func (rs *replicaSet) primaryAt(t int64) int {
	if rs.primary < 0 && t >= rs.electsAt {
		for i, up := range rs.up {
			if up && 2*rs.liveCount() > len(rs.members) {
				rs.primary = i
				break
			}
		}
	}
	return rs.primary
}

func (rs *replicaSet) liveCount() int {
	n := 0
	for _, up := range rs.up {
		if up {
			n++
		}
	}
	return n
}

// setUp handles node_down / node_up for "shard1" (its current primary) or "shard1-m2".
func (c *mongoCluster) setUp(node string, up bool, at int64) error {
	for _, rs := range c.shards {
		member := -1
		switch {
		case node == rs.name:
			member = rs.primaryAt(at)
			if member < 0 && !up {
				return fmt.Errorf("%s has no primary to stop", node)
			}
			if up {
				member = slices.Index(rs.up, false)
			}
		case strings.HasPrefix(node, rs.name+"-m"):
			member, _ = strconv.Atoi(strings.TrimPrefix(node, rs.name+"-m"))
			if member < 0 || member >= len(rs.members) {
				return fmt.Errorf("%s: %s has members m0..m%d", node, rs.name, len(rs.members)-1)
			}
		default:
			continue
		}
		if member < 0 {
			return nil // node_up on a shard with every member up
		}
		rs.up[member] = up
		if !up && member == rs.primary {
			rs.primary, rs.electsAt = -1, at+int64(c.sim.opt.MongoDB.Election)
		}
		if up && rs.primary < 0 {
			rs.primaryAt(at)
		}
		return nil
	}
	return fmt.Errorf("no shard or member %q (shards: %v; members are named like %s-m0)", node, c.pl.Shards, c.pl.Shards[0])
}

func (c *mongoCluster) access(a *design.Access, op *workloads.Op, w *reach, t int64) (int64, metrics.Class) {
	s := c.sim
	m := &s.opt.MongoDB
	half := int64(s.opt.Network) / 2
	arrive := t + half + s.draw(m.Mongos)
	end, class := arrive, metrics.OK
	broadcast := len(w.shards) > 1
	holder := -1
	if broadcast && a.Step.Kind.IsWrite() {
		holder = c.holder(a, op, w.shards)
	}
	for _, sh := range w.shards {
		var e int64
		var cl metrics.Class
		if holder >= 0 && sh != holder {
			e, cl = c.lookup(c.shards[sh], sh, a, arrive)
		} else {
			e, cl = c.request(sh, a, op, w, arrive, broadcast, len(w.shards))
		}
		end = max(end, e)
		if cl != metrics.OK && class == metrics.OK {
			class = cl
		}
	}
	return end + half, class
}

// lookup is a broadcast write's part on a shard that does not hold the document: its
// primary looks the filter up (an index lookup or a collection scan, as a read of the
// step would) and writes nothing.
func (c *mongoCluster) lookup(rs *replicaSet, sh int, a *design.Access, t int64) (int64, metrics.Class) {
	s := c.sim
	half := int64(s.opt.Network) / 2
	p := rs.primaryAt(t)
	if p < 0 {
		return t + 2*half, metrics.Unavailable
	}
	_, e, ok := rs.members[p].Serve(t+half, s.draw(c.readCost(a, sh, 1, true)), s.timeout)
	if !ok {
		return t + s.timeout, metrics.Timeout
	}
	return e + half, metrics.OK
}

func (c *mongoCluster) request(sh int, a *design.Access, op *workloads.Op, w *reach, t int64, broadcast bool, shards int) (int64, metrics.Class) {
	s := c.sim
	m := &s.opt.MongoDB
	rs := c.shards[sh]
	half := int64(s.opt.Network) / 2
	step := a.Step
	queue := s.timeout
	if step.Kind.IsWrite() {
		p := rs.primaryAt(t)
		if p < 0 {
			return t + 2*half, metrics.Unavailable
		}
		e, ok := c.primaryWrite(rs.members[p], a, w, t+half, queue)
		if !ok {
			return t + queue, metrics.Timeout
		}
		if inserts(step) {
			c.vol.add(step, sh, max(int64(a.Rows), 1))
		}
		need := writeAcks(step.WriteConcern.W, len(rs.members))
		acks := append(c.acks[:0], e)
		for j := range rs.members {
			if j == p || !rs.up[j] {
				continue
			}
			if need == 1 {
				// w: 1: the secondaries apply the entry, nobody waits for them.
				rs.members[j].Post(StageWrite, e+half, s.draw(m.Apply), 0)
				continue
			}
			_, ae, ok := rs.members[j].ServeAs(StageWrite, e+half, s.draw(m.Apply), 0)
			if ok {
				acks = append(acks, ae+half)
			}
		}
		c.acks = acks
		if len(acks) < need {
			// The write concern cannot be satisfied: the client waits until it gives up.
			return t + max(queue, int64(step.WriteConcern.WTimeout)), metrics.Timeout
		}
		return kth(acks, need) + half, metrics.OK
	}
	member := rs.readMember(step.ReadPref.Mode, t, op.Seq)
	if member < 0 {
		return t + 2*half, metrics.Unavailable
	}
	_, e, ok := rs.members[member].Serve(t+half, s.draw(c.readCost(a, sh, shards, broadcast)), queue)
	if !ok {
		return t + queue, metrics.Timeout
	}
	return e + half, metrics.OK
}

// writeAcks is how many members must have a write: w: majority is a majority of the
// members; a number is that many; default 1 (w: 1 before 5.0's implicit majority is not
// assumed: designs say what they use).
func writeAcks(w string, members int) int {
	switch w {
	case "majority":
		return members/2 + 1
	case "", "0", "1":
		return 1
	}
	if n, err := strconv.Atoi(w); err == nil && n > 0 {
		return n
	}
	return 1
}

// readMember picks the member a read preference sends a read to: the primary, a
// secondary (each live secondary in turn, so that they share the reads evenly), or for
// nearest the least backlogged member.
func (rs *replicaSet) readMember(mode string, t int64, seq uint64) int {
	p := rs.primaryAt(t)
	secondary := func() int {
		n := 0
		for i, up := range rs.up {
			if up && i != p {
				n++
			}
		}
		if n == 0 {
			return -1
		}
		k := int(seq % uint64(n))
		for i, up := range rs.up {
			if up && i != p {
				if k == 0 {
					return i
				}
				k--
			}
		}
		return -1
	}
	switch mode {
	case "secondary":
		return secondary()
	case "secondaryPreferred":
		if s := secondary(); s >= 0 {
			return s
		}
		return p
	case "primaryPreferred":
		if p >= 0 {
			return p
		}
		return secondary()
	case "nearest":
		best := -1
		for i, up := range rs.up {
			if up && (best < 0 || rs.members[i].Backlog(t) < rs.members[best].Backlog(t)) {
				best = i
			}
		}
		return best
	}
	return p
}

// addShard adds an empty shard and plans the balancer's migrations to it: one chunk at a
// time from the shard with the most chunks of that collection, until the new shard has
// its share.
func (c *mongoCluster) addShard(name string, at int64) string {
	idx := c.pl.AddShard(name)
	c.shards = append(c.shards, c.newReplicaSet(c.pl.Shards[idx]))
	d := int64(c.sim.opt.MongoDB.Migration)
	t := at
	for _, coll := range c.pl.Collections() {
		tbl := c.pl.Tables[coll]
		counts := tbl.ChunksPerShard()
		counts = append(counts, make([]int, len(c.pl.Shards)-len(counts))...)
		target := len(tbl.Chunks) / len(c.pl.Shards)
		moved := map[int]bool{}
		for counts[idx] < target {
			from := 0
			for sh := range counts {
				if counts[sh] > counts[from] {
					from = sh
				}
			}
			chunk := -1
			for ci := len(tbl.Chunks) - 1; ci >= 0; ci-- {
				if tbl.Chunks[ci].Shard == from && !moved[ci] {
					chunk = ci
					break
				}
			}
			if chunk < 0 {
				break
			}
			moved[chunk] = true
			c.migrations = append(c.migrations, migration{start: t, end: t + d, table: tbl, chunk: chunk, from: from, to: idx})
			counts[from]--
			counts[idx]++
			t += d
		}
	}
	return c.pl.Shards[idx]
}

// migrate starts and finishes the migrations due by t.
func (c *mongoCluster) migrate(t int64) {
	share := c.sim.opt.MongoDB.MigrationShare
	for len(c.migrations) > 0 && c.migrations[0].start <= t {
		mg := &c.migrations[0]
		if !mg.started {
			mg.started = true
			for _, sh := range []int{mg.from, mg.to} {
				rs := c.shards[sh]
				if p := rs.primaryAt(mg.start); p >= 0 {
					st := rs.members[p]
					st.Reserve(mg.start, mg.end-mg.start, max(1, int(share*float64(st.Workers()))))
				}
			}
		}
		if mg.end > t {
			return
		}
		c.pl.MoveChunk(mg.table, mg.chunk, mg.to)
		c.migrations = c.migrations[1:]
	}
}

// due is when migrate next has work: the next migration starts, or the started one ends.
func (c *mongoCluster) due() int64 {
	if len(c.migrations) == 0 {
		return math.MaxInt64
	}
	mg := &c.migrations[0]
	if mg.started {
		return mg.end
	}
	return mg.start
}

func (c *mongoCluster) sample(s *Simulator) {
	for _, rs := range c.shards {
		for i, st := range rs.members {
			s.observe(rs.memberName(i), rs.up[i], st)
		}
	}
}

// chunkTable lists each sharded collection's chunks per shard at the end of the run.
func (c *mongoCluster) chunkTable() results.ServerTable {
	t := results.ServerTable{Title: "chunks per shard at the end (simulated balancer)", Columns: append([]string{"collection"}, c.pl.Shards...)}
	t.Numeric = make([]bool, len(t.Columns))
	for i := 1; i < len(t.Numeric); i++ {
		t.Numeric[i] = true
	}
	for _, coll := range c.pl.Collections() {
		counts := c.pl.Tables[coll].ChunksPerShard()
		row := []string{coll}
		for i := range c.pl.Shards {
			n := 0
			if i < len(counts) {
				n = counts[i]
			}
			row = append(row, strconv.Itoa(n))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}
