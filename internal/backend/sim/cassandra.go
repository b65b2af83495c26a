package sim

import (
	"math"
	"time"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/plan"
	"github.com/shardbench/shardbench/workloads"
)

// cassCluster is a Cassandra cluster: per node its cores (a Station serving the read and
// write stages alike), DC-aware token-aware clients, coordinators that wait for the
// consistency level's replica responses.
//
// A request: client → coordinator → replicas → coordinator → client, each hop half the
// round trip between the two (none when the coordinator is the replica; Options.Network
// inside a data center, Options.InterDCNetwork between two). The client runs in a data
// center (plan.Clients) and, as a token-aware policy over a DC-aware one does, picks a
// live replica of its own data center as coordinator (rotating, as the driver shuffles
// them), else a live node of its data center, else a replica elsewhere. Writes go to
// every live replica in every data center and the coordinator answers once the level's
// acknowledgements are in (LOCAL_* count the local data center's, EACH_QUORUM a quorum of
// each); reads ask as many replicas as the level needs (the coordinator first, then the
// least backlogged, local before remote, as the dynamic snitch prefers; LOCAL_* only
// local ones) and wait for all of them. A replica request that waits past the request
// timeout is dropped by the replica, as Cassandra drops expired messages; too few
// responses in time is a timeout, too few live replicas an immediate unavailable.
// Lightweight transactions run Paxos rounds that serialise per partition (paxos.go).
// Node failure is known at once (no failure-detector delay).
type cassCluster struct {
	sim   *Simulator
	pl    *plan.Placer
	nodes []*Station // per node: its cores
	up    []bool
	cl    *plan.Clients
	multi bool // the ring spans several data centers
	// half and interHalf are one-way network times inside and between data centers.
	half, interHalf int64
	// quotas holds, by Step.ID and client data center, the replica responses a step's
	// consistency level (and, for an LWT, its serial level) waits for.
	quotas [][]stepQuota
	acks   []ack
	// live is the request's live replicas: the reach's own replicas while every node is
	// up (read only, never appended to), else liveBuf filtered from them.
	live, liveBuf []int32
	down          int // nodes down
	pick          []int32
	paxos         holdTable // the partitions Paxos rounds hold (paxos.go)
	// paxosBuf holds an LWT's Paxos participants.
	paxosBuf []int32
	// joining node: serves no reads and takes no place in the ring until its streaming
	// ends.
	joins []join
	vol   *volume // rows per node of each table (volume.go)
	// served counts each node's replica and coordinator requests per table (served.go).
	served servedCounts
}

type stepQuota struct {
	level, serial plan.Quota
	set           bool
}

// ack is a replica's response as the coordinator receives it.
type ack struct {
	at int64
	dc int
}

type join struct {
	at         int64
	dc, rack   string
	name       string
	streamDone int64
}

func newCassCluster(s *Simulator, pl *plan.Placer) *cassCluster {
	c := &cassCluster{sim: s, pl: pl, cl: pl.Clients, quotas: make([][]stepQuota, pl.Compiled.NumSteps()),
		half: int64(s.opt.Network) / 2, interHalf: int64(s.opt.InterDCNetwork) / 2}
	c.multi = c.cl.Multi()
	c.paxos = newHoldTable()
	c.vol = newVolume(pl.Compiled.NumSteps())
	for range pl.Ring.Nodes {
		c.addStation()
	}
	return c
}

func (c *cassCluster) addStation() {
	st := NewStation(c.sim.opt.Cassandra.Cores)
	st.Follow(&c.sim.now)
	c.nodes = append(c.nodes, st)
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

func (c *cassCluster) setUp(i int, up bool, _ int64) {
	switch {
	case up && !c.up[i]:
		c.down--
	case !up && c.up[i]:
		c.down++
	}
	c.up[i] = up
}

// quota is the replica responses step s waits for from a client in data center dc:
// blockFor of its consistency level and, for an LWT, of its serial level.
func (c *cassCluster) quota(s *design.Step, dc int) *stepQuota {
	qs := c.quotas[s.ID]
	if dc < len(qs) && qs[dc].set {
		return &qs[dc]
	}
	for len(qs) <= dc {
		qs = append(qs, stepQuota{})
	}
	c.quotas[s.ID] = qs
	rep := c.pl.Replicas.Replication
	q := &qs[dc]
	q.level, q.set = c.cl.Quota(s.Consistency, rep, dc), true
	if s.Kind == design.LWT {
		serial := "SERIAL"
		if x := s.Serial; x == "LOCAL_SERIAL" || x == "local_serial" {
			serial = "LOCAL_SERIAL"
		}
		q.serial = c.cl.Quota(serial, rep, dc)
	}
	if !c.multi {
		// One data center: local is every replica.
		q.level.PerDC, q.serial.PerDC = nil, nil
	}
	return q
}

// hop is the one-way network time between nodes a and b.
func (c *cassCluster) hop(a, b int32) int64 {
	switch {
	case a == b:
		return 0
	case c.multi && c.cl.NodeDC(a) != c.cl.NodeDC(b):
		return c.interHalf
	}
	return c.half
}

// clientHop is the one-way network time between a client in data center dc and node n.
func (c *cassCluster) clientHop(dc int, n int32) int64 {
	if c.multi && c.cl.NodeDC(n) != dc {
		return c.interHalf
	}
	return c.half
}

// local reports whether node n is in data center dc.
func (c *cassCluster) local(n int32, dc int) bool { return !c.multi || c.cl.NodeDC(n) == dc }

// enough reports whether the live replicas can meet quota q (Cassandra's
// assureSufficientLiveReplicas): else the request fails at once as unavailable.
func (c *cassCluster) enough(q *plan.Quota, live []int32) bool {
	if q.PerDC == nil {
		return len(live) >= q.Total
	}
	for d, want := range q.PerDC {
		for _, r := range live {
			if want > 0 && c.cl.NodeDC(r) == d {
				want--
			}
		}
		if want > 0 {
			return false
		}
	}
	return true
}

// coordinator is the node a DC-aware, token-aware client sends the request to: a live
// replica of its data center, rotating by seq as the driver shuffles them; else a live
// node of its data center; else a live replica elsewhere.
func (c *cassCluster) coordinator(live []int32, dc int, seq uint64) int32 {
	if !c.multi {
		return live[int(seq%uint64(len(live)))]
	}
	n := 0
	for _, r := range live {
		if c.local(r, dc) {
			n++
		}
	}
	if n > 0 {
		k := int(seq % uint64(n))
		for _, r := range live {
			if c.local(r, dc) {
				if k == 0 {
					return r
				}
				k--
			}
		}
	}
	for i := range c.nodes {
		if c.up[i] && c.local(int32(i), dc) {
			return int32(i)
		}
	}
	return live[int(seq%uint64(len(live)))]
}

func (c *cassCluster) access(a *design.Access, op *workloads.Op, w *reach, t int64) (int64, metrics.Class) {
	dc := 0
	if c.multi {
		dc = c.cl.Of(op.Seq)
	}
	if w.broadcast {
		return c.scan(a.Step, dc, t)
	}
	step := a.Step
	q := c.quota(step, dc)
	c.live = w.replicas
	if c.down > 0 {
		c.liveBuf = c.liveBuf[:0]
		for _, r := range w.replicas {
			if c.up[r] {
				c.liveBuf = append(c.liveBuf, r)
			}
		}
		c.live = c.liveBuf
	}
	if len(c.live) == 0 || !c.enough(&q.level, c.live) || (step.Kind == design.LWT && !c.enough(&q.serial, c.live)) {
		return t + 2*c.half, metrics.Unavailable
	}
	coord := c.coordinator(c.live, dc, op.Seq)
	switch {
	case step.Kind == design.LWT:
		return c.lwt(a, op, w, q, coord, dc, t)
	case step.Kind.IsWrite():
		return c.write(a, op, w, &q.level, coord, dc, t)
	}
	return c.read(a, op, w, &q.level, coord, dc, t)
}

// scan: without the partition key every node of the client's data center (every node
// in a single data center) scans its share of the token ranges; the coordinator waits
// for all of them.
func (c *cassCluster) scan(step *design.Step, dc int, t int64) (int64, metrics.Class) {
	s := c.sim
	m := &s.opt.Cassandra
	k, rf := c.scanShare(step, dc)
	failed := false
	end, served := t, 0
	coord := int32(-1)
	for i := range c.nodes {
		n := int32(i)
		if !c.up[i] || !c.local(n, dc) {
			continue
		}
		if coord < 0 {
			coord = n
		}
		at := t + c.clientHop(dc, coord) + c.hop(coord, n)
		// A replica aborts a read that has run past the request timeout (Cassandra's
		// monitored read commands): a scan of more rows than it reads in that time holds
		// a core for the timeout and fails.
		cost, limit := s.draw(c.scanCost(step, n, k, rf)), int64(m.ReadTimeout)
		_, e, ok := c.nodes[i].Serve(at, min(cost, limit), limit)
		if !ok || cost > limit {
			failed = true // every node still got its share of the scan
			continue
		}
		end = max(end, e+c.hop(n, coord))
		served++
	}
	if failed {
		return t + int64(m.ReadTimeout), metrics.Timeout
	}
	if served == 0 {
		return t + 2*c.half, metrics.Unavailable
	}
	return end + c.clientHop(dc, coord), metrics.OK
}

// write sends a mutation to every live replica and answers when quota q is acknowledged.
func (c *cassCluster) write(a *design.Access, op *workloads.Op, w *reach, q *plan.Quota, coord int32, dc int, t int64) (int64, metrics.Class) {
	s := c.sim
	m := &s.opt.Cassandra
	timeout := int64(m.WriteTimeout)
	c.served.write(a.Step, coord, c.live)
	done, ok := c.round(StageWrite, m.Write, c.live, q, coord, t+c.clientHop(dc, coord), timeout)
	if !ok || done-t > timeout {
		return t + timeout, metrics.Timeout
	}
	if w.keyed {
		s.sizes.add(w.fp, int64(max(a.Bytes, 0)), rowsAdded(a.Step, a), op.Time, a.Step.TTL)
	}
	if inserts(a.Step) {
		for _, r := range c.live {
			c.vol.add(a.Step, int(r), max(int64(a.Rows), 1))
		}
	}
	return done + c.clientHop(dc, coord), metrics.OK
}

// round sends one request of the given cost from the coordinator at time at to each of
// targets and returns when quota q of them have answered (ok=false when too few answer
// before the timeout: a replica drops a request that waited past it).
func (c *cassCluster) round(stage int, cost time.Duration, targets []int32, q *plan.Quota, coord int32, at, timeout int64) (int64, bool) {
	s := c.sim
	c.acks = c.acks[:0]
	for _, r := range targets {
		h := c.hop(coord, r)
		dc := c.dcOf(r)
		if q.PerDC != nil && (dc >= len(q.PerDC) || q.PerDC[dc] == 0) {
			// A replica the level does not count (another data center's for LOCAL_*):
			// it does the work, nobody waits for it.
			c.nodes[r].Post(stage, at+h, s.draw(cost), timeout)
			continue
		}
		_, e, ok := c.nodes[r].ServeAs(stage, at+h, s.draw(cost), timeout)
		if ok {
			c.acks = append(c.acks, ack{e + h, dc})
		}
	}
	return quorumAt(c.acks, q)
}

// quorumAt is when quota q is met by acks, which it sorts by time (ok=false: never).
func quorumAt(acks []ack, q *plan.Quota) (int64, bool) {
	for i := 1; i < len(acks); i++ {
		for j := i; j > 0 && acks[j].at < acks[j-1].at; j-- {
			acks[j], acks[j-1] = acks[j-1], acks[j]
		}
	}
	if q.PerDC == nil || len(q.PerDC) == 1 && q.PerDC[0] == q.Total {
		// Any replicas, or those of a single data center (every ack is from it: the
		// others were posted).
		if len(acks) < q.Total {
			return 0, false
		}
		return acks[q.Total-1].at, true
	}
	var done int64
	for d, want := range q.PerDC {
		if want <= 0 {
			continue
		}
		for _, a := range acks {
			if a.dc == d {
				if want--; want == 0 {
					done = max(done, a.at)
					break
				}
			}
		}
		if want > 0 {
			return 0, false
		}
	}
	return done, true
}

// read asks the replicas quota q needs (the coordinator first when it is one, then the
// least backlogged: per data center for a per-DC quota, else local before remote) and
// waits for all of them.
func (c *cassCluster) read(a *design.Access, op *workloads.Op, w *reach, q *plan.Quota, coord int32, dc int, t int64) (int64, metrics.Class) {
	s := c.sim
	m := &s.opt.Cassandra
	arrive := t + c.clientHop(dc, coord)
	c.pickReplicas(c.live, q, coord, dc, arrive)
	c.served.read(a.Step, coord, c.pick)
	cost := m.Read + m.Row*durationOf(max(a.Rows, 1)-1)
	if w.keyed {
		cost = s.readCost(a, op, w.fp) // readpath.go
	}
	timeout := int64(m.ReadTimeout)
	end := arrive
	for _, r := range c.pick {
		h := c.hop(coord, r)
		_, e, ok := c.nodes[r].ServeAs(StageRead, arrive+h, s.draw(cost), timeout)
		if !ok {
			return t + timeout, metrics.Timeout
		}
		end = max(end, e+h)
	}
	if end-t > timeout {
		return t + timeout, metrics.Timeout
	}
	return end + c.clientHop(dc, coord), metrics.OK
}

// pickReplicas fills c.pick with the replicas of live a request with quota q asks:
// the coordinator first when it is an eligible replica, then the least backlogged at
// time at, per data center for a per-DC quota, else local before remote (the dynamic
// snitch orders by proximity, then by latency).
func (c *cassCluster) pickReplicas(live []int32, q *plan.Quota, coord int32, dc int, at int64) {
	c.pick = c.pick[:0]
	if q.PerDC != nil {
		for d, want := range q.PerDC {
			if want <= 0 {
				continue
			}
			if contains(live, coord) && c.dcOf(coord) == d {
				c.pick = append(c.pick, coord)
				want--
			}
			for ; want > 0 && c.addLeastBacklogged(live, at, d); want-- {
			}
		}
		return
	}
	if contains(live, coord) {
		c.pick = append(c.pick, coord)
	}
	for len(c.pick) < q.Total {
		if !c.addLeastBacklogged(live, at, dc) && !c.addLeastBacklogged(live, at, anyDC) {
			return
		}
	}
}

// anyDC: addLeastBacklogged may pick a replica of any data center.
const anyDC = -1

func (c *cassCluster) dcOf(n int32) int {
	if !c.multi {
		return 0
	}
	return c.cl.NodeDC(n)
}

// addLeastBacklogged adds to c.pick the least backlogged replica of live in data center
// dc (anyDC: any) that c.pick does not hold yet; false when there is none.
func (c *cassCluster) addLeastBacklogged(live []int32, at int64, dc int) bool {
	best := int32(-1)
	var bb int64
	for _, r := range live {
		if (dc != anyDC && c.dcOf(r) != dc) || contains(c.pick, r) {
			continue
		}
		if b := c.nodes[r].Backlog(at); best < 0 || b < bb {
			best, bb = r, b
		}
	}
	if best < 0 {
		return false
	}
	c.pick = append(c.pick, best)
	return true
}

func contains(xs []int32, x int32) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// addNode starts a node joining: it streams its ranges for m.Stream, taking
// m.StreamShare of every other node's cores meanwhile, then takes its tokens. Writes and
// reads keep going to the old replicas until then (pending ranges are not modelled).
func (c *cassCluster) addNode(dc, rack string, at int64) (string, error) {
	m := &c.sim.opt.Cassandra
	idx, err := c.pl.AddNode(dc, rack, 0, c.sim.seed+uint64(at))
	if err != nil {
		return "", err
	}
	c.addStation()
	if c.cl.Multi() != c.multi {
		c.multi = c.cl.Multi()
		clear(c.quotas) // worked out for a single data center
	}
	d := int64(m.Stream)
	for i, st := range c.nodes {
		if i == idx {
			continue
		}
		st.Reserve(at, d, int(math.Ceil(m.StreamShare*float64(st.Workers()))))
	}
	// The new node only answers once it has streamed its data.
	c.nodes[idx].Reserve(at, d, c.nodes[idx].Workers())
	return c.pl.Ring.Nodes[idx].Name, nil
}

func (c *cassCluster) sample(s *Simulator) {
	for i, n := range c.pl.Ring.Nodes {
		s.observe(n.Name, c.up[i], c.nodes[i])
	}
}

func durationOf[T ~int32 | ~int | ~int64](n T) time.Duration { return time.Duration(n) }
