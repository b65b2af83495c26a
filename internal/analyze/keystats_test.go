package analyze

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/hotspot"
	pm "github.com/shardbench/shardbench/internal/placement/mongo"
	"github.com/shardbench/shardbench/internal/plan"
	"github.com/shardbench/shardbench/workloads"
)

func intKey(i int64) []byte {
	v := workloads.Value{Type: workloads.TInt, Int: i}
	return AppendOrdered(nil, &v)
}

func textKey(s string) []byte {
	v := workloads.Value{Type: workloads.TText, Bytes: []byte(s)}
	return AppendOrdered(nil, &v)
}

// The coefficient on fixtures computed by hand: keys in key order b<a<c... see each case.
func TestRecordIDCorrelationByHand(t *testing.T) {
	cases := []struct {
		name string
		keys []string
		want float64
	}{
		// Key order a(seq 1), b(seq 0), c(seq 2): x = 1,2,3, y = 1,0,2; mean x 2, mean y 1;
		// sxy = (-1)(0) + 0(-1) + 1(1) = 1, sxx = 2, syy = 2: r = 1/2.
		{"one swap", []string{"b", "a", "c"}, 0.5},
		{"increasing", []string{"a", "b", "c", "d"}, 1},
		{"decreasing", []string{"d", "c", "b", "a"}, -1},
		// Key order a(0), a(2) [ties by record id], b(1), b(3): y = 0,2,1,3; mean 1.5;
		// dx = -1.5,-.5,.5,1.5; dy = -1.5,.5,-.5,1.5; sxy = 2.25-.25-.25+2.25 = 4, sxx = syy = 5: r = 0.8.
		{"ties by record id", []string{"a", "b", "a", "b"}, 0.8},
		{"one value", []string{"x", "x", "x"}, 0},
	}
	for _, c := range cases {
		keys := make([][]byte, len(c.keys))
		seq := make([]int64, len(c.keys))
		for i, k := range c.keys {
			keys[i], seq[i] = textKey(k), int64(i)
		}
		if got := RecordIDCorrelation(keys, seq); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: coefficient %v, want %v", c.name, got, c.want)
		}
	}
}

// mongod's threshold: |r| >= 0.7 is monotonic, and the sign gives the direction.
func TestClassifyThreshold(t *testing.T) {
	for _, c := range []struct {
		r    float64
		typ  string
		dir  string
		note string
	}{
		{0.69, NotMonotonic, "", "just below"},
		{0.7, Monotonic, "increasing", "at the threshold"},
		{-0.85, Monotonic, "decreasing", "negative"},
		{0, NotMonotonic, "", "zero"},
	} {
		m := Classify(c.r)
		if m.Type != c.typ || m.Direction != c.dir || m.Coefficient != c.r {
			t.Errorf("%s: Classify(%v) = %+v, want %s %s", c.note, c.r, m, c.typ, c.dir)
		}
	}
}

// Numbers, text, floats and dates sort by value in the ordered encoding.
func TestAppendOrderedSortsByValue(t *testing.T) {
	ints := []int64{-5, -1, 0, 3, 1 << 40}
	for i := 1; i < len(ints); i++ {
		if bytes.Compare(intKey(ints[i-1]), intKey(ints[i])) >= 0 {
			t.Errorf("%d does not sort before %d", ints[i-1], ints[i])
		}
	}
	floats := []float64{-2.5, -0.1, 0, 0.1, 7}
	for i := 1; i < len(floats); i++ {
		a := workloads.Value{Type: workloads.TFloat, Float: floats[i-1]}
		b := workloads.Value{Type: workloads.TFloat, Float: floats[i]}
		if bytes.Compare(AppendOrdered(nil, &a), AppendOrdered(nil, &b)) >= 0 {
			t.Errorf("%v does not sort before %v", floats[i-1], floats[i])
		}
	}
	// A prefix sorts first, and a \x00 or \x01 inside text does not break the order.
	texts := []string{"", "a", "a\x00", "a\x01", "ab", "b"}
	for i := 1; i < len(texts); i++ {
		if bytes.Compare(textKey(texts[i-1]), textKey(texts[i])) >= 0 {
			t.Errorf("%q does not sort before %q", texts[i-1], texts[i])
		}
	}
	// The escape itself: 1 before each 0 or 1, then the terminator.
	v := workloads.Value{Type: workloads.TText, Bytes: []byte("a\x00b\x01\x01c")}
	want := []byte{byte(workloads.TText) + 1, 'a', 1, 0, 'b', 1, 1, 1, 1, 'c', 0}
	if got := AppendOrdered(nil, &v); !bytes.Equal(got, want) {
		t.Errorf("escaped text: got %v, want %v", got, want)
	}
}

// Cardinality, most common values with their share, the average size and uniqueness on a
// hand-counted fixture: a×5, b×3, c×2 with sizes 10, 20, 30.
func TestKeyStatsCardinalityAndTopValues(t *testing.T) {
	k := NewKeyStats(1)
	sizes := map[string]int64{"a": 10, "b": 20, "c": 30}
	for _, s := range []string{"a", "b", "a", "c", "a", "b", "a", "c", "b", "a"} {
		if k.Add(textKey(s), sizes[s]) {
			k.Keep(textKey(s), 0)
		}
	}
	c := k.Result(false)
	if c.NumDocs != 10 || c.Distinct != 3 || !c.Exact || c.RelErr != 0 {
		t.Fatalf("docs %d distinct %d exact %v err %v, want 10, 3, exact", c.NumDocs, c.Distinct, c.Exact, c.RelErr)
	}
	// (5×10 + 3×20 + 2×30) / 10 = 17
	if c.AvgSize != 17 {
		t.Errorf("average size %v, want 17", c.AvgSize)
	}
	want := []struct {
		key   string
		freq  int64
		share float64
	}{{"a", 5, 0.5}, {"b", 3, 0.3}, {"c", 2, 0.2}}
	if len(c.Common) != 3 {
		t.Fatalf("%d most common values, want 3", len(c.Common))
	}
	for i, w := range want {
		got := c.Common[i]
		if !bytes.Equal(got.Key, textKey(w.key)) || got.Frequency != w.freq || got.Err != 0 || math.Abs(got.Share-w.share) > 1e-12 {
			t.Errorf("most common %d: %q %d (err %d) %.2f, want %q %d %.2f", i, got.Key, got.Frequency, got.Err, got.Share, w.key, w.freq, w.share)
		}
	}
}

// Past the exact limit the count is HyperLogLog's, within a few standard errors, and the
// memory does not grow with the keys: the exact set is dropped.
func TestKeyStatsDistinctSketch(t *testing.T) {
	k := NewKeyStats(1)
	const n = 300_000
	for i := int64(0); i < n; i++ {
		k.Add(intKey(i), 1)
	}
	c := k.Result(false)
	if c.Exact || c.RelErr <= 0 || c.RelErr > 0.01 {
		t.Fatalf("exact %v, relative error %v: want a sketch with ~0.8%% error", c.Exact, c.RelErr)
	}
	if d := math.Abs(float64(c.Distinct)-n) / n; d > 4*c.RelErr {
		t.Errorf("distinct ≈%d for %d keys: off by %.2f%%, more than 4 standard errors", c.Distinct, n, d*100)
	}
	if len(k.res.items) != SampleSize {
		t.Errorf("reservoir holds %d keys, want the fixed %d", len(k.res.items), SampleSize)
	}
}

func feed(k *KeyStats, keys [][]byte, prefix func([]byte) int) {
	for _, key := range keys {
		if k.Add(key, 1) {
			p := 0
			if prefix != nil {
				p = prefix(key)
			}
			k.Keep(key, p)
		}
	}
}

// Increasing keys are monotonic with r = 1, decreasing with r = -1, shuffled not at all;
// the reservoir sample (smaller than the stream) keeps the verdict.
func TestKeyStatsMonotonicity(t *testing.T) {
	const n = 3 * SampleSize
	inc := make([][]byte, n)
	for i := range inc {
		inc[i] = intKey(int64(i))
	}
	dec := slices.Clone(inc)
	slices.Reverse(dec)
	shuffled := slices.Clone(inc)
	rand.New(rand.NewPCG(7, 7)).Shuffle(n, func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for _, c := range []struct {
		name string
		keys [][]byte
		typ  string
		dir  string
		r    float64
	}{
		{"increasing", inc, Monotonic, "increasing", 1},
		{"decreasing", dec, Monotonic, "decreasing", -1},
		{"shuffled", shuffled, NotMonotonic, "", 0},
	} {
		k := NewKeyStats(3)
		feed(k, c.keys, nil)
		m := k.Result(false).Monotonicity
		if m.Type != c.typ || m.Direction != c.dir || math.Abs(m.Coefficient-c.r) > 0.05 {
			t.Errorf("%s: %+v, want %s %s r≈%v", c.name, m, c.typ, c.dir, c.r)
		}
	}
}

// {zone: 1, time: 1} with five interleaved zones: not monotonic overall (each zone's
// range is walked in turn) but monotonic within every zone.
func TestKeyStatsMonotonicWithinPrefix(t *testing.T) {
	zones := []string{"kaliningrad", "moscow", "novosibirsk", "spb", "ekaterinburg"}
	var keys [][]byte
	prefixLen := map[string]int{}
	for i := 0; i < 20_000; i++ {
		z := zones[i%len(zones)]
		zk := textKey(z)
		prefixLen[string(zk)] = len(zk)
		keys = append(keys, append(zk, intKey(int64(i))...))
	}
	k := NewKeyStats(5)
	feed(k, keys, func(key []byte) int { return bytes.IndexByte(key, 0) + 1 })
	c := k.Result(true)
	if c.Monotonicity.Type != NotMonotonic {
		t.Errorf("overall %+v, want not monotonic", c.Monotonicity)
	}
	if c.WithinPrefix == nil || c.WithinPrefix.Type != Monotonic || c.WithinPrefix.Coefficient < 0.99 || c.PrefixGroups != len(zones) {
		t.Errorf("within zone %+v over %d groups, want monotonic r≈1 over %d zones", c.WithinPrefix, c.PrefixGroups, len(zones))
	}
}

// Targeting on hand-made placements: the share of single-shard, multi-shard and
// scatter-gather requests over 10 requests (6 / 1 / 3).
func TestTargetShares(t *testing.T) {
	point := &design.Step{Database: design.MongoDB, Kind: design.Read, KeyColumns: []string{"user_id"}, MongoStep: design.MongoStep{KeyFields: 1}}
	prefix := &design.Step{Database: design.MongoDB, Kind: design.MultiRead, KeyColumns: []string{"zone", "at"}, MongoStep: design.MongoStep{KeyFields: 1}}
	scan := &design.Step{Database: design.Cassandra, Kind: design.Scan, KeyColumns: []string{"bucket"}}
	cass := &design.Step{Database: design.Cassandra, Kind: design.Read, KeyColumns: []string{"bucket"}}
	type req struct {
		a design.Access
		w plan.Where
	}
	reqs := []req{
		{design.Access{Step: point, Parts: 1}, plan.Where{Targeting: pm.TargetOne, Shards: []int{0}}},
		{design.Access{Step: point, Parts: 1}, plan.Where{Targeting: pm.TargetOne, Shards: []int{2}}},
		{design.Access{Step: cass, Parts: 1}, plan.Where{Replicas: []int32{1, 2, 3}}},
		{design.Access{Step: cass, Parts: 1}, plan.Where{Replicas: []int32{4, 5, 0}}},
		{design.Access{Step: point, Parts: 1}, plan.Where{Targeting: pm.TargetOne, Shards: []int{1}}},
		{design.Access{Step: cass, Parts: 1}, plan.Where{Replicas: []int32{0, 1, 2}}},
		{design.Access{Step: prefix, Parts: 1}, plan.Where{Targeting: pm.TargetSome, Shards: []int{0, 1}}},
		{design.Access{Step: point, Parts: 1}, plan.Where{Broadcast: true, Targeting: pm.TargetAll, Shards: []int{0, 1, 2}}},
		{design.Access{Step: scan, Parts: 1}, plan.Where{Broadcast: true}},
		{design.Access{Step: scan, Parts: 1}, plan.Where{}},
	}
	var d dist
	for i := range reqs {
		d.add(TargetOf(&reqs[i].a, &reqs[i].w))
	}
	single, multi, scatter := d.percentages()
	if single != 60 || multi != 10 || scatter != 30 {
		t.Errorf("single/multi/scatter = %v/%v/%v%%, want 60/10/30", single, multi, scatter)
	}
	// Fan-out: a MongoDB request one per shard it reaches, a Cassandra read one per
	// partition, a scan one per node: 1+1+1+1+1+1+2+3+6+6 = 23 over 6 nodes, 3 shards.
	v := &Analyzer{}
	var fan int64
	for i := range reqs {
		targets := 3
		if reqs[i].a.Step.Database == design.Cassandra {
			targets = 6
		}
		fan += v.fanned(&table{targets: targets}, &reqs[i].a, &reqs[i].w)
	}
	if fan != 23 {
		t.Errorf("fan-out %d requests, want 23", fan)
	}
	// A Cassandra read that reaches several partitions (IN, or one query per partition).
	multiPart := design.Access{Step: cass, Part: 0, Parts: 4}
	if got := TargetOf(&multiPart, &plan.Where{Replicas: []int32{0}}); got != MultiShard {
		t.Errorf("a 4-partition read is %v, want multi-shard", got)
	}
}

// Memory stops growing once the exact distinct set turns into the sketch: ten times more
// distinct keys past that point add (almost) nothing to the heap.
func TestKeyStatsMemoryBounded(t *testing.T) {
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	k := NewKeyStats(1)
	key := make([]byte, 8)
	add := func(from, to int) {
		for i := from; i < to; i++ {
			binary.BigEndian.PutUint64(key, uint64(i)*0x9e3779b97f4a7c15)
			if k.Add(key, 100) {
				k.Keep(key, 0)
			}
		}
	}
	const first = 4 * hotspot.ExactLimit
	add(0, first)
	before := heap()
	add(first, 11*first)
	after := heap()
	if c := k.Result(false); c.Exact || c.NumDocs != 11*first {
		t.Fatalf("exact %v docs %d", c.Exact, c.NumDocs)
	}
	if grew := int64(after) - int64(before); grew > 1<<20 {
		t.Errorf("heap grew by %d bytes over %d more distinct keys, want bounded (< 1 MiB)", grew, 10*first)
	}
	runtime.KeepAlive(k)
}
