package hotspot

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
)

// Totals are exact counts over everything offered to a [TopK].
type Totals struct {
	Ops, Reads, Writes int64
	Rows, Bytes        int64 // written
}

// Entry is one heavy partition reported by [TopK].
type Entry struct {
	Key []byte // a copy of the key last offered under this fingerprint
	FP  uint64
	// Ops is the Space-Saving count: an overestimate of the partition's operations by at
	// most Err (Ops-Err <= true count <= Ops). Err is 0 when the partition was tracked
	// from its first operation.
	Ops, Err int64
	// Reads, Writes, Rows and Bytes are counted from the moment the partition entered
	// the summary: exact when Err is 0, otherwise lower bounds.
	Reads, Writes, Rows, Bytes int64
	// FirstGrowth and LastGrowth are the times (the caller's clock, e.g. unix ns) of the
	// first and last write that added rows since the partition entered the summary, from
	// [TopK.AddAt]; 0 when none was timed. They tell a size projection when a time
	// bucket started and whether it finished during the observation.
	FirstGrowth, LastGrowth int64
}

// node is a counter's place in the stream summary: what finding a partition and moving
// it between buckets touch, 32 bytes, two to a cache line. The summaries of a run's
// tables together outgrow the CPU's caches, and an operation on a busy table moves a
// counter and its neighbours in their buckets: the fewer lines those take, the fewer
// misses (the counts an operation adds are apart, in tally).
type node struct {
	fp         uint64
	count      uint64
	bucket     int32
	prev, next int32 // within the bucket
}

// tally is what a counter counts besides its place, one cache line.
type tally struct {
	err                        uint64
	reads, writes, rows, bytes int64
	first, last                int64 // times of the first and last growth (AddAt)
	keyLen                     int32 // the key's length, in keys (or long past keySlot)
}

// keySlot is the bytes of a counter's key kept in TopK.keys, a cache line: every
// partition key of the shipped designs fits (a UUID is 16 bytes, the longest key 50); a
// longer one is kept apart, in long.
const keySlot = 64

type bucket struct {
	count      uint64
	prev, next int32 // ascending by count
	head       int32 // first counter
}

// TopK is a Space-Saving stream summary (Metwally, Agrawal, El Abbadi 2005) of
// operations per partition: k counters in buckets of equal count, so an increment is
// O(1) (one index lookup, one bucket move). Memory is bounded by k counters plus their
// keys. Guarantees, with N operations offered: every partition with more than N/k
// operations is in the summary; each entry's count overestimates by at most its Err,
// and Err <= N/k. A TopK is not safe for concurrent use; keep one per worker and Merge.
//
// Counter i is nodes[i] (its place), tallies[i] (its counts) and its key (keys[i*keySlot:]
// or long[i]): three arrays, so that an operation touches only the lines it needs.
type TopK struct {
	k       int
	index   counterIndex // partition fingerprint → counter (see lookup)
	nodes   []node
	tallies []tally
	keys    []byte   // keySlot bytes per counter
	long    [][]byte // by counter, the keys longer than keySlot (nil until one is)
	buckets []bucket
	free    []int32
	min     int32 // bucket with the smallest count, -1 when empty
	total   Totals
}

// NewTopK tracks up to k partitions.
func NewTopK(k int) *TopK {
	if k < 1 {
		k = 1
	}
	return &TopK{k: k, index: newCounterIndex(k), nodes: make([]node, 0, k), tallies: make([]tally, 0, k), keys: make([]byte, k*keySlot), min: -1}
}

// K is the number of counters.
func (t *TopK) K() int { return t.k }

// Totals are the exact totals of everything offered.
func (t *TopK) Totals() Totals { return t.total }

// Fingerprint is a fast 64-bit hash of a partition key for [TopK.Add] and [Distinct]
// (not cryptographic; collisions between distinct keys are ~n²/2^65).
func Fingerprint(b []byte) uint64 {
	const m = 0x9e3779b97f4a7c15
	h := uint64(len(b)) * m
	for len(b) >= 8 {
		h = (h ^ mix(binary.LittleEndian.Uint64(b))) * m
		h = bits.RotateLeft64(h, 29)
		b = b[8:]
	}
	if len(b) > 0 {
		var w uint64
		for i := len(b) - 1; i >= 0; i-- {
			w = w<<8 | uint64(b[i])
		}
		h = (h ^ mix(w^0xff)) * m
	}
	return mix(h)
}

func mix(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}

// AddKey offers one operation on the partition key (fingerprinted with [Fingerprint]).
func (t *TopK) AddKey(key []byte, write bool, rows, bytes int64) {
	t.Add(Fingerprint(key), key, write, rows, bytes)
}

// Add offers one operation on the partition with fingerprint fp (key is kept for the
// report; it is copied only when the partition enters the summary). A write adds rows
// and bytes written. It returns the partition's guaranteed count since it entered the
// summary (count − error): 1 for a newcomer, so callers can describe a partition once,
// when it proves to be more than a one-off. Above 1, the partition was offered before.
func (t *TopK) Add(fp uint64, key []byte, write bool, rows, bytes int64) int64 {
	return t.AddAt(fp, key, write, rows, bytes, 0)
}

// AddAt is [TopK.Add] for an operation at time at (non-zero): a write that adds rows
// moves the partition's LastGrowth to at, and sets FirstGrowth on its first one.
func (t *TopK) AddAt(fp uint64, key []byte, write bool, rows, bytes, at int64) int64 {
	t.total.Ops++
	if write {
		t.total.Writes++
		t.total.Rows += rows
		t.total.Bytes += bytes
	} else {
		t.total.Reads++
	}
	i, ok := t.lookup(fp)
	if !ok {
		i = t.admit(fp, key)
	}
	t.increment(i, 1)
	c := &t.tallies[i]
	if write {
		c.writes++
		c.rows += rows
		c.bytes += bytes
		if rows > 0 && at != 0 {
			if c.first == 0 {
				c.first = at
			}
			c.last = at
		}
	} else {
		c.reads++
	}
	return int64(t.nodes[i].count - c.err)
}

// lookup is the counter holding fp's partition, if any. The index is never deleted from:
// an evicted partition's entry stays, naming a counter that now holds another partition,
// which the counter's own fingerprint tells apart. An eviction then costs no probe of a
// second, random part of the table (most operations on a large summary evict); admit
// rebuilds the index from the live partitions when it is full.
func (t *TopK) lookup(fp uint64) (int32, bool) {
	return t.index.find(fp, t.nodes)
}

// Holds reports whether the summary holds the partition with fingerprint fp.
func (t *TopK) Holds(fp uint64) bool {
	_, ok := t.lookup(fp)
	return ok
}

// admit places a new partition: in a free counter while there is one (count 0), else in
// the place of a partition with the smallest count, inheriting that count as its error.
func (t *TopK) admit(fp uint64, key []byte) int32 {
	var i int32
	if len(t.nodes) < t.k {
		i = int32(len(t.nodes))
		t.nodes = append(t.nodes, node{fp: fp, bucket: -1, prev: -1, next: -1})
		t.tallies = append(t.tallies, tally{})
	} else {
		i = t.buckets[t.min].head
		n := &t.nodes[i]
		n.fp = fp
		t.tallies[i] = tally{err: n.count}
	}
	t.setKey(i, key)
	t.index.add(fp, i)
	if t.index.full() {
		t.reindex()
	}
	return i
}

// reindex rebuilds the index from the partitions the summary holds, dropping the slots
// of those evicted.
func (t *TopK) reindex() {
	t.index.reset()
	for i := range t.nodes {
		t.index.add(t.nodes[i].fp, int32(i))
	}
}

// setKey keeps a copy of counter i's key.
func (t *TopK) setKey(i int32, key []byte) {
	t.tallies[i].keyLen = int32(len(key))
	if len(key) <= keySlot {
		copy(t.keys[int(i)*keySlot:], key)
		return
	}
	if t.long == nil {
		t.long = make([][]byte, t.k)
	}
	t.long[i] = append(t.long[i][:0], key...)
}

// key is counter i's key (aliasing the summary's copy).
func (t *TopK) key(i int) []byte {
	n := int(t.tallies[i].keyLen)
	if n > keySlot {
		return t.long[i]
	}
	return t.keys[i*keySlot : i*keySlot+n]
}

func (t *TopK) newBucket(count uint64, prev, next int32) int32 {
	var b int32
	if n := len(t.free); n > 0 {
		b = t.free[n-1]
		t.free = t.free[:n-1]
	} else {
		b = int32(len(t.buckets))
		t.buckets = append(t.buckets, bucket{})
	}
	t.buckets[b] = bucket{count: count, prev: prev, next: next, head: -1}
	if prev >= 0 {
		t.buckets[prev].next = b
	} else {
		t.min = b
	}
	if next >= 0 {
		t.buckets[next].prev = b
	}
	return b
}

func (t *TopK) detach(i int32) {
	c := &t.nodes[i]
	if c.prev >= 0 {
		t.nodes[c.prev].next = c.next
	} else {
		t.buckets[c.bucket].head = c.next
	}
	if c.next >= 0 {
		t.nodes[c.next].prev = c.prev
	}
	c.prev, c.next = -1, -1
}

func (t *TopK) attach(i, b int32) {
	c := &t.nodes[i]
	c.bucket, c.prev, c.next = b, -1, t.buckets[b].head
	if c.next >= 0 {
		t.nodes[c.next].prev = i
	}
	t.buckets[b].head = i
}

func (t *TopK) removeBucket(b int32) {
	bk := &t.buckets[b]
	if bk.prev >= 0 {
		t.buckets[bk.prev].next = bk.next
	} else {
		t.min = bk.next
	}
	if bk.next >= 0 {
		t.buckets[bk.next].prev = bk.prev
	}
	t.free = append(t.free, b)
}

// increment moves counter i from its bucket to the bucket of count+d.
func (t *TopK) increment(i int32, d uint64) {
	c := &t.nodes[i]
	old := c.bucket
	want := c.count + d
	c.count = want
	// Find the bucket for want: at or after old's successor (d == 1: the successor or a
	// new one).
	prev := old
	next := int32(-1)
	if old >= 0 {
		next = t.buckets[old].next
	} else {
		next = t.min
	}
	for next >= 0 && t.buckets[next].count < want {
		prev, next = next, t.buckets[next].next
	}
	if prev == old && old >= 0 && c.prev < 0 && c.next < 0 && (next < 0 || t.buckets[next].count > want) {
		// Alone in its bucket, and no bucket between it and its new count: the bucket
		// takes the new count. Hot partitions, each with a count of its own, take this
		// path, sparing a bucket made and one removed for every operation.
		t.buckets[old].count = want
		return
	}
	var nb int32
	if next >= 0 && t.buckets[next].count == want {
		nb = next
	} else {
		nb = t.newBucket(want, prev, next)
	}
	if old >= 0 {
		t.detach(i)
	}
	t.attach(i, nb)
	if old >= 0 && t.buckets[old].head < 0 {
		t.removeBucket(old)
	}
}

// Len is the number of partitions in the summary.
func (t *TopK) Len() int { return len(t.nodes) }

// Top returns up to n entries, heaviest first (by Ops, then by smaller Err, then key).
func (t *TopK) Top(n int) []Entry {
	out := make([]Entry, 0, len(t.nodes))
	for i := range t.nodes {
		n, c := &t.nodes[i], &t.tallies[i]
		out = append(out, Entry{
			Key: slices.Clone(t.key(i)), FP: n.fp, Ops: int64(n.count), Err: int64(c.err),
			Reads: c.reads, Writes: c.writes, Rows: c.rows, Bytes: c.bytes,
			FirstGrowth: c.first, LastGrowth: c.last,
		})
	}
	slices.SortFunc(out, func(a, b Entry) int {
		if a.Ops != b.Ops {
			return int(sign(b.Ops - a.Ops))
		}
		if a.Err != b.Err {
			return int(sign(a.Err - b.Err))
		}
		return slices.Compare(a.Key, b.Key)
	})
	if n >= 0 && n < len(out) {
		out = out[:n]
	}
	return out
}

func sign(x int64) int64 {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

// MinCount is the smallest count in the summary (0 when not full): no partition outside
// the summary has more operations than this.
func (t *TopK) MinCount() int64 {
	if len(t.nodes) < t.k || t.min < 0 {
		return 0
	}
	return int64(t.buckets[t.min].count)
}

// Merge adds another summary into t (Agarwal et al.'s mergeable-summaries rule: sum the
// counts and errors of common partitions; a partition missing from one side is charged
// that side's minimum count as error; keep the k largest). The totals add exactly.
func (t *TopK) Merge(o *TopK) {
	type item struct {
		fp, count uint64
		c         tally // its err is the merged error
		key       []byte
	}
	all := map[uint64]*item{}
	tmin, omin := uint64(t.MinCount()), uint64(o.MinCount())
	for i := range t.nodes {
		n := t.nodes[i]
		all[n.fp] = &item{fp: n.fp, count: n.count, c: t.tallies[i], key: t.key(i)}
	}
	for i := range o.nodes {
		n, c := o.nodes[i], o.tallies[i]
		if it, ok := all[n.fp]; ok {
			it.count += n.count
			it.c.err += c.err
			it.c.reads += c.reads
			it.c.writes += c.writes
			it.c.rows += c.rows
			it.c.bytes += c.bytes
			if c.first != 0 && (it.c.first == 0 || c.first < it.c.first) {
				it.c.first = c.first
			}
			it.c.last = max(it.c.last, c.last)
			it.key = o.key(i)
			continue
		}
		c.err += tmin
		all[n.fp] = &item{fp: n.fp, count: n.count + tmin, c: c, key: o.key(i)}
	}
	for i := range t.nodes {
		if _, ok := o.lookup(t.nodes[i].fp); !ok {
			it := all[t.nodes[i].fp]
			it.count += omin
			it.c.err += omin
		}
	}
	items := make([]*item, 0, len(all))
	for _, it := range all {
		items = append(items, it)
	}
	slices.SortFunc(items, func(a, b *item) int {
		switch {
		case a.count > b.count:
			return -1
		case a.count < b.count:
			return 1
		}
		switch {
		case a.fp < b.fp:
			return -1
		case a.fp > b.fp:
			return 1
		}
		return 0
	})
	if len(items) > t.k {
		items = items[:t.k]
	}
	total := t.total
	total.Ops += o.total.Ops
	total.Reads += o.total.Reads
	total.Writes += o.total.Writes
	total.Rows += o.total.Rows
	total.Bytes += o.total.Bytes
	*t = *NewTopK(t.k) // the items' keys alias the old arrays, which this leaves alone
	t.total = total
	for _, it := range items {
		i := t.admit(it.fp, it.key)
		c := &t.tallies[i]
		c.reads, c.writes, c.rows, c.bytes = it.c.reads, it.c.writes, it.c.rows, it.c.bytes
		c.first, c.last = it.c.first, it.c.last
		t.increment(i, it.count)
		c.err = it.c.err
	}
}

// Share bounds the fraction of all operations taken by the busiest fraction of
// partitions (0.01 = the top 1%), given the number of distinct partitions (exact or an
// estimate, e.g. from [Distinct]). Lo and Hi bracket the true share under the
// Space-Saving guarantees; they are equal when the summary is exact (no evictions) and
// covers the top fraction. Partitions is ceil(fraction × distinct), at least 1.
type Share struct {
	Fraction   float64
	Partitions int64
	Lo, Hi     float64
}

// Share computes a [Share] for one fraction.
func (t *TopK) Share(fraction float64, distinct int64) Share {
	s := Share{Fraction: fraction}
	if t.total.Ops == 0 || distinct <= 0 {
		return s
	}
	m := int64(math.Ceil(fraction * float64(distinct)))
	m = max(m, 1)
	s.Partitions = m
	counts := make([]int64, 0, len(t.nodes))
	guaranteed := make([]int64, 0, len(t.nodes))
	for i := range t.nodes {
		counts = append(counts, int64(t.nodes[i].count))
		guaranteed = append(guaranteed, int64(t.nodes[i].count-t.tallies[i].err))
	}
	slices.SortFunc(counts, func(a, b int64) int { return int(sign(b - a)) })
	slices.SortFunc(guaranteed, func(a, b int64) int { return int(sign(b - a)) })
	var lo, hi int64
	for i := int64(0); i < m && i < int64(len(counts)); i++ {
		hi += counts[i]
		lo += guaranteed[i]
	}
	if extra := m - int64(len(counts)); extra > 0 {
		hi += extra * t.MinCount() // unmonitored partitions have at most the minimum count
	}
	tot := float64(t.total.Ops)
	s.Lo = float64(lo) / tot
	s.Hi = min(float64(hi)/tot, 1)
	return s
}
