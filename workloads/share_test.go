package workloads

import (
	"context"
	"runtime"
	"sync"
	"testing"
)

type countSource struct{ n, end uint64 }

func (s *countSource) Next(op *Op) bool {
	if s.n == s.end {
		return false
	}
	*op = Op{Seq: s.n}
	s.n++
	return true
}

// Every reader of a shared stream gets every operation once, in order, whatever the
// stream's length against the block size; a reader that closes early does not hold the
// others back, even past the lead the generator allows; a cancelled context ends it.
func TestShareEveryReaderEveryOperation(t *testing.T) {
	for _, end := range []uint64{0, 10, 3 * shareBlock, 3*shareBlock + 7, (shareLead + 5) * shareBlock} {
		readers := Share(context.Background(), &countSource{end: end}, 5, nil)
		got := make([]uint64, len(readers))
		var wg sync.WaitGroup
		for i, r := range readers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer r.Close()
				// Odd readers read in place (Peek), even ones copy (Next).
				next := func() (Op, bool) {
					if i%2 == 1 {
						if p := r.Peek(); p != nil {
							return *p, true
						}
						return Op{}, false
					}
					var op Op
					ok := r.Next(&op)
					return op, ok
				}
				for op, ok := next(); ok; op, ok = next() {
					if op.Seq != got[i] {
						t.Errorf("end %d, reader %d: got operation %d, want %d", end, i, op.Seq, got[i])
						return
					}
					got[i]++
					if i == 2 && got[i] == 100 {
						return // stops reading early; its Close releases the generator
					}
				}
			}()
		}
		wg.Wait()
		for i, n := range got {
			want := end
			if i == 2 {
				want = min(end, 100)
			}
			if n != want {
				t.Errorf("end %d: reader %d got %d operations, want %d", end, i, n, want)
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := Share(ctx, &countSource{end: 1 << 40}, 1, nil)[0]
	var op Op
	for i := 0; i < 10*shareBlock && r.Next(&op); i++ {
	}
	cancel()
	n := 0
	for r.Next(&op) {
		n++
	}
	if n > (shareLead+1)*shareBlock {
		t.Errorf("%d operations after cancelling: the generator did not stop", n)
	}
}

// The per-block function sees every block once, in stream order, before any reader reads
// an operation of it: a reader that reaches operation k finds its block already handled.
func TestShareEachBlockBeforeReaders(t *testing.T) {
	const end = 5*shareBlock + 123
	var mu sync.Mutex
	var handled uint64 // operations handled by each so far
	each := func(blk []Op) {
		mu.Lock()
		defer mu.Unlock()
		if blk[0].Seq != handled {
			t.Errorf("block starting at %d handled after %d operations", blk[0].Seq, handled)
		}
		handled += uint64(len(blk))
	}
	readers := Share(context.Background(), &countSource{end: end}, 3, each)
	var wg sync.WaitGroup
	for _, r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer r.Close()
			var op Op
			for r.Next(&op) {
				mu.Lock()
				h := handled
				mu.Unlock()
				if op.Seq >= h {
					t.Errorf("operation %d read before its block was handled (%d handled)", op.Seq, h)
					return
				}
			}
		}()
	}
	wg.Wait()
	if handled != end {
		t.Errorf("each handled %d operations, want %d", handled, end)
	}
}

// BenchmarkShare reads one stream with 14 readers (black-friday.yaml's variants), each
// through Pull (in place) or Next (a copy of every operation): nanoseconds per operation
// and reader.
func BenchmarkShare(b *testing.B) {
	const readers = 14
	for _, mode := range []string{"pull", "next"} {
		b.Run(mode, func(b *testing.B) {
			rs := Share(context.Background(), &countSource{end: uint64(b.N)}, readers, nil)
			var wg sync.WaitGroup
			sums := make([]uint64, readers)
			b.ResetTimer()
			for i, r := range rs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer r.Close()
					var sum uint64
					if mode == "pull" {
						next := Pull(r)
						for op := next(); op != nil; op = next() {
							sum += op.Seq
						}
					} else {
						var op Op
						for r.Next(&op) {
							sum += op.Seq
						}
					}
					sums[i] = sum
				}()
			}
			wg.Wait()
			b.StopTimer()
			if want := uint64(b.N) * uint64(b.N-1) / 2; sums[0] != want {
				b.Fatalf("sum %d, want %d", sums[0], want)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/readers, "ns/op/reader")
		})
	}
}

// Pull gives every operation of a source in order; a shared stream's readers get the
// very same operation (in place in the block they share), not copies of their own.
func TestPullReadsSharedOperationsInPlace(t *testing.T) {
	next := Pull(&countSource{end: 3*shareBlock + 5})
	n := uint64(0)
	for op := next(); op != nil; op = next() {
		if op.Seq != n {
			t.Fatalf("operation %d, want %d", op.Seq, n)
		}
		n++
	}
	if n != 3*shareBlock+5 {
		t.Fatalf("%d operations, want %d", n, 3*shareBlock+5)
	}

	rs := Share(context.Background(), &countSource{end: 2*shareBlock + 5}, 2, nil)
	defer rs[0].Close()
	defer rs[1].Close()
	a, b := Pull(rs[0]), Pull(rs[1])
	for i := 0; ; i++ {
		pa, pb := a(), b()
		if pa == nil || pb == nil {
			if pa != pb || i != 2*shareBlock+5 {
				t.Fatalf("the readers ended apart or early, at operation %d", i)
			}
			break
		}
		if pa != pb || pa.Seq != uint64(i) {
			t.Fatalf("operation %d: the readers got %p (%d) and %p (%d), want one shared operation", i, pa, pa.Seq, pb, pb.Seq)
		}
	}
}

// A shared stream's blocks are recycled once every reader is done with them, and never
// sooner: readers of different speeds (one yielding often, one closing early) each see
// every operation intact, and a stream of hundreds of blocks is made of a few dozen.
func TestShareRecyclesBlocksOnlyWhenRead(t *testing.T) {
	const blocks = 6 * shareLead
	src := &payloadSource{end: blocks * shareBlock}
	readers := Share(context.Background(), src, 4, nil)
	var wg sync.WaitGroup
	for i, r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer r.Close()
			var n uint64
			for op := r.Peek(); op != nil; op = r.Peek() {
				if op.Seq != n || op.Aux != payload(n) || op.User != int64(n) {
					t.Errorf("reader %d, operation %d: seq %d aux %d user %d: overwritten", i, n, op.Seq, op.Aux, op.User)
					return
				}
				n++
				if i == 1 && n%97 == 0 {
					runtime.Gosched() // a slow reader: the others run ahead of it
				}
				if i == 3 && n == 10*shareBlock+5 {
					return // closes holding a block it never gives back
				}
			}
			if n != src.end {
				t.Errorf("reader %d: %d operations, want %d", i, n, src.end)
			}
		}()
	}
	wg.Wait()
	if made := readers[0].sh.made.Load(); made > 3*shareLead {
		t.Errorf("%d blocks made for a stream of %d: blocks are not recycled", made, blocks)
	}
}

type payloadSource struct{ n, end uint64 }

func payload(seq uint64) int64 { return int64(seq*2654435761 + 17) }

func (s *payloadSource) Next(op *Op) bool {
	if s.n == s.end {
		return false
	}
	*op = Op{Seq: s.n, Aux: payload(s.n), User: int64(s.n)}
	s.n++
	return true
}
