package sim

import (
	"math"
	"math/bits"
	"slices"
	"time"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/metrics"
	pc "github.com/shardbench/shardbench/internal/placement/cassandra"
	"github.com/shardbench/shardbench/internal/plan"
	"github.com/shardbench/shardbench/workloads"
)

// cassCluster is a Cassandra cluster: per node a read stage and a write stage (each a
// Station), token-aware clients, coordinators that wait for the consistency level's
// number of replica responses.
//
// A request: client → coordinator (a live replica of the partition, rotating as the
// driver's token-aware policy shuffles them) → replicas → coordinator → client, each hop
// half the network round trip (none when the coordinator is the replica). Writes go to
// every live replica and the coordinator answers after the k-th fastest acknowledgement;
// reads go to k replicas (the coordinator first, then the least backlogged, as the
// dynamic snitch prefers) and wait for all k. A replica request that waits past the
// request timeout is dropped by the replica, as Cassandra drops expired messages; too few
// responses in time is a timeout, too few live replicas an immediate unavailable. A
// lightweight transaction makes four such quorum rounds (prepare, read, propose, commit).
// Node failure is known at once (no failure-detector delay).
type cassCluster struct {
	sim    *Simulator
	pl     *plan.Placer
	reads  []*Station
	writes []*Station
	up     []bool
	// need and serial are by Step.ID: the replica responses a step's consistency level
	// and serial consistency wait for (0: not yet worked out).
	need   []int
	serial []int
	ends   []int64
	live   []int32
	pick   []int32
	// joining node: serves no reads and takes no place in the ring until its streaming
	// ends.
	joins []join
	// served counts each node's replica and coordinator requests per table (served.go).
	served servedCounts
}

type join struct {
	at         int64
	dc, rack   string
	name       string
	streamDone int64
}

func newCassCluster(s *Simulator, pl *plan.Placer) *cassCluster {
	n := pl.Plan.NumSteps()
	c := &cassCluster{sim: s, pl: pl, need: make([]int, n), serial: make([]int, n)}
	for range pl.Ring.Nodes {
		c.addStations()
	}
	return c
}

func (c *cassCluster) addStations() {
	m := &c.sim.opt.Cassandra
	c.reads = append(c.reads, NewStation(m.ReadWorkers))
	c.writes = append(c.writes, NewStation(m.WriteWorkers))
	c.up = append(c.up, true)
}

func (c *cassCluster) names() []string {
	out := make([]string, len(c.pl.Ring.Nodes))
	for i, n := range c.pl.Ring.Nodes {
		out[i] = n.Name
	}
	return out
}

func (c *cassCluster) find(node string) int { return nodeIndex(c.names(), node) }

func (c *cassCluster) setUp(i int, up bool, _ int64) { c.up[i] = up }

// consistency is the number of replica responses a step needs: blockFor of its
// consistency level (and of its serial consistency for an LWT's Paxos rounds).
func (c *cassCluster) consistency(s *design.Step) (need, serial int) {
	if n := c.need[s.ID]; n > 0 {
		return n, c.serial[s.ID]
	}
	rep := c.pl.Replicas.Replication
	dc := c.pl.Ring.Nodes[0].DC
	need = 1
	if cl, err := pc.ParseConsistency(s.Consistency); err == nil {
		need = max(cl.Need(rep, dc).Total, 1)
	}
	serial = 0
	if s.Kind == design.LWT {
		sc := pc.Serial
		if x, err := pc.ParseConsistency(s.Serial); err == nil && x.IsSerial() {
			sc = x
		}
		serial = max(sc.Need(rep, dc).Total, 1)
	}
	c.need[s.ID], c.serial[s.ID] = need, serial
	return need, serial
}

func (c *cassCluster) access(a *design.Access, op *workloads.Op, w *reach, t int64) (int64, metrics.Class) {
	s := c.sim
	m := &s.opt.Cassandra
	half := int64(s.opt.Network) / 2
	step := a.Step
	write := step.Kind.IsWrite()
	if w.broadcast {
		// Without the partition key every node scans its share; the coordinator waits
		// for all of them.
		end := t + half
		served := 0
		for i := range c.up {
			if !c.up[i] {
				continue
			}
			_, e, ok := c.reads[i].Serve(t+half, s.draw(m.Scan), int64(m.ReadTimeout))
			if !ok {
				return t + int64(m.ReadTimeout), metrics.Timeout
			}
			end = max(end, e+half)
			served++
		}
		if served == 0 {
			return t + 2*half, metrics.Unavailable
		}
		return end + half, metrics.OK
	}
	need, serial := c.consistency(step)
	c.live = c.live[:0]
	for _, r := range w.replicas {
		if c.up[r] {
			c.live = append(c.live, r)
		}
	}
	if len(c.live) < max(need, serial) {
		return t + 2*half, metrics.Unavailable
	}
	coord := c.live[int(op.Seq%uint64(len(c.live)))]
	hop := func(r int32) int64 {
		if r == coord {
			return 0
		}
		return half
	}
	arrive := t + half
	if write {
		timeout := int64(m.WriteTimeout)
		rounds := 1
		if serial > 0 {
			rounds, need = 4, serial
		}
		var bytes int64
		if a.Bytes > 0 {
			bytes = int64(a.Bytes)
		}
		if serial > 0 {
			c.served.read(step, -1, c.live[:serial]) // Paxos reads the partition at the serial level
		}
		c.served.write(step, coord, c.live)
		cur := arrive
		for round := 0; round < rounds; round++ {
			c.ends = c.ends[:0]
			for _, r := range c.live {
				h := hop(r)
				_, e, ok := c.writes[r].Serve(cur+h, s.draw(m.Write), timeout)
				if ok {
					c.ends = append(c.ends, e+h)
				}
			}
			if len(c.ends) < need {
				return t + timeout, metrics.Timeout
			}
			cur = kth(c.ends, need)
			if cur-t > timeout {
				return t + timeout, metrics.Timeout
			}
		}
		if w.keyed {
			s.sizes.add(w.fp, bytes, op.Time, step.TTL)
		}
		return cur + half, metrics.OK
	}
	// Read: the coordinator (a replica) and the least backlogged others.
	c.pick = append(c.pick[:0], coord)
	for len(c.pick) < need {
		best := int32(-1)
		for _, r := range c.live {
			if slices.Contains(c.pick, r) {
				continue
			}
			if best < 0 || c.reads[r].Backlog(arrive) < c.reads[best].Backlog(arrive) {
				best = r
			}
		}
		c.pick = append(c.pick, best)
	}
	c.served.read(step, coord, c.pick)
	cost := m.Read + m.Row*durationOf(max(a.Rows, 1)-1)
	if w.keyed {
		size := s.sizes.get(w.fp, op.Time, step.TTL)
		cost += m.SSTable * durationOf(sstables(size))
	}
	timeout := int64(m.ReadTimeout)
	end := arrive
	for _, r := range c.pick {
		h := hop(r)
		_, e, ok := c.reads[r].Serve(arrive+h, s.draw(cost), timeout)
		if !ok {
			return t + timeout, metrics.Timeout
		}
		end = max(end, e+h)
	}
	if end-t > timeout {
		return t + timeout, metrics.Timeout
	}
	return end + half, metrics.OK
}

// addNode starts a node joining: it streams its ranges for m.Stream, taking
// m.StreamShare of every other node's write workers meanwhile, then takes its tokens.
// Writes and reads keep going to the old replicas until then (pending ranges are not
// modelled).
func (c *cassCluster) addNode(dc, rack string, at int64) (string, error) {
	m := &c.sim.opt.Cassandra
	idx, err := c.pl.AddNode(dc, rack, 0, c.sim.seed+uint64(at))
	if err != nil {
		return "", err
	}
	c.addStations()
	d := int64(m.Stream)
	for i := range c.writes {
		if i == idx {
			continue
		}
		k := int(math.Ceil(m.StreamShare * float64(c.writes[i].Workers())))
		c.writes[i].Reserve(at, d, k)
	}
	// The new node only answers once it has streamed its data.
	c.reads[idx].Reserve(at, d, c.reads[idx].Workers())
	c.writes[idx].Reserve(at, d, c.writes[idx].Workers())
	return c.pl.Ring.Nodes[idx].Name, nil
}

func (c *cassCluster) sample(s *Simulator) {
	for i, n := range c.pl.Ring.Nodes {
		s.observe(n.Name, c.up[i], c.reads[i])
		s.observe(n.Name, c.up[i], c.writes[i])
	}
}

func durationOf[T ~int32 | ~int | ~int64](n T) time.Duration { return time.Duration(n) }

// partitionSizes estimates each partition's live bytes in fixed memory: a table of
// counters indexed by the key's fingerprint (colliding partitions share a counter, which
// only overestimates). A counter resets when its TTL window passes, so data written with a
// TTL ages out; a time-bucketed key starts a new partition (a new counter) every bucket.
type partitionSizes struct {
	// A partition's counter and the TTL window it counts in, side by side: one cache
	// line per access (the table is larger than a core's cache).
	slots []sizeSlot
	mask  uint64
}

type sizeSlot struct{ bytes, epoch int64 }

func newPartitionSizes(bits int) partitionSizes {
	n := 1 << bits
	return partitionSizes{slots: make([]sizeSlot, n), mask: uint64(n - 1)}
}

func epochOf(now int64, ttl time.Duration) int64 {
	if ttl <= 0 {
		return 0
	}
	return now / int64(ttl)
}

// add counts b bytes written to the partition with fingerprint fp.
func (p *partitionSizes) add(fp uint64, b int64, now int64, ttl time.Duration) {
	sl := &p.slots[fp&p.mask]
	if e := epochOf(now, ttl); sl.epoch != e {
		sl.epoch, sl.bytes = e, 0
	}
	sl.bytes += b
}

// get is the live bytes of the partition with fingerprint fp.
func (p *partitionSizes) get(fp uint64, now int64, ttl time.Duration) int64 {
	sl := &p.slots[fp&p.mask]
	if sl.epoch != epochOf(now, ttl) {
		return 0
	}
	return sl.bytes
}

// sstables is how many more SSTables a read of a partition of size bytes consults:
// ⌊log2(1 + size/1 MiB)⌋, one more each time the partition doubles past 1 MiB, in integer
// arithmetic (the same value as in floating point for any partition under 8 TiB).
func sstables(size int64) int32 {
	return int32(bits.Len64(uint64(max(size, 0))+1<<20)) - 21
}
