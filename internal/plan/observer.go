package plan

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/hotspot"
	pm "github.com/shardbench/shardbench/internal/placement/mongo"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/schedule"
	"github.com/shardbench/shardbench/workloads"
)

// TopPartitions is how many partitions per table the report lists; the Space-Saving
// summary keeps TopCounters of them so the listed ones are (nearly) exact.
const (
	TopPartitions = 20
	TopCounters   = 512
)

// Observer accumulates the hot-partition analysis of one variant: per table the heaviest
// partitions (Space-Saving), the distinct partitions (exact, then HyperLogLog), reads by
// targeting, rows and bytes written, and per node or shard the replica operations. Memory
// is bounded whatever the number of keys. Not safe for concurrent use.
type Observer struct {
	Placer *Placer
	// steps holds per-step state by Step.ID: every access looks it up, and a slice
	// index is several times cheaper than a map lookup.
	steps  []stepState
	order  []*tableStats
	byName map[string]*tableStats
	// plan holds the steps Op places: Placer.Compiled's, less those of tables another
	// variant's observer places for this one (Borrow).
	plan     *design.Compiled
	borrowed []borrowed
	accs     []design.Access
	pick     []int32
	sched    *schedule.Schedule // the scenario's, for the rate offered while observed
}

// borrowed is a table whose analysis another variant's observer makes.
type borrowed struct {
	name  string // namespace.target, as the owner's byName has it
	owner *Observer
}

// stepState is what the Observer keeps per step: its table and, for a Cassandra read,
// how many replicas its consistency level asks per client data center (Total 0: not
// computed yet).
type stepState struct {
	step  *design.Step // the step the entry belongs to (nil: not seen yet)
	table *tableStats
	quota []Quota // by client data center (see readQuota)
	grows bool    // an insert: it adds rows to its partition (see grows)
	write bool    // the step's Kind.IsWrite, read once per access from here
	cass  bool    // a Cassandra step
	// inserts counts the operations whose insert reached the table through this step,
	// the observed rate a size projection scales to the scenario's ordinary rate.
	inserts int64
}

type tableStats struct {
	name, entity, key string
	target            string
	db                design.Database
	limits            hotspot.Limits
	horizon           hotspot.Horizon
	top               *hotspot.TopK
	distinct          *hotspot.Distinct
	single, multi     int64
	broadcast         int64
	// cass and shards: the replica operations per Cassandra node (Ring.Nodes) and per
	// MongoDB shard. A variant's node loads are the sums over its tables, so that a
	// table shared by variants counts in each.
	cass, shards nodeLoads
	// first and last: store clock (unix ns) of the first and last access; atSeq and
	// atStep: the operation and step of the first access, which order a variant's tables.
	first, last int64
	atSeq       uint64
	atStep      int
	seen        *sightings // of the partitions that proved more than one-offs (sightings.go)
	// chunks is the growth per chunk of a sharded MongoDB collection (by chunk index):
	// the unit a chunk size limits, whatever the shard key values inside.
	chunks []chunkGrowth
}

// chunkGrowth is what inserts added to one chunk: rows and bytes, the times of the first
// and last, and whether more than one shard key value grew it (else it cannot be split).
type chunkGrowth struct {
	rows, bytes, first, last int64
	fp                       uint64 // the first value's fingerprint
	values                   bool   // more than one value
}

// sighting is one access that reached a partition, kept to describe the partition later.
type sighting struct {
	a  design.Access
	op workloads.Op
}

type partInfo struct {
	key, token, hashed, rng, shard string
	replicas                       []string
	chunks                         int // a MongoDB key over several chunks: how many
}

type nodeStats struct{ ops, reads, writes, bytes int64 }

// nodeLoads is a table's replica operations by node (or shard) index.
type nodeLoads []nodeStats

// at is node n's entry, made for a node or shard added during the run.
func (l *nodeLoads) at(n int) *nodeStats {
	if n >= len(*l) {
		*l = append(*l, make([]nodeStats, n+1-len(*l))...)
	}
	return &(*l)[n]
}

func (l *nodeLoads) read(n int) {
	s := l.at(n)
	s.ops++
	s.reads++
}

func (l *nodeLoads) write(n int, bytes int64) {
	s := l.at(n)
	s.ops++
	s.writes++
	s.bytes += bytes
}

// NewObserver observes accesses placed by p, which must be accesses of p.Compiled's steps.
func NewObserver(p *Placer) *Observer {
	return &Observer{Placer: p, plan: p.Compiled, steps: make([]stepState, p.Compiled.NumSteps()), byName: map[string]*tableStats{}}
}

// Borrow makes owner's analysis of target (a table or collection) this observer's: Op
// leaves target's steps alone and Result reports owner's figures for it. The caller
// proves both see the same accesses placed alike (plan.Variants compares the target's
// design signature and layout); owner must observe the same operations.
func (o *Observer) Borrow(target string, owner *Observer) {
	p := o.Placer.Compiled
	for ty := range p.Model.Ops {
		for _, s := range p.Steps(ty) {
			if s.Target == target {
				o.plan = o.plan.Without(target)
				o.borrowed = append(o.borrowed, borrowed{owner: owner, name: s.Namespace + "." + s.Target})
				return
			}
		}
	}
}

// Op places and observes every access of op.
func (o *Observer) Op(op *workloads.Op) {
	o.accs = o.plan.Accesses(op, o.accs[:0])
	for i := range o.accs {
		a := &o.accs[i]
		o.Access(a, op, o.Placer.Place(a, op))
	}
}

// Access observes one placed access.
func (o *Observer) Access(a *design.Access, op *workloads.Op, w *Where) {
	st := o.state(a.Step)
	t := st.table
	if t == nil {
		t = o.table(a.Step, op)
	}
	t.last = max(t.last, op.Time)
	write := st.write
	// Rows and bytes count growth: what inserts add. An update overwrites what is there
	// and a delete removes it, so neither grows a partition (tombstones aside).
	rows, bytes := int64(0), int64(0)
	if write && st.grows {
		rows, bytes = int64(a.Rows), int64(a.Bytes)
		if a.Part == 0 {
			st.inserts++
		}
	}
	if len(w.Key) > 0 {
		fp := w.Fingerprint()
		if rows > 0 && w.Chunk >= 0 && w.Table != nil {
			t.growChunk(w.Chunk, fp, rows, bytes, op.Time)
		}
		// A sighting is kept only for partitions seen twice in a row of their tenure in
		// the summary, so one-off keys cost nothing extra.
		switch t.top.AddAt(fp, w.Key, write, rows, bytes, op.Time) {
		case 1:
			// New in the summary: maybe never seen. A partition already in the summary
			// was seen before, so Distinct has it; skipping it spares a lookup in a
			// large set for every operation on a hot partition.
			t.distinct.Add(fp)
		case 2:
			// A partition evicted and back in the summary may still have its sighting:
			// any access to the partition describes it alike.
			t.seen.see(fp, a, op, t.top)
		}
	} else {
		t.top.Add(0, nil, write, rows, bytes)
	}
	if !write {
		switch {
		case w.Broadcast:
			t.broadcast++
		case a.Parts > 1 || w.Targeting == pm.TargetSome:
			t.multi++
		default:
			t.single++
		}
	}
	if st.cass {
		o.countReplicas(t, st, a, op, w, bytes)
		return
	}
	for _, s := range w.Shards {
		if write {
			t.shards.write(s, bytes)
		} else {
			t.shards.read(s)
		}
	}
}

// growChunk adds an insert's rows and bytes to chunk i.
func (t *tableStats) growChunk(i int, fp uint64, rows, bytes, at int64) {
	if i >= len(t.chunks) {
		t.chunks = append(t.chunks, make([]chunkGrowth, i+1-len(t.chunks))...)
	}
	c := &t.chunks[i]
	if c.rows == 0 {
		c.first, c.fp = at, fp
	} else if fp != c.fp {
		c.values = true
	}
	c.rows += rows
	c.bytes += bytes
	c.last = at
}

func grows(s *design.Step) bool {
	switch s.Statement {
	case "INSERT", "insertOne", "insertMany":
		return true
	}
	return false
}

// countReplicas charges the Cassandra nodes that do the work of an access (a MongoDB
// request charges the shards mongos targets): a write goes to every replica (in every
// data center); a read to as many replicas as its consistency level needs, chosen
// round-robin as a token-aware, load-balanced client spreads them, from its client's
// data center first (LOCAL_* levels: only there, see [Clients]); a scan to every node of
// the client's data center.
func (o *Observer) countReplicas(t *tableStats, st *stepState, a *design.Access, op *workloads.Op, w *Where, bytes int64) {
	reps := w.Replicas
	if st.write {
		for _, r := range reps {
			t.cass.write(int(r), bytes)
		}
		return
	}
	cl := o.Placer.Clients
	if len(reps) == 0 {
		return
	}
	dc := cl.Of(op.Seq)
	if w.Broadcast {
		// A range scan reads each range from the client's data center (every node of
		// a single one).
		for _, r := range reps {
			if !cl.Multi() || cl.NodeDC(r) == dc {
				t.cass.read(int(r))
			}
		}
		return
	}
	q := o.readQuota(st, a.Step, dc)
	if !cl.Multi() {
		k := min(q.Total, len(reps))
		off := int(op.Seq % uint64(len(reps)))
		for i := 0; i < k; i++ {
			t.cass.read(int(reps[(off+i)%len(reps)]))
		}
		return
	}
	o.pick = cl.Pick(o.pick[:0], reps, dc, q, op.Seq)
	for _, r := range o.pick {
		t.cass.read(int(r))
	}
}

// readQuota is the replicas a Cassandra read of step s waits for from a client in data
// center dc (its consistency level's blockFor), worked out once per step and data center.
func (o *Observer) readQuota(st *stepState, s *design.Step, dc int) Quota {
	if dc < len(st.quota) && st.quota[dc].Total > 0 {
		return st.quota[dc]
	}
	for len(st.quota) <= dc {
		st.quota = append(st.quota, Quota{})
	}
	q := Quota{Total: 1}
	if o.Placer.Replicas != nil {
		q = o.Placer.Clients.Quota(s.Consistency, o.Placer.Replicas.Replication, dc)
	}
	st.quota[dc] = q
	return q
}

// state is the per-step entry of s, claimed on first use.
func (o *Observer) state(s *design.Step) *stepState {
	if s.ID >= len(o.steps) {
		o.steps = append(o.steps, make([]stepState, s.ID+1-len(o.steps))...)
	}
	st := &o.steps[s.ID]
	if st.step == nil {
		st.step = s
	} else if st.step != s {
		panic(fmt.Sprintf("plan: step %s is not a step of the observed plan", s))
	}
	return st
}

// table is s's table stats, made when op is the first access to reach the table.
func (o *Observer) table(s *design.Step, op *workloads.Op) *tableStats {
	st := o.state(s)
	if st.table != nil {
		return st.table
	}
	name := s.Namespace + "." + s.Target
	t, ok := o.byName[name]
	if !ok {
		t = &tableStats{
			name: name, target: s.Target, entity: s.Entity, db: s.Database, key: KeyDescription(s),
			top: hotspot.NewTopK(TopCounters), distinct: hotspot.NewDistinct(), seen: newSightings(),
			first: op.Time, atSeq: op.Seq, atStep: s.Index,
		}
		t.limits = hotspot.CassandraLimits
		if s.Database == design.MongoDB {
			mb := 0
			if d := o.Placer.Compiled.Design; d != nil && d.MongoDB != nil {
				mb = d.MongoDB.ChunkSizeMB
			}
			t.limits = hotspot.ChunkLimits(mb)
		}
		t.horizon = horizonOf(s)
		o.byName[name] = t
		o.order = append(o.order, t)
	}
	st.table, st.grows = t, grows(s)
	st.write, st.cass = s.Kind.IsWrite(), s.Database == design.Cassandra
	return t
}

// KeyDescription renders a step's partition key ((a, b)) or shard key {a: 1, b: hashed}
// as reports show it.
func KeyDescription(s *design.Step) string {
	if s.Database == design.MongoDB {
		if len(s.KeyColumns) == 0 {
			return "(unsharded)"
		}
		parts := make([]string, len(s.KeyColumns))
		for i, k := range s.KeyColumns {
			v := "1"
			if i < len(s.Hashed) && s.Hashed[i] {
				v = "hashed"
			}
			parts[i] = k + ": " + v
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return "((" + strings.Join(s.KeyColumns, ", ") + "))"
}

// horizonOf is how long a partition of the step's table keeps growing: its time bucket
// and TTL; an unbucketed table without TTL is followed for a year.
func horizonOf(s *design.Step) hotspot.Horizon {
	switch s.TimeBucket {
	case "hour":
		return hotspot.BucketHorizon(time.Hour, s.TTL)
	case "day":
		return hotspot.BucketHorizon(24*time.Hour, s.TTL)
	case "week":
		return hotspot.BucketHorizon(7*24*time.Hour, s.TTL)
	case "month":
		return hotspot.BucketHorizon(30*24*time.Hour, s.TTL)
	case "year":
		return hotspot.BucketHorizon(365*24*time.Hour, s.TTL)
	}
	if s.TTL > 0 {
		return hotspot.TTLHorizon(s.TTL)
	}
	return hotspot.PeriodHorizon(365*24*time.Hour, 0)
}

// describe places a sighting again and describes its partition: the key as the report
// shows it, and where it lives on the layout as it is now (after any node or shard
// added during a simulated run).
func (o *Observer) describe(s *sighting) partInfo {
	a, op := &s.a, &s.op
	w := o.Placer.Place(a, op)
	pi := partInfo{key: a.KeyString(op)}
	pl := o.Placer
	if a.Step.Database == design.Cassandra && pl.Ring != nil {
		pi.token = w.Token.String()
		pi.rng = pl.Ring.RangeString(w.VNode)
		for _, r := range w.Replicas {
			pi.replicas = append(pi.replicas, pl.Ring.Nodes[r].Name)
		}
		return pi
	}
	if w.HasHash {
		pi.hashed = fmt.Sprint(w.Hashed)
	}
	if w.Table != nil && w.Chunk >= 0 {
		pi.rng = w.Table.RangeString(w.Chunk)
	}
	if len(w.Shards) == 1 {
		pi.shard = pl.Shards[w.Shards[0]]
	}
	if w.Table != nil && w.Chunk < 0 && w.Chunks > 1 {
		pi.chunks = w.Chunks
	}
	return pi
}

// Result is the analysis so far.
func (o *Observer) Result(variant, source, topology string) results.HotspotsVariant {
	hv := results.HotspotsVariant{Variant: variant, Source: source, Topology: topology}
	type reported struct {
		t     *tableStats
		owner *Observer
	}
	tables := make([]reported, 0, len(o.order)+len(o.borrowed))
	for _, t := range o.order {
		tables = append(tables, reported{t, o})
	}
	for _, b := range o.borrowed {
		if t, ok := b.owner.byName[b.name]; ok { // else no access reached it yet
			tables = append(tables, reported{t, b.owner})
		}
	}
	// In the order the stream first reached them, as one observer of every table sees.
	slices.SortFunc(tables, func(x, y reported) int {
		if c := cmp.Compare(x.t.atSeq, y.t.atSeq); c != 0 {
			return c
		}
		return cmp.Compare(x.t.atStep, y.t.atStep)
	})
	var first, last int64
	for i, b := range tables {
		if i == 0 || b.t.first < first {
			first = b.t.first
		}
		last = max(last, b.t.last)
	}
	dbs := map[design.Database]bool{}
	for _, b := range tables {
		dbs[b.t.db] = true
		f, rate := b.owner.growthRate(b.t, first, last)
		pj := projector{start: first, end: last, factor: f, rate: rate, describe: b.owner.describe,
			chunk: b.owner.chunkName(b.t), loaded: b.owner.Placer.Loaded[b.t.target]}
		th := b.t.result(pj)
		if sc := b.owner.Placer.StartChunks(b.t.target); sc != nil {
			th.Shards = slices.Clone(sc)
			for i := range th.Shards {
				if i < len(b.t.shards) {
					th.Shards[i].Ops = b.t.shards[i].ops
				}
			}
		}
		hv.Tables = append(hv.Tables, th)
	}
	var dbNames []string
	for db := range dbs {
		dbNames = append(dbNames, db.String())
	}
	slices.Sort(dbNames)
	hv.Database = strings.Join(dbNames, "+")
	pl := o.Placer
	names := pl.NodeNames()
	stats := make([]nodeStats, len(names))
	for _, b := range tables {
		addNodes(stats, b.t.cass)
		addNodes(stats[pl.ShardOffset():], b.t.shards)
	}
	shards := pl.ShardOffset()
	for i, name := range names {
		nl := results.NodeLoad{Node: name, Database: design.MongoDB.String(), Ops: stats[i].ops, Reads: stats[i].reads, Writes: stats[i].writes, Bytes: stats[i].bytes}
		if i < shards {
			nl.Database = design.Cassandra.String()
		}
		if pl.Ring != nil && i < len(pl.Ring.Nodes) {
			nl.DC, nl.Rack = pl.Ring.Nodes[i].DC, pl.Ring.Nodes[i].Rack
		}
		hv.Nodes = append(hv.Nodes, nl)
	}
	hv.Balance, hv.Balances = results.NodeBalances(hv.Nodes)
	return hv
}

// addNodes adds from's loads to to's, node by node (nodes beyond to's are not reported).
func addNodes(to, from []nodeStats) {
	for i := range min(len(to), len(from)) {
		to[i].ops += from[i].ops
		to[i].reads += from[i].reads
		to[i].writes += from[i].writes
		to[i].bytes += from[i].bytes
	}
}

// projector is what a table's size projections need from its observer: the
// observation's start and end (store clock, ns), the factor from the observed growth
// rate to the ordinary one and where it comes from, how to name partitions and chunks,
// and the table's data loaded before the run.
type projector struct {
	start, end int64
	factor     float64
	rate       string
	describe   func(*sighting) partInfo
	chunk      func(i int) string
	loaded     *TableLoad
}

// MaxProjections is how many projections a table lists, the largest first.
const MaxProjections = 5

// loadedData is a table's loaded data as hotspots.json reports it.
func loadedData(l *TableLoad) *results.LoadedData {
	if l == nil {
		return nil
	}
	ld := &results.LoadedData{Rows: l.Rows, Bytes: l.Bytes, Records: l.Records, Sample: "every record"}
	if l.Sampled() {
		ld.Sample = fmt.Sprintf("the first %d records of each set, then 1 in %d (estimates)", l.Head, l.Stride)
	}
	for i := range l.Partitions[:min(len(l.Partitions), TopPartitions)] {
		p := &l.Partitions[i]
		ld.Largest = append(ld.Largest, results.LoadedPartition{Key: l.KeyString(p), Rows: p.Rows, Bytes: p.Bytes, Exact: p.Exact})
	}
	return ld
}

// loadedSizes is what each of the reported partitions held before the run: a large
// partition's size, else its rows among the records enumerated whole (exact for a
// partition whose records all come first in their sets, such as a busy user's own).
func loadedSizes(l *TableLoad, entries []hotspot.Entry) map[uint64][2]int64 {
	out := map[uint64][2]int64{}
	if l == nil {
		return out
	}
	var rest []uint64
	for _, e := range entries {
		if r, b := l.Size(e.FP); r > 0 {
			out[e.FP] = [2]int64{r, b}
		} else if len(e.Key) > 0 {
			rest = append(rest, e.FP)
		}
	}
	for fp, v := range l.Exact(rest) {
		out[fp] = v
	}
	return out
}

func (t *tableStats) result(pj projector) results.TableHotspots {
	tot := t.top.Totals()
	th := results.TableHotspots{
		Table: t.name, Entity: t.entity, Key: t.key,
		Ops: tot.Ops, Reads: tot.Reads, Writes: tot.Writes, Rows: tot.Rows, Bytes: tot.Bytes,
		SinglePartitionReads: t.single, MultiPartitionReads: t.multi, BroadcastReads: t.broadcast,
		Loaded: loadedData(pj.loaded),
	}
	n, exact, relErr := t.distinct.Estimate()
	th.Partitions, th.PartitionsExact = n, exact
	if !exact {
		th.PartitionsError = relErr
	}
	for _, f := range []float64{0.001, 0.01, 0.1} {
		if s := t.top.Share(f, n); s.Partitions > 0 && tot.Ops > 0 {
			th.Cumulative = append(th.Cumulative, results.SharePoint{Fraction: f, Share: s.Hi})
		}
	}
	// A MongoDB collection's size limit is its chunk size, which bounds chunks (key
	// ranges), not key values: one created_at millisecond is not a partition. Its
	// projections are per chunk; a Cassandra table's per partition.
	byChunk := t.db == design.MongoDB
	top := t.top.Top(TopPartitions)
	sizes := loadedSizes(pj.loaded, top)
	for _, e := range top {
		if len(e.Key) == 0 {
			continue
		}
		sg := t.seen.get(e.FP)
		if sg == nil {
			continue // seen once: not a hot partition, and never described
		}
		pi := pj.describe(sg)
		pl := results.PartitionLoad{
			Key: pi.key, Token: pi.token, Hashed: pi.hashed, Range: pi.rng, Replicas: pi.replicas, Shard: pi.shard, Chunks: pi.chunks,
			Ops: e.Ops, Reads: e.Reads, Writes: e.Writes, Rows: e.Rows, Bytes: e.Bytes, ErrorBound: e.Err,
		}
		if tot.Ops > 0 {
			pl.Share = float64(e.Ops) / float64(tot.Ops)
		}
		ld := sizes[e.FP]
		pl.LoadedRows, pl.LoadedBytes = ld[0], ld[1]
		if !byChunk && (e.Rows > 0 || ld[1] > 0) && pj.end > pj.start {
			g := hotspot.GrowthOf(e.Rows, e.Bytes, e.FirstGrowth, e.LastGrowth, t.horizon, pj.start, pj.end)
			sp := t.project(pj, g, ld, pi.key)
			pl.ProjectedBytes, pl.ProjectedRows = sp.ProjectedBytes, sp.ProjectedRows
			if e.Rows > 0 {
				th.Projections = append(th.Projections, sp)
			}
		}
		th.Top = append(th.Top, pl)
	}
	if byChunk && pj.end > pj.start {
		for i, c := range t.chunks {
			if c.rows == 0 {
				continue
			}
			g := hotspot.GrowthOf(c.rows, c.bytes, c.first, c.last, t.horizon, pj.start, pj.end)
			sp := t.project(pj, g, [2]int64{}, pj.chunk(i))
			sp.Unit = "chunk"
			sp.Splittable = c.values
			switch {
			case sp.ProjectedBytes <= sp.LimitBytes:
			case c.values:
				sp.Exceeds = false
				sp.Note = fmt.Sprintf("grows to %s at %s: the balancer splits it into about %d chunks of %s (%s)",
					hotspot.Bytes(sp.ProjectedBytes), t.horizon.Label, (sp.ProjectedBytes+sp.LimitBytes-1)/sp.LimitBytes, hotspot.Bytes(sp.LimitBytes), t.limits.Source)
			default:
				sp.Note = fmt.Sprintf("one shard key value projected to %s at %s: a jumbo chunk over the %s that cannot be split or moved", hotspot.Bytes(sp.ProjectedBytes), t.horizon.Label, t.limits.Name)
			}
			th.Projections = append(th.Projections, sp)
		}
	}
	slices.SortStableFunc(th.Projections, func(a, b results.SizeProjection) int { return cmp.Compare(b.ProjectedBytes, a.ProjectedBytes) })
	if len(th.Projections) > MaxProjections {
		th.Projections = th.Projections[:MaxProjections]
	}
	return th
}

// project projects growth g of the partition or chunk named key, which held loaded
// (rows, bytes) before the run: added to its growth, except under a TTL, whose steady
// state (the rows of one TTL) already holds the rows written before the run.
func (t *tableStats) project(pj projector, g hotspot.Growth, loaded [2]int64, key string) results.SizeProjection {
	g.Factor, g.Rate = pj.factor, pj.rate
	p := hotspot.Project(g, t.horizon, t.limits)
	if !p.Unbounded {
		if t.horizon.TTL > 0 {
			p.Rows, p.Bytes = max(p.Rows, loaded[0]), max(p.Bytes, loaded[1])
		} else {
			p.Rows, p.Bytes = p.Rows+loaded[0], p.Bytes+loaded[1]
		}
		p.ExceedsBytes = t.limits.Bytes > 0 && p.Bytes > t.limits.Bytes
		p.ExceedsRows = t.limits.Rows > 0 && p.Rows > t.limits.Rows
		p.Exceeds = p.ExceedsBytes || p.ExceedsRows
		p.Note = ""
		if p.Exceeds {
			p.Note = fmt.Sprintf("projected %s, %d rows at %s exceeds %s", hotspot.Bytes(p.Bytes), p.Rows, t.horizon.Label, t.limits.Name)
		}
	}
	sp := results.SizeProjection{
		Key: key, LoadedBytes: loaded[1], LoadedRows: loaded[0], ObservedBytes: g.Bytes, ObservedRows: g.Rows, ObservedS: g.Observed.Seconds(),
		Horizon: t.horizon.Label, ProjectedBytes: p.Bytes, ProjectedRows: p.Rows,
		LimitBytes: t.limits.Bytes, LimitRows: t.limits.Rows, Exceeds: p.Exceeds, Note: p.Note,
		LimitSource: t.limits.Source, Rate: pj.rate,
	}
	if g.Finished && sp.Note == "" {
		sp.Note = "its time bucket ended during the observation: this is what it received"
	}
	return sp
}

// chunkName names chunk i of t's chunk table for the report: its range and shard.
func (o *Observer) chunkName(t *tableStats) func(int) string {
	return func(i int) string {
		ct := o.Placer.Tables[t.target]
		if ct == nil || i >= len(ct.Chunks) {
			return fmt.Sprintf("chunk %d", i)
		}
		return fmt.Sprintf("chunk %s on %s", ct.RangeString(i), ct.Shard(i))
	}
}

// growthRate is the factor from the growth rate t was observed at to the ordinary rate
// its partitions grow at beyond the observation, and a description of it. A run is a
// peak of minutes; projecting it over a day or a year multiplies the peak. The inserting
// operations the scenario's projection.daily names grow at their declared operations a
// day; the others at the scenario's steady rate (projection.steady_rate, else its
// slowest constant phase) over the rate the schedule offered while observed.
func (o *Observer) growthRate(t *tableStats, start, end int64) (float64, string) {
	m := o.Placer.Compiled.Model
	if m == nil || m.Scenario == nil || end <= start {
		return 1, "the observed rate"
	}
	sc := m.Scenario
	counts := map[string]int64{}
	var names []string
	for i := range o.steps {
		st := &o.steps[i]
		if st.table == t && st.grows && st.inserts > 0 {
			if _, ok := counts[st.step.Op]; !ok {
				names = append(names, st.step.Op)
			}
			counts[st.step.Op] += st.inserts
		}
	}
	if len(names) == 0 {
		return 1, "the observed rate"
	}
	slices.Sort(names)
	offered, wall := o.offered(start, end)
	steady, src := sc.SteadyRate()
	fSteady, steadyLabel := 1.0, "the observed rate (no steady phase or projection.steady_rate)"
	if steady > 0 && offered > 0 {
		fSteady = steady / (offered / wall)
		steadyLabel = fmt.Sprintf("steady rate %s ops/s (%s), %.3g× the rate observed", trimRate(steady), src, fSteady)
	}
	secs := float64(end-start) / 1e9
	var observed, ordinary float64
	var declared []string
	for _, op := range names {
		r := float64(counts[op]) / secs
		observed += r
		// The table keeps its share of the operation's traffic (an operation that
		// inserts here for 70% of its calls does so at the ordinary rate too): the
		// declared operations a day over those the schedule offered while observed.
		if d := sc.DailyOps(op); d > 0 && offered > 0 && sc.Mix.Total() > 0 {
			if n := offered * mixShare(sc.Mix, op); n > 0 {
				ordinary += r * (d / 86400) / (n / secs)
				declared = append(declared, fmt.Sprintf("%s %s a day", op, trimRate(d)))
				continue
			}
		}
		ordinary += r * fSteady
	}
	f := ordinary / observed
	switch {
	case len(declared) == len(names):
		return f, fmt.Sprintf("declared daily profile (%s), %.3g× the rate observed", strings.Join(declared, ", "), f)
	case len(declared) > 0:
		return f, fmt.Sprintf("declared daily profile (%s), the rest at the %s", strings.Join(declared, ", "), steadyLabel)
	}
	return f, steadyLabel
}

// mixShare is op's share of the mix's weights.
func mixShare(mix scenario.Weights, op string) float64 {
	for _, w := range mix {
		if w.Name == op {
			return w.Weight / mix.Total()
		}
	}
	return 0
}

// offered is how many operations the scenario's schedule offers between store times
// start and end, and over how many run seconds.
func (o *Observer) offered(start, end int64) (n, wall float64) {
	m := o.Placer.Compiled.Model
	scale := m.Scale
	if scale <= 0 {
		scale = 1
	}
	if o.sched == nil {
		o.sched = schedule.New(m.Scenario)
	}
	w0 := time.Duration(float64(start-m.Start) / scale)
	w1 := time.Duration(float64(end-m.Start) / scale)
	if w1 <= w0 {
		return 0, 0
	}
	return o.sched.CountAt(w1) - o.sched.CountAt(w0), (w1 - w0).Seconds()
}

// trimRate writes a rate or count briefly: 20000 → "20k", 1e6 → "1M".
func trimRate(x float64) string {
	switch {
	case x >= 1e6 && math.Mod(x, 1e5) == 0:
		return strconv.FormatFloat(x/1e6, 'f', -1, 64) + "M"
	case x >= 1e3 && math.Mod(x, 100) == 0:
		return strconv.FormatFloat(x/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}
