package mongo

import (
	"context"
	"fmt"
	"math/big"
	"sort"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/shardbench/shardbench/internal/design"
	pm "github.com/shardbench/shardbench/internal/placement/mongo"
	"github.com/shardbench/shardbench/workloads"
)

// routing attributes every operation on a mongos to the shards its query reaches, from
// the collection's real chunk table (config.chunks) and the placement package's mongos
// routing: targeted (one shard), several shards, or broadcast.
type routing struct {
	tables map[string]*pm.ChunkTable // by collection name
	mu     sync.Mutex
	shards map[string]int64
	target [3]int64 // by pm.Targeting
}

func newRouting() *routing {
	return &routing{tables: map[string]*pm.ChunkTable{}, shards: map[string]int64{}}
}

// load reads config.collections (key pattern, uuid) and config.chunks of ns.
func (r *routing) load(ctx context.Context, c *mongo.Client, ns, coll string) error {
	t, err := readChunkTable(ctx, c, ns)
	if err != nil {
		return err
	}
	r.tables[coll] = t
	return nil
}

func readChunkTable(ctx context.Context, c *mongo.Client, ns string) (*pm.ChunkTable, error) {
	cfg := c.Database("config")
	var meta struct {
		Key  bson.D      `bson:"key"`
		UUID bson.Binary `bson:"uuid"`
	}
	if err := cfg.Collection("collections").FindOne(ctx, bson.D{{Key: "_id", Value: ns}}).Decode(&meta); err != nil {
		return nil, fmt.Errorf("config.collections %s: %w", ns, err)
	}
	pat, err := pm.KeyPatternFromDoc(toFields(meta.Key))
	if err != nil {
		return nil, err
	}
	cur, err := cfg.Collection("chunks").Find(ctx, bson.D{{Key: "uuid", Value: meta.UUID}})
	if err != nil {
		return nil, fmt.Errorf("config.chunks: %w", err)
	}
	defer cur.Close(ctx)
	var rows []pm.ChunkRow
	for cur.Next(ctx) {
		var ch struct {
			Min   bson.D `bson:"min"`
			Max   bson.D `bson:"max"`
			Shard string `bson:"shard"`
			Jumbo bool   `bson:"jumbo"`
		}
		if err := cur.Decode(&ch); err != nil {
			return nil, err
		}
		rows = append(rows, pm.ChunkRow{Min: toFields(ch.Min), Max: toFields(ch.Max), Shard: ch.Shard, Jumbo: ch.Jumbo})
	}
	if err := cur.Err(); err != nil {
		return nil, err
	}
	return pm.FromConfigChunks(pat, rows)
}

func toFields(d bson.D) []pm.Field {
	out := make([]pm.Field, len(d))
	for i, e := range d {
		out[i] = pm.Field{Name: e.Key, Value: toValue(e.Value)}
	}
	return out
}

// toValue converts a decoded BSON value (chunk bounds, key patterns) to placement's Value.
func toValue(v any) pm.Value {
	switch x := v.(type) {
	case bson.MinKey:
		return pm.MinKey()
	case bson.MaxKey:
		return pm.MaxKey()
	case nil, bson.Null:
		return pm.Null()
	case int32:
		return pm.Int32(x)
	case int64:
		return pm.Int64(x)
	case float64:
		return pm.Double(x)
	case string:
		return pm.String(x)
	case bool:
		return pm.Bool(x)
	case bson.ObjectID:
		return pm.ObjectID(x)
	case bson.DateTime:
		return pm.Date(int64(x))
	case bson.Binary:
		return pm.Binary(x.Subtype, x.Data)
	case bson.Decimal128:
		bi, exp, err := x.BigInt()
		if err == nil && bi.IsInt64() && exp <= 0 {
			return pm.Decimal(bi.Int64(), int32(-exp))
		}
		if err == nil && exp > 0 {
			bi.Mul(bi, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(exp)), nil))
			if bi.IsInt64() {
				return pm.Decimal(bi.Int64(), 0)
			}
		}
		f, _ := new(big.Float).SetInt(bi).Float64()
		return pm.Double(f)
	case bson.D:
		return pm.Doc(toFields(x)...)
	case bson.A:
		vs := make([]pm.Value, len(x))
		for i := range x {
			vs[i] = toValue(x[i])
		}
		return pm.Array(vs...)
	}
	return pm.Null()
}

// attribute routes one access through its collection's chunk table.
func (r *routing) attribute(a *design.Access, op *workloads.Op) {
	t := r.tables[a.Step.Target]
	if t == nil {
		return
	}
	vals, _ := a.ShardKey(op, nil, nil)
	conds := make([]pm.Cond, 0, len(vals))
	for i := range vals {
		conds = append(conds, pm.Eq(a.Step.KeyColumns[i], design.MongoValue(&vals[i])))
	}
	rt := t.Route(conds)
	r.mu.Lock()
	r.target[rt.Targeting]++
	for _, s := range rt.Shards {
		r.shards[t.Shards[s]]++
	}
	r.mu.Unlock()
}

// counts returns the per-shard request counts (sorted by shard) and targeting counts.
func (r *routing) counts() ([]string, map[string]int64, [3]int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make([]string, 0, len(r.shards))
	m := make(map[string]int64, len(r.shards))
	for k, v := range r.shards {
		names = append(names, k)
		m[k] = v
	}
	sort.Strings(names)
	return names, m, r.target
}
