package analyze

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/hotspot"
	pm "github.com/shardbench/shardbench/internal/placement/mongo"
	"github.com/shardbench/shardbench/internal/plan"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/workloads"
)

// Analyzer analyses the keys of one design variant: feed it the operation stream with Op,
// then call Result. Not safe for concurrent use; analyse variants in parallel with one
// Analyzer each.
type Analyzer struct {
	name string
	pl   *plan.Placer
	seed uint64
	// steps holds per-step state by Step.ID: every access looks it up, and a slice
	// index is several times cheaper than a map lookup.
	steps  []stepState
	byName map[string]*table
	order  []*table
	accs   []design.Access
	ops    int64
	keys   int64

	// scratch, reused for every sampled key
	vals []workloads.Value
	vbuf []byte
	ord  []byte
	pre  []byte
	// derived keys
	bufs  [][]byte
	dvals []workloads.Value
	dkey  []byte
}

// NewAnalyzer returns an Analyzer of the accesses pl places. seed makes the monotonicity samples
// reproducible.
func NewAnalyzer(name string, pl *plan.Placer, seed uint64) *Analyzer {
	return &Analyzer{name: name, pl: pl, seed: seed, steps: make([]stepState, pl.Compiled.NumSteps()), byName: map[string]*table{}}
}

// stepState is what an Analyzer keeps per step: its table, its targeting counts and
// whether it updates a shard key field.
type stepState struct {
	step      *design.Step // the step the entry belongs to (nil: not seen yet)
	table     *table
	dist      *opDist
	keyUpdate int8  // 0: not asked yet, 1: no, 2: yes
	pending   int64 // fan-out counted before dist exists
}

// state is the per-step entry of s, claimed on first use.
func (v *Analyzer) state(s *design.Step) *stepState {
	if s.ID >= len(v.steps) {
		v.steps = append(v.steps, make([]stepState, s.ID+1-len(v.steps))...)
	}
	st := &v.steps[s.ID]
	if st.step == nil {
		st.step = s
	} else if st.step != s {
		panic(fmt.Sprintf("analyze: step %s is not a step of the analysed plan", s))
	}
	return st
}

// table accumulates one table's or collection's numbers.
type table struct {
	name, entity, key string
	db                design.Database
	cols              []string
	hashed            []bool
	targets           int

	// Documents inserted with the whole key are what analyzeShardKey's characteristics
	// describe. A table the stream never inserts into (a catalog loaded beforehand) is
	// described by the other writes with the whole key, then by any request with it.
	inserts, writes, requests *basis

	reads, wr dist
	ins, upd  int64
	del       int64
	keyUpd    int64
	rangeR    []int64 // per chunk (MongoDB) or primary node (Cassandra)
	rangeW    []int64
	rangeIns  []int64
	byStep    map[*design.Step]*opDist
	stepOrder []*design.Step
	// getters derive the whole shard key of the document a MongoDB request touches
	// (nil: not derivable, or a Cassandra table).
	getters []workloads.Getter
}

type dist struct{ single, multi, scatter, fanned int64 }

func (d *dist) total() int64 { return d.single + d.multi + d.scatter }

type opDist struct{ dist }

// basis is the key statistics over one kind of request, with the first field's for a
// compound key.
type basis struct {
	keys   *KeyStats
	prefix *prefixStats
}

// prefixStats are the first key field's distinct values and most common values: for a
// compound key they decide which chunk ranges are hot.
type prefixStats struct {
	distinct *hotspot.Distinct
	top      *hotspot.TopK
	n        int64
	names    map[uint64]string // bounded by maxPrefixNames: a first field of many values is not a hot-range risk
}

const maxPrefixNames = 4096

func newPrefixStats() *prefixStats {
	return &prefixStats{distinct: hotspot.NewDistinct(), top: hotspot.NewTopK(64), names: map[uint64]string{}}
}

// Op places and analyses every access of op.
func (v *Analyzer) Op(op *workloads.Op) {
	v.ops++
	v.accs = v.pl.Compiled.Accesses(op, v.accs[:0])
	v.keys += int64(len(v.accs))
	for i := range v.accs {
		a := &v.accs[i]
		v.access(a, op, v.pl.Place(a, op))
	}
}

// Ops is how many operations were analysed.
func (v *Analyzer) Ops() int64 { return v.ops }

// Keys is how many keys (accesses: one request of an operation to one table or
// collection) were placed and analysed.
func (v *Analyzer) Keys() int64 { return v.keys }

func isInsert(s *design.Step) bool {
	switch s.Statement {
	case "INSERT", "insertOne", "insertMany":
		return true
	}
	return false
}

// pointRequest reports whether a MongoDB request touches one document, so that the
// operation's entity is that document (a find lists several).
func pointRequest(s *design.Step) bool {
	switch s.Statement {
	case "findOne", "updateOne", "deleteOne", "replaceOne", "findOneAndUpdate", "findOneAndDelete":
		return true
	}
	return false
}

func isDelete(s *design.Step) bool {
	return strings.HasPrefix(s.Statement, "DELETE") || strings.HasPrefix(s.Statement, "delete")
}

func (v *Analyzer) access(a *design.Access, op *workloads.Op, w *plan.Where) {
	s := a.Step
	if len(s.KeyColumns) == 0 {
		return // an unsharded collection: nothing to judge
	}
	t := v.table(s)
	write := s.Kind.IsWrite()
	fullKey := len(w.Key) > 0 && (s.Database == design.Cassandra || s.KeyFields == len(s.KeyColumns))

	// Characteristics.
	switch {
	case write && isInsert(s) && fullKey:
		v.offer(t, &t.inserts, a, op, w.Key, nil)
	case t.inserts != nil:
	case t.getters != nil:
		// A collection the stream never inserts into (a catalog loaded beforehand): its
		// documents are known only through the requests, which may not carry the shard
		// key, so the key is derived from the operation's entity: only for requests on
		// one document, whose entity is that document.
		if pointRequest(s) {
			v.derived(t, a, op)
		}
	case write && fullKey:
		v.offer(t, &t.writes, a, op, w.Key, nil)
	case fullKey && t.writes == nil:
		v.offer(t, &t.requests, a, op, w.Key, nil)
	}

	// Fan-out: every partition (shard) a read reaches is a request the cluster serves.
	if !write {
		n := v.fanned(t, a, w)
		t.reads.fanned += n
		if od := v.state(s).dist; od != nil {
			od.fanned += n
		} else {
			v.state(s).pending += n // the step's first access is not its first part
		}
	}
	// Targeting: one count per request of the step, however many partitions it reaches.
	if a.Parts > 1 && a.Part != 0 {
		v.countRange(t, w, write, s)
		return
	}
	var d *dist
	if write {
		d = &t.wr
		switch {
		case isInsert(s):
			t.ins++
		case isDelete(s):
			t.del++
		default:
			t.upd++
			if v.updatesKey(t, a, op) {
				t.keyUpd++
			}
		}
	} else {
		d = &t.reads
	}
	st := v.state(s)
	od := st.dist
	if od == nil {
		od = &opDist{}
		od.fanned, st.pending = st.pending, 0
		t.byStep[s] = od
		t.stepOrder = append(t.stepOrder, s)
		st.dist = od
	}
	c := TargetOf(a, w)
	d.add(c)
	od.add(c)
	v.countRange(t, w, write, s)
}

// fanned is how many partition or shard requests one access makes: a MongoDB request
// one per shard mongos sends it to (a broadcast goes to the shards that own chunks); a
// Cassandra request one per partition (an access is one partition of a multi-partition
// read), or one per node for a scan or index query.
func (v *Analyzer) fanned(t *table, a *design.Access, w *plan.Where) int64 {
	s := a.Step
	if s.Database == design.MongoDB {
		return int64(max(len(w.Shards), 1))
	}
	if w.Broadcast || s.Kind == design.Scan {
		return int64(max(t.targets, 1))
	}
	return 1
}

// Target is how many shards (partitions) a request reaches.
type Target uint8

// Targets, as analyzeShardKey names them (Cassandra: single-partition, multi-partition,
// scan or secondary index).
const (
	SingleShard Target = iota
	MultiShard
	ScatterGather
)

// TargetOf says how a placed request is targeted: scatter-gather when it reaches every
// shard (a MongoDB query without the shard key's prefix, a Cassandra scan or index
// query), multi-shard when it reaches several partitions or chunk ranges, else single.
func TargetOf(a *design.Access, w *plan.Where) Target {
	s := a.Step
	switch {
	case w.Broadcast || s.Kind == design.Scan || s.Kind == design.BroadcastWrite:
		return ScatterGather
	case a.Parts > 1 || w.Targeting == pm.TargetSome || len(w.Shards) > 1:
		return MultiShard
	}
	return SingleShard
}

func (d *dist) add(c Target) {
	switch c {
	case ScatterGather:
		d.scatter++
	case MultiShard:
		d.multi++
	default:
		d.single++
	}
}

// percentages are the shares of single-shard, multi-shard and scatter-gather requests,
// in percent as analyzeShardKey gives them.
func (d *dist) percentages() (single, multi, scatter float64) {
	n := d.total()
	return pct(d.single, n), pct(d.multi, n), pct(d.scatter, n)
}

// countRange charges a point request to its chunk (MongoDB) or the primary owner of its
// token (Cassandra), as analyzeShardKey's numReadsByRange / numWritesByRange do.
func (v *Analyzer) countRange(t *table, w *plan.Where, write bool, s *design.Step) {
	r := -1
	switch {
	case s.Database == design.MongoDB && w.Chunk >= 0:
		r = w.Chunk
	case s.Database == design.Cassandra && !w.Broadcast && len(w.Replicas) > 0:
		r = int(w.Replicas[0])
	}
	if r < 0 {
		return
	}
	grow := func(c []int64) []int64 {
		for len(c) <= r {
			c = append(c, 0)
		}
		return c
	}
	if write {
		t.rangeW = grow(t.rangeW)
		t.rangeW[r]++
		if isInsert(s) {
			t.rangeIns = grow(t.rangeIns)
			t.rangeIns[r]++
		}
		return
	}
	t.rangeR = grow(t.rangeR)
	t.rangeR[r]++
}

// updatesKey reports whether an update step sets a shard key field. It asks the step's
// MongoDB command once: the fields an update sets are the same for every operation.
// Cassandra cannot update primary key columns at all.
func (v *Analyzer) updatesKey(t *table, a *design.Access, op *workloads.Op) bool {
	s := a.Step
	if s.Database != design.MongoDB {
		return false
	}
	st := v.state(s)
	if st.keyUpdate != 0 {
		return st.keyUpdate == 2
	}
	u := false
	if cmd := a.Mongo(op); cmd != nil {
		for _, e := range cmd.Update {
			set, ok := e.Value.(design.D)
			if !ok {
				continue
			}
			for _, f := range set {
				if slices.Contains(s.KeyColumns, f.Key) {
					u = true
				}
			}
		}
	}
	st.keyUpdate = 1
	if u {
		st.keyUpdate = 2
	}
	return u
}

// derived offers the document's whole shard key, computed from the operation with the
// entity's getters, to the requests basis.
func (v *Analyzer) derived(t *table, a *design.Access, op *workloads.Op) {
	for len(v.bufs) < len(t.getters) {
		v.bufs = append(v.bufs, nil)
	}
	v.dvals = v.dvals[:0]
	v.dkey = v.dkey[:0]
	for i, g := range t.getters {
		val := g(op, v.bufs[i][:0])
		if len(val.Bytes) > 0 {
			v.bufs[i] = val.Bytes[:0]
		}
		v.dvals = append(v.dvals, val)
		v.dkey = AppendOrdered(v.dkey, &v.dvals[i])
	}
	v.offer(t, &t.requests, a, op, v.dkey, v.dvals)
}

// offer adds one key to the statistics *b (created on first use). vals are the key's
// values, or nil to take them from the access.
func (v *Analyzer) offer(t *table, b **basis, a *design.Access, op *workloads.Op, key []byte, vals []workloads.Value) {
	if *b == nil {
		*b = &basis{keys: NewKeyStats(v.seed ^ hotspot.Fingerprint([]byte(t.name)))}
		// The first field of a compound key decides chunk ranges on MongoDB; Cassandra
		// hashes the whole partition key, so its prefix says nothing about placement.
		if len(t.cols) > 1 && t.db == design.MongoDB {
			(*b).prefix = newPrefixStats()
		}
	}
	k, p := (*b).keys, (*b).prefix
	sample := k.Add(key, int64(max(a.Bytes, 0)))
	if k.wantName() {
		if vals != nil {
			k.name(describe(t.cols, vals))
		} else {
			k.name(a.KeyString(op))
		}
	}
	if p == nil && !sample {
		return
	}
	if vals != nil {
		v.vals = append(v.vals[:0], vals...)
	} else {
		v.vals, v.vbuf = a.ShardKey(op, v.vals[:0], v.vbuf)
	}
	if p != nil && len(v.vals) > 0 {
		v.pre = AppendOrdered(v.pre[:0], &v.vals[0])
		fp := hotspot.Fingerprint(v.pre)
		seen := p.top.Add(fp, v.pre, true, 1, 0)
		if seen == 1 {
			p.distinct.Add(fp) // else in the summary already: seen before (see KeyStats.Add)
		}
		if seen <= 2 && len(p.names) < maxPrefixNames {
			if _, ok := p.names[fp]; !ok {
				p.names[fp] = v.vals[0].String()
			}
		}
		p.n++
	}
	if !sample {
		return
	}
	v.ord = v.ord[:0]
	prefix := 0
	for i := range v.vals {
		if i < len(t.hashed) && t.hashed[i] {
			// A hashed field orders the index by its hash, as mongod's hashed index does.
			mv := design.MongoValue(&v.vals[i])
			v.ord = append(v.ord, 0x12)
			v.ord = binary.BigEndian.AppendUint64(v.ord, uint64(pm.Hash(&mv))^(1<<63))
		} else {
			v.ord = AppendOrdered(v.ord, &v.vals[i])
		}
		if i == 0 {
			prefix = len(v.ord)
		}
	}
	k.Keep(v.ord, prefix)
}

func (v *Analyzer) table(s *design.Step) *table {
	st := v.state(s)
	if st.table != nil {
		return st.table
	}
	name := s.Namespace + "." + s.Target
	t, ok := v.byName[name]
	if !ok {
		t = &table{
			name: name, entity: s.Entity, db: s.Database, key: plan.KeyDescription(s),
			cols: s.KeyColumns, hashed: s.Hashed,
			byStep: map[*design.Step]*opDist{},
		}
		if s.Database == design.MongoDB {
			t.targets = len(v.pl.Shards)
			if ct := v.pl.Tables[s.Target]; ct != nil {
				// The shards that own chunks are where the data can go.
				owners := map[int]bool{}
				for _, ch := range ct.Chunks {
					owners[ch.Shard] = true
				}
				t.targets = max(len(owners), len(v.pl.Shards))
			}
		} else if v.pl.Ring != nil {
			t.targets = len(v.pl.Ring.Nodes)
		}
		t.getters = v.docGetters(s)
		v.byName[name] = t
		v.order = append(v.order, t)
	}
	st.table = t
	return t
}

// docGetters compiles the collection's shard key fields into getters of the entity's
// logical fields (a document field names its logical field, or has the same name); nil
// when one of them is not derivable from an operation.
func (v *Analyzer) docGetters(s *design.Step) []workloads.Getter {
	d := v.pl.Compiled.Design
	if s.Database != design.MongoDB || d.MongoDB == nil || v.pl.Compiled.Model == nil {
		return nil
	}
	coll, ok := d.MongoDB.Collections.Get(s.Target)
	if !ok {
		return nil
	}
	var gs []workloads.Getter
	for _, col := range s.KeyColumns {
		f, ok := coll.Fields.Get(col)
		if !ok || f.Value != nil {
			return nil
		}
		name := col
		if f.Field != "" {
			name = f.Field
		}
		g, _, err := v.pl.Compiled.Model.Getter(coll.Entity, name)
		if err != nil {
			return nil
		}
		gs = append(gs, g)
	}
	return gs
}

// describe renders a derived shard key for people.
func describe(cols []string, vals []workloads.Value) string {
	parts := make([]string, len(vals))
	for i := range vals {
		parts[i] = cols[i] + ": " + vals[i].String()
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// Result is the variant's analysis: every table's numbers, flags and verdict.
func (v *Analyzer) Result() results.AnalysisVariant {
	out := results.AnalysisVariant{Variant: v.name, Database: v.pl.Compiled.Design.DatabaseName(), Topology: v.pl.Topology()}
	for _, t := range v.order {
		k := v.tableResult(t)
		Judge(&k, Context{FirstHashed: len(t.hashed) > 0 && t.hashed[0], Hashed: slices.Contains(t.hashed, true), Columns: t.cols, HashedColumns: t.hashed})
		out.Tables = append(out.Tables, k)
	}
	return out
}

func pct(n, of int64) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) * 100 / float64(of)
}

func (v *Analyzer) tableResult(t *table) results.KeyAnalysis {
	k := results.KeyAnalysis{Table: t.name, Entity: t.entity, Database: t.db.String(), Key: t.key, Targets: t.targets}
	b, basis := t.inserts, "inserts"
	if b == nil {
		b, basis = t.writes, "writes"
	}
	if b == nil {
		b, basis = t.requests, "requests"
	}
	if b != nil {
		ks := b.keys
		c := ks.Result(len(t.cols) > 1 && t.db == design.MongoDB)
		kc := results.KeyCharacteristics{
			NumDocs: c.NumDocs, NumDistinctValues: c.Distinct, NumDistinctValuesExact: c.Exact,
			NumDistinctValuesRelError: c.RelErr, AvgDocSizeBytes: int64(c.AvgSize + 0.5), Basis: basis,
			Monotonicity: monotonicity(c.Monotonicity, c.SampleSize),
		}
		kc.IsUnique = c.Exact && c.Distinct == c.NumDocs
		if len(t.hashed) > 0 && t.hashed[0] {
			// mongod does not compute monotonicity for a hashed prefix: a hashed index
			// orders by hash, so inserts are never monotonic.
			kc.Monotonicity.Type, kc.Monotonicity.Direction = NotMonotonic, ""
		}
		if c.WithinPrefix != nil {
			m := monotonicity(*c.WithinPrefix, c.SampleSize)
			kc.MonotonicityWithinPrefix = &m
		}
		for _, e := range c.Common {
			kc.MostCommonValues = append(kc.MostCommonValues, results.ValueFrequency{
				Value: ks.Name(e.Key), Frequency: e.Frequency, Share: e.Share, FrequencyError: e.Err,
			})
		}
		k.KeyCharacteristics = kc
	} else {
		k.KeyCharacteristics = results.KeyCharacteristics{Monotonicity: results.Monotonicity{Type: Unknown}, Basis: "none"}
	}
	if b != nil && b.prefix != nil && b.prefix.n > 0 {
		p := b.prefix
		n, _, _ := p.distinct.Estimate()
		pc := &results.PrefixCharacteristics{Field: t.cols[0], NumDistinctValues: n}
		for _, e := range p.top.Top(TopValues) {
			pc.MostCommonValues = append(pc.MostCommonValues, results.ValueFrequency{
				Value: p.name(e.FP, e.Key), Frequency: e.Ops, Share: float64(e.Ops) / float64(p.n), FrequencyError: e.Err,
			})
		}
		k.PrefixCharacteristics = pc
	}
	rt := t.reads.total()
	k.ReadDistribution = results.ReadDistribution{SampleSize: results.ReadSampleSize{Total: rt, Find: rt}, NumReadsByRange: t.rangeR}
	rd := &k.ReadDistribution
	rd.PercentageOfSingleShardReads, rd.PercentageOfMultiShardReads, rd.PercentageOfScatterGatherReads = t.reads.percentages()
	if rt > 0 {
		rd.FanOut = float64(t.reads.fanned) / float64(rt)
	}
	wt := t.wr.total()
	k.WriteDistribution = results.WriteDistribution{
		SampleSize:                  results.WriteSampleSize{Total: wt, Insert: t.ins, Update: t.upd, Delete: t.del},
		PercentageOfShardKeyUpdates: pct(t.keyUpd, wt),
		NumWritesByRange:            t.rangeW,
	}
	wd := &k.WriteDistribution
	wd.PercentageOfSingleShardWrites, wd.PercentageOfMultiShardWrites, wd.PercentageOfScatterGatherWrites = t.wr.percentages()
	for _, s := range t.stepOrder {
		d := t.byStep[s]
		ot := results.OpTargeting{Op: s.Op, Statement: s.Statement, Filter: s.Filter, Requests: d.total(), SingleShard: d.single, MultiShard: d.multi, ScatterGather: d.scatter, Fanned: d.fanned}
		if s.Kind.IsWrite() {
			k.WriteDistribution.ByOperation = append(k.WriteDistribution.ByOperation, ot)
		} else {
			k.ReadDistribution.ByOperation = append(k.ReadDistribution.ByOperation, ot)
		}
	}
	k.Ranges = v.rangeNames(t, max(len(t.rangeR), len(t.rangeW)))
	if len(t.rangeIns) > 0 && t.ins > 0 {
		i := 0
		for j, n := range t.rangeIns {
			if n > t.rangeIns[i] {
				i = j
			}
		}
		k.HottestInsertRange = &results.RangeShare{Range: k.Ranges[i], Share: float64(t.rangeIns[i]) / float64(t.ins), Ranges: len(k.Ranges)}
	}
	return k
}

func (v *Analyzer) rangeNames(t *table, n int) []string {
	out := make([]string, n)
	for i := range out {
		if t.db == design.MongoDB {
			coll := t.name[strings.IndexByte(t.name, '.')+1:]
			if ct := v.pl.Tables[coll]; ct != nil && i < len(ct.Chunks) {
				out[i] = ct.RangeString(i) + " on " + ct.Shard(i)
				continue
			}
		} else if v.pl.Ring != nil && i < len(v.pl.Ring.Nodes) {
			out[i] = v.pl.Ring.Nodes[i].Name
			continue
		}
		out[i] = "?"
	}
	return out
}

func monotonicity(m Monotonicity, sample int) results.Monotonicity {
	return results.Monotonicity{Type: m.Type, RecordIDCorrelationCoefficient: m.Coefficient, Direction: m.Direction, SampleSize: sample}
}

// name is how people read a first-field value: its recorded form, or its hex.
func (p *prefixStats) name(fp uint64, key []byte) string {
	if n, ok := p.names[fp]; ok {
		return n
	}
	return hex.EncodeToString(key)
}
