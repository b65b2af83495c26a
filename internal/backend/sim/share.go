package sim

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/plan"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/workloads"
)

// reach is where one access goes, as the cluster model needs it.
type reach struct {
	// Cassandra: keyed, the request names its partition, whose fingerprint
	// (hotspot.Fingerprint of the key) fp is: its partition-size slot; broadcast, it does
	// not, and every node scans.
	keyed     bool
	fp        uint64
	broadcast bool
	// replicas: a Cassandra partition's replicas, the primary first (every node for a
	// broadcast); shards: the shards mongos asks.
	replicas []int32
	shards   []int
}

// set makes r the model's view of a placed access. It aliases w's slices: valid until
// the placer's next Place.
func (r *reach) set(w *plan.Where) {
	r.keyed, r.broadcast, r.replicas, r.shards = len(w.Key) > 0, w.Broadcast, w.Replicas, w.Shards
	if r.keyed {
		r.fp = w.Fingerprint()
	}
}

// Share implements backend.Sharing. The variants of a sweep, and a seed's derived
// designs, define most of their tables alike: the same design signature on the same
// layout places the same accesses on the same partitions and replicas, and the
// hot-partition analysis of those accesses is the same (plan.ShareTables, which `plan`
// uses, decides which). Placing a table's keys and analysing them cost as much as
// simulating the cluster, so a group's members do it once: a sharedTable places and
// analyses the table's accesses of every block of the shared stream, called by the first
// member to reach the block before any reads it (workloads.Share); each member reads the
// placements back for its own cluster model and reports the shared analysis as its own.
// The simulated clusters stay each member's own.
//
// Nothing is shared when the scenario adds nodes or shards: a variant's layout then
// changes during the run, its own way.
func (s *Simulator) Share(_ context.Context, members []backend.Virtual, newSource func() (workloads.Source, error)) func([]workloads.Op) {
	var sims []*Simulator
	for _, m := range members {
		if x, ok := m.(*Simulator); ok && x.placer == nil {
			sims = append(sims, x)
		}
	}
	if len(sims) < 2 || changesLayout(s.cfg.Scenario.Events) {
		return nil
	}
	plans := make([]*design.Compiled, len(sims))
	for i, x := range sims {
		plans[i] = x.cfg.Compiled
	}
	// Every member's tables' loaded data at once (members then find theirs ready); an
	// error is each member's own when it prepares.
	_ = plan.PopulationOf(s.cfg.Model).Prepare(plans)
	for _, x := range sims {
		x.prepare()
	}
	g := newCohort(sims)
	if len(g.tables) == 0 {
		return nil
	}
	return g.place
}

func changesLayout(events []scenario.Event) bool {
	for _, e := range events {
		if e.Action == scenario.EventAddNode || e.Action == scenario.EventAddShard {
			return true
		}
	}
	return false
}

// cohort is the simulators that read one shared stream and the tables they share.
type cohort struct {
	tables []*sharedTable
	// analysis guards the shared tables' placers and observers: a member places with
	// them while another may report (after an interrupt, before the stream has ended),
	// and members report at once.
	analysis sync.Mutex
	mu       sync.Mutex // guards the fields below
	blocks   []*blockPlacements
	free     []*blockPlacements // released, for place to reuse
	first    int                // the block number of blocks[0]
	at       []int              // per member: the block number it reads (-1 before the first, math.MaxInt once done)
	peak     int                // the most blocks held at once (tests)
}

// sharedTable places and analyses one table for every member that defines it alike. Its
// placer and observer are its own (a member's serve that member's goroutine), used one
// block at a time by whichever member reaches the block first.
type sharedTable struct {
	plan   *design.Compiled // the first member's plan, its steps on target only
	placer *plan.Placer
	obs    *plan.Observer
	acc    []design.Access
}

// blockPlacements is one block's placements of every shared table.
type blockPlacements struct {
	base   uint64 // Seq of the block's first operation
	n      int
	tables []placements // by sharedTable
}

// placements is one table's placed accesses in a block: operation i's, in access order,
// are recs[start[i]:start[i+1]].
type placements struct {
	start  []uint32
	recs   []placed
	shards []int // MongoDB requests to several shards: each a count, then the shards
}

// placed is one access's reach in 16 bytes. A Cassandra partition's replicas are those of
// its vnode on the member's own ring (the same layout); a request without its partition
// key reaches every node. A MongoDB request goes to one shard or to a list of them, and
// one that names its shard key's values carries their fingerprint: the write-conflict
// model (conflict.go) tells documents apart by it.
type placed struct {
	fp uint64 // the partition's or shard key values' fingerprint, when keyed
	// at: Cassandra, the vnode (-1: no partition key); MongoDB, the shard (-1: several,
	// at placements.shards[off&^placedKeyed]).
	at  int32
	off uint32 // MongoDB: placedKeyed when the request names its shard key's values
}

// placedKeyed marks a keyed MongoDB request in placed.off, above any offset a block's
// shard lists reach.
const placedKeyed = 1 << 31

// newCohort finds the tables two or more of sims place alike (their plan.Placer.ShareKey
// agree) and lends each member those tables' shared analysis. Members whose placer could
// not be built take no part.
func newCohort(sims []*Simulator) *cohort {
	g := &cohort{at: make([]int, len(sims))}
	pls := make([]*plan.Placer, len(sims))
	for i, x := range sims {
		if x.prepErr == nil {
			pls[i] = x.placer
		}
	}
	for _, t := range plan.AlikeTables(pls) {
		owner := sims[t.Placers[0]]
		p := owner.cfg.Compiled.Only(t.Target)
		pl, err := plan.NewPlacer(p, &owner.opt.Cluster)
		if err != nil || pl.ShareKey(t.Target) != owner.placer.ShareKey(t.Target) {
			continue // cannot happen: the owner's placer was built alike; then it is not shared
		}
		st := &sharedTable{plan: p, placer: pl, obs: plan.NewObserver(pl)}
		for _, i := range t.Placers {
			sims[i].borrow(t.Target, len(g.tables), st.obs)
		}
		g.tables = append(g.tables, st)
	}
	for i, x := range sims {
		if x.shares != nil {
			x.group, x.member, x.nth = g, i, make([]uint32, len(g.tables))
			g.at[i] = -1 // before the first block
		} else {
			g.at[i] = math.MaxInt // reads nothing shared
		}
	}
	return g
}

// borrow makes shared table t (index in the group) this member's for target's steps.
func (s *Simulator) borrow(target string, t int, obs *plan.Observer) {
	if s.shares == nil {
		s.shares = make([]int16, s.cfg.Compiled.NumSteps())
		for i := range s.shares {
			s.shares[i] = -1
		}
	}
	for ty := range s.cfg.Model.Ops {
		for _, st := range s.cfg.Compiled.Steps(ty) {
			if st.Target == target {
				s.shares[st.ID] = int16(t)
			}
		}
	}
	s.obs.Borrow(target, obs)
}

// place is the stream's per-block function: every shared table's placements of blk.
func (g *cohort) place(blk []workloads.Op) {
	g.mu.Lock()
	var bp *blockPlacements
	if n := len(g.free); n > 0 {
		bp, g.free = g.free[n-1], g.free[:n-1]
	} else {
		bp = &blockPlacements{tables: make([]placements, len(g.tables))}
	}
	g.mu.Unlock()
	bp.base, bp.n = blk[0].Seq, len(blk)
	g.analysis.Lock()
	for i, st := range g.tables {
		st.place(blk, &bp.tables[i])
	}
	g.analysis.Unlock()
	g.mu.Lock()
	g.blocks = append(g.blocks, bp)
	g.peak = max(g.peak, len(g.blocks))
	g.mu.Unlock()
}

func (st *sharedTable) place(blk []workloads.Op, out *placements) {
	out.start = slices.Grow(out.start[:0], len(blk)+1)[:len(blk)+1]
	out.recs, out.shards = out.recs[:0], out.shards[:0]
	for i := range blk {
		op := &blk[i]
		out.start[i] = uint32(len(out.recs))
		st.acc = st.plan.Accesses(op, st.acc[:0])
		for k := range st.acc {
			a := &st.acc[k]
			w := st.placer.Place(a, op)
			st.obs.Access(a, op, w)
			r := placed{at: -1}
			switch {
			case a.Step.Database == design.Cassandra:
				if !w.Broadcast {
					r.fp, r.at = w.Fingerprint(), int32(w.VNode)
				}
			case len(w.Shards) == 1:
				r.at = int32(w.Shards[0])
			default:
				r.off = uint32(len(out.shards))
				out.shards = append(append(out.shards, len(w.Shards)), w.Shards...)
			}
			if a.Step.Database != design.Cassandra && len(w.Key) > 0 {
				r.fp, r.off = w.Fingerprint(), r.off|placedKeyed
			}
			out.recs = append(out.recs, r)
		}
	}
	out.start[len(blk)] = uint32(len(out.recs))
}

// next is the block after the one member m read last (the first at the start); blocks
// every member has left are released.
func (g *cohort) next(m int) *blockPlacements {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.at[m]++
	low := math.MaxInt
	for _, b := range g.at {
		low = min(low, b)
	}
	for g.first < low && len(g.blocks) > 0 {
		g.free = append(g.free, g.blocks[0])
		g.blocks[0] = nil
		g.blocks = g.blocks[1:]
		g.first++
	}
	i := g.at[m] - g.first
	if i < 0 || i >= len(g.blocks) {
		return nil
	}
	return g.blocks[i]
}

// done says member m reads no more blocks.
func (g *cohort) done(m int) {
	g.mu.Lock()
	g.at[m] = math.MaxInt
	g.mu.Unlock()
}

// shared sets s.r to the reach of access a of op on shared table t, read from the
// group's placements. It reports false when they do not hold it: the member then places
// it itself.
func (s *Simulator) shared(t int16, a *design.Access, op *workloads.Op) bool {
	b := s.follow(op.Seq)
	if b == nil {
		return false
	}
	if op.Seq < b.base {
		s.shareFault(fmt.Errorf("operation %d comes after block %d", op.Seq, b.base))
		return false
	}
	i := op.Seq - b.base
	if s.nthOp != op.Seq {
		s.nthOp = op.Seq
		clear(s.nth)
	}
	tp := &b.tables[t]
	k := tp.start[i] + s.nth[t]
	if k >= tp.start[i+1] {
		s.shareFault(fmt.Errorf("operation %d has more accesses on %s than its shared placements", op.Seq, a.Step.Target))
		return false
	}
	s.nth[t]++
	p := &tp.recs[k]
	r := &s.r
	*r = reach{}
	switch {
	case a.Step.Database == design.Cassandra:
		if p.at < 0 {
			r.broadcast, r.replicas = true, s.placer.AllNodes()
		} else {
			r.keyed, r.fp, r.replicas = true, p.fp, s.placer.Replicas.ReplicasOf(int(p.at))
		}
	case p.at >= 0:
		s.one[0] = int(p.at)
		r.shards = s.one[:]
	default:
		off := int(p.off &^ placedKeyed)
		r.shards = tp.shards[off+1 : off+1+tp.shards[off]]
	}
	if p.off&placedKeyed != 0 {
		r.keyed, r.fp = true, p.fp
	}
	return true
}

// follow moves the member on to the group's placements of the block holding operation
// seq, and returns them (nil after a fault). Every step calls it, not only one that
// reads a shared table: the group frees a block's placements once every member has
// moved past it, and a member whose operations reach no shared table for a while (one
// that drops every operation once its client has fallen behind, or that serves none of
// them) would otherwise hold every block since.
func (s *Simulator) follow(seq uint64) *blockPlacements {
	for seq >= s.blockEnd { // also before the first block: blockEnd is 0
		b := s.group.next(s.member)
		if b == nil {
			s.shareFault(fmt.Errorf("no shared placements for operation %d", seq))
			return nil
		}
		s.block, s.blockEnd = b, b.base+uint64(b.n)
	}
	return s.block
}

// shareFault records the first sign that shared placements and the member's accesses
// disagree, which would be a bug: the run goes on with the member placing for itself, and
// the variant reports the error.
func (s *Simulator) shareFault(err error) {
	if s.shareErr == nil {
		s.shareErr = fmt.Errorf("internal error in shared placements (please report): %w", err)
	}
}
