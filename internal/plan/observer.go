package plan

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/hotspot"
	pc "github.com/shardbench/shardbench/internal/placement/cassandra"
	pm "github.com/shardbench/shardbench/internal/placement/mongo"
	"github.com/shardbench/shardbench/internal/results"
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
	// plan holds the steps Op places: Placer.Plan's, less those of tables another
	// variant's observer places for this one (Borrow).
	plan     *design.Plan
	borrowed []borrowed
	accs     []design.Access
}

// borrowed is a table whose analysis another variant's observer makes.
type borrowed struct {
	name  string // namespace.target, as the owner's byName has it
	owner *Observer
}

// stepState is what the Observer keeps per step: its table and, for a Cassandra read,
// how many replicas its consistency level asks (0: not computed yet).
type stepState struct {
	step  *design.Step // the step the entry belongs to (nil: not seen yet)
	table *tableStats
	need  int
	grows bool // an insert: it adds rows to its partition (see grows)
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
	cass, shards []nodeStats
	// first and last: store clock (unix ns) of the first and last access; atSeq and
	// atStep: the operation and step of the first access, which order a variant's tables.
	first, last int64
	atSeq       uint64
	atStep      int
	// seen keeps, per partition the summary holds that proved more than a one-off, an
	// access and operation that reached it, from which the report describes it (human
	// key, placement) at the end. Describing costs microseconds and most partitions that
	// enter the summary leave it again, so it is done only for the few reported. It is
	// pruned to the partitions the summary holds, so it stays bounded.
	seen map[uint64]sighting
}

// sighting is one access that reached a partition, kept to describe the partition later.
type sighting struct {
	a  design.Access
	op workloads.Op
}

type partInfo struct {
	key, token, hashed, rng, shard string
	replicas                       []string
}

type nodeStats struct{ ops, reads, writes, bytes int64 }

// NewObserver observes accesses placed by p, which must be accesses of p.Plan's steps.
func NewObserver(p *Placer) *Observer {
	return &Observer{Placer: p, plan: p.Plan, steps: make([]stepState, p.Plan.NumSteps()), byName: map[string]*tableStats{}}
}

// Borrow makes owner's analysis of target (a table or collection) this observer's: Op
// leaves target's steps alone and Result reports owner's figures for it. The caller
// proves both see the same accesses placed alike (plan.Variants compares the target's
// design signature and layout); owner must observe the same operations.
func (o *Observer) Borrow(target string, owner *Observer) {
	p := o.Placer.Plan
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
	write := a.Step.Kind.IsWrite()
	// Rows and bytes count growth: what inserts add. An update overwrites what is there
	// and a delete removes it, so neither grows a partition (tombstones aside).
	rows, bytes := int64(0), int64(0)
	if write && st.grows {
		rows, bytes = int64(a.Rows), int64(a.Bytes)
	}
	if len(w.Key) > 0 {
		fp := w.Fingerprint()
		// A sighting is kept only for partitions seen twice in a row of their tenure in
		// the summary, so one-off keys cost nothing extra.
		switch t.top.Add(fp, w.Key, write, rows, bytes) {
		case 1:
			// New in the summary: maybe never seen. A partition already in the summary
			// was seen before, so Distinct has it; skipping it spares a lookup in a
			// large set for every operation on a hot partition.
			t.distinct.Add(fp)
		case 2:
			// A partition evicted and back in the summary may still have its sighting:
			// any access to the partition describes it alike.
			if _, ok := t.seen[fp]; !ok {
				t.seen[fp] = sighting{a: *a, op: *op}
				if len(t.seen) > 4*TopCounters {
					t.prune()
				}
			}
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
	o.countNodes(t, a, op, w, write, bytes)
}

func grows(s *design.Step) bool {
	switch s.Statement {
	case "INSERT", "insertOne", "insertMany":
		return true
	}
	return false
}

// countNodes charges the nodes that do the work: a Cassandra write goes to every replica;
// a read to as many replicas as its consistency level needs, chosen round-robin as a
// token-aware, load-balanced client spreads them; a scan to every node. A MongoDB request
// goes to the shards mongos targets.
func (o *Observer) countNodes(t *tableStats, a *design.Access, op *workloads.Op, w *Where, write bool, bytes int64) {
	add := func(list *[]nodeStats, n int, b int64) {
		for len(*list) <= n {
			*list = append(*list, nodeStats{}) // a node or shard added during the run
		}
		s := &(*list)[n]
		s.ops++
		if write {
			s.writes++
			s.bytes += b
		} else {
			s.reads++
		}
	}
	if a.Step.Database == design.Cassandra {
		reps := w.Replicas
		if write || w.Broadcast || len(reps) == 0 {
			for _, r := range reps {
				add(&t.cass, int(r), bytes)
			}
			return
		}
		k := min(o.readNeed(a.Step), len(reps))
		off := int(op.Seq % uint64(len(reps)))
		for i := 0; i < k; i++ {
			add(&t.cass, int(reps[(off+i)%len(reps)]), 0)
		}
		return
	}
	for _, s := range w.Shards {
		add(&t.shards, s, bytes)
	}
}

func (o *Observer) readNeed(s *design.Step) int {
	st := o.state(s)
	if st.need > 0 {
		return st.need
	}
	n := 1
	if cl, err := pc.ParseConsistency(s.Consistency); err == nil && o.Placer.Replicas != nil {
		dc := ""
		if len(o.Placer.Ring.Nodes) > 0 {
			dc = o.Placer.Ring.Nodes[0].DC
		}
		n = max(cl.Need(o.Placer.Replicas.Replication, dc).Total, 1)
	}
	st.need = n
	return n
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
			top: hotspot.NewTopK(TopCounters), distinct: hotspot.NewDistinct(), seen: map[uint64]sighting{},
			first: op.Time, atSeq: op.Seq, atStep: s.Index,
		}
		t.limits = hotspot.CassandraLimits
		if s.Database == design.MongoDB {
			t.limits = hotspot.MongoChunkLimits
		}
		t.horizon = horizonOf(s)
		o.byName[name] = t
		o.order = append(o.order, t)
	}
	st.table, st.grows = t, grows(s)
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
	return pi
}

func (t *tableStats) prune() {
	keep := map[uint64]bool{}
	for _, e := range t.top.Top(-1) {
		keep[e.FP] = true
	}
	for fp := range t.seen {
		if !keep[fp] {
			delete(t.seen, fp)
		}
	}
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
	span := time.Duration(last - first)
	dbs := map[design.Database]bool{}
	for _, b := range tables {
		dbs[b.t.db] = true
		th := b.t.result(span, b.owner.describe, b.owner.Placer.Loaded[b.t.target])
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
	loads := make([]int64, len(stats))
	var total int64
	for i, n := range stats {
		loads[i] = n.ops
		total += n.ops
	}
	im := hotspot.Measure(hotspot.Loads(loads))
	for i, name := range names {
		nl := results.NodeLoad{Node: name, Ops: stats[i].ops, Reads: stats[i].reads, Writes: stats[i].writes, Bytes: stats[i].bytes}
		if pl.Ring != nil && i < len(pl.Ring.Nodes) {
			nl.DC, nl.Rack = pl.Ring.Nodes[i].DC, pl.Ring.Nodes[i].Rack
		}
		if total > 0 {
			nl.Share = float64(nl.Ops) / float64(total)
		}
		if i < len(im.Deviation) {
			nl.Deviation = im.Deviation[i]
			nl.Over30 = abs(nl.Deviation) > hotspot.SeedDeviation
		}
		hv.Nodes = append(hv.Nodes, nl)
	}
	hv.Balance = results.Imbalance{MaxOverMean: im.MaxOverMean, CV: im.CV, Gini: im.Gini}
	for _, i := range im.Over30 {
		hv.Balance.Over30 = append(hv.Balance.Over30, hv.Nodes[i].Node)
	}
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

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

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

// project is a partition's projected size at its horizon: what it held before the run
// plus its growth, except under a TTL, whose steady state (the rows of one TTL) already
// holds the rows written before the run.
func project(g hotspot.Growth, loaded [2]int64, h hotspot.Horizon, lim hotspot.Limits) hotspot.Projection {
	p := hotspot.Project(g, h, lim)
	if h.TTL > 0 {
		p.Rows, p.Bytes = max(p.Rows, loaded[0]), max(p.Bytes, loaded[1])
	} else {
		p.Rows, p.Bytes = p.Rows+loaded[0], p.Bytes+loaded[1]
	}
	if p.Unbounded {
		return p
	}
	p.ExceedsBytes = lim.Bytes > 0 && p.Bytes > lim.Bytes
	p.ExceedsRows = lim.Rows > 0 && p.Rows > lim.Rows
	p.Exceeds = p.ExceedsBytes || p.ExceedsRows
	if p.Exceeds {
		p.Note = fmt.Sprintf("projected %s, %d rows at %s exceeds %s", hotspot.Bytes(p.Bytes), p.Rows, h.Label, lim.Name)
	}
	return p
}

func (t *tableStats) result(span time.Duration, describe func(*sighting) partInfo, loaded *TableLoad) results.TableHotspots {
	tot := t.top.Totals()
	th := results.TableHotspots{
		Table: t.name, Entity: t.entity, Key: t.key,
		Ops: tot.Ops, Reads: tot.Reads, Writes: tot.Writes, Rows: tot.Rows, Bytes: tot.Bytes,
		SinglePartitionReads: t.single, MultiPartitionReads: t.multi, BroadcastReads: t.broadcast,
		Loaded: loadedData(loaded),
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
	top := t.top.Top(TopPartitions)
	sizes := loadedSizes(loaded, top)
	for _, e := range top {
		if len(e.Key) == 0 {
			continue
		}
		sg, ok := t.seen[e.FP]
		if !ok {
			continue // seen once: not a hot partition, and never described
		}
		pi := describe(&sg)
		pl := results.PartitionLoad{
			Key: pi.key, Token: pi.token, Hashed: pi.hashed, Range: pi.rng, Replicas: pi.replicas, Shard: pi.shard,
			Ops: e.Ops, Reads: e.Reads, Writes: e.Writes, Rows: e.Rows, Bytes: e.Bytes, ErrorBound: e.Err,
		}
		if tot.Ops > 0 {
			pl.Share = float64(e.Ops) / float64(tot.Ops)
		}
		ld := sizes[e.FP]
		pl.LoadedRows, pl.LoadedBytes = ld[0], ld[1]
		if (e.Writes > 0 || ld[1] > 0) && span > 0 {
			p := project(hotspot.Growth{Rows: e.Rows, Bytes: e.Bytes, Span: span}, ld, t.horizon, t.limits)
			pl.ProjectedBytes, pl.ProjectedRows = p.Bytes, p.Rows
			if len(th.Projections) < 5 && e.Writes > 0 {
				th.Projections = append(th.Projections, results.SizeProjection{
					Key: pi.key, LoadedBytes: ld[1], LoadedRows: ld[0], ObservedBytes: e.Bytes, ObservedRows: e.Rows, ObservedS: span.Seconds(),
					Horizon: t.horizon.Label, ProjectedBytes: p.Bytes, ProjectedRows: p.Rows,
					LimitBytes: t.limits.Bytes, LimitRows: t.limits.Rows, Exceeds: p.Exceeds, Note: p.Note,
				})
			}
		}
		th.Top = append(th.Top, pl)
	}
	return th
}
