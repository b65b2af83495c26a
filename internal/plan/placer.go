package plan

import (
	"fmt"
	"slices"

	"github.com/shardbench/shardbench/internal/design"
	pc "github.com/shardbench/shardbench/internal/placement/cassandra"
	pm "github.com/shardbench/shardbench/internal/placement/mongo"
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
	// chunk of a point request (-1 when the request spans chunks), the hashed value of a
	// hashed shard key's field, and the shards asked (indexes into Cluster.ShardNames).
	Table     *pm.ChunkTable
	Chunk     int
	Hashed    int64
	HasHash   bool
	Targeting pm.Targeting
	Shards    []int
}

// Placer places a design's accesses on a cluster layout, exactly as the databases do:
// Murmur3 tokens on a vnode ring with the keyspace's replication (Cassandra), the chunk
// table of every sharded collection and mongos's targeting rules (MongoDB). One Placer
// serves one goroutine; it allocates nothing per access once warm, except for MongoDB
// requests that supply part of a compound shard key (mongos's bound computation).
type Placer struct {
	Plan *design.Plan
	// Ring and Replicas: nil without a Cassandra part.
	Ring     *pc.Ring
	Replicas *pc.Placement
	// Shards: the MongoDB shard names; Tables the chunk table per collection (absent:
	// unsharded).
	Shards []string
	Tables map[string]*pm.ChunkTable

	all     []int32 // every Cassandra node
	allByT  map[*pm.ChunkTable][]int
	primary []int

	w    Where
	key  []byte
	vals []workloads.Value
	vbuf []byte
	mv   []pm.Value
	hk   []pm.Value
}

// SampleSize is how many operations from the start of the stream NewPlacer needs to shape
// ranged MongoDB shard keys' chunk tables (the data already in the collection).
const SampleSize = 20_000

// NewPlacer builds the placement of one design variant on c. sample is the first
// operations of the stream (up to SampleSize); it stands for the data already stored
// when a ranged shard key's chunks were split and balanced (see [pm.SplitByData]): with a
// monotonically increasing key every later insert lands beyond the last split point, in
// the last chunk, as on a real cluster.
func NewPlacer(p *design.Plan, c *Cluster, sample []workloads.Op) (*Placer, error) {
	pl := &Placer{Plan: p, Tables: map[string]*pm.ChunkTable{}, allByT: map[*pm.ChunkTable][]int{}, primary: []int{0}}
	d := p.Design
	if d.Cassandra != nil {
		rep, err := Replication(d.Cassandra.Replication)
		if err != nil {
			return nil, fmt.Errorf("design %s: keyspace %s: %w", d.Name, d.Cassandra.Keyspace, err)
		}
		if pl.Ring, err = c.Ring(rep); err != nil {
			return nil, fmt.Errorf("design %s: %w", d.Name, err)
		}
		if pl.Replicas, err = pl.Ring.Place(rep); err != nil {
			return nil, fmt.Errorf("design %s: %w", d.Name, err)
		}
		for i := range pl.Ring.Nodes {
			pl.all = append(pl.all, int32(i))
		}
	}
	if d.MongoDB != nil {
		pl.Shards = c.ShardNames()
		if err := pl.buildChunks(c, sample); err != nil {
			return nil, fmt.Errorf("design %s: %w", d.Name, err)
		}
	}
	return pl, nil
}

// buildChunks makes every sharded collection's chunk table: hashed-prefix keys are
// pre-split as shardCollection does on an empty collection (MongoDB 7.2+ rule); ranged
// keys are split from the sampled writes and balanced by data size.
func (pl *Placer) buildChunks(c *Cluster, sample []workloads.Op) error {
	patterns := map[string]pm.KeyPattern{}
	var order []string
	for t := range pl.Plan.Model.Ops {
		for _, s := range pl.Plan.Steps(t) {
			if s.Database != design.MongoDB || len(s.KeyColumns) == 0 {
				continue
			}
			if _, ok := patterns[s.Target]; !ok {
				patterns[s.Target] = Pattern(s)
				order = append(order, s.Target)
			}
		}
	}
	per := c.ChunksPerShard
	if per <= 0 {
		per = 4
	}
	data := map[string][]pm.SizedKey{}
	var acc []design.Access
	for i := range sample {
		op := &sample[i]
		acc = pl.Plan.Accesses(op, acc[:0])
		for j := range acc {
			a := &acc[j]
			s := a.Step
			if s.Database != design.MongoDB || !s.Kind.IsWrite() || len(s.KeyColumns) == 0 || s.KeyFields < len(s.KeyColumns) {
				continue
			}
			pat := patterns[s.Target]
			if pat.HashedPrefix() {
				continue
			}
			vals, _ := a.ShardKey(op, nil, nil)
			key := make([]pm.Value, len(vals))
			for k := range vals {
				key[k] = design.MongoValue(&vals[k])
			}
			data[s.Target] = append(data[s.Target], pm.SizedKey{Key: pat.Key(nil, key), Bytes: int64(max(a.Bytes, 1))})
		}
	}
	for _, coll := range order {
		pat := patterns[coll]
		var t *pm.ChunkTable
		var err error
		switch {
		case pat.HashedPrefix():
			t, err = pm.PresplitHashed(pat, pl.Shards, pm.Presplit{Rule: pm.SplitV72})
		case len(data[coll]) == 0:
			t, err = pm.SingleChunk(pat, pl.Shards, pl.Shards[0])
		default:
			var total int64
			for _, k := range data[coll] {
				total += k.Bytes
			}
			size := max(total/int64(len(pl.Shards)*per), 1)
			t, err = pm.SplitByData(pat, pl.Shards, data[coll], pm.DataModel{ChunkSize: size, Primary: pl.Shards[0]})
		}
		if err != nil {
			return fmt.Errorf("collection %s: %w", coll, err)
		}
		pl.Tables[coll] = t
		var owners []int
		for _, ch := range t.Chunks {
			owners = append(owners, ch.Shard)
		}
		slices.Sort(owners)
		pl.allByT[t] = slices.Compact(owners)
	}
	return nil
}

// Place computes where access a of op goes.
func (pl *Placer) Place(a *design.Access, op *workloads.Op) *Where {
	w := &pl.w
	*w = Where{Chunk: -1, Replicas: w.Replicas[:0], Shards: w.Shards[:0]}
	pl.key = a.AppendKey(pl.key[:0], op)
	w.Key = pl.key
	s := a.Step
	if s.Database == design.Cassandra {
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
	t := pl.Tables[s.Target]
	w.Table = t
	if t == nil {
		w.Shards = pl.primary
		return w
	}
	if s.KeyFields == 0 {
		w.Broadcast, w.Targeting = true, pm.TargetAll
		w.Shards = pl.allByT[t]
		return w
	}
	pl.vals, pl.vbuf = a.ShardKey(op, pl.vals[:0], pl.vbuf)
	pl.mv = pl.mv[:0]
	for i := range pl.vals {
		pl.mv = append(pl.mv, design.MongoValue(&pl.vals[i]))
	}
	if hf := t.Pattern.HashedField(); hf >= 0 && hf < len(pl.mv) {
		w.Hashed, w.HasHash = pm.Hash(&pl.mv[hf]), true
	}
	if len(pl.mv) == len(t.Pattern) {
		pl.hk = t.Pattern.Key(pl.hk[:0], pl.mv)
		w.Chunk = t.Find(pl.hk)
		w.Targeting = pm.TargetOne
		w.Shards = append(w.Shards, t.Chunks[w.Chunk].Shard)
		return w
	}
	conds := make([]pm.Cond, len(pl.mv))
	for i := range pl.mv {
		conds[i] = pm.Eq(s.KeyColumns[i], pl.mv[i])
	}
	r := t.Route(conds)
	w.Targeting = r.Targeting
	w.Broadcast = r.Targeting == pm.TargetAll
	w.Shards = append(w.Shards, r.Shards...)
	return w
}

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
