package cassandra

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// ring builds a ring from "name/dc/rack:token" entries (one token each; a node may
// appear with several tokens).
func ring(t *testing.T, spec ...string) *Ring {
	t.Helper()
	var nodes []Node
	var tokens [][]Token
	idx := map[string]int{}
	for _, s := range spec {
		loc, tok, _ := strings.Cut(s, ":")
		p := strings.Split(loc, "/")
		v, err := strconv.ParseInt(tok, 10, 64)
		if err != nil || len(p) != 3 {
			t.Fatalf("bad spec %q", s)
		}
		i, ok := idx[p[0]]
		if !ok {
			i = len(nodes)
			idx[p[0]] = i
			nodes = append(nodes, Node{Name: p[0], DC: p[1], Rack: p[2]})
			tokens = append(tokens, nil)
		}
		tokens[i] = append(tokens[i], Token(v))
	}
	r, err := NewRing(nodes, tokens)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func names(r *Ring, reps []int32) string {
	var s []string
	for _, n := range reps {
		s = append(s, r.Nodes[n].Name)
	}
	return strings.Join(s, ",")
}

func TestVNodeLookup(t *testing.T) {
	r := ring(t, "a/dc/r:-100", "b/dc/r:0", "c/dc/r:100")
	cases := []struct {
		t     Token
		vnode int
		rng   string
	}{
		{MinToken, 0, "(100, -100]"},
		{-101, 0, "(100, -100]"},
		{-100, 0, "(100, -100]"}, // end inclusive
		{-99, 1, "(-100, 0]"},    // start exclusive
		{0, 1, "(-100, 0]"},
		{1, 2, "(0, 100]"},
		{100, 2, "(0, 100]"},
		{101, 0, "(100, -100]"}, // wraps
		{MaxToken, 0, "(100, -100]"},
	}
	for _, c := range cases {
		v := r.VNode(c.t)
		if v != c.vnode || r.RangeString(v) != c.rng {
			t.Errorf("VNode(%d) = %d %s, want %d %s", c.t, v, r.RangeString(v), c.vnode, c.rng)
		}
	}
	if got := r.Nodes[r.Primary(50)].Name; got != "c" {
		t.Errorf("primary of 50 = %s", got)
	}
	one := ring(t, "a/dc/r:7")
	if one.Size(0) != 1 || one.VNode(-5) != 0 || one.VNode(8) != 0 {
		t.Error("one-token ring")
	}
	// Sizes add up to the whole ring.
	sum := 0.0
	for i := range r.Tokens {
		sum += r.Size(i)
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Errorf("sizes sum to %v", sum)
	}
}

// The prefix index gives what a search of the whole ring gives: at every token, either
// side of it, at the ends of the token space and at random tokens, on rings from one
// token to 64K tokens, including tokens crowded into one prefix.
func TestVNodeIndexMatchesSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{1, 2, 3, 96, 1000, 1 << 16} {
		for _, crowded := range []bool{false, true} {
			tokens := make([]Token, 0, size)
			seen := map[Token]bool{}
			for len(tokens) < size {
				v := Token(rng.Uint64())
				if crowded {
					v = Token(rng.Uint64()>>20) - 1<<40 // all in a few prefixes around 0
				}
				if !seen[v] {
					seen[v] = true
					tokens = append(tokens, v)
				}
			}
			r, err := NewRing([]Node{{Name: "a"}}, [][]Token{tokens})
			if err != nil {
				t.Fatal(err)
			}
			probes := []Token{MinToken, MinToken + 1, MaxToken, 0, -1, 1}
			for _, v := range r.Tokens {
				probes = append(probes, v-1, v, v+1)
			}
			for range 10000 {
				probes = append(probes, Token(rng.Uint64()))
			}
			for _, p := range probes {
				if got, want := r.VNode(p), r.search(p); got != want {
					t.Fatalf("%d tokens (crowded %v): VNode(%d) = %d, search %d", size, crowded, p, got, want)
				}
			}
		}
	}
}

// The DataStax C# driver's replica tests (datastax/csharp-driver,
// src/Cassandra.Tests/TokenTests.cs: TokenMap_SimpleStrategy_With_Keyspace_Test,
// TokenMap_NetworkTopologyStrategy_With_Keyspace_Test,
// TokenMap_Build_NetworkTopology_Adjacent_Ranges_Test), with hosts named by their last
// address byte.
func TestReplicasDriverCases(t *testing.T) {
	simple := ring(t, "0/dc1/rack:0", "1/dc1/rack:10", "2/dc1/rack:20")
	p2, _ := simple.Place(Simple(2))
	p10, _ := simple.Place(Simple(10))
	for _, c := range []struct {
		p    *Placement
		t    Token
		want string
	}{
		{p2, 0, "0,1"}, {p2, -100, "0,1"}, {p2, 500000, "0,1"}, {p2, 20, "2,0"}, {p2, 19, "2,0"},
		{p10, 5, "1,2,0"},
	} {
		if got := names(simple, c.p.Replicas(c.t)); got != c.want {
			t.Errorf("simple %v token %d: %s, want %s", c.p.Replication, c.t, got, c.want)
		}
	}

	nts := ring(t, "0/dc1/rack1:0", "1/dc1/rack1:100", "2/dc1/rack1:200",
		"100/dc2/rack1:1", "101/dc2/rack1:101", "102/dc2/rack1:201")
	ks1, _ := nts.Place(NTS(map[string]int{"dc1": 2, "dc2": 2}))
	ks2, _ := nts.Place(Simple(3))
	ks3, _ := nts.Place(NTS(map[string]int{"dc1": 3, "dc2": 1, "dc3": 5}))
	ks4, _ := nts.Place(NTS(map[string]int{"dc1": 5}))
	for _, c := range []struct {
		p    *Placement
		t    Token
		want string
	}{
		{ks1, 0, "0,100,1,101"}, {ks1, 200, "2,102,0,100"}, {ks1, 190, "2,102,0,100"},
		{ks2, 5000, "0,100,1"},
		{ks3, 0, "0,100,1,2"}, {ks3, 201, "102,0,1,2"},
		{ks4, 0, "0,1,2"},
	} {
		if got := names(nts, c.p.Replicas(c.t)); got != c.want {
			t.Errorf("%v token %d: %s, want %s", c.p.Replication, c.t, got, c.want)
		}
	}

	adj := ring(t, "1/dc1/rack1:0", "1/dc1/rack1:100", "1/dc1/rack1:1000",
		"2/dc1/rack1:200", "2/dc1/rack1:2000", "2/dc1/rack1:20000",
		"3/dc1/rack1:300", "3/dc1/rack1:3000", "3/dc1/rack1:30000")
	pa, _ := adj.Place(NTS(map[string]int{"dc1": 2}))
	if got := names(adj, pa.Replicas(0)); got != "1,2" {
		t.Errorf("adjacent ranges: %s, want 1,2", got)
	}
}

// Hand-worked rack-aware rings, following NetworkTopologyStrategy.calculateNaturalReplicas
// step by step (comments show the walk).
func TestReplicasRackAware(t *testing.T) {
	// As many racks as RF: one replica per rack, same-rack nodes skipped.
	r := ring(t, "A/dc1/r1:10", "B/dc1/r1:20", "C/dc1/r2:30", "A/dc1/r1:40", "D/dc1/r3:50", "B/dc1/r1:60")
	p, _ := r.Place(NTS(map[string]int{"dc1": 3}))
	// Walks: 5: A(r1) B(r1: repeat, none allowed) C(r2) A D(r3). 15: B C A D.
	// 45: D(r3) B(r1) wrap A B C(r2). 55: B A B C D. 25: C(r2) A(r1) D(r3).
	want := map[Token]string{5: "A,C,D", 15: "B,C,D", 45: "D,B,C", 55: "B,C,D", 25: "C,A,D"}
	for tk, w := range want {
		if got := names(r, p.Replicas(tk)); got != w {
			t.Errorf("RF3/3 racks token %d: %s, want %s", tk, got, w)
		}
	}

	// Fewer racks than RF: 2 racks, RF 3, so acceptableRackRepeats = 1: the first node met on
	// an already seen rack is taken at once (Cassandra 3.0+ order; the set equals the older
	// "skip, then fill" algorithm's, the order does not).
	r2 := ring(t, "A/dc1/r1:10", "B/dc1/r1:20", "E/dc1/r1:30", "C/dc1/r2:40")
	p2, _ := r2.Place(NTS(map[string]int{"dc1": 3}))
	for tk, w := range map[Token]string{
		10: "A,B,C", // A(r1 new) B(repeat 1→0) E(no repeats left) C(r2 new)
		25: "E,C,A", // E(r1) C(r2) A(repeat)
		35: "C,A,B", // C(r2) A(r1) B(repeat)
	} {
		if got := names(r2, p2.Replicas(tk)); got != w {
			t.Errorf("RF3/2 racks token %d: %s, want %s", tk, got, w)
		}
	}

	// Two DCs walk the ring together; each DC fills independently.
	r3 := ring(t, "A/dc1/r1:10", "X/dc2/r1:20", "Y/dc2/r1:30", "B/dc1/r2:40", "Z/dc2/r2:50")
	p3, _ := r3.Place(NTS(map[string]int{"dc1": 2, "dc2": 2}))
	for tk, w := range map[Token]string{
		0:  "A,X,B,Z", // A X Y(dc2 repeat; racks 2 = RF so none) B Z
		25: "Y,B,Z,A", // Y(dc2 r1) B(dc1 r2) Z(dc2 r2) A(dc1 r1)
	} {
		if got := names(r3, p3.Replicas(tk)); got != w {
			t.Errorf("two DCs token %d: %s, want %s", tk, got, w)
		}
	}
	// RF above the DC's node count: every DC node, no more.
	p4, _ := r3.Place(NTS(map[string]int{"dc1": 5}))
	if got := names(r3, p4.Replicas(0)); got != "A,B" {
		t.Errorf("RF 5 on 2 nodes: %s", got)
	}
	// A DC with RF 0 (or not listed) holds nothing.
	p5, _ := r3.Place(NTS(map[string]int{"dc1": 1, "dc2": 0}))
	if got := names(r3, p5.Replicas(15)); got != "B" {
		t.Errorf("dc2:0: %s", got)
	}
}

func TestOwnership(t *testing.T) {
	r := ring(t, "a/dc/r:-4611686018427387904", "b/dc/r:0", "c/dc/r:4611686018427387904", "d/dc/r:9223372036854775807")
	p, _ := r.Place(Simple(2))
	own := p.Ownership()
	for i, o := range own {
		if math.Abs(o-0.5) > 1e-9 {
			t.Errorf("node %d owns %v, want 0.5", i, o)
		}
	}
}

func TestBuildRing(t *testing.T) {
	spec := RingSpec{DCs: []DCSpec{{Name: "dc1", Nodes: 6, Racks: 3}, {Name: "dc2", Nodes: 4, Racks: 1}}, Seed: 7}
	r, err := BuildRing(spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Nodes) != 10 || len(r.Tokens) != 10*DefaultNumTokens {
		t.Fatalf("%d nodes, %d tokens", len(r.Nodes), len(r.Tokens))
	}
	if r.Nodes[4].Name != "dc1-n5" || r.Nodes[4].Rack != "rack2" || r.Nodes[7].DC != "dc2" {
		t.Fatalf("naming: %+v", r.Nodes)
	}
	again, _ := BuildRing(spec)
	if !slices.Equal(r.Tokens, again.Tokens) || !slices.Equal(r.Owner, again.Owner) {
		t.Fatal("BuildRing is not deterministic")
	}
	p, _ := r.Place(NTS(map[string]int{"dc1": 3, "dc2": 3}))
	own := p.Ownership()
	check := func(name string, from, to int, per float64, tol float64) {
		for i := from; i < to; i++ {
			if math.Abs(own[i]/per-1) > tol {
				t.Errorf("%s: %s holds %.3f of the ring, want %.3f ±%.0f%%", name, r.Nodes[i].Name, own[i], per, tol*100)
			}
		}
	}
	check("balanced dc1", 0, 6, 0.5, 0.10)
	check("balanced dc2", 6, 10, 0.75, 0.10)

	// Replicated ownership stays within 10% of the mean for typical shapes.
	for _, shape := range []DCSpec{{"a", 5, 1}, {"b", 12, 1}, {"c", 12, 3}, {"d", 9, 3}} {
		r, err := BuildRing(RingSpec{DCs: []DCSpec{shape}, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		p, _ := r.Place(NTS(map[string]int{shape.Name: 3}))
		own := p.Ownership()
		mean := 3 / float64(shape.Nodes)
		for i, o := range own {
			if math.Abs(o/mean-1) > 0.10 {
				t.Errorf("%+v: %s holds %.3f, mean %.3f", shape, r.Nodes[i].Name, o, mean)
			}
		}
	}

	spec.Allocation = AllocRandom
	rr, err := BuildRing(spec)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(rr.Tokens, r.Tokens) {
		t.Fatal("random allocation equals balanced")
	}
	if _, err := BuildRing(RingSpec{DCs: []DCSpec{{Name: "x"}}}); err == nil {
		t.Fatal("DC without nodes accepted")
	}
}

func TestRingFromPeers(t *testing.T) {
	r, err := RingFromPeers([]Peer{
		{Host: "10.0.0.1", DC: "dc1", Rack: "r1", Tokens: []string{"-3074457345618258603", "3074457345618258602"}},
		{Host: "10.0.0.2", DC: "dc1", Rack: "r1", Tokens: []string{"-9223372036854775808"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.Tokens[0] != MinToken || r.Nodes[r.Owner[0]].Name != "10.0.0.2" || len(r.Tokens) != 3 {
		t.Fatalf("ring %+v", r)
	}
	if _, err := RingFromPeers([]Peer{{Host: "a", Tokens: []string{"x"}}}); err == nil {
		t.Error("bad token accepted")
	}
	if _, err := RingFromPeers([]Peer{{Host: "a", Tokens: []string{"1"}}, {Host: "b", Tokens: []string{"1"}}}); err == nil {
		t.Error("duplicate token accepted")
	}
	if _, err := RingFromPeers([]Peer{{Host: "a"}}); err == nil {
		t.Error("node without tokens accepted")
	}
}

func TestParseReplication(t *testing.T) {
	r, err := ParseReplication(map[string]string{"class": "org.apache.cassandra.locator.NetworkTopologyStrategy", "DC1": "3", "DC2": "3"}, nil)
	if err != nil || r.String() != "NetworkTopologyStrategy DC1:3 DC2:3" || r.Total() != 6 {
		t.Fatalf("%v %v", r, err)
	}
	r, err = ParseReplication(map[string]string{"class": "NetworkTopologyStrategy", "replication_factor": "2", "dc1": "3"}, []string{"dc1", "dc2"})
	if err != nil || r.DCs["dc1"] != 3 || r.DCs["dc2"] != 2 {
		t.Fatalf("%v %v", r, err)
	}
	r, err = ParseReplication(map[string]string{"class": "SimpleStrategy", "replication_factor": "3"}, nil)
	if err != nil || r.String() != "SimpleStrategy RF 3" {
		t.Fatalf("%v %v", r, err)
	}
	for _, bad := range []map[string]string{
		{"class": "SimpleStrategy"},
		{"class": "NetworkTopologyStrategy", "dc1": "3/1"},
		{"class": "LocalStrategy"},
	} {
		if _, err := ParseReplication(bad, nil); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func TestConsistency(t *testing.T) {
	nts := NTS(map[string]int{"dc1": 3, "dc2": 3})
	simple := Simple(3)
	cases := []struct {
		cl    string
		rep   Replication
		total int
		perDC map[string]int
	}{
		{"one", nts, 1, nil}, {"TWO", nts, 2, nil}, {"three", nts, 3, nil}, {"any", nts, 1, nil},
		{"QUORUM", nts, 4, nil}, {"serial", nts, 4, nil}, {"ALL", nts, 6, nil},
		{"LOCAL_QUORUM", nts, 2, map[string]int{"dc1": 2}},
		{"local_serial", nts, 2, map[string]int{"dc1": 2}},
		{"LOCAL_ONE", nts, 1, map[string]int{"dc1": 1}},
		{"EACH_QUORUM", nts, 4, map[string]int{"dc1": 2, "dc2": 2}},
		{"QUORUM", simple, 2, nil}, {"ALL", simple, 3, nil},
		{"LOCAL_QUORUM", simple, 2, map[string]int{"dc1": 2}},
		{"EACH_QUORUM", simple, 2, nil},
		{"QUORUM", Simple(1), 1, nil}, {"QUORUM", Simple(4), 3, nil}, {"QUORUM", Simple(5), 3, nil},
		{"QUORUM", NTS(map[string]int{"dc1": 3, "dc2": 2}), 3, nil},
	}
	for _, c := range cases {
		cl, err := ParseConsistency(c.cl)
		if err != nil {
			t.Fatal(err)
		}
		n := cl.Need(c.rep, "dc1")
		if n.Total != c.total || len(n.PerDC) != len(c.perDC) {
			t.Errorf("%s on %v: %+v, want %d %v", cl, c.rep, n, c.total, c.perDC)
			continue
		}
		for dc, v := range c.perDC {
			if n.PerDC[dc] != v {
				t.Errorf("%s on %v: %+v, want %v", cl, c.rep, n, c.perDC)
			}
		}
	}
	if Any.CheckRead() == nil || Any.CheckWrite() != nil {
		t.Error("ANY: read must fail, write pass")
	}
	if Serial.CheckWrite() == nil || LocalSerial.CheckWrite() == nil || Serial.CheckRead() != nil {
		t.Error("SERIAL: write must fail, read pass")
	}
	if Quorum.CheckSerial() == nil || LocalSerial.CheckSerial() != nil {
		t.Error("CheckSerial")
	}
	if EachQuorum.CheckRead() != nil || LocalQuorum.CheckWrite() != nil {
		t.Error("EACH_QUORUM reads and LOCAL_QUORUM writes are valid")
	}
	if _, err := ParseConsistency("most"); err == nil {
		t.Error("unknown level parsed")
	}
	if LocalQuorum.String() != "LOCAL_QUORUM" || uint16(LocalOne) != 10 || !LocalOne.IsLocal() || Quorum.IsLocal() {
		t.Error("names / protocol codes")
	}
}
