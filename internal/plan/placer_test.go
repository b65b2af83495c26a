package plan

import (
	"reflect"
	"slices"
	"testing"

	"github.com/shardbench/shardbench/internal/design"
	pm "github.com/shardbench/shardbench/internal/placement/mongo"
)

// TestPlaceKeepsShardLists: placing requests one after another never changes what an
// earlier broadcast or unsharded request was told (Where.Shards once aliased the
// placer's list of a collection's shards, and the next point request overwrote it), and
// every request is placed as a fresh placer places it, also after the balancer moved
// chunks to a shard added during the run.
func TestPlaceKeepsShardLists(t *testing.T) {
	p, ops := benchVariant(t, "seed001-mongo")
	pl, err := NewPlacer(p, &Cluster{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	owners := func(ct *pm.ChunkTable) []int {
		var o []int
		for _, c := range ct.Chunks {
			o = append(o, c.Shard)
		}
		slices.Sort(o)
		return slices.Compact(o)
	}
	var acc []design.Access
	kinds := map[string]int{}
	for i := range ops[:50_000] {
		op := &ops[i]
		if i == 25_000 {
			// Midway, a new shard takes each collection's first chunk.
			sh := pl.AddShard("")
			for _, ct := range pl.Tables {
				pl.MoveChunk(ct, 0, sh)
			}
		}
		acc = p.Accesses(op, acc[:0])
		for j := range acc {
			a := &acc[j]
			if a.Step.Database != design.MongoDB {
				continue
			}
			w := pl.Place(a, op)
			ct := pl.Tables[a.Step.Target]
			switch {
			case ct == nil:
				kinds["unsharded"]++
				if !slices.Equal(w.Shards, []int{0}) {
					t.Fatalf("op %d %s: unsharded collection on shards %v", i, a.Step, w.Shards)
				}
			case w.Broadcast:
				kinds["broadcast"]++
				if !slices.Equal(w.Shards, owners(ct)) {
					t.Fatalf("op %d %s: broadcast to %v, the chunks are on %v", i, a.Step, w.Shards, owners(ct))
				}
			case w.Chunk >= 0:
				kinds["point"]++
				if !slices.Equal(w.Shards, []int{ct.Chunks[w.Chunk].Shard}) {
					t.Fatalf("op %d %s: chunk %d on shard %d, told %v", i, a.Step, w.Chunk, ct.Chunks[w.Chunk].Shard, w.Shards)
				}
			default:
				kinds["prefix"]++
			}
		}
	}
	for _, k := range []string{"broadcast", "point", "prefix"} {
		if kinds[k] == 0 {
			t.Errorf("no %s request placed: %v", k, kinds)
		}
	}
}

// TestPlacersOwnChunkTables: placers of one model share the work of cutting chunk tables
// (Population.chunkTable) but not the tables: the balancer moving a chunk, or a shard
// added, in one variant's run leaves another's layout as it started.
func TestPlacersOwnChunkTables(t *testing.T) {
	p, _ := benchVariant(t, "seed001-mongo")
	a, err := NewPlacer(p, &Cluster{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewPlacer(p, &Cluster{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Tables) == 0 {
		t.Fatal("no sharded collection")
	}
	sh := a.AddShard("")
	for coll, ct := range a.Tables {
		a.MoveChunk(ct, len(ct.Chunks)-1, sh)
		a.startChunks[coll][0].Chunks = -1
	}
	c, err := NewPlacer(p, &Cluster{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for coll, ct := range b.Tables {
		if ct == a.Tables[coll] || !reflect.DeepEqual(ct, c.Tables[coll]) || !reflect.DeepEqual(b.StartChunks(coll), c.StartChunks(coll)) {
			t.Errorf("%s: another placer's balancer changed this one's chunks: %v", coll, ct.ChunksPerShard())
		}
	}
}

// TestKeyPrefix: a request routes by position over as many of its key fields as lead the
// chunk table's pattern, and by name (routeByConds) beyond them.
func TestKeyPrefix(t *testing.T) {
	pat := pm.KeyPattern{{Name: "a"}, {Name: "b", Hashed: true}, {Name: "c"}}
	for _, c := range []struct {
		fields []string
		want   int
	}{
		{nil, 0},
		{[]string{"a"}, 1},
		{[]string{"a", "b"}, 2},
		{[]string{"a", "b", "c"}, 3},
		{[]string{"a", "b", "c", "d"}, 3},
		{[]string{"b", "a"}, 0},
		{[]string{"a", "c"}, 1},
	} {
		if got := keyPrefix(c.fields, pat); got != c.want {
			t.Errorf("keyPrefix(%q) = %d, want %d", c.fields, got, c.want)
		}
	}
}
