package mongo

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func mustPattern(t *testing.T, s string) KeyPattern {
	t.Helper()
	p, err := ParseKeyPattern(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func shardSeq(tb *ChunkTable) string {
	var s []string
	for i := range tb.Chunks {
		s = append(s, tb.Shard(i))
	}
	return strings.Join(s, ",")
}

func TestParseKeyPattern(t *testing.T) {
	p := mustPattern(t, `{category: 1, _id: "hashed"}`)
	if p.String() != `{category: 1, _id: "hashed"}` || p.HashedField() != 1 || p.HashedPrefix() {
		t.Fatalf("%v", p)
	}
	if q := mustPattern(t, "user_id:hashed,created_at:1"); !q.HashedPrefix() || len(q) != 2 {
		t.Fatalf("%v", q)
	}
	for _, bad := range []string{"", "{a: -1}", `{a: "hashed", b: "hashed"}`, "{a: 1, a: 1}", "{a}"} {
		if _, err := ParseKeyPattern(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	d, err := KeyPatternFromDoc([]Field{{"category", Double(1)}, {"_id", String("hashed")}})
	if err != nil || d.String() != p.String() {
		t.Fatalf("%v %v", d, err)
	}
}

// mongodb/mongo src/mongo/db/s/config/initial_split_policy_test.cpp,
// CalculateHashedSplitPointsTest: split points of calculateHashedSplitPoints.
func TestHashedSplitPoints(t *testing.T) {
	cases := []struct {
		n    int
		want []int64
	}{
		{4, []int64{-4611686018427387902, 0, 4611686018427387902}},
		{3, []int64{-3074457345618258602, 3074457345618258602}},
		{2, []int64{0}},
		{1, nil},
	}
	for _, c := range cases {
		if got := hashedSplitPoints(c.n); !slices.Equal(got, c.want) {
			t.Errorf("%d chunks: %v, want %v", c.n, got, c.want)
		}
	}
	// Every count gives n chunks, sorted and symmetric around 0.
	for n := 1; n <= 64; n++ {
		pts := hashedSplitPoints(n)
		if len(pts) != n-1 || !slices.IsSorted(pts) {
			t.Fatalf("%d: %v", n, pts)
		}
		for i := range pts {
			if pts[i] != -pts[len(pts)-1-i] {
				t.Fatalf("%d: not symmetric %v", n, pts)
			}
		}
	}
}

func TestPresplitHashed(t *testing.T) {
	p := mustPattern(t, `{x: "hashed", y: 1}`)
	// Pre-7.2 default: 2 chunks per shard, contiguous pairs on shards in name order
	// (HashedPrefixMoreChunksThanShardsWithEqualDistribution and
	// SplitPointsNumContiguousChunksPerShardsGreaterThanOne).
	tb, err := PresplitHashed(p, []string{"shardB", "shardA"}, Presplit{Rule: SplitPre72})
	if err != nil {
		t.Fatal(err)
	}
	if got := shardSeq(tb); got != "shardA,shardA,shardB,shardB" {
		t.Fatalf("pre-7.2: %s", got)
	}
	if got := tb.RangeString(1); got != "[{x: NumberLong(-4611686018427387902), y: MinKey}, {x: NumberLong(0), y: MinKey})" {
		t.Fatalf("chunk 1: %s", got)
	}
	// Fewer chunks than shards: the first chunk goes to the primary
	// (HashedPrefixChunksLessThanShards: 5 shards, numInitialChunks 2).
	five := []string{"s0", "s1", "s2", "s3", "s4"}
	tb, _ = PresplitHashed(mustPattern(t, `{x: "hashed"}`), five, Presplit{Rule: SplitPre72, NumInitialChunks: 2, Primary: "s3"})
	if got := shardSeq(tb); got != "s3,s1" {
		t.Fatalf("2 chunks on 5 shards: %s", got)
	}
	// 7.2+: one chunk per shard.
	tb, _ = PresplitHashed(mustPattern(t, `{x: "hashed"}`), []string{"a", "b", "c"}, Presplit{})
	if got := shardSeq(tb); got != "a,b,c" || tb.Chunks[1].Min[0].I != -3074457345618258602 || tb.Chunks[2].Min[0].I != 3074457345618258602 {
		t.Fatalf("7.2+: %s %v", got, tb.Chunks)
	}
	if _, err := PresplitHashed(mustPattern(t, `{a: 1, b: "hashed"}`), five, Presplit{}); err == nil {
		t.Fatal("ranged prefix pre-split accepted")
	}
	one, err := SingleChunk(mustPattern(t, `{a: 1, b: "hashed"}`), five, "s2")
	if err != nil || len(one.Chunks) != 1 || one.Shard(0) != "s2" {
		t.Fatalf("single chunk: %v %v", one, err)
	}
}

func zoneKey(country, city Value, hashed, suffix Value) []Value {
	return []Value{country, city, hashed, suffix}
}

// mongodb/mongo src/mongo/db/s/config/initial_split_policy_test.cpp,
// PresplitHashedZonesChunksTest (the pre-7.2 policy, with numInitialChunks): chunks per
// zone and the shard of every chunk, holes round-robin over the shards in name order.
func TestPresplitHashedZonesPre72(t *testing.T) {
	p := mustPattern(t, `{country: 1, city: 1, hashedField: "hashed", suffix: 1}`)
	s := func(n string) string { return "testShard" + n }
	mk := MinKey()
	zk := func(country, city string) []Value { return zoneKey(String(country), String(city), mk, mk) }

	// MultipleContiguousZonesWithEachZoneHavingMultipleShards.
	shards := []string{s("0"), s("1"), s("2"), s("3"), s("4"), s("5")}
	zones := []Zone{
		{"zone0", zk("IE", "Dublin"), zk("UK", "London"), []string{s("0"), s("3"), s("5")}},
		{"zone1", zk("UK", "London"), zk("US", "Los Angeles"), []string{s("2"), s("4")}},
	}
	for _, c := range []struct {
		num  int
		want string
	}{
		{0, "0,0,0,3,3,5,5,2,2,4,4,1"},
		{1, "0,0,3,5,2,4,1"},
		{5, "0,0,3,5,2,4,1"},
	} {
		tb, err := PresplitHashedZones(p, shards, zones, Presplit{Rule: SplitPre72, NumInitialChunks: c.num})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.ReplaceAll(shardSeq(tb), "testShard", ""); got != c.want {
			t.Errorf("contiguous zones, numInitialChunks %d: %s, want %s", c.num, got, c.want)
		}
	}

	// InterweavingZones: zone names repeat over ranges; quotas count ranges per shard.
	shards = []string{s("0"), s("1"), s("2"), s("3")}
	z0, z1 := []string{s("0")}, []string{s("2"), s("3")}
	zones = []Zone{
		{"zone0", zk("country1", "city1"), zoneKey(String("country2"), mk, mk, mk), z0},
		{"zone1", zk("country2", "city2"), zoneKey(String("country3"), mk, mk, mk), z1},
		{"zone2", zk("country3", "city3"), zoneKey(String("country4"), mk, mk, mk), z0},
		{"zone0", zk("country4", "city4"), zoneKey(String("country5"), MaxKey(), mk, mk), z0},
		{"zone1", zk("country6", "city5"), zoneKey(String("country7"), MaxKey(), mk, mk), z1},
	}
	for _, c := range []struct {
		num  int
		want string
	}{
		{0, "0,0,1,2,3,2,0,3,0,0,2,3,1"},
		{1, "0,0,1,2,3,2,0,3,0,0,2,3,1"},
		{7, "0,0,1,2,2,3,3,2,0,3,0,0,2,2,3,3,1"},
	} {
		tb, err := PresplitHashedZones(p, shards, zones, Presplit{Rule: SplitPre72, NumInitialChunks: c.num})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.ReplaceAll(shardSeq(tb), "testShard", ""); got != c.want {
			t.Errorf("interweaving, numInitialChunks %d: %s, want %s", c.num, got, c.want)
		}
	}

	// Split points inside a zone carry the zone's prefix and MinKey after the hash.
	tb, _ := PresplitHashedZones(p, shards, zones[:1], Presplit{Rule: SplitPre72})
	if got := tb.RangeString(1); got != `[{country: "country1", city: "city1", hashedField: MinKey, suffix: MinKey}, {country: "country1", city: "city1", hashedField: NumberLong(0), suffix: MinKey})` {
		t.Errorf("zone chunk: %s", got)
	}

	// Validation (error codes 31388-31391 in PresplitHashedZonesSplitPolicy::_validate).
	bad := [][]Zone{
		{{"z", zoneKey(mk, mk, mk, mk), zk("UK", "x"), z0}},                          // MinKey in prefix
		{{"z", zk("UK", "a"), zk("UK", "a"), z0}},                                    // prefix equal
		{{"z", zoneKey(String("UK"), String("a"), Int64(1), mk), zk("US", "x"), z0}}, // hashed not MinKey
		{{"z", zoneKey(String("UK"), String("a"), mk, Int32(1)), zk("US", "x"), z0}}, // suffix not MinKey
	}
	for i, zs := range bad {
		if _, err := PresplitHashedZones(p, shards, zs, Presplit{}); err == nil {
			t.Errorf("bad zones %d accepted", i)
		}
	}
}

// 7.2+: one chunk per shard of each zone (PresplitHashedZonesSplitPolicy::buildSplitInfoForTag
// after SERVER-82611); holes round-robin over the shards in the given order.
func TestPresplitHashedZonesV72(t *testing.T) {
	p := mustPattern(t, `{category: 1, _id: "hashed"}`)
	zk := func(c string) []Value { return []Value{String(c), MinKey()} }
	zones := []Zone{
		{"electronics", zk("electronics"), zk("electronicz"), []string{"sh1", "sh2", "sh3"}},
		{"books", zk("books"), zk("bookz"), []string{"sh4"}},
	}
	tb, err := PresplitHashedZones(p, []string{"sh1", "sh2", "sh3", "sh4"}, zones, Presplit{})
	if err != nil {
		t.Fatal(err)
	}
	// hole [MinKey, books) sh1, books sh4, hole [bookz, electronics) sh2,
	// electronics ×3 (sh1 sh2 sh3), hole [electronicz, MaxKey) sh3.
	if got := shardSeq(tb); got != "sh1,sh4,sh2,sh1,sh2,sh3,sh3" {
		t.Fatalf("%s", got)
	}
	// A product in electronics lands in one of the zone's three chunks, by its hash.
	id := String("p-42")
	k := p.Key(nil, []Value{String("electronics"), id})
	c := tb.Find(k)
	if c < 3 || c > 5 || k[1].I != Hash(&id) {
		t.Fatalf("electronics product in chunk %d", c)
	}
}

func TestFindAndConfigChunks(t *testing.T) {
	p := mustPattern(t, `{_id: "hashed"}`)
	tb, err := PresplitHashed(p, []string{"a", "b", "c", "d"}, Presplit{Rule: SplitPre72})
	if err != nil {
		t.Fatal(err)
	}
	if tb.hashMax == nil {
		t.Fatal("fast path not built")
	}
	// Rebuild the same table from config.chunks-like rows, shuffled.
	var rows []ChunkRow
	for i := len(tb.Chunks) - 1; i >= 0; i-- {
		c := tb.Chunks[i]
		rows = append(rows, ChunkRow{Min: []Field{{"_id", c.Min[0]}}, Max: []Field{{"_id", c.Max[0]}}, Shard: tb.Shard(i)})
	}
	live, err := FromConfigChunks(p, rows)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []int64{-1 << 63, -4611686018427387903, -4611686018427387902, -1, 0, 1, 4611686018427387902, 1<<63 - 1} {
		k := []Value{Int64(h)}
		slow := slices.IndexFunc(tb.Chunks, func(c Chunk) bool {
			return CompareKeys(c.Min, k) <= 0 && CompareKeys(k, c.Max) < 0
		})
		if slow < 0 {
			slow = len(tb.Chunks) - 1
		}
		if tb.FindHashed(h) != slow || tb.Find(k) != slow || live.Find(k) != slow || live.Shard(slow) != tb.Shard(slow) {
			t.Errorf("hash %d: fast %d, generic %d, live %d, want %d", h, tb.FindHashed(h), tb.Find(k), live.Find(k), slow)
		}
	}
	if _, err := FromConfigChunks(p, rows[1:]); err == nil {
		t.Error("table with a gap accepted")
	}
	if _, err := FromConfigChunks(p, []ChunkRow{{Min: []Field{{"x", MinKey()}}, Max: []Field{{"x", MaxKey()}}, Shard: "a"}}); err == nil {
		t.Error("bound with the wrong field accepted")
	}
}

// TestChunkTableClone: a clone routes as its original, and a chunk moved or a shard
// added on one leaves the other as it was.
func TestChunkTableClone(t *testing.T) {
	p := mustPattern(t, `{_id: "hashed"}`)
	tb, err := PresplitHashed(p, []string{"a", "b"}, Presplit{Rule: SplitV72})
	if err != nil {
		t.Fatal(err)
	}
	c := tb.Clone()
	for _, h := range []int64{-1 << 63, -1, 0, 1<<63 - 1} {
		if c.FindHashed(h) != tb.FindHashed(h) || c.Find([]Value{Int64(h)}) != tb.Find([]Value{Int64(h)}) {
			t.Fatalf("hash %d: clone finds chunk %d, original %d", h, c.FindHashed(h), tb.FindHashed(h))
		}
	}
	was := tb.Chunks[0].Shard
	c.Chunks[0].Shard = 1 - was
	c.Shards = append(c.Shards, "c")
	c.Pattern[0].Name = "x"
	if tb.Chunks[0].Shard != was || len(tb.Shards) != 2 || tb.Pattern[0].Name != "_id" {
		t.Fatalf("changing the clone changed the original: %+v %v %v", tb.Chunks[0], tb.Shards, tb.Pattern)
	}
}

func TestSplitByDataMonotonic(t *testing.T) {
	p := mustPattern(t, `{created_at: 1}`)
	shards := []string{"s1", "s2", "s3"}
	var data []SizedKey
	for i := 0; i < 3000; i++ {
		data = append(data, SizedKey{Key: []Value{Date(int64(i) * 1000)}, Bytes: 1 << 20}) // 1 MiB docs
	}
	const chunk = 64 << 20
	tb, err := SplitByData(p, shards, data, DataModel{ChunkSize: chunk, Primary: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	// Data per shard within 3 chunk sizes of each other.
	load := map[string]int64{}
	for i, c := range tb.Chunks {
		for _, d := range data {
			if CompareKeys(c.Min, d.Key) <= 0 && CompareKeys(d.Key, c.Max) < 0 {
				load[tb.Shard(i)] += d.Bytes
			}
		}
	}
	mx, mn := int64(0), int64(1<<62)
	for _, s := range shards {
		mx, mn = max(mx, load[s]), min(mn, load[s])
	}
	if mx-mn >= 3*chunk || len(load) != 3 {
		t.Fatalf("unbalanced: %v", load)
	}
	// Every later insert (a newer timestamp) lands in the last chunk, on the primary.
	last := tb.Find([]Value{Date(1 << 40)})
	if last != len(tb.Chunks)-1 || tb.Shard(last) != "s1" {
		t.Fatalf("new insert in chunk %d on %s", last, tb.Shard(last))
	}
	// No two adjacent chunks on one shard (auto-merger).
	for i := 1; i < len(tb.Chunks); i++ {
		if tb.Chunks[i].Shard == tb.Chunks[i-1].Shard {
			t.Fatalf("adjacent chunks %d,%d on one shard", i-1, i)
		}
	}

	// Before 6.0.3: split every half chunk; counts end within one.
	tb, err = SplitByData(p, shards, data, DataModel{ChunkSize: chunk, Balancer: BalanceChunkCount})
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.Chunks) != 3000/32+1 { // 32 MiB runs (the last holds 24) — 94 chunks
		t.Fatalf("%d chunks", len(tb.Chunks))
	}
	cps := tb.ChunksPerShard()
	if slices.Max(cps)-slices.Min(cps) >= 2 {
		t.Fatalf("chunk counts %v", cps)
	}
	// Nothing to balance below the threshold: everything stays on the primary.
	small, _ := SplitByData(p, shards, data[:10], DataModel{ChunkSize: chunk})
	if len(small.Chunks) != 1 || small.Shard(0) != "s1" {
		t.Fatalf("small collection: %s", shardSeq(small))
	}
	// A single key bigger than the imbalance is never moved (jumbo).
	jumbo, _ := SplitByData(p, shards[:2], []SizedKey{{Key: []Value{Int32(1)}, Bytes: 10 * chunk}}, DataModel{ChunkSize: chunk})
	if len(jumbo.Chunks) != 1 || !jumbo.Chunks[0].Jumbo {
		t.Fatalf("jumbo: %s %+v", shardSeq(jumbo), jumbo.Chunks)
	}
}

// {category: 1} over a catalog with one category at 70%: that value is one chunk larger
// than the chunk size, split off and marked jumbo on the primary; the balancer moves the
// other categories' ranges around it, and never the jumbo chunk.
func TestSplitByDataJumbo(t *testing.T) {
	p := mustPattern(t, `{category: 1}`)
	shards := []string{"s0", "s1", "s2"}
	const chunk = 64 << 20
	shares := map[string]int64{"accessories": 8, "appliances": 10, "books": 3, "clothing": 5, "electronics": 70, "home": 4}
	var data []SizedKey
	for name, pct := range shares {
		// 8 GB of products: a document of 16 KB per key entry, one entry per category
		// holding that category's bytes.
		data = append(data, SizedKey{Key: []Value{String(name)}, Bytes: pct * (80 << 20)})
	}
	tb, err := SplitByData(p, shards, data, DataModel{ChunkSize: chunk, Primary: "s0"})
	if err != nil {
		t.Fatal(err)
	}
	e := tb.Find([]Value{String("electronics")})
	if !tb.Chunks[e].Jumbo || tb.Shard(e) != "s0" {
		t.Fatalf("electronics in chunk %d %+v on %s, want a jumbo chunk on the primary", e, tb.Chunks[e], tb.Shard(e))
	}
	if CompareKeys(tb.Chunks[e].Min, []Value{String("electronics")}) != 0 || CompareKeys(tb.Chunks[e].Max, []Value{String("home")}) != 0 {
		t.Fatalf("the jumbo chunk is %s, want [electronics, home)", tb.RangeString(e))
	}
	// Every other category is a single value above the chunk size too (books: 240 MB):
	// each is jumbo, so nothing could move at all.
	if n := len(tb.JumboChunks()); n != len(shares) {
		t.Fatalf("%d jumbo chunks, want %d: %s", n, len(shares), shardSeq(tb))
	}
	// With small categories (a tenth of the data), the balancer moves them off the primary
	// around the jumbo electronics chunk.
	for i := range data {
		if data[i].Key[0].S != "electronics" {
			data[i].Bytes /= 10
		}
	}
	tb, err = SplitByData(p, shards, data, DataModel{ChunkSize: chunk, Primary: "s0"})
	if err != nil {
		t.Fatal(err)
	}
	e = tb.Find([]Value{String("electronics")})
	if !tb.Chunks[e].Jumbo || tb.Shard(e) != "s0" {
		t.Fatalf("electronics: %+v on %s", tb.Chunks[e], tb.Shard(e))
	}
	moved := 0
	for i, c := range tb.Chunks {
		if i != e && tb.Shard(i) != "s0" {
			moved++
		}
		if i != e && c.Jumbo {
			t.Errorf("chunk %s marked jumbo", tb.RangeString(i))
		}
	}
	if moved == 0 {
		t.Fatalf("nothing moved off the primary: %s", shardSeq(tb))
	}
}

func TestRoute(t *testing.T) {
	// {_id: "hashed"} on 4 shards (pre-7.2: 8 chunks).
	p := mustPattern(t, `{_id: "hashed"}`)
	tb, _ := PresplitHashed(p, []string{"a", "b", "c", "d"}, Presplit{Rule: SplitPre72})
	id := String("order-1")
	r := tb.Route([]Cond{Eq("_id", id), Eq("status", String("new"))})
	want := tb.Chunks[tb.FindHashed(Hash(&id))].Shard
	if r.Targeting != TargetOne || !r.Point || r.Chunks != 1 || !slices.Equal(r.Shards, []int{want}) {
		t.Fatalf("equality on hashed _id: %+v", r)
	}
	lo, hi := String("a"), String("b")
	if r := tb.Route([]Cond{Range("_id", &lo, &hi)}); r.Targeting != TargetAll || len(r.Shards) != 4 || r.Chunks != 8 {
		t.Fatalf("range on hashed _id: %+v", r)
	}
	if r := tb.Route(nil); r.Targeting != TargetAll || len(r.Shards) != 4 {
		t.Fatalf("no predicate: %+v", r)
	}
	if r := tb.Route([]Cond{In("_id")}); r.Targeting != TargetOne || r.Chunks != 0 {
		t.Fatalf("empty $in: %+v", r)
	}
	r = tb.Route([]Cond{In("_id", String("x1"), String("x2"), String("x3"), String("x1"))})
	if r.Point || r.Chunks < 1 || r.Chunks > 3 {
		t.Fatalf("$in on hashed _id: %+v", r)
	}

	// {user_id: "hashed", created_at: 1}: a user's history is one hash value.
	p2 := mustPattern(t, `{user_id: "hashed", created_at: 1}`)
	tb2, _ := PresplitHashed(p2, []string{"a", "b", "c"}, Presplit{})
	u := Int64(77)
	d0, d1 := Date(0), Date(1000)
	r = tb2.Route([]Cond{Eq("user_id", u), Range("created_at", &d0, &d1)})
	if r.Targeting != TargetOne || r.Point || r.Chunks != 1 {
		t.Fatalf("user history: %+v", r)
	}
	if r := tb2.Route([]Cond{Range("created_at", &d0, &d1)}); r.Targeting != TargetAll {
		t.Fatalf("time range without user: %+v", r)
	}

	// {category: 1, _id: "hashed"} with zones: a category targets its zone's shards.
	p3 := mustPattern(t, `{category: 1, _id: "hashed"}`)
	zk := func(c string) []Value { return []Value{String(c), MinKey()} }
	tb3, err := PresplitHashedZones(p3, []string{"sh1", "sh2", "sh3", "sh4"}, []Zone{
		{"books", zk("books"), zk("bookz"), []string{"sh4"}},
		{"electronics", zk("electronics"), zk("electronicz"), []string{"sh1", "sh2", "sh3"}},
	}, Presplit{})
	if err != nil {
		t.Fatal(err)
	}
	name := func(r Route) string {
		var s []string
		for _, i := range r.Shards {
			s = append(s, tb3.Shards[i])
		}
		return fmt.Sprintf("%v %d %s", r.Targeting, r.Chunks, strings.Join(s, ","))
	}
	for _, c := range []struct {
		conds []Cond
		want  string
	}{
		{[]Cond{Eq("category", String("electronics"))}, "multi-shard 3 sh1,sh2,sh3"},
		{[]Cond{Eq("category", String("books"))}, "targeted 1 sh4"},
		{[]Cond{In("category", String("books"), String("electronics"))}, "multi-shard 4 sh1,sh2,sh3,sh4"},
		{[]Cond{Eq("_id", String("p-1"))}, "broadcast 7 sh1,sh2,sh3,sh4"},
	} {
		if got := name(tb3.Route(c.conds)); got != c.want {
			t.Errorf("%v: %s, want %s", c.conds, got, c.want)
		}
	}
	r = tb3.Route([]Cond{Eq("category", String("electronics")), Eq("_id", String("p-1"))})
	if r.Targeting != TargetOne || !r.Point || r.Chunks != 1 {
		t.Fatalf("full key: %+v", r)
	}

	// Ranged {created_at: 1}: a one-sided range is bracketed by type.
	p4 := mustPattern(t, `{created_at: 1}`)
	c1, c2 := Date(100), Date(200)
	tb4, err := NewChunkTable(p4, []string{"x", "y", "z"}, []Chunk{
		{Min: []Value{MinKey()}, Max: []Value{c1}, Shard: 0},
		{Min: []Value{c1}, Max: []Value{c2}, Shard: 1},
		{Min: []Value{c2}, Max: []Value{MaxKey()}, Shard: 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		conds []Cond
		want  []int
		kind  Targeting
	}{
		{[]Cond{Range("created_at", &c2, nil)}, []int{2}, TargetOne},
		{[]Cond{Range("created_at", nil, &c1)}, []int{0, 1}, TargetSome}, // closed bound touches chunk 1
		{[]Cond{Eq("created_at", Date(150))}, []int{1}, TargetOne},
		{[]Cond{Eq("created_at", Date(150)), Range("created_at", &c2, nil)}, []int{1}, TargetOne},   // equality wins
		{[]Cond{Range("created_at", &c1, &c2), Range("created_at", nil, &c1)}, []int{1}, TargetOne}, // intersect to [100, 100]
		{[]Cond{Range("created_at", &c2, &c1)}, []int{0}, TargetOne},                                // empty: one shard
	} {
		r := tb4.Route(c.conds)
		if !slices.Equal(r.Shards, c.want) || r.Targeting != c.kind {
			t.Errorf("%v: %+v, want %v %v", c.conds, r, c.want, c.kind)
		}
	}
}

// The byte encoding SplitByData sorts by has CompareKeys's order.
func TestSortKeyOrder(t *testing.T) {
	vals := []Value{MinKey(), Null(), Int32(-5), Int64(-1), Int32(0), Int64(3), Int64(1 << 40), String(""), String("a"), String("a\x00"),
		String("a\x00b"), String("ab"), String("b"), Binary(4, []byte{9}), Binary(0, []byte{1, 2}), Binary(4, []byte{1, 2}),
		ObjectID([12]byte{1}), ObjectID([12]byte{2}), Bool(false), Bool(true), Date(-1), Date(5), MaxKey()}
	for _, a := range vals {
		for _, b := range vals {
			for _, c := range vals[:4] {
				ka, kb := []Value{a, c}, []Value{b, c}
				ea, ok1 := appendSortKey(nil, ka)
				eb, ok2 := appendSortKey(nil, kb)
				if !ok1 || !ok2 {
					t.Fatalf("%v or %v not encoded", a, b)
				}
				if want, got := CompareKeys(ka, kb), bytes.Compare(ea, eb); want != got {
					t.Errorf("%v vs %v: CompareKeys %d, bytes %d", ka, kb, want, got)
				}
			}
		}
	}
	if _, ok := appendSortKey(nil, []Value{Double(1.5)}); ok {
		t.Error("a double is encoded: ints and doubles compare by value, which the bytes cannot")
	}
}

// TestFindByFirstField: a table whose bounds start with strings or dates finds the same
// chunk by its first-field index as by comparing whole bounds, also where several
// chunks share a first value (a compound key) and for the [prefix, MinKey] and
// [prefix, MaxKey] keys a prefix query routes by.
func TestFindByFirstField(t *testing.T) {
	cats := []string{"audio", "books", "garden", "phones", "toys"}
	var chunks []Chunk
	p := mustPattern(t, `{category: 1, n: 1}`)
	lo := []Value{MinKey(), MinKey()}
	for i, c := range cats {
		for _, n := range []int64{10, 20} {
			hi := []Value{String(c), Int64(n)}
			chunks = append(chunks, Chunk{Min: lo, Max: hi, Shard: i % 2})
			lo = hi
		}
	}
	chunks = append(chunks, Chunk{Min: lo, Max: []Value{MaxKey(), MaxKey()}})
	compound, err := NewChunkTable(p, []string{"a", "b"}, chunks)
	if err != nil {
		t.Fatal(err)
	}
	if compound.firstS == nil {
		t.Fatal("no first-field index for string bounds")
	}
	var keys [][]Value
	for _, c := range append(slices.Clone(cats), "", "a", "books2", "zzz") {
		for _, n := range []int64{-1, 10, 15, 20, 25} {
			keys = append(keys, []Value{String(c), Int64(n)})
		}
		keys = append(keys, []Value{String(c), MinKey()}, []Value{String(c), MaxKey()})
	}
	checkFind(t, compound, keys)

	chunks = chunks[:0]
	lo = []Value{MinKey()}
	for i := range 400 {
		hi := []Value{Date(int64(i) * 1000)}
		chunks = append(chunks, Chunk{Min: lo, Max: hi, Shard: i % 2})
		lo = hi
	}
	chunks = append(chunks, Chunk{Min: lo, Max: []Value{MaxKey()}})
	dates, err := NewChunkTable(mustPattern(t, `{created_at: 1}`), []string{"s1", "s2"}, chunks)
	if err != nil {
		t.Fatal(err)
	}
	if dates.firstI == nil {
		t.Fatal("no first-field index for date bounds")
	}
	keys = keys[:0]
	for _, c := range dates.Chunks {
		for _, d := range []int64{-1, 0, 1} {
			if c.Max[0].Kind == KindDate {
				keys = append(keys, []Value{Date(c.Max[0].I + d)})
			}
		}
	}
	keys = append(keys, []Value{Date(-1 << 62)}, []Value{Date(1 << 62)}, []Value{Int64(5000)})
	checkFind(t, dates, keys)
}

// checkFind compares tb.Find with the chunk whose [Min, Max) holds each key.
func checkFind(t *testing.T, tb *ChunkTable, keys [][]Value) {
	t.Helper()
	for _, k := range keys {
		want := slices.IndexFunc(tb.Chunks, func(c Chunk) bool {
			return CompareKeys(c.Min, k) <= 0 && CompareKeys(k, c.Max) < 0
		})
		if got := tb.Find(k); got != want {
			t.Errorf("key %s: chunk %d, want %d", tb.Pattern.FormatKey(k), got, want)
		}
	}
}
