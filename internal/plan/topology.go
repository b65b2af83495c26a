package plan

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"

	pc "github.com/shardbench/shardbench/internal/placement/cassandra"
	pm "github.com/shardbench/shardbench/internal/placement/mongo"
)

// AddNode joins a Cassandra node to the ring with num_tokens random tokens (what a node
// does without allocate_tokens_for_local_replication_factor; the balanced allocator would
// need the whole history) and recomputes every vnode's replicas. It returns the node's
// index. Accesses placed afterwards see the new ring.
func (pl *Placer) AddNode(dc, rack string, numTokens int, seed uint64) (int, error) {
	if pl.Ring == nil {
		return 0, fmt.Errorf("no Cassandra ring to add a node to")
	}
	r := pl.Ring
	if dc == "" {
		dc = r.Nodes[0].DC
	}
	if rack == "" {
		rack = "rack1"
	}
	if numTokens <= 0 {
		numTokens = len(r.Tokens) / len(r.Nodes)
	}
	nodes := slices.Clone(r.Nodes)
	tokens := make([][]pc.Token, len(nodes), len(nodes)+1)
	used := map[pc.Token]bool{}
	for i, t := range r.Tokens {
		tokens[r.Owner[i]] = append(tokens[r.Owner[i]], t)
		used[t] = true
	}
	n := 1
	for _, x := range nodes {
		if x.DC == dc {
			n++
		}
	}
	name := dc + "-n" + strconv.Itoa(n)
	for r.NodeIndex(name) >= 0 {
		n++
		name = dc + "-n" + strconv.Itoa(n)
	}
	nodes = append(nodes, pc.Node{Name: name, DC: dc, Rack: rack})
	rng := rand.New(rand.NewPCG(seed, uint64(len(nodes))))
	var mine []pc.Token
	for len(mine) < numTokens {
		t := pc.Token(rng.Uint64())
		if t == pc.MinToken || used[t] {
			continue
		}
		used[t] = true
		mine = append(mine, t)
	}
	tokens = append(tokens, mine)
	ring, err := pc.NewRing(nodes, tokens)
	if err != nil {
		return 0, err
	}
	reps, err := ring.Place(pl.Replicas.Replication)
	if err != nil {
		return 0, err
	}
	pl.Ring, pl.Replicas = ring, reps
	pl.all = append(pl.all, int32(len(nodes)-1))
	return len(nodes) - 1, nil
}

// AddShard adds an empty MongoDB shard and returns its index; the balancer then moves
// chunks to it ([Placer.MoveChunk]).
func (pl *Placer) AddShard(name string) int {
	if name == "" {
		name = "shard" + strconv.Itoa(len(pl.Shards))
	}
	pl.Shards = append(pl.Shards, name)
	for _, t := range pl.Tables {
		t.Shards = append(t.Shards, name)
	}
	return len(pl.Shards) - 1
}

// MoveChunk moves chunk i of a collection's table to shard s (a finished migration).
func (pl *Placer) MoveChunk(t *pm.ChunkTable, i, s int) {
	t.Chunks[i].Shard = s
	var owners []int
	for _, ch := range t.Chunks {
		owners = append(owners, ch.Shard)
	}
	slices.Sort(owners)
	pl.allByT[t] = slices.Compact(owners)
	for i := range pl.steps { // Place's per-step copy of the owners
		if pl.steps[i].table == t {
			pl.steps[i].owners = pl.allByT[t]
		}
	}
}

// Collections lists the sharded collections in a stable order.
func (pl *Placer) Collections() []string {
	out := make([]string, 0, len(pl.Tables))
	for c := range pl.Tables {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}
