package mongo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/shardbench/shardbench/internal/design"
	pm "github.com/shardbench/shardbench/internal/placement/mongo"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/schedule"
	"github.com/shardbench/shardbench/workloads"
)

// Per-shard attribution on a mongos: the chunk table as config.chunks returns it (BSON
// bounds through toValue and FromConfigChunks), routed with the design's shard key values,
// agrees with hashing the key directly; a read without the shard key is a broadcast.
func TestRoutingAttributesAccessesToShards(t *testing.T) {
	prep, sc := loadSmoke(t, "seed001-mongo.yaml")
	plan := prep.Compiled[0]

	// carts {owner_key: "hashed"} on two shards, split at hash 0: rows as config.chunks has them.
	var rows []pm.ChunkRow
	for _, r := range []struct {
		min, max any
		shard    string
	}{{bson.MinKey{}, int64(0), "shardA"}, {int64(0), bson.MaxKey{}, "shardB"}} {
		rows = append(rows, pm.ChunkRow{Min: toFields(bson.D{{Key: "owner_key", Value: r.min}}), Max: toFields(bson.D{{Key: "owner_key", Value: r.max}}), Shard: r.shard})
	}
	pat, err := pm.KeyPatternFromDoc(toFields(bson.D{{Key: "owner_key", Value: "hashed"}}))
	if err != nil {
		t.Fatal(err)
	}
	carts, err := pm.FromConfigChunks(pat, rows)
	if err != nil {
		t.Fatal(err)
	}
	ordersPat, _ := pm.KeyPatternFromDoc(toFields(bson.D{{Key: "user_id", Value: "hashed"}, {Key: "created_at", Value: int32(1)}}))
	orders, err := pm.FromConfigChunks(ordersPat, []pm.ChunkRow{
		{Min: toFields(bson.D{{Key: "user_id", Value: bson.MinKey{}}, {Key: "created_at", Value: bson.MinKey{}}}), Max: toFields(bson.D{{Key: "user_id", Value: int64(0)}, {Key: "created_at", Value: bson.MinKey{}}}), Shard: "shardA"},
		{Min: toFields(bson.D{{Key: "user_id", Value: int64(0)}, {Key: "created_at", Value: bson.MinKey{}}}), Max: toFields(bson.D{{Key: "user_id", Value: bson.MaxKey{}}, {Key: "created_at", Value: bson.MaxKey{}}}), Shard: "shardB"},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := newRouting()
	r.tables["carts"], r.tables["orders"] = carts, orders

	want := map[string]int64{}
	readCart, listOrders := prep.Model.OpIndex("carts.read"), prep.Model.OpIndex("orders.list_by_period")
	st := prep.Model.NewStream(schedule.New(sc))
	var op workloads.Op
	var acc []design.Access
	reads, lists := 0, 0
	for st.Next(&op) {
		if int(op.Type) != readCart && int(op.Type) != listOrders {
			continue
		}
		acc = plan.Accesses(&op, acc[:0])
		for i := range acc {
			a := &acc[i]
			r.attribute(a, &op)
			if int(op.Type) == readCart {
				vals, _ := a.ShardKey(&op, nil, nil)
				shard := "shardA"
				if pm.HashStringBytes(vals[0].Bytes) >= 0 {
					shard = "shardB"
				}
				want[shard]++
				reads++
			} else {
				want["shardA"]++
				want["shardB"]++
				lists++
			}
		}
	}
	names, got, tg := r.counts()
	if reads < 20 || lists < 20 || len(names) != 2 {
		t.Fatalf("reads %d lists %d shards %v", reads, lists, names)
	}
	for _, s := range names {
		if got[s] != want[s] {
			t.Errorf("%s: %d requests attributed, want %d", s, got[s], want[s])
		}
	}
	if tg[pm.TargetOne] != int64(reads) || tg[pm.TargetAll] != int64(lists) {
		t.Errorf("targeting %v, want %d targeted and %d broadcast", tg, reads, lists)
	}
}

// loadSmoke compiles scenarios/smoke.yaml with one design.
func loadSmoke(t testing.TB, designFile string) (*design.Prepared, *scenario.Scenario) {
	t.Helper()
	b, err := os.ReadFile("../../../scenarios/smoke.yaml")
	if err != nil {
		t.Fatal(err)
	}
	body, _, _ := strings.Cut(string(b), "\ndesigns:")
	abs, _ := filepath.Abs("../../../scenarios/designs/" + designFile)
	p := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(p, []byte(body+"\ndesigns:\n  - design: "+abs+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	prep, err := design.Prepare(sc)
	if err != nil {
		t.Fatal(err)
	}
	return prep, sc
}

// The client-side cost of one orders.place before the driver: the design's command and
// its conversion to BSON (the driver's own encoding and the network come on top).
func BenchmarkOrderCommandToBSON(b *testing.B) {
	prep, sc := loadSmoke(b, "seed001-mongo.yaml")
	want := prep.Model.OpIndex("orders.place")
	st := prep.Model.NewStream(schedule.New(sc))
	var op workloads.Op
	for st.Next(&op) && int(op.Type) != want {
	}
	acc := prep.Compiled[0].Accesses(&op, nil)
	conv := converter{}
	b.ReportAllocs()
	for b.Loop() {
		cmd := acc[0].Mongo(&op)
		if d := conv.doc(cmd.Document); len(d) == 0 {
			b.Fatal("empty document")
		}
	}
}
