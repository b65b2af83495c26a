package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/hotspot"
	pc "github.com/shardbench/shardbench/internal/placement/cassandra"
	pm "github.com/shardbench/shardbench/internal/placement/mongo"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/workloads"
)

// Where is where one access goes. It aliases the Placer's buffers: valid until the next
// Place.
type Where struct {
	// Key is the serialised partition key (Cassandra: the bytes the native protocol
	// sends, from which Murmur3 gives the token) or the canonical shard key the request
	// supplies (MongoDB). Empty for a request without one.
	Key []byte
	// Broadcast: a Cassandra request without its partition key (a scan or secondary index
	// query reaching every node), or a MongoDB query mongos must send to every shard.
	Broadcast bool

	// Cassandra: the token, the vnode owning it (index into Ring.Tokens) and the replicas
	// (indexes into Ring.Nodes, the primary first).
	Token    pc.Token
	VNode    int
	Replicas []int32

	// MongoDB: the collection's chunk table (nil: unsharded, on the primary shard), the
	// chunk of a point request (-1 when the request spans chunks), how many chunks a
	// request that is not a point request reaches (0 for a point request), the hashed
	// value of a hashed shard key's field, and the shards asked (indexes into
	// Cluster.ShardNames).
	Table     *pm.ChunkTable
	Chunk     int
	Chunks    int
	Hashed    int64
	HasHash   bool
	Targeting pm.Targeting
	Shards    []int

	fp    uint64 // Fingerprint's, once computed (hasFP)
	hasFP bool
}

// Fingerprint is hotspot.Fingerprint of Key, computed once per access however many
// callers want it (the hot-partition observer, the simulator's partition sizes).
func (w *Where) Fingerprint() uint64 {
	if !w.hasFP {
		w.fp, w.hasFP = hotspot.Fingerprint(w.Key), true
	}
	return w.fp
}

// Placer places a design's accesses on a cluster layout, exactly as the databases do:
// Murmur3 tokens on a vnode ring with the keyspace's replication (Cassandra), the chunk
// table of every sharded collection and mongos's targeting rules (MongoDB). One Placer
// serves one goroutine; it allocates nothing per access once warm.
type Placer struct {
	Compiled *design.Compiled
	// Ring and Replicas: nil without a Cassandra part; Clients the data center of each
	// operation's client on the ring.
	Ring     *pc.Ring
	Replicas *pc.Placement
	Clients  *Clients
	// Shards: the MongoDB shard names; Tables the chunk table per collection (absent:
	// unsharded).
	Shards []string
	Tables map[string]*pm.ChunkTable
	// Loaded is the data each table or collection holds before the run (absent: none).
	Loaded map[string]*TableLoad
	// startChunks: each sharded collection's chunks per shard as the run starts.
	startChunks map[string][]results.ShardChunks

	all     []int32 // every Cassandra node
	allByT  map[*pm.ChunkTable][]int
	primary []int
	// steps: per MongoDB step (by Step.ID) its collection's chunk table and the shards
	// owning its chunks, so that Place does not look them up by name for every access.
	steps []placerStep

	w Where
	// shards is the buffer Where.Shards is built in. Where.Shards also points at
	// primary or allByT's lists, which must never be appended to, so a request's
	// shards are always built here rather than in what Where.Shards last held.
	shards []int
	key    []byte
	vals   []workloads.Value
	mv     []pm.Value
	hk     []pm.Value
	prefix pm.PrefixRouter
}

type placerStep struct {
	step   *design.Step // nil: not a MongoDB step
	table  *pm.ChunkTable
	owners []int
	// prefix and hashed are keyPrefix and the pattern's hashed field, which hold for
	// every access of the step: worked out once, not per access.
	prefix, hashed int
}

// newPlacerStep is a MongoDB step's entry, on chunk table t (nil: unsharded).
func newPlacerStep(s *design.Step, t *pm.ChunkTable, owners []int) placerStep {
	ps := placerStep{step: s, table: t, owners: owners, hashed: -1}
	if t != nil {
		ps.prefix, ps.hashed = keyPrefix(s.KeyColumns, t.Pattern), t.Pattern.HashedField()
	}
	return ps
}

// NewPlacer builds the placement of one design variant on c, from the data that exists
// before the run (PopulationOf the plan's model): a sharded collection whose key starts
// with a hashed field is pre-split as shardCollection does; one with a ranged or compound
// key has the chunks the balancer leaves over its loaded data at the design's chunk size
// (see [pm.SplitByData]: a shard-key value larger than a chunk is a jumbo chunk on its
// shard; with a monotonically increasing key every later insert lands beyond the last
// split point, in the last chunk, as on a real cluster).
func NewPlacer(p *design.Compiled, c *Cluster) (*Placer, error) {
	pl := &Placer{Compiled: p, Tables: map[string]*pm.ChunkTable{}, Loaded: map[string]*TableLoad{}, startChunks: map[string][]results.ShardChunks{}, allByT: map[*pm.ChunkTable][]int{}, primary: []int{0}}
	d := p.Design
	if err := pl.load(); err != nil {
		return nil, fmt.Errorf("design %s: %w", d.Name, err)
	}
	if d.Cassandra != nil {
		rep, err := Replication(d.Cassandra.Replication)
		if err != nil {
			return nil, fmt.Errorf("design %s: keyspace %s: %w", d.Name, d.Cassandra.Keyspace, err)
		}
		if c.Replication != nil {
			rep = *c.Replication
		}
		if pl.Ring, err = c.Ring(rep); err != nil {
			return nil, fmt.Errorf("design %s: %w", d.Name, err)
		}
		if pl.Replicas, err = pl.Ring.Place(rep); err != nil {
			return nil, fmt.Errorf("design %s: %w", d.Name, err)
		}
		if pl.Clients, err = c.ClientsOf(&pl.Ring); err != nil {
			return nil, err
		}
		for i := range pl.Ring.Nodes {
			pl.all = append(pl.all, int32(i))
		}
	}
	if d.MongoDB != nil {
		pl.Shards = c.ShardNames()
		if err := pl.buildChunks(); err != nil {
			return nil, fmt.Errorf("design %s: %w", d.Name, err)
		}
		pl.steps = make([]placerStep, p.NumSteps())
		for t := range p.Model.Ops {
			for _, s := range p.Steps(t) {
				if s.Database == design.MongoDB {
					ct := pl.Tables[s.Target]
					pl.steps[s.ID] = newPlacerStep(s, ct, pl.allByT[ct])
				}
			}
		}
	}
	return pl, nil
}

// load finds the data every table of the plan starts with (Placer.Loaded).
func (pl *Placer) load() error {
	ls, err := pl.Compiled.Loaders()
	if err != nil {
		return err
	}
	pop := PopulationOf(pl.Compiled.Model)
	for _, l := range ls {
		t, err := pop.Load(l, splitPattern(l.Step))
		if err != nil {
			return fmt.Errorf("%s: %w", l.Target, err)
		}
		pl.Loaded[l.Target] = t
	}
	return nil
}

// ChunkSize is the design's chunk (range) size in bytes: chunk_size_mb, or MongoDB's
// default (128 MiB since 6.0).
func ChunkSize(d *design.Design) int64 {
	if d.MongoDB != nil && d.MongoDB.ChunkSizeMB > 0 {
		return int64(d.MongoDB.ChunkSizeMB) << 20
	}
	return pm.DefaultChunkSize
}

// buildChunks makes every sharded collection's chunk table: hashed-prefix keys are
// pre-split as shardCollection does on an empty collection (MongoDB 7.2+ rule); other
// keys are split and balanced over the collection's loaded data at the design's chunk
// size, a collection without data keeping the single chunk on the primary shard.
func (pl *Placer) buildChunks() error {
	patterns := map[string]pm.KeyPattern{}
	var order []string
	for t := range pl.Compiled.Model.Ops {
		for _, s := range pl.Compiled.Steps(t) {
			if s.Database != design.MongoDB || len(s.KeyColumns) == 0 {
				continue
			}
			if _, ok := patterns[s.Target]; !ok {
				patterns[s.Target] = Pattern(s)
				order = append(order, s.Target)
			}
		}
	}
	size := ChunkSize(pl.Compiled.Design)
	pop := PopulationOf(pl.Compiled.Model)
	for _, coll := range order {
		t, start, err := pop.chunkTable(patterns[coll], pl.Shards, pl.Loaded[coll], size)
		if err != nil {
			return fmt.Errorf("collection %s: %w", coll, err)
		}
		pl.Tables[coll] = t
		pl.startChunks[coll] = start
		var owners []int
		for _, ch := range t.Chunks {
			owners = append(owners, ch.Shard)
		}
		slices.Sort(owners)
		pl.allByT[t] = slices.Compact(owners)
	}
	return nil
}

// chunkStart is one chunk table as the run starts, made once for every placer.
type chunkStart struct {
	t     *pm.ChunkTable
	start []results.ShardChunks // shardChunks(t, loaded)
}

// chunkTable is the chunk table a collection with shard key pat starts with on shards,
// holding loaded at the chunk size, and its chunks per shard (shardChunks). Cutting the
// chunks from the loaded keys costs a sort of them; the variants of a sweep define most
// of their collections alike, so each table is made once per population (by what it
// depends on) and every placer gets a copy of its own, which the run may change (chunks
// moved, a shard added).
func (p *Population) chunkTable(pat pm.KeyPattern, shards []string, loaded *TableLoad, size int64) (*pm.ChunkTable, []results.ShardChunks, error) {
	key := fmt.Sprintf("%v %q %p %d", pat, shards, loaded, size)
	e, err := p.chunks.get(key, func() (chunkStart, error) {
		var t *pm.ChunkTable
		var err error
		switch {
		case pat.HashedPrefix():
			t, err = pm.PresplitHashed(pat, shards, pm.Presplit{Rule: pm.SplitV72})
		case loaded == nil || len(loaded.Keys) == 0:
			t, err = pm.SingleChunk(pat, shards, shards[0])
		default:
			t, err = pm.SplitByData(pat, shards, loaded.Keys, pm.DataModel{ChunkSize: size, Primary: shards[0]})
		}
		if err != nil {
			return chunkStart{}, err
		}
		return chunkStart{t, shardChunks(t, loaded)}, nil
	})
	if err != nil {
		return nil, nil, err
	}
	start := slices.Clone(e.start)
	for i := range start {
		start[i].Jumbo = slices.Clone(start[i].Jumbo)
	}
	return e.t.Clone(), start, nil
}

// StartChunks is a sharded collection's chunks per shard as the run started, with the
// loaded bytes each shard holds (nil for an unsharded collection).
func (pl *Placer) StartChunks(coll string) []results.ShardChunks { return pl.startChunks[coll] }

// shardChunks counts t's chunks per shard, lists its jumbo chunks, and shares the loaded
// bytes out: by the loaded keys when the chunks were cut from them, else (a hashed key,
// pre-split) in proportion to each chunk's share of the hashed values.
func shardChunks(t *pm.ChunkTable, loaded *TableLoad) []results.ShardChunks {
	out := make([]results.ShardChunks, len(t.Shards))
	for i, name := range t.Shards {
		out[i].Shard = name
	}
	for i, c := range t.Chunks {
		out[c.Shard].Chunks++
		if c.Jumbo {
			out[c.Shard].Jumbo = append(out[c.Shard].Jumbo, t.RangeString(i))
		}
	}
	switch {
	case loaded == nil:
	case len(loaded.Keys) > 0:
		for _, k := range loaded.Keys {
			out[t.Chunks[t.Find(k.Key)].Shard].LoadedBytes += k.Bytes
		}
	case t.Pattern.HashedPrefix():
		for _, c := range t.Chunks {
			lo, hi := hashBound(c.Min[0], math.MinInt64), hashBound(c.Max[0], math.MaxInt64)
			frac := (float64(hi) - float64(lo)) / (2 * float64(math.MaxInt64))
			out[c.Shard].LoadedBytes += int64(frac * float64(loaded.Bytes))
		}
	}
	return out
}

// hashBound is a chunk bound's hashed value (MinKey and MaxKey at the ends).
func hashBound(v pm.Value, def int64) int64 {
	if v.Kind == pm.KindInt64 {
		return v.I
	}
	return def
}

// Place computes where access a of op goes.
func (pl *Placer) Place(a *design.Access, op *workloads.Op) *Where {
	w := &pl.w
	*w = Where{Chunk: -1}
	s := a.Step
	if s.Database == design.Cassandra {
		pl.key = a.AppendKey(pl.key[:0], op)
		w.Key = pl.key
		if pl.Ring == nil {
			return w
		}
		if len(pl.key) == 0 {
			w.Broadcast = true
			w.Replicas = pl.all
			return w
		}
		w.Token = pc.TokenOf(pl.key)
		w.VNode = pl.Ring.VNode(w.Token)
		w.Replicas = pl.Replicas.ReplicasOf(w.VNode)
		return w
	}
	// The key and its values in one pass (the values for the chunk lookup).
	pl.key, pl.vals = a.KeyValues(pl.key[:0], pl.vals[:0], op)
	w.Key = pl.key
	var ps placerStep
	if s.ID < len(pl.steps) && pl.steps[s.ID].step == s {
		ps = pl.steps[s.ID]
	} else {
		t := pl.Tables[s.Target] // a step NewPlacer did not see
		ps = newPlacerStep(s, t, pl.allByT[t])
	}
	t := ps.table
	w.Table = t
	if t == nil {
		w.Shards = pl.primary
		return w
	}
	if s.KeyFields == 0 {
		w.Broadcast, w.Targeting = true, pm.TargetAll
		w.Shards = ps.owners
		return w
	}
	if len(pl.vals) == 0 || len(pl.vals) > ps.prefix {
		// No value, or not the chunk table's leading fields: Route decides by field name.
		return pl.routeByConds(w, t, s)
	}
	// The key in chunk-key form (as KeyPattern.Key builds it), hashing the hashed field
	// once: its hash is both Where.Hashed and the chunk key's value.
	pl.hk = pl.hk[:0]
	hf := ps.hashed
	for i := range pl.vals {
		mv := design.MongoValue(&pl.vals[i])
		if i == hf {
			w.Hashed, w.HasHash = pm.Hash(&mv), true
			mv = pm.Int64(w.Hashed)
		}
		pl.hk = append(pl.hk, mv)
	}
	if len(pl.hk) == len(t.Pattern) {
		w.Chunk = t.Find(pl.hk)
		w.Targeting = pm.TargetOne
		pl.shards = append(pl.shards[:0], t.Chunks[w.Chunk].Shard)
		w.Shards = pl.shards
		return w
	}
	// Part of a compound key: the chunks between [prefix, MinKey...] and [prefix, MaxKey...].
	w.Targeting, pl.shards, w.Chunks = pl.prefix.Route(t, pl.hk, pl.shards[:0])
	w.Shards = pl.shards
	return w
}

// keyPrefix is how many of a step's key fields, from the first, are the chunk table's
// leading fields: a request supplying that many values or fewer routes by position. All
// of them are when the table was built from the same design, as NewPlacer builds it.
func keyPrefix(fields []string, p pm.KeyPattern) int {
	n := 0
	for n < len(fields) && n < len(p) && p[n].Name == fields[n] {
		n++
	}
	return n
}

// routeByConds routes the request's key values (in pl.vals) with ChunkTable.Route, which
// matches conditions to shard key fields by name. It allocates; Place uses it only for a
// request without values or whose fields are not the chunk table's leading fields.
func (pl *Placer) routeByConds(w *Where, t *pm.ChunkTable, s *design.Step) *Where {
	pl.mv = pl.mv[:0]
	for i := range pl.vals {
		pl.mv = append(pl.mv, design.MongoValue(&pl.vals[i]))
	}
	if hf := t.Pattern.HashedField(); hf >= 0 && hf < len(pl.mv) {
		w.Hashed, w.HasHash = pm.Hash(&pl.mv[hf]), true
	}
	conds := make([]pm.Cond, len(pl.mv))
	for i := range pl.mv {
		conds[i] = pm.Eq(s.KeyColumns[i], pl.mv[i])
	}
	r := t.Route(conds)
	w.Targeting, w.Chunks = r.Targeting, r.Chunks
	w.Broadcast = r.Targeting == pm.TargetAll
	pl.shards = append(pl.shards[:0], r.Shards...)
	w.Shards = pl.shards
	return w
}

// AllNodes lists every Cassandra node: the replicas of a request without its partition
// key. The list must not be modified.
func (pl *Placer) AllNodes() []int32 { return pl.all }

// NodeNames lists the nodes load is counted on: the Cassandra nodes, then the MongoDB
// shards.
func (pl *Placer) NodeNames() []string {
	var out []string
	if pl.Ring != nil {
		for _, n := range pl.Ring.Nodes {
			out = append(out, n.Name)
		}
	}
	return append(out, pl.Shards...)
}

// ShardOffset is the index of MongoDB shard 0 in NodeNames.
func (pl *Placer) ShardOffset() int {
	if pl.Ring == nil {
		return 0
	}
	return len(pl.Ring.Nodes)
}

// ShareKey identifies how the placer places target's accesses: the model, target's
// design signature ([design.Compiled.TargetSignature]) and the layout that places it. Placers
// with equal keys for a target place its accesses alike, operation for operation, so one
// of them can place them for all ("" when target has no signature: never shared).
func (pl *Placer) ShareKey(target string) string {
	sig := pl.Compiled.TargetSignature(target)
	if sig == "" {
		return ""
	}
	return fmt.Sprintf("%p %s %s", pl.Compiled.Model, sig, pl.layoutOf(target))
}

// layoutOf digests everything of the layout that places target's accesses: the ring,
// its replicas and the shards, and target's chunk table.
func (pl *Placer) layoutOf(target string) string {
	h := sha256.New()
	if t, ok := pl.Tables[target]; ok {
		fmt.Fprintf(h, "chunks %#v %#v %#v\n", t.Pattern, t.Shards, t.Chunks)
	}
	fmt.Fprintf(h, "shards %#v %#v\n", pl.Shards, pl.primary)
	if pl.Ring != nil {
		fmt.Fprintf(h, "ring %#v %#v %#v %#v\n", pl.Ring.Nodes, pl.Ring.Tokens, pl.Ring.Owner, pl.Replicas.Replication)
	}
	return hex.EncodeToString(h.Sum(nil))
}
