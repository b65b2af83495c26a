package cassandra

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"
)

// Node is one Cassandra node.
type Node struct {
	Name string // address or host id, as the caller names it
	DC   string
	Rack string
}

// Ring is a token ring with vnodes: Tokens sorted ascending, Owner[i] the index in Nodes
// of the node that owns Tokens[i]. Vnode i is the range (Tokens[i-1], Tokens[i]], and
// vnode 0 is (Tokens[len-1], Tokens[0]], wrapping through MaxToken/MinToken.
type Ring struct {
	Nodes  []Node
	Tokens []Token
	Owner  []int32

	// index[p] is the first vnode whose token is at least the smallest token with the
	// top bits p (the token's bits with the sign flipped, so that they order as tokens
	// do): VNode starts there and steps over the few tokens of the same prefix instead
	// of searching the whole ring. Built by NewRing for the Tokens it made (indexed is
	// their count); a Ring built otherwise is searched.
	index   []int32
	shift   uint
	indexed int
}

// NewRing builds a ring from each node's tokens (tokens[i] belongs to nodes[i]).
func NewRing(nodes []Node, tokens [][]Token) (*Ring, error) {
	if len(nodes) == 0 {
		return nil, errors.New("cassandra: ring has no nodes")
	}
	if len(tokens) != len(nodes) {
		return nil, fmt.Errorf("cassandra: %d nodes but %d token lists", len(nodes), len(tokens))
	}
	type vt struct {
		t Token
		n int32
	}
	var all []vt
	seen := map[string]bool{}
	for i, n := range nodes {
		if seen[n.Name] {
			return nil, fmt.Errorf("cassandra: node %q listed twice", n.Name)
		}
		seen[n.Name] = true
		if len(tokens[i]) == 0 {
			return nil, fmt.Errorf("cassandra: node %q has no tokens", n.Name)
		}
		for _, t := range tokens[i] {
			all = append(all, vt{t, int32(i)})
		}
	}
	slices.SortFunc(all, func(a, b vt) int { return cmp.Compare(a.t, b.t) })
	r := &Ring{Nodes: slices.Clone(nodes), Tokens: make([]Token, len(all)), Owner: make([]int32, len(all))}
	for i, v := range all {
		if i > 0 && all[i-1].t == v.t {
			return nil, fmt.Errorf("cassandra: token %d owned by both %q and %q", v.t, nodes[all[i-1].n].Name, nodes[v.n].Name)
		}
		r.Tokens[i], r.Owner[i] = v.t, v.n
	}
	r.buildIndex()
	return r, nil
}

// buildIndex makes VNode's prefix index: about four prefixes per token, at most 64K.
func (r *Ring) buildIndex() {
	b := min(bits.Len(uint(len(r.Tokens)))+2, 16)
	r.index = make([]int32, 1<<b)
	r.shift = uint(64 - b)
	for p := range r.index {
		lowest := Token(uint64(p)<<r.shift ^ 1<<63)
		i, _ := slices.BinarySearch(r.Tokens, lowest)
		r.index[p] = int32(i)
	}
	r.indexed = len(r.Tokens)
}

// Peer is one row of system.local or system.peers_v2 (host, data_center, rack, tokens),
// tokens as the strings Murmur3Partitioner stores.
type Peer struct {
	Host   string
	DC     string
	Rack   string
	Tokens []string
}

// RingFromPeers builds the ring of a live cluster from its system.local and
// system.peers_v2 rows (the driver query lives in the Cassandra backend).
func RingFromPeers(peers []Peer) (*Ring, error) {
	nodes := make([]Node, len(peers))
	tokens := make([][]Token, len(peers))
	for i, p := range peers {
		nodes[i] = Node{Name: p.Host, DC: p.DC, Rack: p.Rack}
		for _, s := range p.Tokens {
			t, err := ParseToken(s)
			if err != nil {
				return nil, fmt.Errorf("cassandra: node %q: token %q: %w", p.Host, s, err)
			}
			tokens[i] = append(tokens[i], t)
		}
	}
	return NewRing(nodes, tokens)
}

// VNode is the index of the vnode owning t: the first ring token >= t, wrapping to 0.
func (r *Ring) VNode(t Token) int {
	if r.indexed == len(r.Tokens) && r.index != nil {
		i := int(r.index[(uint64(t)^1<<63)>>r.shift])
		for i < len(r.Tokens) && r.Tokens[i] < t {
			i++
		}
		if i == len(r.Tokens) {
			return 0
		}
		return i
	}
	return r.search(t)
}

// search is VNode by binary search over the whole ring.
func (r *Ring) search(t Token) int {
	lo, hi := 0, len(r.Tokens)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if r.Tokens[m] < t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == len(r.Tokens) {
		return 0
	}
	return lo
}

// Range is vnode i's range (start, end]: start exclusive, end inclusive. With a single
// token the range is the whole ring and start == end.
func (r *Ring) Range(i int) (start, end Token) {
	p := i - 1
	if p < 0 {
		p = len(r.Tokens) - 1
	}
	return r.Tokens[p], r.Tokens[i]
}

// RangeString formats vnode i's range as "(start, end]".
func (r *Ring) RangeString(i int) string {
	s, e := r.Range(i)
	return "(" + s.String() + ", " + e.String() + "]"
}

// Size is the fraction of the token space vnode i covers (1 for a one-token ring).
func (r *Ring) Size(i int) float64 {
	s, e := r.Range(i)
	if s == e {
		return 1
	}
	return float64(uint64(e)-uint64(s)) / (1 << 64)
}

// Primary is the index in Nodes of the node owning t.
func (r *Ring) Primary(t Token) int { return int(r.Owner[r.VNode(t)]) }

// NodeIndex is the index of the named node, or -1.
func (r *Ring) NodeIndex(name string) int {
	for i, n := range r.Nodes {
		if n.Name == name {
			return i
		}
	}
	return -1
}

// Allocation is how [BuildRing] picks tokens.
type Allocation int

const (
	// AllocBalanced approximates Cassandra 4.0+'s allocate_tokens_for_local_replication_factor
	// (see the package documentation).
	AllocBalanced Allocation = iota
	// AllocRandom gives every node num_tokens uniformly random tokens (the pre-4.0
	// default allocator).
	AllocRandom
)

// DCSpec is one data center of a synthetic ring.
type DCSpec struct {
	Name  string
	Nodes int
	Racks int // default 1
}

// RingSpec describes a synthetic ring.
type RingSpec struct {
	DCs        []DCSpec
	NumTokens  int // num_tokens per node; default 16
	Allocation Allocation
	// AllocRF is allocate_tokens_for_local_replication_factor, the replication factor the
	// balanced allocation optimises for (default 3, as cassandra.yaml ships since 4.0).
	AllocRF int
	Seed    uint64
}

// DefaultNumTokens is num_tokens as cassandra.yaml ships since 4.0.
const DefaultNumTokens = 16

// BuildRing builds a synthetic ring. Nodes are named "<dc>-n<i>" (i from 1) and placed on
// racks "rack1".."rackR" round-robin, in the order they join; the result is a pure
// function of the spec.
func BuildRing(spec RingSpec) (*Ring, error) {
	t := spec.NumTokens
	if t == 0 {
		t = DefaultNumTokens
	}
	if t < 0 {
		return nil, fmt.Errorf("cassandra: num_tokens %d", t)
	}
	if len(spec.DCs) == 0 {
		return nil, errors.New("cassandra: ring spec has no data centers")
	}
	rf := spec.AllocRF
	if rf <= 0 {
		rf = 3
	}
	var nodes []Node
	var tokens [][]Token
	used := map[Token]bool{}
	for d, dc := range spec.DCs {
		if dc.Nodes <= 0 {
			return nil, fmt.Errorf("cassandra: data center %q has %d nodes", dc.Name, dc.Nodes)
		}
		racks := max(dc.Racks, 1)
		rng := rand.New(rand.NewPCG(spec.Seed, uint64(d)+0x9e3779b97f4a7c15))
		first := len(nodes)
		for i := 0; i < dc.Nodes; i++ {
			nodes = append(nodes, Node{
				Name: dc.Name + "-n" + strconv.Itoa(i+1),
				DC:   dc.Name,
				Rack: "rack" + strconv.Itoa(i%racks+1),
			})
		}
		var dcTokens [][]Token
		switch spec.Allocation {
		case AllocRandom:
			dcTokens = randomTokens(rng, dc.Nodes, t, used)
		case AllocBalanced:
			dcTokens = balancedTokens(rng, nodes[first:], racks, rf, t, used)
		default:
			return nil, fmt.Errorf("cassandra: unknown allocation %d", spec.Allocation)
		}
		tokens = append(tokens, dcTokens...)
	}
	return NewRing(nodes, tokens)
}

func freshToken(v uint64, used map[Token]bool) Token {
	t := Token(v)
	for t == MinToken || used[t] {
		t++
	}
	used[t] = true
	return t
}

func randomTokens(rng *rand.Rand, n, per int, used map[Token]bool) [][]Token {
	out := make([][]Token, n)
	for i := range out {
		for j := 0; j < per; j++ {
			out[i] = append(out[i], freshToken(rng.Uint64(), used))
		}
	}
	return out
}

// balancedTokens adds the DC's nodes one at a time, each balancing within its group: its
// rack's sub-ring when the DC has at least rf racks (NetworkTopologyStrategy then puts
// one copy per rack, so a node's load is its share of its rack's sub-ring), else the
// DC's ring with rf replicas per range (racks ignored). The group's first rf nodes split
// the largest range repeatedly at a ratio near 0.55 (as the allocator's generateSplits);
// every later token is placed greedily at the split point (1/3, 1/2 or 2/3 of some
// range) that most reduces Σ (replicated ownership - target)², the new node's target
// growing with the tokens it has placed — the 4.0+ allocator's objective, not its exact
// candidate set.
func balancedTokens(rng *rand.Rand, nodes []Node, racks, rf, per int, used map[Token]bool) [][]Token {
	out := make([][]Token, len(nodes))
	byRack := racks >= rf && racks > 1
	groups := map[string][]int{}
	for i, nd := range nodes {
		g, grf := "", rf
		if byRack {
			g, grf = nd.Rack, 1
		}
		members := groups[g]
		var ring []vnodeOwner
		for _, m := range members {
			for _, t := range out[m] {
				ring = append(ring, vnodeOwner{t, m})
			}
		}
		slices.SortFunc(ring, func(a, b vnodeOwner) int { return cmp.Compare(a.t, b.t) })
		if len(members) < grf {
			// Like TokenAllocatorBase.generateSplits for the first RF nodes of a group:
			// a random first token, then repeatedly split the largest range at a ratio
			// drawn from [1-1/sqrt(5), 1-1/sqrt(5)+0.075].
			if len(ring) == 0 {
				t := freshToken(rng.Uint64(), used)
				out[i] = append(out[i], t)
				ring = append(ring, vnodeOwner{t, i})
			}
			for len(out[i]) < per {
				bk, bs := 0, uint64(0)
				for k := range ring {
					p := k - 1
					if p < 0 {
						p = len(ring) - 1
					}
					sz := uint64(ring[k].t) - uint64(ring[p].t)
					if len(ring) == 1 {
						sz = math.MaxUint64
					}
					if sz > bs {
						bk, bs = k, sz
					}
				}
				p := bk - 1
				if p < 0 {
					p = len(ring) - 1
				}
				ratio := minSplitRatio + 0.075*rng.Float64()
				t := freshToken(uint64(ring[p].t)+uint64(float64(bs)*ratio), used)
				out[i] = append(out[i], t)
				ring = insertToken(ring, vnodeOwner{t, i})
			}
			groups[g] = append(members, i)
			continue
		}
		all := append(slices.Clone(members), i)
		eff := min(grf, len(all))
		target := float64(eff) / float64(len(all))
		load := make([]float64, len(nodes))
		want := make([]float64, len(nodes))
		for _, m := range members {
			want[m] = target
		}
		ev := &insertEval{eff: eff, newNode: i, delta: make([]float64, len(nodes))}
		for j := 0; j < per; j++ {
			replicatedLoad(ring, eff, load)
			want[i] = target * float64(j+1) / float64(per)
			ev.ring, ev.load, ev.want = ring, load, want
			best, bestScore := Token(0), math.Inf(1)
			found := false
			for k := range ring {
				p := k - 1
				if p < 0 {
					p = len(ring) - 1
				}
				size := uint64(ring[k].t) - uint64(ring[p].t)
				if len(ring) == 1 {
					size = math.MaxUint64
				}
				for _, off := range [...]uint64{size / 3, size / 2, size / 3 * 2} {
					if off == 0 {
						continue
					}
					t := Token(uint64(ring[p].t) + off)
					if t == MinToken || used[t] {
						continue
					}
					score := ev.scoreDelta(k, float64(off)/(1<<64))
					if score < bestScore {
						best, bestScore, found = t, score, true
					}
				}
			}
			var nt Token
			if found {
				nt = freshToken(uint64(best), used)
			} else {
				nt = freshToken(rng.Uint64(), used)
			}
			out[i] = append(out[i], nt)
			ring = insertToken(ring, vnodeOwner{nt, i})
		}
		groups[g] = append(members, i)
	}
	return out
}

// minSplitRatio is TokenAllocatorBase.MIN_INITIAL_SPLITS_RATIO, 1 - 1/sqrt(5).
var minSplitRatio = 1 - 1/math.Sqrt(5)

type vnodeOwner struct {
	t Token
	n int
}

func insertToken(ring []vnodeOwner, v vnodeOwner) []vnodeOwner {
	k, _ := slices.BinarySearchFunc(ring, v.t, func(a vnodeOwner, t Token) int { return cmp.Compare(a.t, t) })
	return slices.Insert(ring, k, v)
}

// replicatedLoad sets load[n] to the fraction of the ring node n replicates when each
// range is held by the rf distinct nodes met walking clockwise from it.
func replicatedLoad(ring []vnodeOwner, rf int, load []float64) {
	clear(load)
	n := len(ring)
	var seen [8]int
	for k := range ring {
		p := k - 1
		if p < 0 {
			p = n - 1
		}
		size := float64(uint64(ring[k].t)-uint64(ring[p].t)) / (1 << 64)
		if n == 1 {
			size = 1
		}
		got := seen[:0]
		for s := 0; s < n && len(got) < rf; s++ {
			o := ring[(k+s)%n].n
			if !slices.Contains(got, o) {
				got = append(got, o)
				load[o] += size
			}
		}
	}
}

// insertEval scores inserting one token of newNode into a group ring: the change in
// Σ (replicated load - wanted load)² it causes, computed locally. A new token at t in
// range k = (ring[k-1], ring[k]] takes (ring[k-1], t] with replicas newNode followed by
// the walk from k, and changes the replica sets of the ranges before k whose walk
// crossed the gap (those with fewer than eff distinct owners between them and k).
type insertEval struct {
	ring       []vnodeOwner
	load, want []float64
	eff        int
	newNode    int
	delta      []float64
	touched    []int
	a, b       []int
}

func (e *insertEval) add(nodes []int, w float64) {
	for _, n := range nodes {
		if e.delta[n] == 0 {
			e.touched = append(e.touched, n)
		}
		e.delta[n] += w
	}
}

// walk collects the eff distinct owners met from index m; with insert, newNode stands in
// the gap just before index k.
func (e *insertEval) walk(dst []int, m, k int, insert bool) []int {
	dst = dst[:0]
	n := len(e.ring)
	idx := m
	for steps := 0; steps < n && len(dst) < e.eff; steps++ {
		if insert && idx == k {
			insert = false
			if !slices.Contains(dst, e.newNode) {
				dst = append(dst, e.newNode)
				if len(dst) == e.eff {
					break
				}
			}
		}
		if o := e.ring[idx].n; !slices.Contains(dst, o) {
			dst = append(dst, o)
		}
		idx++
		if idx == n {
			idx = 0
		}
	}
	return dst
}

func (e *insertEval) size(m int) float64 {
	n := len(e.ring)
	if n == 1 {
		return 1
	}
	p := m - 1
	if p < 0 {
		p = n - 1
	}
	return float64(uint64(e.ring[m].t)-uint64(e.ring[p].t)) / (1 << 64)
}

func (e *insertEval) scoreDelta(k int, taken float64) float64 {
	n := len(e.ring)
	// The split range: taken moves from its replicas to the new range's.
	e.a = e.walk(e.a, k, k, false)
	e.add(e.a, -taken)
	e.b = e.walk(e.b, k, k, true)
	e.add(e.b, taken)
	// Earlier ranges whose walk reaches k.
	var seen [16]int
	owners := seen[:0]
	for s := 1; s < n; s++ {
		m := k - s
		if m < 0 {
			m += n
		}
		if o := e.ring[m].n; !slices.Contains(owners, o) {
			owners = append(owners, o)
		}
		if len(owners) >= e.eff {
			break
		}
		sz := e.size(m)
		e.a = e.walk(e.a, m, k, false)
		e.add(e.a, -sz)
		e.b = e.walk(e.b, m, k, true)
		e.add(e.b, sz)
	}
	score := 0.0
	for _, nd := range e.touched {
		d0 := e.load[nd] - e.want[nd]
		d1 := d0 + e.delta[nd]
		score += d1*d1 - d0*d0
		e.delta[nd] = 0
	}
	e.touched = e.touched[:0]
	return score
}
