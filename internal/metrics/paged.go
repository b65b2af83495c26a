package metrics

import (
	"cmp"
	"iter"
	"math"
	"math/bits"
	"slices"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Geometry is HdrHistogram's bucket layout for a lowest discernible value and a number of
// significant digits: what maps a value to its flat counts index and back. It is the
// library's arithmetic, which the library does not export.
type Geometry struct {
	unitMagnitude               int32
	subBucketHalfCountMagnitude int32
	subBucketHalfCount          int32
	subBucketMask               int64
}

// NewGeometry is the layout of hdr.New(lowest, _, sigFigs).
func NewGeometry(lowest int64, sigFigs int) Geometry {
	largestSingleUnit := 2 * math.Pow10(sigFigs)
	half := int32(math.Ceil(math.Log2(largestSingleUnit)))
	if half < 1 {
		half = 1
	}
	half--
	unit := int32(math.Floor(math.Log2(float64(lowest))))
	subBucketCount := int64(1) << (half + 1)
	return Geometry{unitMagnitude: unit, subBucketHalfCountMagnitude: half, subBucketHalfCount: int32(subBucketCount / 2),
		subBucketMask: (subBucketCount - 1) << unit}
}

// CountsIndex is the flat counts index of v's bucket (v >= 0).
func (g Geometry) CountsIndex(v int64) int32 {
	bucket := int32(64-bits.LeadingZeros64(uint64(v|g.subBucketMask))) - g.unitMagnitude - (g.subBucketHalfCountMagnitude + 1)
	sub := int32(v >> uint(bucket+g.unitMagnitude))
	return (bucket+1)<<uint(g.subBucketHalfCountMagnitude) + sub - g.subBucketHalfCount
}

// ValueFromIndex is the lowest value of the bucket at a flat counts index.
func (g Geometry) ValueFromIndex(idx int32) int64 {
	bucket := (idx >> uint(g.subBucketHalfCountMagnitude)) - 1
	sub := (idx & (g.subBucketHalfCount - 1)) + g.subBucketHalfCount
	if bucket < 0 {
		sub -= g.subBucketHalfCount
		bucket = 0
	}
	return int64(sub) << uint(bucket+g.unitMagnitude)
}

// HighestEquivalentValue is the highest value of the bucket at a flat counts index: what
// the library reports for a bucket as a histogram's Max or as a percentile above 0.
func (g Geometry) HighestEquivalentValue(idx int32) int64 {
	bucket := max(idx>>uint(g.subBucketHalfCountMagnitude)-1, 0)
	return g.ValueFromIndex(idx) + 1<<uint(bucket+g.unitMagnitude) - 1
}

// harness is the geometry of every histogram the harness records (Lowest, SigFigs).
var harness = NewGeometry(Lowest, SigFigs)

// numPages is how many pages cover every index a clamped value can have.
var numPages = int(harness.CountsIndex(Highest))>>pageShift + 1

const (
	pageShift = 8
	pageMask  = 1<<pageShift - 1
)

type page [1 << pageShift]int64

// PagedHistogram is an interval's histogram: counts by HdrHistogram bucket index (the
// library's buckets for the harness's range and precision, Geometry), in pages of 256
// buckets taken on first use. An interval populates a few hundred of a dense histogram's
// 24,576 buckets, within a few pages: recording is an index computation and an increment
// (HdrHistogram's sparse PackedHistogram costs a binary search and often an insertion per
// value), adding one interval histogram to another is an addition of whole pages, and
// clearing one returns its pages. Its queries give exactly what hdrhistogram-go gives for
// the same counts.
//
// The zero value is an empty histogram, which allocates its pages. The histograms of a
// Collector take theirs from the collector's pool and are only valid during the Sink call.
type PagedHistogram struct {
	pages []*page   // by index >> pageShift; nil while unused
	used  []int32   // the pages in use, ascending
	total int64     // values recorded
	pool  *pagePool // where pages come from and go back to (nil: allocated, left to the GC)
}

// RecordValue records one value, clamped into the harness's range (Clamp) as the collector
// records samples.
func (h *PagedHistogram) RecordValue(v int64) { h.record(Clamp(v)) }

// record counts v, which must be clamped (Clamp).
func (h *PagedHistogram) record(v int64) {
	idx := harness.CountsIndex(v)
	h.pageFor(idx >> pageShift)[idx&pageMask]++
	h.total++
}

// recordIndex counts a value of bucket idx (Geometry.CountsIndex of a clamped value).
func (h *PagedHistogram) recordIndex(idx int32) {
	h.pageFor(idx >> pageShift)[idx&pageMask]++
	h.total++
}

// recordN counts v (clamped) n times.
func (h *PagedHistogram) recordN(v, n int64) {
	if n <= 0 {
		return
	}
	idx := harness.CountsIndex(v)
	h.pageFor(idx >> pageShift)[idx&pageMask] += n
	h.total += n
}

// pageFor is page n, taken if unused.
func (h *PagedHistogram) pageFor(n int32) *page {
	if int(n) < len(h.pages) && h.pages[n] != nil {
		return h.pages[n]
	}
	return h.take(n)
}

// take puts a cleared page at n, which must be unused, and returns it.
func (h *PagedHistogram) take(n int32) *page {
	if h.pages == nil {
		h.pages = make([]*page, numPages)
	}
	p := h.pool.get()
	h.pages[n] = p
	i, _ := slices.BinarySearch(h.used, n)
	h.used = slices.Insert(h.used, i, n)
	return p
}

// add adds o's counts, a page at a time.
func (h *PagedHistogram) add(o *PagedHistogram) {
	for _, n := range o.used {
		src := o.pages[n]
		if int(n) < len(h.pages) && h.pages[n] != nil {
			h.pages[n].add(src)
		} else {
			*h.take(n) = *src // a copy, not a share: o is reset on its own
		}
	}
	h.total += o.total
}

// addTo adds the counts to a dense histogram, a RecordValues per bucket with a count (the
// library does not export a dense histogram's counts).
func (h *PagedHistogram) addTo(d *hdr.Histogram) {
	for idx, c := range h.Buckets() {
		_ = d.RecordValues(harness.ValueFromIndex(idx), c) // in range: values were clamped
	}
}

// reset empties the histogram and returns its pages, cleared, to the pool.
func (h *PagedHistogram) reset() {
	for _, n := range h.used {
		p := h.pages[n]
		clear(p[:])
		h.pages[n] = nil
		h.pool.put(p)
	}
	h.used = h.used[:0]
	h.total = 0
}

// TotalCount is the number of values recorded.
func (h *PagedHistogram) TotalCount() int64 { return h.total }

// Buckets yields the flat counts index (Geometry) and count of every bucket with a count,
// in index order: the order of HdrHistogram's encoding.
func (h *PagedHistogram) Buckets() iter.Seq2[int32, int64] {
	return func(yield func(int32, int64) bool) {
		for _, n := range h.used {
			base := n << pageShift
			p := h.pages[n]
			// Most of a page is zeros: skip them four at a time.
			for i := 0; i < len(p); i += 4 {
				if p[i]|p[i+1]|p[i+2]|p[i+3] == 0 {
					continue
				}
				for j := i; j < i+4; j++ {
					if c := p[j]; c != 0 && !yield(base+int32(j), c) {
						return
					}
				}
			}
		}
	}
}

// Max is the highest value equivalent to the largest recorded value, as the library's Max
// (for an empty histogram, the highest value of the first bucket).
func (h *PagedHistogram) Max() int64 {
	if h.total == 0 {
		return harness.HighestEquivalentValue(0)
	}
	n := h.used[len(h.used)-1]
	p := h.pages[n]
	i := len(p) - 1
	for p[i] == 0 { // a page in use holds a count
		i--
	}
	return harness.HighestEquivalentValue(n<<pageShift + int32(i))
}

// Min is the lowest value equivalent to the smallest recorded value, as the library's Min
// (0 for an empty histogram).
func (h *PagedHistogram) Min() int64 {
	if h.total == 0 {
		return 0
	}
	n := h.used[0]
	p := h.pages[n]
	i := 0
	for p[i] == 0 {
		i++
	}
	return harness.ValueFromIndex(n<<pageShift + int32(i))
}

// ValueAtPercentile is the library's ValueAtPercentile for the same counts: the highest
// value equivalent to the value at the percentile's rank (the lowest for percentile 0), 0
// for an empty histogram.
func (h *PagedHistogram) ValueAtPercentile(percentile float64) int64 {
	if h.total == 0 {
		return 0
	}
	targets := [1]int64{percentileRank(percentile, h.total)}
	var idx [1]int32
	h.indexesAt(targets[:], idx[:])
	return valueAt(percentile, idx[0])
}

// ValueAtPercentilesSlice is ValueAtPercentile for each percentile, in one pass.
func (h *PagedHistogram) ValueAtPercentilesSlice(percentiles []float64) []int64 {
	out := make([]int64, len(percentiles))
	if h.total == 0 || len(percentiles) == 0 {
		return out
	}
	order := make([]int, len(percentiles)) // percentiles by ascending rank
	targets := make([]int64, len(percentiles))
	for i, p := range percentiles {
		order[i], targets[i] = i, percentileRank(p, h.total)
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(targets[a], targets[b]) })
	slices.Sort(targets)
	idx := make([]int32, len(percentiles))
	h.indexesAt(targets, idx)
	for k, i := range order {
		out[i] = valueAt(percentiles[i], idx[k])
	}
	return out
}

// indexesAt sets idx[k] to the index of the bucket where the running count first reaches
// targets[k]. Targets are ascending, in [1, TotalCount()]. A page whose counts do not
// reach the next target is skipped with one comparison.
func (h *PagedHistogram) indexesAt(targets []int64, idx []int32) {
	var running int64
	k := 0
	for _, n := range h.used {
		p := h.pages[n]
		if sum := p.sum(); running+sum < targets[k] {
			running += sum
			continue
		}
		for i, c := range p {
			running += c
			for running >= targets[k] {
				idx[k] = n<<pageShift + int32(i)
				if k++; k == len(targets) {
					return
				}
			}
		}
	}
}

// add adds src's counts, a cache line (8 buckets) at a time: an interval's page holds
// counts in about half its lines, and a line of zeros leaves the destination's line
// unread, which for the cumulative histograms (megabytes per variant, out of cache) was
// most of an interval's fold.
func (p *page) add(src *page) {
	for i := 0; i < len(p); i += 8 {
		s := src[i : i+8 : i+8]
		if s[0]|s[1]|s[2]|s[3]|s[4]|s[5]|s[6]|s[7] == 0 {
			continue
		}
		d := p[i : i+8 : i+8]
		for j := range d {
			d[j] += s[j]
		}
	}
}

func (p *page) sum() int64 {
	var a, b, c, d int64
	for i := 0; i < len(p); i += 4 {
		a += p[i]
		b += p[i+1]
		c += p[i+2]
		d += p[i+3]
	}
	return a + b + c + d
}

// percentileRank is the library's rank of a percentile among total values: the count the
// running count must reach, in [1, total].
func percentileRank(percentile float64, total int64) int64 {
	if percentile > 100 {
		percentile = 100
	}
	rank := (percentile/100)*float64(total) + 0.5
	if !(rank >= 1) { // NaN, negative percentiles and ranks below the first value
		return 1
	}
	if rank >= float64(total) {
		return total
	}
	return int64(rank)
}

// valueAt is the value the library reports for a percentile found in bucket idx: the
// bucket's lowest value for the 0th percentile (or below), else its highest.
func valueAt(percentile float64, idx int32) int64 {
	if percentile <= 0 {
		return harness.ValueFromIndex(idx)
	}
	return harness.HighestEquivalentValue(idx)
}

// pagePool keeps cleared pages for reuse: a collector needs only as many as one interval
// populates. A nil pool allocates pages and drops them.
type pagePool struct{ free []*page }

func (p *pagePool) get() *page {
	if p != nil {
		if n := len(p.free); n > 0 {
			pg := p.free[n-1]
			p.free = p.free[:n-1]
			return pg
		}
	}
	return new(page)
}

func (p *pagePool) put(pg *page) {
	if p != nil {
		p.free = append(p.free, pg)
	}
}
