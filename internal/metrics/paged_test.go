package metrics

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// The geometry maps values to the library's buckets: a dense histogram given
// ValueFromIndex(CountsIndex(v)) instead of v puts it in the same bucket, and the bucket's
// lowest value is the library's lowest equivalent value.
func TestGeometryMatchesTheLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	values := []int64{Lowest, Lowest + 1, 2047, 2048, 2049, 1_000_000, Highest - 1, Highest}
	for i := 0; i < 100_000; i++ {
		values = append(values, Clamp(int64(rng.ExpFloat64()*float64(int64(1)<<rng.IntN(40)))))
	}
	one := hdr.NewPacked(Lowest, Highest, SigFigs)
	for _, v := range values {
		idx := harness.CountsIndex(v)
		low := harness.ValueFromIndex(idx)
		one.Reset()
		if err := one.RecordValue(v); err != nil {
			t.Fatal(err)
		}
		if want := one.Min(); low != want {
			t.Fatalf("value %d: bucket %d starts at %d, the library says %d", v, idx, low, want)
		}
		if harness.CountsIndex(low) != idx {
			t.Fatalf("value %d: the bucket's lowest value %d maps to index %d, not %d", v, low, harness.CountsIndex(low), idx)
		}
		if int(idx)>>pageShift >= numPages {
			t.Fatalf("value %d: index %d is past the histogram's %d pages", v, idx, numPages)
		}
	}
}

// Every bucket a clamped value can fall in, from the first to the one holding Highest:
// its lowest and highest values are the library's Min and Max of a histogram holding one
// value there.
func TestGeometryBucketBoundsMatchTheLibrary(t *testing.T) {
	one := hdr.NewPacked(Lowest, Highest, SigFigs)
	last := harness.CountsIndex(Highest)
	for idx := int32(0); idx <= last; idx++ {
		v := harness.ValueFromIndex(idx)
		one.Reset()
		if err := one.RecordValue(v); err != nil {
			t.Fatal(err)
		}
		if low, high := one.Min(), one.Max(); v != low || harness.HighestEquivalentValue(idx) != high {
			t.Fatalf("bucket %d: [%d, %d], the library says [%d, %d]", idx, v, harness.HighestEquivalentValue(idx), low, high)
		}
	}
}

// queried are the percentiles the tests ask both histograms for: the ones the harness
// reports, the ends, out-of-range ones (clamped) and NaN.
var queried = []float64{0, 1e-9, 0.1, 1, 10, 25, 50, 75, 90, 99, 99.9, 99.99, 99.999, 100, -5, 101, math.NaN()}

// samePaged compares a paged histogram with a dense one of the library given the same
// values: buckets, total, min, max and every queried percentile, one at a time and as a
// slice (unsorted, with duplicates).
func samePaged(t *testing.T, name string, h *PagedHistogram, want *hdr.Histogram) {
	t.Helper()
	got := NewHistogram()
	h.addTo(got)
	if !got.Equals(want) {
		t.Fatalf("%s: buckets differ (%d values, %d wanted)", name, h.TotalCount(), want.TotalCount())
	}
	if h.TotalCount() != want.TotalCount() || h.Max() != want.Max() || h.Min() != want.Min() {
		t.Fatalf("%s: total %d max %d min %d; the library: %d %d %d", name, h.TotalCount(), h.Max(), h.Min(), want.TotalCount(), want.Max(), want.Min())
	}
	for _, p := range queried {
		if a, b := h.ValueAtPercentile(p), want.ValueAtPercentile(p); a != b {
			t.Fatalf("%s: percentile %v = %d, the library says %d", name, p, a, b)
		}
	}
	ps := append(slices.Clone(queried), 99, 50, 99.9, 50)
	rand.New(rand.NewPCG(7, 8)).Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
	if a, b := h.ValueAtPercentilesSlice(ps), want.ValueAtPercentilesSlice(ps); !slices.Equal(a, b) {
		t.Fatalf("%s: percentiles %v = %v, the library says %v", name, ps, a, b)
	}
	// Buckets in index order, as the library's sparse histogram lists them.
	packed := hdr.NewPacked(Lowest, Highest, SigFigs)
	packed.MergeFrom(want)
	var a, b [][2]int64
	for idx, c := range h.Buckets() {
		a = append(a, [2]int64{harness.ValueFromIndex(idx), c})
	}
	packed.ForEachBucket(func(v, c int64) bool { b = append(b, [2]int64{v, c}); return true })
	if !slices.Equal(a, b) {
		t.Fatalf("%s: %d buckets listed, the library lists %d", name, len(a), len(b))
	}
}

// A paged histogram answers exactly what the library's dense histogram answers for the
// same values: empty, one value, everything in one bucket, values around page boundaries,
// and random values over the whole range, interval after interval with the pages reused.
func TestPagedHistogramMatchesTheLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	logUniform := func() int64 {
		return int64(math.Exp(math.Log(float64(Lowest)) + rng.Float64()*math.Log(float64(Highest)/float64(Lowest))))
	}
	cases := map[string][]int64{
		"empty":      nil,
		"lowest":     {Lowest},
		"highest":    {Highest},
		"one":        {1_234_567},
		"one bucket": slices.Repeat([]int64{250_000}, 300_000),
		"two ends":   {Lowest, Highest, Lowest},
	}
	var edges []int64
	for _, pg := range []int32{1, 2, 3, 7, 8, 40, int32(numPages) - 1} {
		for _, idx := range []int32{pg<<pageShift - 1, pg << pageShift, pg<<pageShift + 1} {
			if v := harness.ValueFromIndex(idx); v >= Lowest && v <= Highest {
				edges = append(edges, v, v, harness.HighestEquivalentValue(idx))
			}
		}
	}
	cases["page edges"] = edges
	var spread []int64
	for i := 0; i < 200_000; i++ {
		spread = append(spread, Clamp(logUniform()))
	}
	cases["whole range"] = spread
	for name, values := range cases {
		var h PagedHistogram
		want := NewHistogram()
		for _, v := range values {
			h.RecordValue(v)
			if err := want.RecordValue(v); err != nil {
				t.Fatal(err)
			}
		}
		samePaged(t, name, &h, want)
	}

	var pool pagePool
	h := PagedHistogram{pool: &pool}
	for interval := 0; interval < 6; interval++ {
		want := NewHistogram()
		n := rng.IntN(50_000)
		for i := 0; i < n; i++ {
			v := Clamp(int64(rng.ExpFloat64() * float64(int64(1)<<rng.IntN(36))))
			if interval%2 == 1 {
				v = Clamp(logUniform())
			}
			h.record(v)
			_ = want.RecordValue(v)
		}
		samePaged(t, "interval", &h, want)
		h.reset()
		if len(h.used) != 0 || h.TotalCount() != 0 || slices.ContainsFunc(h.pages, func(p *page) bool { return p != nil }) {
			t.Fatalf("interval %d: not cleared: %d pages", interval, len(h.used))
		}
		for _, p := range pool.free {
			if *p != (page{}) {
				t.Fatalf("interval %d: a page went back to the pool with counts", interval)
			}
		}
	}
	if len(pool.free) == 0 {
		t.Fatal("no page came back to the pool")
	}
}

// Adding a histogram page-wise gives the histogram of recording both sets of values, where
// the pages overlap and where they do not, and leaves the added histogram as it was.
func TestPagedAddEqualsRecordingBoth(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var pool pagePool
	a, b := PagedHistogram{pool: &pool}, PagedHistogram{pool: &pool}
	both, bOnly := NewHistogram(), NewHistogram()
	for i := 0; i < 30_000; i++ {
		v := Clamp(int64(rng.ExpFloat64() * 1e6)) // mostly below 5 ms
		a.record(v)
		_ = both.RecordValue(v)
		w := Clamp(int64(rng.ExpFloat64() * 1e6 * float64(int64(1)<<rng.IntN(12)))) // up to seconds
		b.record(w)
		_ = both.RecordValue(w)
		_ = bOnly.RecordValue(w)
	}
	if !slices.ContainsFunc(b.used, func(n int32) bool { return !slices.Contains(a.used, n) }) {
		t.Fatal("the test needs pages only the added histogram uses")
	}
	a.add(&b)
	samePaged(t, "a+b", &a, both)
	samePaged(t, "b after the add", &b, bOnly)
	var empty PagedHistogram
	a.add(&empty)
	samePaged(t, "a+b+empty", &a, both)
}

func buckets(h *hdr.PackedHistogram) [][2]int64 {
	var out [][2]int64
	h.ForEachBucket(func(v, c int64) bool { out = append(out, [2]int64{v, c}); return true })
	return out
}

func pagedBuckets(h *PagedHistogram) [][2]int64 {
	var out [][2]int64
	for idx, c := range h.Buckets() {
		out = append(out, [2]int64{harness.ValueFromIndex(idx), c})
	}
	return out
}

// The collector's interval histograms are exactly those of recording every sample's
// response, service and lag times directly, whether the samples started on time (counted
// once, for both response and service) or late, or a mix; OnTime says which intervals had
// no late start, and only those. The interval's All set holds both operation types'
// values, the cumulative histograms every interval's, and every page goes back to the
// pool when the interval closes.
func TestCollectorOnTimeShortcutEqualsDirectRecording(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	type direct struct{ response, service, lag *hdr.PackedHistogram }
	newDirect := func() direct {
		return direct{hdr.NewPacked(Lowest, Highest, SigFigs), hdr.NewPacked(Lowest, Highest, SigFigs), hdr.NewPacked(Lowest, Highest, SigFigs)}
	}
	// What the sink saw of each histogram: its buckets, then its min, max and total.
	type seenSet [3][][2]int64
	var got, gotAll []seenSet
	var onTime []bool
	seen := func(h *PagedHistogram) [][2]int64 {
		return append(pagedBuckets(h), [2]int64{h.Min(), h.Max()}, [2]int64{h.TotalCount()})
	}
	seenDirect := func(h *hdr.PackedHistogram) [][2]int64 {
		return append(buckets(h), [2]int64{h.Min(), h.Max()}, [2]int64{h.TotalCount()})
	}
	var c *Collector
	c = NewCollector(3, time.Millisecond, time.Second, func(iv *Interval) error {
		set, all := iv.Ops[1], iv.All
		got = append(got, seenSet{seen(&set.Response), seen(&set.Service), seen(&set.Lag)})
		gotAll = append(gotAll, seenSet{seen(&all.Response), seen(&all.Service), seen(&all.Lag)})
		onTime = append(onTime, set.OnTime)
		return nil
	})
	cum := newDirect()
	share := []float64{1, 0, 0.5, 0.99, 1} // share of op 1's samples started on time, by interval
	for iv, p := range share {
		want, wantAll := newDirect(), newDirect()
		for i := 0; i < 20_000; i++ {
			at := int64(iv)*int64(time.Second) + int64(i)*40_000
			s := Sample{Intended: at, Start: at, Op: 1}
			if i%4 == 0 {
				s.Op = 2 // on time, but for a late start in one interval in five
				if iv == 2 && i%8 == 0 {
					s.Start += int64(rng.ExpFloat64() * 5e6)
				}
			} else if rng.Float64() >= p {
				s.Start += int64(rng.ExpFloat64() * 2e6)
			}
			s.End = s.Start + int64(rng.ExpFloat64()*float64(int64(1)<<rng.IntN(30)))
			c.Add([]Sample{s})
			for _, d := range []direct{want, wantAll, cum} {
				if d == want && s.Op != 1 {
					continue
				}
				_ = d.response.RecordValue(Clamp(s.Response()))
				_ = d.service.RecordValue(Clamp(s.Service()))
				_ = d.lag.RecordValue(Clamp(s.Lag()))
			}
		}
		c.Flush(time.Duration(iv+1)*time.Second, 0)
		for k, h := range []*hdr.PackedHistogram{want.response, want.service, want.lag} {
			if a, b := got[iv][k], seenDirect(h); !slices.Equal(a, b) {
				t.Fatalf("interval %d (on-time share %v), histogram %d: collector %d buckets, direct %d", iv, p, k, len(a), len(b))
			}
		}
		for k, h := range []*hdr.PackedHistogram{wantAll.response, wantAll.service, wantAll.lag} {
			if a, b := gotAll[iv][k], seenDirect(h); !slices.Equal(a, b) {
				t.Fatalf("interval %d, All's histogram %d: collector %d buckets, direct %d", iv, k, len(a), len(b))
			}
		}
		if wantOnTime := p == 1; onTime[iv] != wantOnTime {
			t.Errorf("interval %d (on-time share %v): OnTime = %v", iv, p, onTime[iv])
		}
		for _, s := range append(slices.Clone(c.cur), c.all) {
			if s == nil {
				continue
			}
			for _, h := range []*PagedHistogram{&s.Response, &s.Service, &s.Lag, &s.onTime} {
				if len(h.used) != 0 || h.TotalCount() != 0 {
					t.Fatalf("interval %d: a histogram keeps %d pages after the interval closed", iv, len(h.used))
				}
			}
		}
	}
	tot := Set{Response: NewHistogram(), Service: NewHistogram(), Lag: NewHistogram()}
	for _, s := range c.Totals() {
		if s != nil {
			tot.Merge(s)
		}
	}
	for k, h := range []struct {
		got  *hdr.Histogram
		want *hdr.PackedHistogram
	}{{tot.Response, cum.response}, {tot.Service, cum.service}, {tot.Lag, cum.lag}} {
		want := NewHistogram()
		h.want.MergeInto(want)
		if !h.got.Equals(want) {
			t.Errorf("cumulative histogram %d differs from recording every sample", k)
		}
	}
}
