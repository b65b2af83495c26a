package workloads

import (
	"context"
	"sync"
	"sync/atomic"
)

// Source is anything that yields operations in stream order.
type Source interface {
	Next(op *Op) bool
}

// Pull reads src one operation at a time through a pointer valid until the next call (nil
// at the end of the stream), the form a simulator consumes: a SharedReader's operations
// in place (Peek), any other source's copied into one buffer. A shared stream's readers
// would otherwise each copy every operation out of the block they share, so the caller
// must not modify the operation.
func Pull(src Source) func() *Op {
	if r, ok := src.(interface{ Peek() *Op }); ok {
		return r.Peek
	}
	var op Op
	return func() *Op {
		if src.Next(&op) {
			return &op
		}
		return nil
	}
}

// Share generates a stream once for n readers that each see every operation, in order,
// as a stream of their own would give them. Every design variant of a scenario runs the
// same stream, and generating it costs about as much as placing its keys, so the
// simulator reads one shared stream instead of one per variant (plan and analyze, whose
// consumers need not pull, schedule blocks as tasks instead: plan.EachShared).
//
// Operations travel in blocks of shareBlock, shared read-only by the readers; a reader
// may fall shareLead blocks behind the generator before the generator waits for it, so
// readers of different speeds (a broadcast-heavy design costs more per operation) run
// concurrently instead of in lockstep. A reader that stops early must Close, so the
// generator stops waiting for it; the generator stops when every reader has closed, when
// src ends, or when ctx is done (readers then see the stream end: check ctx).
//
// each, when not nil, is called once on every block, in stream order, before any reader
// reads an operation of it: work the readers would otherwise each do on the same
// operations is done once (the simulator's shared tables). The first reader to reach a
// block calls it, the others wait for it: the work falls on whichever reader is ahead,
// not on the generator, which readers that all wait for it would leave alone on one core.
// Calls come in stream order because each reader reaches the blocks in order, and the
// first to reach one has seen the call on the block before it end. It must not modify
// the block.
func Share(ctx context.Context, src Source, n int, each func(block []Op)) []*SharedReader {
	sh := &sharing{free: make(chan []Op, shareLead+n+1)}
	outs := make([]chan block, n)
	readers := make([]*SharedReader, n)
	for i := range readers {
		outs[i] = make(chan block, shareLead)
		readers[i] = &SharedReader{in: outs[i], done: make(chan struct{}), each: each, sh: sh}
	}
	go func() {
		defer func() {
			for _, c := range outs {
				close(c)
			}
		}()
		open := n
		closed := make([]bool, n)
		for open > 0 && ctx.Err() == nil {
			blk := sh.block()
			k := 0
			for k < len(blk) && src.Next(&blk[k]) {
				k++
			}
			if k == 0 {
				return
			}
			b := block{ops: blk[:k], st: &blockState{}}
			// Every reader's share; one not sent the block gives its share back at once.
			b.st.refs.Store(int32(n))
			for i, c := range outs {
				if closed[i] {
					sh.release(b)
					continue
				}
				select {
				case c <- b:
				case <-readers[i].done:
					closed[i] = true
					open--
					sh.release(b)
				case <-ctx.Done():
					return
				}
			}
			if k < len(blk) {
				return
			}
		}
	}()
	return readers
}

const (
	// shareBlock operations make one block: channel hand-offs are rare per operation and a
	// block (about 0.5 MB) stays in cache while the readers that keep up read it.
	shareBlock = 4096
	// shareLead is how many blocks a reader may lag: about 30 MB of operations, shared by
	// every reader.
	shareLead = 64
)

// block is a block of a shared stream and its state.
type block struct {
	ops []Op
	st  *blockState
}

// blockState is the once a block's readers call each under, and how many readers have
// yet to finish with it.
type blockState struct {
	once sync.Once
	refs atomic.Int32
}

// sharing recycles a stream's blocks: the last reader to finish with a block hands it
// back for the generator to fill again, so that the stream's memory is the few dozen
// blocks in flight, not a fresh half megabyte for every block (allocated, cleared and
// faulted in: 3 GB over Black Friday's stream). A block a reader never finishes (it
// closed early) is left to the garbage collector.
type sharing struct {
	free chan []Op
	made atomic.Int64 // blocks allocated (tests)
}

// block is an emptied block to fill, or a new one.
func (sh *sharing) block() []Op {
	select {
	case blk := <-sh.free:
		return blk
	default:
		sh.made.Add(1)
		return make([]Op, shareBlock)
	}
}

// release gives back one reader's share of b; the last one hands b back.
func (sh *sharing) release(b block) {
	if b.st.refs.Add(-1) == 0 {
		select {
		case sh.free <- b.ops[:cap(b.ops)]:
		default:
		}
	}
}

// SharedReader is one reader of a shared stream.
type SharedReader struct {
	in     <-chan block
	done   chan struct{}
	each   func([]Op)
	sh     *sharing
	cur    block // the block being read (blk is its operations)
	blk    []Op
	pos    int
	closed bool
}

// Next copies the next operation into op; false at the end of the stream.
func (r *SharedReader) Next(op *Op) bool {
	p := r.Peek()
	if p == nil {
		return false
	}
	*op = *p
	return true
}

// Peek returns the next operation in place, in the block every reader shares (nil at
// the end of the stream), sparing Next's copy. The operation must not be modified, and
// is valid until the next call.
func (r *SharedReader) Peek() *Op {
	if r.pos == len(r.blk) {
		return r.nextBlock() // apart, so that the rest inlines into a simulator's loop
	}
	r.pos++
	return &r.blk[r.pos-1]
}

// nextBlock receives the next block and returns its first operation (nil at the end of
// the stream).
func (r *SharedReader) nextBlock() *Op {
	if r.cur.st != nil {
		// Its last operation was valid until this call.
		r.sh.release(r.cur)
		r.cur, r.blk = block{}, nil
	}
	b, ok := <-r.in
	if !ok {
		return nil
	}
	if r.each != nil {
		b.st.once.Do(func() { r.each(b.ops) })
	}
	r.cur, r.blk, r.pos = b, b.ops, 1
	return &r.blk[0]
}

// Close says the reader reads no more. It may be called more than once.
func (r *SharedReader) Close() {
	if !r.closed {
		r.closed = true
		close(r.done)
	}
}
