package metrics

import (
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

// harness is the geometry of every histogram the harness records (Lowest, SigFigs).
var harness = NewGeometry(Lowest, SigFigs)

// stagePages is how many pages cover every index a clamped value can have.
var stagePages = int(harness.CountsIndex(Highest))>>stagePageShift + 1

const (
	stagePageShift = 8
	stagePageMask  = 1<<stagePageShift - 1
)

type stagePage [1 << stagePageShift]int64

// stage counts an interval's values by bucket index in pages taken on first use, then
// moves them into the interval's PackedHistogram at the interval's end. Recording into a
// PackedHistogram directly costs a binary search and often an insertion per value (about
// 80 ns, three values per operation); a page counter costs an index computation and an
// increment, and the histogram then receives one RecordValues per populated bucket (a few
// hundred per interval) instead of one per value. The result is the same histogram: a
// bucket is all the histogram keeps of a value.
type stage struct {
	pages []*stagePage // by index >> stagePageShift; nil while unused
	used  []int32      // the pages in use
}

// record counts v, which must be clamped (Clamp).
func (s *stage) record(v int64, pool *pagePool) {
	idx := harness.CountsIndex(v)
	p := s.pages[idx>>stagePageShift]
	if p == nil {
		p = s.take(idx>>stagePageShift, pool)
	}
	p[idx&stagePageMask]++
}

func newStage() stage { return stage{pages: make([]*stagePage, stagePages)} }

func (s *stage) take(page int32, pool *pagePool) *stagePage {
	p := pool.get()
	s.pages[page] = p
	s.used = append(s.used, page)
	return p
}

// moveInto adds the staged counts to h, and to also when it is not nil, in bucket order,
// clears the stage and returns its pages to the pool.
func (s *stage) moveInto(h, also *hdr.PackedHistogram, pool *pagePool) {
	slices.Sort(s.used)
	for _, page := range s.used {
		p := s.pages[page]
		base := page << stagePageShift
		for i, c := range p {
			if c != 0 {
				v := harness.ValueFromIndex(base + int32(i))
				_ = h.RecordValues(v, c) // in range: values were clamped
				if also != nil {
					_ = also.RecordValues(v, c)
				}
				p[i] = 0
			}
		}
		s.pages[page] = nil
		pool.put(p)
	}
	s.used = s.used[:0]
}

// pagePool keeps cleared pages for reuse: a collector needs only as many as one interval
// populates.
type pagePool struct{ free []*stagePage }

func (p *pagePool) get() *stagePage {
	if n := len(p.free); n > 0 {
		pg := p.free[n-1]
		p.free = p.free[:n-1]
		return pg
	}
	return new(stagePage)
}

func (p *pagePool) put(pg *stagePage) { p.free = append(p.free, pg) }
