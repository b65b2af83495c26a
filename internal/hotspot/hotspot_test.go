package hotspot

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// check verifies the stream summary's internal structure: buckets ascending by count,
// every counter in the bucket of its count, the index consistent.
func check(t *testing.T, tk *TopK) {
	t.Helper()
	seen := 0
	prev := uint64(0)
	back := int32(-1)
	for b := tk.min; b >= 0; b = tk.buckets[b].next {
		bk := tk.buckets[b]
		if bk.prev != back || (back >= 0 && bk.count <= prev) || bk.head < 0 {
			t.Fatalf("bucket list broken at %d: %+v (prev count %d)", b, bk, prev)
		}
		before := int32(-1)
		for c := bk.head; c >= 0; before, c = c, tk.nodes[c].next {
			ct := tk.nodes[c]
			if v, ok := tk.lookup(ct.fp); ct.bucket != b || ct.prev != before || ct.count != bk.count || !ok || v != c {
				t.Fatalf("counter %d in bucket %d: %+v", c, b, ct)
			}
			seen++
		}
		prev, back = bk.count, b
	}
	named := map[int32]bool{} // counters a slot names with their fingerprint's tag
	for _, s := range tk.index.slots {
		if s.val >= 0 && uint32(tk.nodes[s.val].fp) == s.tag {
			named[s.val] = true
		}
	}
	live := len(named)
	if seen != len(tk.nodes) || live != len(tk.nodes) || len(tk.tallies) != len(tk.nodes) || tk.index.full() {
		t.Fatalf("%d counters reachable, %d held, %d indexed, %d of %d slots used", seen, len(tk.nodes), live, tk.index.used, len(tk.index.slots))
	}
}

func TestTopKExactWhenSmall(t *testing.T) {
	tk := NewTopK(10)
	for i := 0; i < 5; i++ {
		for j := 0; j <= i; j++ {
			tk.AddKey([]byte(fmt.Sprint("p", i)), j%2 == 0, 2, 100)
		}
	}
	check(t, tk)
	top := tk.Top(-1)
	if len(top) != 5 || string(top[0].Key) != "p4" || top[0].Ops != 5 || top[0].Err != 0 {
		t.Fatalf("top %+v", top)
	}
	// p4: ops 5, writes at j = 0, 2, 4.
	if e := top[0]; e.Writes != 3 || e.Reads != 2 || e.Rows != 6 || e.Bytes != 300 {
		t.Fatalf("p4 %+v", e)
	}
	tot := tk.Totals()
	if tot.Ops != 15 || tot.Writes != 9 || tot.Reads != 6 || tot.Rows != 18 || tot.Bytes != 900 {
		t.Fatalf("totals %+v", tot)
	}
	// Shares: counts 5,4,3,2,1 of 15; top 20% of 5 partitions = 1 partition.
	if s := tk.Share(0.2, 5); s.Partitions != 1 || s.Lo != 5.0/15 || s.Hi != 5.0/15 {
		t.Fatalf("share %+v", s)
	}
	if s := tk.Share(0.5, 5); s.Partitions != 3 || math.Abs(s.Hi-12.0/15) > 1e-12 {
		t.Fatalf("share %+v", s)
	}
}

// Space-Saving's guarantees on a skewed stream much wider than k.
// TestTopKLongKeysAndTagCollisions: partitions whose fingerprints share the 32 bits the
// index keeps are told apart, and keys longer than a counter's slot are kept whole,
// through evictions too.
func TestTopKLongKeysAndTagCollisions(t *testing.T) {
	tk := NewTopK(8)
	keyOf := func(i int) []byte { return []byte(strings.Repeat("k", 50+i%30) + fmt.Sprint(i)) } // some longer than a slot
	fpOf := func(i int) uint64 { return 0xabcdef01 | uint64(i)<<32 }
	for i := range 6 {
		for range i + 1 {
			tk.Add(fpOf(i), keyOf(i), false, 0, 0)
		}
	}
	check(t, tk)
	for _, e := range tk.Top(-1) {
		i := int(e.FP >> 32)
		if e.Ops != int64(i+1) || e.Err != 0 || string(e.Key) != string(keyOf(i)) {
			t.Fatalf("partition %d: %+v", i, e)
		}
	}
	for i := 6; i < 200; i++ { // evictions
		tk.Add(fpOf(i), keyOf(i), i%2 == 0, 1, 10)
		check(t, tk)
	}
	for _, e := range tk.Top(-1) {
		if i := int(e.FP >> 32); string(e.Key) != string(keyOf(i)) {
			t.Fatalf("partition %d has key %q", i, e.Key)
		}
	}
}

func TestTopKGuarantees(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(rng, 1.2, 1, 100_000)
	const k, n = 200, 500_000
	tk := NewTopK(k)
	exact := map[uint64]int64{}
	var key [8]byte
	for i := 0; i < n; i++ {
		v := zipf.Uint64()
		for j := range key {
			key[j] = byte(v >> (8 * j))
		}
		fp := Fingerprint(key[:])
		exact[fp]++
		tk.Add(fp, key[:], true, 1, 10)
	}
	check(t, tk)
	verify(t, tk, exact, n, k)
}

// TestTopKEvictedReturns: a partition evicted and offered again enters anew, with the
// minimum count as its error, though the index still has a slot naming the counter it
// lost (to the partition now counted there, which must not be charged).
func TestTopKEvictedReturns(t *testing.T) {
	tk := NewTopK(2)
	for _, k := range []string{"a", "a", "b", "c", "b"} {
		tk.AddKey([]byte(k), false, 0, 0)
		check(t, tk)
	}
	// c evicts b (count 1): c 2, err 1; b evicts c, the newest of the count-2 bucket.
	got := map[string][2]int64{}
	for _, e := range tk.Top(-1) {
		got[string(e.Key)] = [2]int64{e.Ops, e.Err}
	}
	want := map[string][2]int64{"a": {2, 0}, "b": {3, 2}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("top %v, want %v", got, want)
	}
	for k, held := range map[string]bool{"a": true, "b": true, "c": false} {
		if tk.Holds(Fingerprint([]byte(k))) != held {
			t.Fatalf("Holds(%s) = %v, want %v", k, !held, held)
		}
	}
}

func verify(t *testing.T, tk *TopK, exact map[uint64]int64, n, k int64) {
	t.Helper()
	top := tk.Top(-1)
	in := map[uint64]bool{}
	var sum int64
	for _, e := range top {
		in[e.FP] = true
		sum += e.Ops
		tr := exact[e.FP]
		if e.Ops-e.Err > tr || tr > e.Ops {
			t.Fatalf("entry %x: count %d err %d, true %d", e.FP, e.Ops, e.Err, tr)
		}
		if e.Err > n/k {
			t.Fatalf("error %d above N/k = %d", e.Err, n/k)
		}
	}
	if int64(len(top)) == k && sum != n {
		t.Fatalf("counts sum to %d, want N = %d", sum, n)
	}
	for fp, c := range exact {
		if c > n/k && !in[fp] {
			t.Fatalf("heavy hitter %x (%d > N/k = %d) missing", fp, c, n/k)
		}
	}
}

func TestTopKMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	zipf := rand.NewZipf(rng, 1.1, 1, 50_000)
	const k = 100
	a, b := NewTopK(k), NewTopK(k)
	exact := map[uint64]int64{}
	for i := 0; i < 200_000; i++ {
		fp := mix(zipf.Uint64() + 1)
		exact[fp]++
		if i%3 == 0 {
			a.Add(fp, nil, false, 0, 0)
		} else {
			b.Add(fp, nil, false, 0, 0)
		}
	}
	a.Merge(b)
	check(t, a)
	if a.Totals().Ops != 200_000 || a.Totals().Reads != 200_000 {
		t.Fatalf("totals %+v", a.Totals())
	}
	for _, e := range a.Top(-1) {
		if tr := exact[e.FP]; e.Ops-e.Err > tr || tr > e.Ops {
			t.Fatalf("merged entry: count %d err %d, true %d", e.Ops, e.Err, tr)
		}
	}
}

func TestShareBounds(t *testing.T) {
	// More distinct partitions than counters: the bounds must bracket the truth.
	rng := rand.New(rand.NewPCG(5, 6))
	zipf := rand.NewZipf(rng, 1.3, 1, 20_000)
	tk := NewTopK(500)
	exact := map[uint64]int64{}
	for i := 0; i < 300_000; i++ {
		fp := mix(zipf.Uint64() + 1)
		exact[fp]++
		tk.Add(fp, nil, true, 1, 1)
	}
	counts := make([]int64, 0, len(exact))
	for _, c := range exact {
		counts = append(counts, c)
	}
	slices.SortFunc(counts, func(a, b int64) int { return cmp.Compare(b, a) })
	for _, f := range []float64{0.001, 0.01, 0.1} {
		s := tk.Share(f, int64(len(exact)))
		var top int64
		for i := int64(0); i < s.Partitions; i++ {
			top += counts[i]
		}
		truth := float64(top) / 300_000
		if truth < s.Lo-1e-12 || truth > s.Hi+1e-12 {
			t.Errorf("top %.1f%%: true share %.4f outside [%.4f, %.4f]", f*100, truth, s.Lo, s.Hi)
		}
	}
}

func TestDistinct(t *testing.T) {
	d := NewDistinct()
	for i := uint64(0); i < 1000; i++ {
		d.Add(i)
		d.Add(i) // duplicates
	}
	if n, exact, e := d.Estimate(); n != 1000 || !exact || e != 0 {
		t.Fatalf("small: %d %v %v", n, exact, e)
	}
	const n = 1_000_000
	for i := uint64(0); i < n; i++ {
		d.Add(i)
	}
	got, exact, rel := d.Estimate()
	if exact || math.Abs(float64(got)/n-1) > 3*rel {
		t.Fatalf("HLL %d for %d (rel %.4f)", got, n, rel)
	}
	// Merge of two halves estimates the union.
	a, b := NewDistinct(), NewDistinct()
	for i := uint64(0); i < n; i++ {
		if i%2 == 0 {
			a.Add(i)
		} else {
			b.Add(i)
		}
	}
	a.Merge(b)
	if got, _, rel := a.Estimate(); math.Abs(float64(got)/n-1) > 3*rel {
		t.Fatalf("merged HLL %d", got)
	}
	small := NewDistinct()
	small.Add(7)
	a.Merge(small)
	// Fingerprints added since the last batch was counted count in a merge and an
	// estimate, on either side.
	x, y := NewDistinct(), NewDistinct()
	for i := uint64(0); i < 10; i++ {
		x.Add(i)
		y.Add(i + 5)
	}
	x.Merge(y)
	if n, exact, _ := x.Estimate(); n != 15 || !exact {
		t.Fatalf("merged while pending: %d %v", n, exact)
	}
}

// TestDistinctBatchOrder: the registers are the same whether fingerprints are counted
// one by one or in batches (Add batches them; a flush counts what is pending).
func TestDistinctBatchOrder(t *testing.T) {
	a, b := NewDistinct(), NewDistinct()
	for i := uint64(0); i < 3*ExactLimit+17; i++ {
		fp := mix(i * 7919)
		a.Add(fp)
		b.Add(fp)
		b.flush()
		if i == ExactLimit/2 {
			a.flush()
			b.flush()
			if a.exact.n != b.exact.n {
				t.Fatalf("exact phase: %d vs %d", a.exact.n, b.exact.n)
			}
		}
	}
	a.flush()
	if !slices.Equal(a.reg, b.reg) {
		t.Fatal("registers differ")
	}
}

func TestMeasure(t *testing.T) {
	even := Measure([]float64{5, 5, 5, 5})
	if even.MaxOverMean != 1 || even.CV != 0 || even.Gini != 0 || len(even.Over30) != 0 {
		t.Fatalf("even %+v", even)
	}
	one := Measure([]float64{4, 0, 0, 0})
	if one.MaxOverMean != 4 || math.Abs(one.CV-math.Sqrt(3)) > 1e-12 || math.Abs(one.Gini-1) > 1e-12 {
		t.Fatalf("one takes all %+v", one)
	}
	// Seed rule: strictly more than 30% either way.
	m := Measure([]float64{100, 100, 140, 60, 130})
	if fmt.Sprint(m.Over30) != "[2 3]" {
		t.Fatalf("over 30%%: %v (deviations %v)", m.Over30, m.Deviation)
	}
	// Gini of {1, 2, 3, 4}: Σ|xi-xj| = 20 over ordered pairs... raw = 20/(2·16·2.5) = 0.25.
	g := Measure([]float64{1, 2, 3, 4})
	if math.Abs(g.Gini-0.25*4/3) > 1e-12 {
		t.Fatalf("gini %v", g.Gini)
	}
	if z := Measure([]float64{0, 0}); z.MaxOverMean != 0 || z.Gini != 0 {
		t.Fatalf("zero %+v", z)
	}
	if l := Loads([]int64{1, 2}); l[1] != 2 {
		t.Fatal("Loads")
	}
}

func TestProject(t *testing.T) {
	day := 24 * time.Hour
	// Seed 000's orders_by_period: one partition per day takes every order of the day.
	// Observed: the first hour of the day, 41,667 orders of ~500 B (1M orders a day), and
	// the rest of the day at the same rate.
	p := Project(Growth{Rows: 41_667, Bytes: 41_667 * 500, Observed: time.Hour, Elapsed: time.Hour}, BucketHorizon(day, 0), CassandraLimits)
	if p.Rows != 1_000_008 || !p.ExceedsRows || !p.ExceedsBytes || p.Remaining != 23*time.Hour {
		t.Fatalf("orders_by_period %+v", p)
	}
	// A session partition with TTL 1 day holds at most a day of writes: the observed hour
	// and 23 more.
	p = Project(Growth{Rows: 10, Bytes: 20_000, Observed: time.Hour}, TTLHorizon(day), CassandraLimits)
	if p.Rows != 240 || p.Bytes != 480_000 || p.Exceeds || p.Horizon.Label != "TTL 1d" {
		t.Fatalf("session %+v", p)
	}
	// A bucket longer than the TTL holds only TTL's worth.
	p = Project(Growth{Rows: 1, Bytes: 1, Observed: time.Hour}, BucketHorizon(30*day, 7*day), CassandraLimits)
	if p.Rows != 168 {
		t.Fatalf("TTL inside bucket %+v", p)
	}
	// Seed 003's order_history (PK user_id, no bucket, no TTL) over a year.
	p = Project(Growth{Rows: 2, Bytes: 4096, Observed: day}, PeriodHorizon(365*day, 0), CassandraLimits)
	if p.Rows != 730 || p.Exceeds || p.Horizon.Label != "1 year" {
		t.Fatalf("history %+v", p)
	}
	p = Project(Growth{Rows: 2, Bytes: 4096, Observed: day}, Horizon{}, CassandraLimits)
	if !p.Unbounded || !p.Exceeds {
		t.Fatalf("unbounded %+v", p)
	}
	if Bytes(1536) != "1.5 KiB" || Bytes(10) != "10 B" {
		t.Fatal(Bytes(1536))
	}
}

// A run is a peak: the rest of a partition's life grows at the ordinary rate (Factor),
// not at the peak's.
func TestProjectSteadyRate(t *testing.T) {
	day := 24 * time.Hour
	// 4 minutes of Black Friday peak at 1,000 rows/s into a day bucket, then the rest of
	// the day at a quarter of it.
	g := Growth{Rows: 240_000, Bytes: 240_000 * 100, Observed: 4 * time.Minute, Elapsed: 4 * time.Minute, Factor: 0.25}
	p := Project(g, BucketHorizon(day, 0), CassandraLimits)
	want := int64(240_000 + 250*(86_400-240))
	if p.Rows != want || p.RowsPerSec != 250 {
		t.Fatalf("steady: %d rows at %g/s, want %d at 250/s", p.Rows, p.RowsPerSec, want)
	}
	// Without a factor the peak goes on all day: four times as much rest of the day.
	g.Factor = 0
	if p := Project(g, BucketHorizon(day, 0), CassandraLimits); p.Rows != 240_000+1000*(86_400-240) {
		t.Fatalf("peak: %d", p.Rows)
	}
}

// A time bucket that ended during the observation is what it received, however long the
// observation; one that began during it counts its life from its first write.
func TestGrowthOfBucketLifetimes(t *testing.T) {
	const sec = int64(time.Second)
	day := 24 * time.Hour
	h := BucketHorizon(day, 0)
	start, end := int64(0), 30*86_400*sec // 30 days observed
	// Day 3's bucket: written from its first second to its last, 50,488 rows.
	first, last := 3*86_400*sec, 4*86_400*sec-sec
	g := GrowthOf(50_488, 50_488*200, first, last, h, start, end)
	if !g.Finished {
		t.Fatalf("day 3 not finished: %+v", g)
	}
	if p := Project(g, h, CassandraLimits); p.Rows != 50_488 {
		t.Fatalf("a finished day bucket is its own size: %d rows, want 50,488 (not divided by the 30-day run)", p.Rows)
	}
	// Today's bucket began 6 hours before the end: 6 hours observed, 18 to go.
	first = end - 6*3600*sec
	g = GrowthOf(6_000, 6_000, first, end-sec, h, start, end)
	if g.Finished || g.Observed != 6*time.Hour || g.Elapsed != 6*time.Hour {
		t.Fatalf("today: %+v", g)
	}
	if p := Project(g, h, CassandraLimits); p.Rows != 24_000 {
		t.Fatalf("today: %d rows, want 24,000", p.Rows)
	}
	// A bucket written from the observation's start to its end: it began at or before
	// the start, and is not finished.
	g = GrowthOf(1_000, 1_000, sec, end-sec, h, start, end)
	if g.Finished || g.Observed != time.Duration(end) {
		t.Fatalf("running: %+v", g)
	}
	// A bucket that began before the observation and ended 2 hours into it (its last
	// write then, nothing for the next 30 days) is what it received.
	g = GrowthOf(7_200, 7_200, sec, 2*3600*sec, h, start, end)
	if !g.Finished || g.Observed != 2*time.Hour {
		t.Fatalf("ended early: %+v", g)
	}
	if p := Project(g, h, CassandraLimits); p.Rows != 7_200 {
		t.Fatalf("ended early: %d rows, want 7,200", p.Rows)
	}
	// A period (not a bucket) is never finished, whenever it was last written.
	g = GrowthOf(10, 10, sec, 2*sec, PeriodHorizon(365*day, 0), start, end)
	if g.Finished || g.Observed != time.Duration(end) {
		t.Fatalf("period: %+v", g)
	}
}

// The limits are the design's where it states them, MongoDB's documented default else.
func TestChunkLimits(t *testing.T) {
	if l := ChunkLimits(32); l.Bytes != 32<<20 || !l.Chunk || !strings.Contains(l.Source, "chunk_size_mb") {
		t.Fatalf("32 MB: %+v", l)
	}
	if l := ChunkLimits(0); l.Bytes != 128<<20 || l != MongoChunkLimits {
		t.Fatalf("default: %+v", l)
	}
	if CassandraLimits.Bytes != 100<<20 || CassandraLimits.Rows != 100_000 {
		t.Fatalf("cassandra: %+v", CassandraLimits)
	}
}

// AddAt times a partition's first and last growth; reads and updates do not move them,
// eviction resets them, and Merge keeps the earliest and latest.
func TestTopKGrowthTimes(t *testing.T) {
	k := NewTopK(2)
	k.AddAt(1, []byte("a"), true, 1, 10, 100)
	k.AddAt(1, []byte("a"), false, 0, 0, 150)
	k.AddAt(1, []byte("a"), true, 0, 0, 170) // an update: no rows
	k.AddAt(1, []byte("a"), true, 1, 10, 200)
	e := k.Top(1)[0]
	if e.FirstGrowth != 100 || e.LastGrowth != 200 {
		t.Fatalf("a: %+v", e)
	}
	k.AddAt(2, []byte("b"), true, 1, 1, 300)
	k.AddAt(2, []byte("b"), true, 1, 1, 301)
	k.AddAt(3, []byte("c"), true, 1, 1, 400) // evicts b, the smallest count (2; a has 4)
	for _, e := range k.Top(-1) {
		if string(e.Key) == "c" && (e.FirstGrowth != 400 || e.LastGrowth != 400) {
			t.Fatalf("c inherited times: %+v", e)
		}
	}
	o := NewTopK(2)
	o.AddAt(1, []byte("a"), true, 1, 10, 50)
	o.AddAt(1, []byte("a"), true, 1, 10, 500)
	k.Merge(o)
	for _, e := range k.Top(-1) {
		if string(e.Key) == "a" && (e.FirstGrowth != 50 || e.LastGrowth != 500) {
			t.Fatalf("merged a: %+v", e)
		}
	}
}

// TestFPTable: the index answers like a Go map of what was last put, with clustered
// keys, until it is reset, and counts the slots in use.
func TestFPTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	tb := NewFPTable(64)
	ref := map[uint64]int32{}
	for i := 0; i < 200_000; i++ {
		if tb.Full() {
			if 2*len(ref) < len(tb.slots) {
				t.Fatalf("step %d: full with %d of %d slots used", i, len(ref), len(tb.slots))
			}
			tb.Reset()
			clear(ref)
		}
		fp := rng.Uint64N(300) * 0x100 // clustered keys
		v := int32(rng.IntN(1000))
		tb.Put(fp, v)
		ref[fp] = v
		if tb.used != len(ref) {
			t.Fatalf("step %d: %d slots used, want %d", i, tb.used, len(ref))
		}
		if i%97 == 0 {
			for k, v := range ref {
				if got, ok := tb.Get(k); !ok || got != v {
					t.Fatalf("step %d: get(%x) = %d %v, want %d", i, k, got, ok, v)
				}
			}
			for k := range uint64(300) {
				if _, ok := tb.Get(k * 0x100); ok != hasKey(ref, k*0x100) {
					t.Fatalf("step %d: get(%x) found %v", i, k*0x100, ok)
				}
			}
		}
	}
}

func hasKey(m map[uint64]int32, k uint64) bool { _, ok := m[k]; return ok }

// TestFPSet: the exact phase's set counts like a Go map, fingerprint 0 and growth
// included, and lists every member once.
func TestFPSet(t *testing.T) {
	s := newFPSet()
	want := map[uint64]bool{}
	for i := range uint64(5000) {
		fp := mix(i % 3001)
		if i%7 == 0 {
			fp = 0
		}
		s.add(fp)
		want[fp] = true
		if s.n != len(want) {
			t.Fatalf("after %d adds: %d members, want %d", i+1, s.n, len(want))
		}
	}
	got := map[uint64]bool{}
	s.each(func(fp uint64) {
		if got[fp] {
			t.Fatalf("%x listed twice", fp)
		}
		got[fp] = true
	})
	if len(got) != len(want) {
		t.Fatalf("each listed %d, want %d", len(got), len(want))
	}
}
