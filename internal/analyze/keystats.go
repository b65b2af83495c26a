package analyze

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/shardbench/shardbench/internal/hotspot"
	"github.com/shardbench/shardbench/workloads"
)

// TopValues is how many most common values a key's characteristics list (analyzeShardKey
// lists 5 by default); Counters is the Space-Saving summary behind them, large enough
// that the listed ones are exact unless the key is nearly uniform.
const (
	TopValues = 5
	Counters  = 256
)

// SampleSize is the reservoir of keys the monotonicity coefficient is computed on. mongod
// scans a sample of the shard key index too (analyzeShardKeyCharacteristicsDefaultSampleSize);
// a fixed reservoir keeps memory independent of the stream.
const SampleSize = 1 << 14

// MonotonicThreshold is mongod's default analyzeShardKeyMonotonicityCorrelationCoefficientThreshold:
// |coefficient| at or above it makes a key "monotonic".
const MonotonicThreshold = 0.7

// KeyStats accumulates the characteristics of one key over the documents (rows) written,
// or the requests made, in stream order. Not safe for concurrent use.
type KeyStats struct {
	distinct *hotspot.Distinct
	top      *hotspot.TopK
	n        int64 // values offered = insertion order
	bytes    int64
	res      reservoir
	// names describes values for people; rendering a key allocates, so only the first
	// values and those seen twice in a row of their tenure in the summary (the candidates
	// for the most common values) are named, and the map is pruned to the summary.
	names     map[uint64]string
	lastFP    uint64
	lastCount int64
}

// describeFirst is how many first values are named whatever their count, so that a unique
// key's most common values (all of frequency 1) have names too.
const describeFirst = 64

// NewKeyStats returns empty statistics; seed makes the monotonicity sample reproducible.
func NewKeyStats(seed uint64) *KeyStats {
	return &KeyStats{distinct: hotspot.NewDistinct(), top: hotspot.NewTopK(Counters), res: newReservoir(SampleSize, seed), names: map[uint64]string{}}
}

// Add records one value (key: any injective encoding of it) of size bytes. It reports
// whether the monotonicity sample wants this value: then call Keep with its ordered
// encoding before the next Add.
func (k *KeyStats) Add(key []byte, size int64) bool {
	fp := hotspot.Fingerprint(key)
	k.lastFP, k.lastCount = fp, k.top.Add(fp, key, true, 1, size)
	if k.lastCount == 1 {
		// New in the summary, maybe never seen. A value already in the summary was seen
		// before, so Distinct has it: skipping it spares a lookup in a large set.
		k.distinct.Add(fp)
	}
	k.bytes += size
	seq := k.n
	k.n++
	return k.res.offer(seq)
}

// Keep stores the ordered encoding of the value Add just accepted for sampling (see
// AppendOrdered); prefix is the length of its first field's encoding.
func (k *KeyStats) Keep(ord []byte, prefix int) { k.res.keep(ord, prefix) }

// wantName reports whether the value Add just took should be named (see name).
func (k *KeyStats) wantName() bool {
	if k.lastCount == 2 || k.n <= describeFirst {
		_, ok := k.names[k.lastFP]
		return !ok
	}
	return false
}

// name records how people read the value Add just took.
func (k *KeyStats) name(s string) {
	k.names[k.lastFP] = s
	if len(k.names) > 4*Counters {
		keep := map[uint64]string{}
		for _, e := range k.top.Top(Counters) {
			if n, ok := k.names[e.FP]; ok {
				keep[e.FP] = n
			}
		}
		k.names = keep
	}
}

// Name is the people's form of a value offered as key, or its hex when it was not named.
func (k *KeyStats) Name(key []byte) string {
	if n, ok := k.names[hotspot.Fingerprint(key)]; ok {
		return n
	}
	return fmt.Sprintf("%x", key)
}

// N is the number of values offered.
func (k *KeyStats) N() int64 { return k.n }

// Characteristics are the key characteristics of what was offered. format renders a
// most common value's key for people.
type Characteristics struct {
	NumDocs       int64
	AvgSize       float64
	Distinct      int64
	Exact         bool
	RelErr        float64
	Common        []Common
	Monotonicity  Monotonicity
	WithinPrefix  *Monotonicity // per first-field value, weighted; nil when not computed
	PrefixGroups  int
	SampleSize    int
	CountersFull  bool
	MinCountLimit int64
}

// Common is one most common value.
type Common struct {
	Key       []byte
	Frequency int64 // guaranteed count: the true count is in [Frequency, Frequency+Err]
	Err       int64
	Share     float64
}

// Result computes the characteristics. prefixGroups enables the within-first-field
// monotonicity (compound keys).
func (k *KeyStats) Result(prefixGroups bool) Characteristics {
	c := Characteristics{NumDocs: k.n, SampleSize: len(k.res.items)}
	if k.n == 0 {
		c.Monotonicity = Monotonicity{Type: Unknown}
		return c
	}
	c.AvgSize = float64(k.bytes) / float64(k.n)
	c.Distinct, c.Exact, c.RelErr = k.distinct.Estimate()
	// Among values of equal count (a unique key: all 1) prefer those with a name.
	top := k.top.Top(Counters)
	slices.SortStableFunc(top, func(a, b hotspot.Entry) int {
		if c := compareInt(b.Ops-b.Err, a.Ops-a.Err); c != 0 {
			return c
		}
		_, na := k.names[a.FP]
		_, nb := k.names[b.FP]
		switch {
		case na && !nb:
			return -1
		case nb && !na:
			return 1
		}
		return 0
	})
	for _, e := range top[:min(TopValues, len(top))] {
		// The guaranteed count: Space-Saving's count overestimates by up to Err.
		f := e.Ops - e.Err
		c.Common = append(c.Common, Common{Key: e.Key, Frequency: f, Err: e.Err, Share: float64(f) / float64(k.n)})
	}
	c.MinCountLimit = k.top.MinCount()
	c.Monotonicity = k.res.monotonicity()
	if prefixGroups {
		m, groups := k.res.withinPrefix()
		if groups > 0 {
			c.WithinPrefix, c.PrefixGroups = &m, groups
		}
	}
	return c
}

// Monotonicity types, as analyzeShardKey names them.
const (
	Monotonic    = "monotonic"
	NotMonotonic = "not monotonic"
	Unknown      = "unknown"
)

// Monotonicity is analyzeShardKey's monotonicity document plus the direction.
type Monotonicity struct {
	Coefficient float64
	Type        string
	// Direction: "increasing", "decreasing" or "" (not monotonic).
	Direction string
}

// Classify turns a coefficient into mongod's type (|r| >= MonotonicThreshold) and a
// direction.
func Classify(r float64) Monotonicity {
	m := Monotonicity{Coefficient: r, Type: NotMonotonic}
	if math.Abs(r) >= MonotonicThreshold {
		m.Type, m.Direction = Monotonic, "increasing"
		if r < 0 {
			m.Direction = "decreasing"
		}
	}
	return m
}

// RecordIDCorrelation is mongod's monotonicity coefficient: walk the values in key order
// (ties in insertion order, as an index orders equal keys by record id) and take the
// Pearson correlation between the position in that walk (1..n) and the insertion order
// (the record id). seq[i] is value i's insertion order, keys[i] its ordered encoding.
// With a single distinct value mongod reports 0.
func RecordIDCorrelation(keys [][]byte, seq []int64) float64 {
	n := len(keys)
	if n < 2 {
		return 0
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if c := bytes.Compare(keys[a], keys[b]); c != 0 {
			return c
		}
		return compareInt(seq[a], seq[b])
	})
	if bytes.Equal(keys[idx[0]], keys[idx[n-1]]) {
		return 0
	}
	y := make([]float64, n)
	for pos, i := range idx {
		y[pos] = float64(seq[i])
	}
	return pearsonWithRank(y)
}

// pearsonWithRank is the Pearson correlation between x = 1..n and y, rounded to 10
// decimal places as mongod rounds it.
func pearsonWithRank(y []float64) float64 {
	n := float64(len(y))
	mx := (n + 1) / 2
	var my float64
	for _, v := range y {
		my += v
	}
	my /= n
	var sxy, sxx, syy float64
	for i, v := range y {
		dx, dy := float64(i+1)-mx, v-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	r := sxy / math.Sqrt(sxx*syy)
	return math.Round(r*1e10) / 1e10
}

func compareInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// reservoir is Li's Algorithm L: a uniform sample of k items from a stream of unknown
// length, drawing random numbers only when an item is taken (O(k log(n/k)) draws), so
// the per-item cost is one comparison.
type reservoir struct {
	k     int
	items []sample
	next  int64 // sequence number of the next item to take once full
	w     float64
	rng   *rand.Rand
	slot  int // where the accepted item goes (-1: append)
}

type sample struct {
	ord    []byte
	prefix int
	seq    int64
}

func newReservoir(k int, seed uint64) reservoir {
	return reservoir{k: k, rng: rand.New(rand.NewPCG(seed, 0x5eed)), next: -1}
}

func (r *reservoir) offer(seq int64) bool {
	if len(r.items) < r.k {
		r.slot = -1
		if len(r.items) == r.k-1 {
			r.w = math.Exp(math.Log(r.rng.Float64()) / float64(r.k))
			r.skip(seq)
		}
		r.items = append(r.items, sample{seq: seq})
		return true
	}
	if seq != r.next {
		return false
	}
	r.slot = r.rng.IntN(r.k)
	r.items[r.slot].seq = seq
	r.w *= math.Exp(math.Log(r.rng.Float64()) / float64(r.k))
	r.skip(seq)
	return true
}

func (r *reservoir) skip(seq int64) {
	u := r.rng.Float64()
	for u == 0 {
		u = r.rng.Float64()
	}
	r.next = seq + int64(math.Floor(math.Log(u)/math.Log1p(-r.w))) + 1
}

func (r *reservoir) keep(ord []byte, prefix int) {
	i := r.slot
	if i < 0 {
		i = len(r.items) - 1
	}
	s := &r.items[i]
	s.ord = append(s.ord[:0], ord...)
	s.prefix = prefix
}

func (r *reservoir) monotonicity() Monotonicity {
	if len(r.items) == 0 {
		return Monotonicity{Type: Unknown}
	}
	keys := make([][]byte, len(r.items))
	seq := make([]int64, len(r.items))
	for i := range r.items {
		keys[i], seq[i] = r.items[i].ord, r.items[i].seq
	}
	return Classify(RecordIDCorrelation(keys, seq))
}

// withinPrefix computes the coefficient separately for every first-field value with
// enough samples and returns their average weighted by sample count: a key such as
// {geo_zone: 1, created_at: 1} is not monotonic overall but is within each zone, where
// each zone's inserts go to the last chunk of its range.
func (r *reservoir) withinPrefix() (Monotonicity, int) {
	groups := map[string][]int{}
	for i := range r.items {
		s := &r.items[i]
		if s.prefix <= 0 || s.prefix >= len(s.ord) {
			return Monotonicity{}, 0 // a single-field key: nothing to group by
		}
		p := string(s.ord[:s.prefix])
		groups[p] = append(groups[p], i)
	}
	const minGroup = 32
	var sum, weight float64
	used := 0
	for _, g := range groups {
		if len(g) < minGroup {
			continue
		}
		keys := make([][]byte, len(g))
		seq := make([]int64, len(g))
		for j, i := range g {
			keys[j], seq[j] = r.items[i].ord, r.items[i].seq
		}
		sum += RecordIDCorrelation(keys, seq) * float64(len(g))
		weight += float64(len(g))
		used++
	}
	// Many groups mean the first field has high cardinality; the within-group order then
	// says nothing about chunks (each group is tiny).
	if used == 0 || len(groups) > 1000 {
		return Monotonicity{}, 0
	}
	return Classify(math.Round(sum/weight*1e10) / 1e10), used
}

// AppendOrdered appends an encoding of v whose byte order is the value order MongoDB's
// index uses within one type (numbers by value, strings by bytes, dates by time, UUIDs
// and ObjectIds by bytes), with a type byte first. Values of one key field share a type.
func AppendOrdered(dst []byte, v *workloads.Value) []byte {
	if v.Null {
		return append(dst, 0)
	}
	dst = append(dst, byte(v.Type)+1)
	switch v.Type {
	case workloads.TUUID:
		return append(dst, v.ID[:16]...)
	case workloads.TObjectID:
		return append(dst, v.ID[:12]...)
	case workloads.TText, workloads.TInet:
		// Escape 0 and 1 so that the terminator sorts first. Text rarely holds them: copy
		// up to the first one at once.
		b := v.Bytes
		for {
			i := slices.IndexFunc(b, func(c byte) bool { return c <= 1 })
			if i < 0 {
				dst = append(dst, b...)
				break
			}
			dst = append(dst, b[:i]...)
			dst = append(dst, 1, b[i])
			b = b[i+1:]
		}
		return append(dst, 0)
	case workloads.TFloat:
		b := math.Float64bits(v.Float)
		if b>>63 == 1 {
			b = ^b
		} else {
			b |= 1 << 63
		}
		return binary.BigEndian.AppendUint64(dst, b)
	}
	return binary.BigEndian.AppendUint64(dst, uint64(v.Int)^(1<<63))
}
