package mongo

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Chunk is one chunk: the shard key range [Min, Max) and its owning shard (an index into
// ChunkTable.Shards). Jumbo marks a chunk of one shard-key value larger than the chunk
// size: it cannot be split, and the balancer never moves it.
type Chunk struct {
	Min, Max []Value
	Shard    int
	Jumbo    bool
}

// ChunkTable is a collection's routing table: chunks sorted by key, contiguous from
// {MinKey...} to {MaxKey...}.
type ChunkTable struct {
	Pattern KeyPattern
	Shards  []string
	Chunks  []Chunk
	// hashMax: for a single hashed field whose bounds are all longs, the chunk upper
	// bounds as int64 (the last chunk's MaxKey omitted), for a fast Find.
	hashMax []int64
	// firstS or firstI: when the upper bounds of every chunk but the last start with
	// values of one kind, firstKind, a string or an integer (int, long, date), those
	// values (firstI for the integers). Find then compares a key of that kind with
	// these, in one small array, instead of with the bounds' Values, apart in memory,
	// and compares the whole bounds only where the first fields tie.
	firstKind Kind
	firstS    []string
	firstI    []int64
}

// NewChunkTable validates and indexes a chunk list: bounds of the pattern's width,
// sorted, contiguous, from global MinKey to global MaxKey, each chunk non-empty.
func NewChunkTable(p KeyPattern, shards []string, chunks []Chunk) (*ChunkTable, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if len(chunks) == 0 {
		return nil, errors.New("mongo: chunk table is empty")
	}
	if len(shards) == 0 {
		return nil, errors.New("mongo: no shards")
	}
	for i := range chunks {
		c := &chunks[i]
		if len(c.Min) != len(p) || len(c.Max) != len(p) {
			return nil, fmt.Errorf("mongo: chunk %d bounds do not match shard key %v", i, p)
		}
		if CompareKeys(c.Min, c.Max) >= 0 {
			return nil, fmt.Errorf("mongo: chunk %d: min %s is not below max %s", i, p.FormatKey(c.Min), p.FormatKey(c.Max))
		}
		if c.Shard < 0 || c.Shard >= len(shards) {
			return nil, fmt.Errorf("mongo: chunk %d: shard index %d out of range", i, c.Shard)
		}
		if i > 0 && CompareKeys(chunks[i-1].Max, c.Min) != 0 {
			return nil, fmt.Errorf("mongo: chunks %d and %d are not contiguous (%s vs %s)", i-1, i, p.FormatKey(chunks[i-1].Max), p.FormatKey(c.Min))
		}
	}
	if CompareKeys(chunks[0].Min, p.globalMin()) != 0 || CompareKeys(chunks[len(chunks)-1].Max, p.globalMax()) != 0 {
		return nil, errors.New("mongo: chunks do not cover the whole key space (MinKey to MaxKey)")
	}
	t := &ChunkTable{Pattern: p, Shards: shards, Chunks: chunks}
	if len(p) == 1 && p[0].Hashed {
		hm := make([]int64, 0, len(chunks)-1)
		for _, c := range chunks[:len(chunks)-1] {
			if c.Max[0].Kind != KindInt64 {
				hm = nil
				break
			}
			hm = append(hm, c.Max[0].I)
		}
		if hm != nil {
			t.hashMax = hm
		}
	}
	t.indexFirst()
	return t, nil
}

// indexFirst makes firstS or firstI when the chunks' upper bounds allow.
func (t *ChunkTable) indexFirst() {
	bounds := t.Chunks[:len(t.Chunks)-1] // the last one's is MaxKey
	if len(bounds) == 0 {
		return
	}
	k := bounds[0].Max[0].Kind
	switch k {
	case KindString, KindInt32, KindInt64, KindDate:
	default:
		return
	}
	for i := range bounds {
		if bounds[i].Max[0].Kind != k {
			return
		}
	}
	t.firstKind = k
	for i := range bounds {
		if k == KindString {
			t.firstS = append(t.firstS, bounds[i].Max[0].S)
		} else {
			t.firstI = append(t.firstI, bounds[i].Max[0].I)
		}
	}
}

// Find is the index of the chunk holding a shard key (as [KeyPattern.Key] builds it):
// the chunk whose [Min, Max) contains it.
func (t *ChunkTable) Find(key []Value) int {
	if t.hashMax != nil && len(key) == 1 && key[0].Kind == KindInt64 {
		return t.FindHashed(key[0].I)
	}
	if len(key) > 0 && key[0].Kind == t.firstKind && (t.firstS != nil || t.firstI != nil) {
		return t.findFirst(key)
	}
	lo, hi := 0, len(t.Chunks)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if CompareKeys(t.Chunks[m].Max, key) <= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return min(lo, len(t.Chunks)-1)
}

// findFirst is Find for a key whose first value is of the kind firstS or firstI hold:
// the same search, comparing first values of one kind as Compare does (strings by
// bytes, integers by value), and the whole bounds when they tie. The last chunk, up to
// MaxKey, holds any key beyond the others.
func (t *ChunkTable) findFirst(key []Value) int {
	k := &key[0]
	lo, hi := 0, len(t.Chunks)-1
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		var c int
		if t.firstS != nil {
			c = strings.Compare(t.firstS[m], k.S)
		} else {
			c = cmp.Compare(t.firstI[m], k.I)
		}
		if c == 0 {
			c = CompareKeys(t.Chunks[m].Max, key)
		}
		if c <= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// FindHashed is Find for a collection sharded on one hashed field, given the hashed
// value ([Hash]).
func (t *ChunkTable) FindHashed(h int64) int {
	if t.hashMax == nil {
		v := [1]Value{Int64(h)}
		return t.Find(v[:])
	}
	lo, hi := 0, len(t.hashMax)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if t.hashMax[m] <= h {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// Clone is a copy of t whose chunks and shards can change apart from t's (a chunk moved
// to another shard, a shard added). The chunk bounds, which never change, are shared.
func (t *ChunkTable) Clone() *ChunkTable {
	c := *t
	c.Pattern = slices.Clone(t.Pattern)
	c.Shards = slices.Clone(t.Shards)
	c.Chunks = slices.Clone(t.Chunks)
	return &c
}

// Shard is the name of the shard owning chunk i.
func (t *ChunkTable) Shard(i int) string { return t.Shards[t.Chunks[i].Shard] }

// RangeString formats chunk i as "[{...}, {...})".
func (t *ChunkTable) RangeString(i int) string {
	c := &t.Chunks[i]
	return "[" + t.Pattern.FormatKey(c.Min) + ", " + t.Pattern.FormatKey(c.Max) + ")"
}

// ChunksPerShard counts chunks per shard (by index into Shards).
func (t *ChunkTable) ChunksPerShard() []int {
	n := make([]int, len(t.Shards))
	for _, c := range t.Chunks {
		n[c.Shard]++
	}
	return n
}

// JumboChunks lists the indexes of the jumbo chunks.
func (t *ChunkTable) JumboChunks() []int {
	var out []int
	for i, c := range t.Chunks {
		if c.Jumbo {
			out = append(out, i)
		}
	}
	return out
}

// ChunkRow is one config.chunks document (min, max, shard, jumbo) as the driver returns
// it.
type ChunkRow struct {
	Min, Max []Field
	Shard    string
	Jumbo    bool
}

// FromConfigChunks builds the table of a live cluster from its config.chunks rows
// (5.0+: selected by the collection's uuid from config.collections; the query lives in
// the MongoDB backend) and the key pattern from config.collections. Shards are listed in
// name order.
func FromConfigChunks(p KeyPattern, rows []ChunkRow) (*ChunkTable, error) {
	var names []string
	for _, r := range rows {
		if !slices.Contains(names, r.Shard) {
			names = append(names, r.Shard)
		}
	}
	slices.Sort(names)
	chunks := make([]Chunk, len(rows))
	for i, r := range rows {
		min, err := boundFromDoc(p, r.Min)
		if err != nil {
			return nil, fmt.Errorf("mongo: chunk min: %w", err)
		}
		max, err := boundFromDoc(p, r.Max)
		if err != nil {
			return nil, fmt.Errorf("mongo: chunk max: %w", err)
		}
		s, _ := slices.BinarySearch(names, r.Shard)
		chunks[i] = Chunk{Min: min, Max: max, Shard: s, Jumbo: r.Jumbo}
	}
	slices.SortFunc(chunks, func(a, b Chunk) int { return CompareKeys(a.Min, b.Min) })
	return NewChunkTable(p, names, chunks)
}

func boundFromDoc(p KeyPattern, doc []Field) ([]Value, error) {
	if len(doc) != len(p) {
		return nil, fmt.Errorf("bound has %d fields, shard key %v has %d", len(doc), p, len(p))
	}
	out := make([]Value, len(p))
	for i, f := range doc {
		if f.Name != p[i].Name {
			return nil, fmt.Errorf("bound field %d is %q, shard key %v wants %q", i, f.Name, p, p[i].Name)
		}
		out[i] = f.Value
	}
	return out, nil
}

// KeyPatternFromDoc reads a key pattern document as config.collections stores it
// ({category: 1, _id: "hashed"}).
func KeyPatternFromDoc(doc []Field) (KeyPattern, error) {
	var p KeyPattern
	for _, f := range doc {
		switch {
		case f.Value.Kind == KindString && f.Value.S == "hashed":
			p = append(p, KeyField{Name: f.Name, Hashed: true})
		case f.Value.IsNumber() && numberForHash(&f.Value) == 1:
			p = append(p, KeyField{Name: f.Name})
		default:
			return nil, fmt.Errorf("mongo: shard key field %s: %v (want 1 or \"hashed\")", f.Name, f.Value)
		}
	}
	return p, p.Validate()
}

// SplitRule picks the server generation whose initial chunk creation is modelled.
type SplitRule int

const (
	// SplitV72 is MongoDB 7.2+ (SERVER-76405): an empty collection with a hashed shard
	// key gets one chunk per shard; numInitialChunks is ignored; a zone pre-split with
	// presplitHashedZones gets one chunk per shard of the zone.
	SplitV72 SplitRule = iota
	// SplitPre72 is MongoDB 5.0-7.1: numInitialChunks, by default 2 per shard, placed
	// in runs of numInitialChunks/shards contiguous chunks on the shards in name order.
	SplitPre72
)

// Presplit are shardCollection's options for an empty collection.
type Presplit struct {
	Rule SplitRule
	// NumInitialChunks (pre-7.2 only): 0 means the default.
	NumInitialChunks int
	// Primary is the database's primary shard (default: the first shard, by name under
	// SplitPre72); pre-7.2 puts the first chunk there when there are fewer chunks than
	// shards.
	Primary string
}

// hashedSplitPoints is InitialSplitPolicy::calculateHashedSplitPoints: n chunks
// symmetric around 0, of width (MaxInt64/n)*2.
func hashedSplitPoints(n int) []int64 {
	if n <= 1 {
		return nil
	}
	interval := (math.MaxInt64 / int64(n)) * 2
	var cur int64
	var pts []int64
	if n%2 == 0 {
		pts = append(pts, 0)
		cur += interval
	} else {
		cur += interval / 2
	}
	for i := 0; i < (n-1)/2; i++ {
		pts = append(pts, cur, -cur)
		cur += interval
	}
	slices.Sort(pts)
	return pts
}

// splitBound is buildSplitPoint: the prefix values, the hashed value, MinKey after.
func splitBound(p KeyPattern, prefix []Value, h int64) []Value {
	b := make([]Value, 0, len(p))
	b = append(b, prefix...)
	b = append(b, Int64(h))
	for len(b) < len(p) {
		b = append(b, MinKey())
	}
	return b
}

func shardIndex(shards []string, name string) (int, error) {
	if name == "" {
		return 0, nil
	}
	i := slices.Index(shards, name)
	if i < 0 {
		return 0, fmt.Errorf("mongo: shard %q is not one of %v", name, shards)
	}
	return i, nil
}

// SingleChunk is the table shardCollection creates for an empty collection whose key
// has no hashed prefix and no zones (and for any non-empty collection since 6.0): one
// chunk on the primary shard.
func SingleChunk(p KeyPattern, shards []string, primary string) (*ChunkTable, error) {
	s, err := shardIndex(shards, primary)
	if err != nil {
		return nil, err
	}
	return NewChunkTable(p, slices.Clone(shards), []Chunk{{Min: p.globalMin(), Max: p.globalMax(), Shard: s}})
}

// PresplitHashed is the table shardCollection creates for an empty collection whose
// shard key starts with a hashed field ({_id: "hashed"}, {user_id: "hashed",
// created_at: 1}), without zones: split points from calculateHashedSplitPoints, assigned
// by the rule's generation (see [SplitRule]). Under SplitV72 chunk i goes to shards[i];
// the server shuffles its shard list first (std::shuffle with a default-seeded engine),
// so which shard receives which of the equal chunks may differ from a live cluster —
// the chunk boundaries and the count per shard are exact. Under SplitPre72 the shards
// are taken in name order, as the server does.
func PresplitHashed(p KeyPattern, shards []string, o Presplit) (*ChunkTable, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if !p.HashedPrefix() {
		return nil, fmt.Errorf("mongo: %v has no hashed prefix: an empty collection gets a single chunk (SingleChunk) unless zones are pre-split (PresplitHashedZones)", p)
	}
	if len(shards) == 0 {
		return nil, errors.New("mongo: no shards")
	}
	order := slices.Clone(shards)
	n := len(order)
	var pts []int64
	contiguous := 1
	primary := -1
	switch o.Rule {
	case SplitV72:
		pts = hashedSplitPoints(n)
	case SplitPre72:
		slices.Sort(order)
		num := o.NumInitialChunks
		if num == 0 {
			num = 2 * n
		}
		if num < 0 || num > 8192*n {
			return nil, fmt.Errorf("mongo: numInitialChunks %d (must be 1..%d)", num, 8192*n)
		}
		pts = hashedSplitPoints(num)
		contiguous = max(num/n, 1)
		if i, err := shardIndex(order, o.Primary); err == nil {
			primary = i
		} else {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("mongo: unknown split rule %d", o.Rule)
	}
	chunks := make([]Chunk, len(pts)+1)
	for i := range chunks {
		min, max := p.globalMin(), p.globalMax()
		if i > 0 {
			min = splitBound(p, nil, pts[i-1])
		}
		if i < len(pts) {
			max = splitBound(p, nil, pts[i])
		}
		s := (i / contiguous) % n
		if o.Rule == SplitPre72 && i == 0 && len(pts)+1 < n {
			s = primary
		}
		chunks[i] = Chunk{Min: min, Max: max, Shard: s}
	}
	return NewChunkTable(p, order, chunks)
}

// Zone is a zone range [Min, Max) with the shards assigned to the zone (in the order
// config.shards lists them).
type Zone struct {
	Name     string
	Min, Max []Value
	Shards   []string
}

// PresplitHashedZones is shardCollection with presplitHashedZones: true on an empty
// collection with zones, e.g. {category: 1, _id: "hashed"} with one zone per category
// (PresplitHashedZonesSplitPolicy). Each zone is split on the hashed field behind its
// prefix; the gaps between zones are single chunks given to the shards round-robin.
// SplitV72: one chunk per shard of the zone. SplitPre72: numInitialChunks (default 2 ×
// the number of shards holding any zone) spread so each shard gets
// ceil(ceil(num/shardsWithZones) / zonesOnThatShard) chunks of each of its zones. Zones
// must satisfy the server's validation: for a ranged prefix, the lower bound's prefix
// fields are neither MinKey nor MaxKey, the hashed field and everything after it are
// MinKey, and the upper bound's prefix differs; for a hashed prefix, exactly one zone
// covering the whole key space.
func PresplitHashedZones(p KeyPattern, shards []string, zones []Zone, o Presplit) (*ChunkTable, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	h := p.HashedField()
	if h < 0 {
		return nil, errors.New("mongo: presplitHashedZones needs a hashed field in the shard key")
	}
	if len(zones) == 0 {
		return nil, errors.New("mongo: presplitHashedZones needs zones")
	}
	order := slices.Clone(shards)
	if o.Rule == SplitPre72 {
		slices.Sort(order)
	}
	zs := slices.Clone(zones)
	slices.SortFunc(zs, func(a, b Zone) int { return CompareKeys(a.Min, b.Min) })
	for i, z := range zs {
		if len(z.Min) != len(p) || len(z.Max) != len(p) {
			return nil, fmt.Errorf("mongo: zone %s bounds do not match %v", z.Name, p)
		}
		if len(z.Shards) == 0 {
			return nil, fmt.Errorf("mongo: zone %s has no shards", z.Name)
		}
		for _, s := range z.Shards {
			if !slices.Contains(order, s) {
				return nil, fmt.Errorf("mongo: zone %s: unknown shard %q", z.Name, s)
			}
		}
		if i > 0 && CompareKeys(zs[i-1].Max, z.Min) > 0 {
			return nil, fmt.Errorf("mongo: zones %s and %s overlap", zs[i-1].Name, z.Name)
		}
		if h == 0 {
			if len(zs) != 1 || CompareKeys(z.Min, p.globalMin()) != 0 || CompareKeys(z.Max, p.globalMax()) != 0 {
				return nil, errors.New("mongo: for a hashed-prefix key, presplitHashedZones needs exactly one zone covering the whole key space")
			}
			continue
		}
		differs := false
		for f := 0; f < h; f++ {
			if k := z.Min[f].Kind; k == KindMinKey || k == KindMaxKey {
				return nil, fmt.Errorf("mongo: zone %s: MinKey/MaxKey in the lower bound before the hashed field", z.Name)
			}
			differs = differs || Compare(&z.Min[f], &z.Max[f]) != 0
		}
		if !differs {
			return nil, fmt.Errorf("mongo: zone %s: the upper bound's prefix must differ from the lower bound's", z.Name)
		}
		for f := h; f < len(p); f++ {
			if z.Min[f].Kind != KindMinKey {
				return nil, fmt.Errorf("mongo: zone %s: the lower bound must be MinKey from the hashed field on", z.Name)
			}
		}
	}
	// Pre-7.2 quotas.
	tagsPerShard := map[string]int{}
	for _, z := range zs {
		for _, s := range z.Shards {
			tagsPerShard[s]++
		}
	}
	ceilDiv := func(x, y int) int { return x/y + btoi(x%y != 0) }
	perShard := 0
	if o.Rule == SplitPre72 {
		num := o.NumInitialChunks
		if num == 0 {
			num = 2 * len(tagsPerShard)
		}
		perShard = ceilDiv(num, len(tagsPerShard))
	}
	var chunks []Chunk
	hole := 0
	last := p.globalMin()
	addHole := func(to []Value) {
		if CompareKeys(to, last) > 0 {
			s, _ := shardIndex(order, order[hole%len(order)])
			hole++
			chunks = append(chunks, Chunk{Min: last, Max: to, Shard: s})
		}
	}
	for _, z := range zs {
		addHole(z.Min)
		type share struct {
			shard string
			n     int
		}
		var dist []share
		total := 0
		for _, s := range z.Shards {
			n := 1
			if o.Rule == SplitPre72 {
				n = ceilDiv(perShard, tagsPerShard[s])
			}
			dist = append(dist, share{s, n})
			total += n
		}
		pts := hashedSplitPoints(total)
		prefix := z.Min[:h]
		k := 0
		for _, d := range dist {
			si, _ := shardIndex(order, d.shard)
			for j := 0; j < d.n; j, k = j+1, k+1 {
				min, max := z.Min, z.Max
				if k > 0 {
					min = splitBound(p, prefix, pts[k-1])
				}
				if k < len(pts) {
					max = splitBound(p, prefix, pts[k])
				}
				chunks = append(chunks, Chunk{Min: min, Max: max, Shard: si})
			}
		}
		last = z.Max
	}
	addHole(p.globalMax())
	return NewChunkTable(p, order, chunks)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Balancer picks the balancing generation [SplitByData] models.
type Balancer int

const (
	// BalanceDataSize is MongoDB 6.0.3+: no auto-splitter; the balancer migrates when
	// the shards' data for the collection differs by 3 chunk sizes or more, moving
	// chunk-size ranges from the start of the most loaded shard's first chunk to the
	// least loaded shard; adjacent chunks on one shard are merged (7.0+ auto-merger).
	BalanceDataSize Balancer = iota
	// BalanceChunkCount is MongoDB before 6.0.3: the auto-splitter cuts a chunk every
	// half chunk size of data (splitVector), and the balancer moves the first chunk of
	// the shard with most chunks to the one with fewest once the counts differ by the
	// migration threshold (2 below 20 chunks, 4 below 80, else 8), until they differ by
	// less than 2.
	BalanceChunkCount
)

// DefaultChunkSize is the default chunk (range) size since MongoDB 6.0: 128 MiB.
const DefaultChunkSize = 128 << 20

// DataModel configures [SplitByData].
type DataModel struct {
	ChunkSize int64 // bytes; default DefaultChunkSize
	Balancer  Balancer
	Primary   string // shard holding the data before balancing; default shards[0]
}

// SizedKey is one document's (or a group of documents') shard key and size in bytes.
type SizedKey struct {
	Key   []Value
	Bytes int64
}

// SplitByData models a range-sharded collection whose split points follow its data: the
// data (any order; equal keys are grouped, and a key's documents never split) starts on
// the primary shard, is split and balanced as the chosen [Balancer] does, and the
// resulting table is returned. It is a documented model, not a replay of a server's
// history: a real cluster's chunk boundaries depend on when each split and migration
// happened. Keys beyond the largest one seen fall in the last chunk — with a
// monotonically increasing key (a timestamp, an ObjectId) every new insert goes there,
// to that chunk's shard.
func SplitByData(p KeyPattern, shards []string, data []SizedKey, m DataModel) (*ChunkTable, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if len(shards) == 0 {
		return nil, errors.New("mongo: no shards")
	}
	size := m.ChunkSize
	if size <= 0 {
		size = DefaultChunkSize
	}
	primary, err := shardIndex(shards, m.Primary)
	if err != nil {
		return nil, err
	}
	// Distinct keys in order, with their bytes.
	keys := slices.Clone(data)
	for _, k := range keys {
		if len(k.Key) != len(p) {
			return nil, fmt.Errorf("mongo: key %v does not match shard key %v", k.Key, p)
		}
	}
	sortKeys(keys) // equal keys are summed below, so their order does not matter
	var ks [][]Value
	var bs []int64
	for _, k := range keys {
		if n := len(ks); n > 0 && CompareKeys(ks[n-1], k.Key) == 0 {
			bs[n-1] += k.Bytes
			continue
		}
		ks = append(ks, k.Key)
		bs = append(bs, k.Bytes)
	}
	// Chunks as runs of key indexes [from, to); bound = ks[from] (or MinKey for 0).
	type run struct {
		from, to, shard int
		jumbo           bool
	}
	var runs []run
	// tooBig: a range of one key the donor cannot move. A migration fails (ChunkTooBig)
	// when its range holds more than about 1.3 chunk sizes (the donor's limit on the
	// documents it clones); the balancer then splits the chunk and, where one key value
	// cannot be split, marks it jumbo (Balancer::_splitOrMarkJumbo).
	tooBig := func(b int64) bool { return b > size+size*3/10 }
	switch m.Balancer {
	case BalanceDataSize:
		// 6.0.3+: no auto-splitter; the data starts as one chunk on the primary, and
		// BalancerPolicy::_singleZoneBalanceBasedOnDataSize moves a range from the most
		// loaded shard (above the ideal share) to the least loaded one (below it) while
		// they differ by 3 chunk sizes. The range starts at the min of the donor's first
		// chunk that is not jumbo, and the donor ends it about one chunk size further
		// (moveRange without max), never inside a key.
		runs = []run{{0, len(ks), primary, false}}
		load := make([]int64, len(shards))
		var total int64
		for _, b := range bs {
			load[primary] += b
			total += b
		}
		ideal := total / int64(len(shards))
		for iter := 0; iter < 10_000_000; iter++ {
			donor, recv := 0, 0
			for s := range shards {
				if load[s] > load[donor] {
					donor = s
				}
				if load[s] < load[recv] {
					recv = s
				}
			}
			if load[donor] <= ideal || load[recv] >= ideal || load[donor]-load[recv] < 3*size {
				break
			}
			moved := false
			for ri := 0; ri < len(runs) && !moved; ri++ {
				r := runs[ri]
				if r.shard != donor || r.jumbo || r.to == r.from {
					continue
				}
				end, acc := r.from, int64(0)
				for end < r.to && (end == r.from || acc+bs[end] <= size) {
					acc += bs[end]
					end++
				}
				if end == r.from+1 && tooBig(acc) {
					// One key value too big to move: split off and marked jumbo; the
					// next chunk on the donor is tried.
					runs = slices.Insert(runs, ri, run{r.from, end, donor, true})
					runs[ri+1].from = end
					continue
				}
				load[donor] -= acc
				load[recv] += acc
				if end == r.to {
					runs[ri].shard = recv
				} else {
					runs = slices.Insert(runs, ri, run{r.from, end, recv, false})
					runs[ri+1].from = end
				}
				moved = true
			}
			if !moved {
				break // the donor holds only jumbo chunks
			}
		}
	case BalanceChunkCount:
		from, acc := 0, int64(0)
		for i := range ks {
			if acc >= size/2 && i > from {
				runs = append(runs, run{from, i, primary, i-from == 1 && tooBig(acc)})
				from, acc = i, 0
			}
			acc += bs[i]
		}
		runs = append(runs, run{from, len(ks), primary, len(ks)-from == 1 && tooBig(acc)})
		count := func() []int {
			c := make([]int, len(shards))
			for _, r := range runs {
				c[r.shard]++
			}
			return c
		}
		threshold := 2
		if len(runs) >= 80 {
			threshold = 8
		} else if len(runs) >= 20 {
			threshold = 4
		}
		started := false
		for {
			c := count()
			donor, recv := 0, 0
			for s := range shards {
				if c[s] > c[donor] {
					donor = s
				}
				if c[s] < c[recv] {
					recv = s
				}
			}
			d := c[donor] - c[recv]
			if !started && d < threshold || d < 2 {
				break
			}
			started = true
			moved := false
			for i := range runs {
				if runs[i].shard == donor && !runs[i].jumbo {
					runs[i].shard = recv
					moved = true
					break
				}
			}
			if !moved {
				break
			}
		}
	default:
		return nil, fmt.Errorf("mongo: unknown balancer %d", m.Balancer)
	}
	// Empty runs (a jumbo split off at a chunk's end) go; under data-size balancing the
	// auto-merger (7.0+) makes adjacent chunks on one shard one, a jumbo chunk aside.
	merged := runs[:0]
	for _, r := range runs {
		if r.to == r.from && len(runs) > 1 {
			continue
		}
		if n := len(merged); n > 0 && m.Balancer == BalanceDataSize && merged[n-1].shard == r.shard && !merged[n-1].jumbo && !r.jumbo {
			merged[n-1].to = r.to
			continue
		}
		merged = append(merged, r)
	}
	runs = merged
	chunks := make([]Chunk, len(runs))
	for i, r := range runs {
		min, max := p.globalMin(), p.globalMax()
		if i > 0 {
			min = ks[r.from]
		}
		if i < len(runs)-1 {
			max = ks[runs[i+1].from]
		}
		chunks[i] = Chunk{Min: min, Max: max, Shard: r.shard, Jumbo: r.jumbo}
	}
	return NewChunkTable(p, slices.Clone(shards), chunks)
}
