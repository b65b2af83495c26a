package sim

import (
	"math"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/metrics"
)

// grainQueue holds completed samples until their grain of virtual time
// (backend.VirtualGrain) is over, then reports them grain by grain, in push order within a
// grain. A heap ordered by completion time did the same at a logarithmic cost per
// operation in a queue as long as the operations in flight (tens of thousands when a hot
// node makes them wait for their timeout); a grain's bucket costs an append.
//
// A reported grain's buffer goes onto a stack of free ones, and the next grain to start
// takes the buffer freed last: it was just read, so it is still in cache. Reusing each
// ring slot's own buffer instead wrote every sample to memory last touched a ring's turn
// (a second of virtual time) earlier, a cache miss per sample or two.
//
// Only the grains of the current block (blockGrains of them, about a second) and the
// next have buckets. A sample due later goes to its block's compact log (farBlocks), 16
// bytes instead of 32 and no object per grain, and is moved into the buckets, in push
// order, when its block becomes the next. A saturated client, whose operations start
// ever later than intended (load.on_full: queue), completes them minutes or hours of
// virtual time ahead of the stream: Black Friday's saturated variants held 56 M samples
// at the end of the stream, in a million small buffers per variant, which the garbage
// collector scanned again and again once the heap passed the run's memory limit.
type grainQueue struct {
	ring   [][]metrics.Sample // grain g's samples at ring[g&(ringGrains-1)]; nil when empty
	free   [][]metrics.Sample // emptied buffers, the one freed last on top
	first  int64              // the earliest grain not yet reported
	n      int                // samples held, in the ring and far
	latest int64              // the latest report time pushed
	far    farBlocks
}

const (
	grain       = int64(backend.VirtualGrain)
	blockShift  = 10 // a block is 1024 grains
	blockGrains = 1 << blockShift
	ringGrains  = 2 * blockGrains // the current block's grains and the next's
)

// reportAt is when a sample is reported: its completion, or a dropped or unserved
// operation's intended time.
func reportAt(s *metrics.Sample) int64 {
	if s.Flags&(metrics.FlagDropped|metrics.FlagUnserved) != 0 {
		return s.Intended
	}
	return s.End
}

// push holds s; it must not be due before a time already passed to emitBefore.
func (q *grainQueue) push(s metrics.Sample) {
	at := reportAt(&s)
	g := max(at/grain, q.first)
	q.n++
	q.latest = max(q.latest, at)
	if b, next := g>>blockShift, q.first>>blockShift+1; b > next {
		q.far.push(b, next+1, &s)
		return
	}
	if q.ring == nil {
		q.ring = make([][]metrics.Sample, ringGrains)
	}
	q.append(g, s)
}

func (q *grainQueue) append(g int64, s metrics.Sample) {
	b := &q.ring[g&(ringGrains-1)]
	if *b == nil {
		if n := len(q.free); n > 0 {
			*b = q.free[n-1]
			q.free = q.free[:n-1]
		}
	}
	*b = append(*b, s)
}

// emitBefore reports the samples of every grain that ends by t. Samples pushed later are
// due at t or after, in a later grain.
func (q *grainQueue) emitBefore(t int64, record func(*metrics.Sample)) {
	end := t / grain // grains before end are over
	for q.n > 0 && q.first < end {
		q.emitFirst(record)
	}
	// Nothing is held (far blocks included) when first jumps.
	q.first = max(q.first, end)
}

// emitAll reports every sample held.
func (q *grainQueue) emitAll(record func(*metrics.Sample)) {
	for q.n > 0 {
		q.emitFirst(record)
	}
}

func (q *grainQueue) emitFirst(record func(*metrics.Sample)) {
	if q.ring != nil {
		b := &q.ring[q.first&(ringGrains-1)]
		for i := range *b {
			record(&(*b)[i])
		}
		q.n -= len(*b)
		if *b != nil {
			q.free = append(q.free, (*b)[:0])
			*b = nil
		}
	}
	q.first++
	if q.first&(blockGrains-1) == 0 {
		// A new block: the one after it gets its buckets, its far samples in push order
		// before any pushed from now on.
		if q.ring == nil {
			q.ring = make([][]metrics.Sample, ringGrains)
		}
		q.far.take(q.first>>blockShift+1, func(s metrics.Sample) {
			q.append(reportAt(&s)/grain, s)
		})
	}
}

// farBlocks are the samples due in blocks after the next, each block's in push order.
type farBlocks struct {
	base   int64      // the block number of blocks[0]
	blocks []farBlock // by block number from base
	pool   [][]farRec // emptied chunks
}

// farBlock is one block's samples as pushed: chunks of farChunk records, the last one
// filling; start is the intended time of the first, from which each record's is a delta.
type farBlock struct {
	chunks [][]farRec
	start  int64
	prev   int64            // the intended time of the last sample pushed
	esc    []metrics.Sample // samples a record cannot hold, whole
}

// farRec is one sample in 16 bytes: its intended time after the previous sample's, its
// completion after its block's start, its service time, and its operation, class and
// flags. A sample that does not fit (a gap of over 4.3 s between two intended times, a
// service time of over 4.3 s) is kept whole in esc, which the record points at.
type farRec struct {
	dIntended, endOff, service, meta uint32
}

const (
	farChunk = 256            // records per chunk (4 KiB)
	escMark  = math.MaxUint32 // farRec.service of an escaped sample; dIntended is its index
)

// push logs s in block b; blocks before minFar are not far (the current and the next).
func (f *farBlocks) push(b, minFar int64, s *metrics.Sample) {
	if len(f.blocks) == 0 {
		f.base = minFar
	}
	for int64(len(f.blocks)) <= b-f.base {
		f.blocks = append(f.blocks, farBlock{})
	}
	blk := &f.blocks[b-f.base]
	if len(blk.chunks) == 0 {
		blk.start, blk.prev = s.Intended, s.Intended
	}
	var r farRec
	d, end, svc := s.Intended-blk.prev, s.End-b*blockGrains*grain, s.End-s.Start
	if d >= 0 && d <= math.MaxUint32 && end >= 0 && end <= math.MaxUint32 && svc >= 0 && svc < escMark {
		r = farRec{dIntended: uint32(d), endOff: uint32(end), service: uint32(svc),
			meta: uint32(s.Op) | uint32(s.Class)<<16 | uint32(s.Flags)<<24}
	} else {
		r = farRec{dIntended: uint32(len(blk.esc)), service: escMark}
		blk.esc = append(blk.esc, *s)
	}
	blk.prev = s.Intended
	last := len(blk.chunks) - 1
	if last < 0 || len(blk.chunks[last]) == farChunk {
		blk.chunks = append(blk.chunks, f.chunk())
		last++
	}
	blk.chunks[last] = append(blk.chunks[last], r)
}

func (f *farBlocks) chunk() []farRec {
	if n := len(f.pool); n > 0 {
		c := f.pool[n-1]
		f.pool = f.pool[:n-1]
		return c
	}
	return make([]farRec, 0, farChunk)
}

// take hands block b's samples to fn in push order and forgets them.
func (f *farBlocks) take(b int64, fn func(metrics.Sample)) {
	if b < f.base || b >= f.base+int64(len(f.blocks)) {
		return
	}
	blk := &f.blocks[b-f.base]
	blockStart := b * blockGrains * grain
	prev := blk.start
	for _, c := range blk.chunks {
		for _, r := range c {
			var s metrics.Sample
			if r.service == escMark {
				s = blk.esc[r.dIntended]
			} else {
				s.Intended = prev + int64(r.dIntended)
				s.End = blockStart + int64(r.endOff)
				s.Start = s.End - int64(r.service)
				s.Op, s.Class, s.Flags = uint16(r.meta), uint8(r.meta>>16), uint8(r.meta>>24)
			}
			prev = s.Intended
			fn(s)
		}
		f.pool = append(f.pool, c[:0])
	}
	// Blocks are taken in order: b and those before it are done (a later block, empty
	// now, may still receive samples).
	n := b - f.base + 1
	clear(f.blocks[:n])
	f.blocks = f.blocks[n:]
	f.base = b + 1
}
