package plan

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/workloads"
)

// EachShared generates the stream once for n consumers and calls f(i, ops) with every
// block of operations (shared by the consumers: f must not modify them), in stream
// order, up to limit operations (0: the whole stream). Every design variant runs the
// same stream, and generating it costs about as much as placing its keys: plan and
// analyze generate it once for all variants. It returns how many operations the
// consumers got (the most any got, if ctx stopped the run early), and ctx's error if
// it did.
//
// The work runs as tasks on one goroutine per CPU: "generate the next block" and
// "consumer i takes block b", the oldest block first. The consumers of a block then run
// while it is in cache, one after the other on the same core, instead of fourteen
// goroutines each walking the stream from memory at its own pace (every operation
// missed the cache once per variant, a tenth of the time). A consumer's blocks still
// run in order, one at a time, so f needs no locking for consumer i's own state.
func EachShared(ctx context.Context, s Stream, n int, limit int64, f func(i int, ops []workloads.Op)) (int64, error) {
	if n == 0 {
		return 0, ctx.Err()
	}
	sc := &blockScheduler{src: s, limit: limit, next: make([]int, n), busy: make([]bool, n), got: make([]int64, n)}
	sc.cond = sync.NewCond(&sc.mu)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n+1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc.work(ctx, f)
		}()
	}
	wg.Wait()
	return slices.Max(sc.got), ctx.Err()
}

const (
	// shareBlock operations (about 3.9 MB) make one task; the blocks in flight (up to
	// shareLead+1, about 20 MB) stay in the 32 MB L3 cache while every consumer reads
	// them. Block sizes from 1,024 to 131,072 were measured: 32,768 was the fastest.
	shareBlock = 32768
	// shareLead is how many blocks the stream may be generated ahead of its slowest
	// consumer.
	shareLead = 4
)

// blockScheduler hands out EachShared's tasks. Blocks live from their generation until
// their last consumer is done with them, then their storage is reused.
type blockScheduler struct {
	mu         sync.Mutex
	cond       *sync.Cond
	src        Stream
	limit      int64
	made       int64            // operations generated
	blocks     [][]workloads.Op // generated blocks not yet read by every consumer
	left       []int            // per block in blocks: consumers yet to read it
	base       int              // index in the stream of blocks[0]
	generating bool             // a worker is generating the next block
	ended      bool             // the stream (or the limit) ended: no more blocks
	stopped    bool             // ctx is done
	next       []int            // per consumer: index of the next block it reads
	busy       []bool           // per consumer: a worker is running it
	got        []int64          // per consumer: operations it got
	spare      [][]workloads.Op // storage of blocks every consumer has read
}

// work runs tasks until none are left: it generates the next block when the stream is
// less than shareLead blocks ahead of its slowest consumer, else it gives the oldest
// block that waits for a consumer to that consumer.
func (sc *blockScheduler) work(ctx context.Context, f func(i int, ops []workloads.Op)) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for {
		if !sc.stopped && ctx.Err() != nil {
			sc.stopped = true
			sc.cond.Broadcast()
		}
		if sc.stopped || (sc.ended && len(sc.blocks) == 0) {
			return
		}
		if !sc.generating && !sc.ended && sc.base+len(sc.blocks) < slices.Min(sc.next)+shareLead {
			sc.generate()
			continue
		}
		if i := sc.oldest(); i >= 0 {
			blk := sc.blocks[sc.next[i]-sc.base]
			sc.busy[i] = true
			sc.mu.Unlock()
			f(i, blk)
			sc.mu.Lock()
			sc.busy[i] = false
			sc.got[i] += int64(len(blk))
			sc.next[i]++
			sc.release(sc.next[i] - 1)
			continue
		}
		sc.cond.Wait()
	}
}

// generate reads the next block from the stream, without the lock (the generating flag
// keeps other workers off the stream).
func (sc *blockScheduler) generate() {
	sc.generating = true
	var blk []workloads.Op
	if k := len(sc.spare); k > 0 {
		blk, sc.spare = sc.spare[k-1], sc.spare[:k-1]
	} else {
		blk = make([]workloads.Op, shareBlock)
	}
	want := len(blk)
	if sc.limit > 0 {
		want = int(min(int64(want), sc.limit-sc.made))
	}
	sc.mu.Unlock()
	k := 0
	for k < want && sc.src.Next(&blk[k]) {
		k++
	}
	sc.mu.Lock()
	sc.generating = false
	sc.made += int64(k)
	if k < len(blk) {
		sc.ended = true
	}
	if k > 0 {
		sc.blocks = append(sc.blocks, blk[:k])
		sc.left = append(sc.left, len(sc.next))
	} else {
		sc.spare = append(sc.spare, blk)
	}
	sc.cond.Broadcast()
}

// oldest is the idle consumer whose next block is generated and earliest in the stream
// (-1: none). Serving the slowest consumers first keeps the blocks in flight few.
func (sc *blockScheduler) oldest() int {
	best := -1
	for i, b := range sc.next {
		if !sc.busy[i] && b < sc.base+len(sc.blocks) && (best < 0 || b < sc.next[best]) {
			best = i
		}
	}
	return best
}

// release notes that a consumer has read block b, and frees the blocks every consumer
// has read.
func (sc *blockScheduler) release(b int) {
	sc.left[b-sc.base]--
	for len(sc.blocks) > 0 && sc.left[0] == 0 {
		sc.spare = append(sc.spare, sc.blocks[0][:cap(sc.blocks[0])])
		sc.blocks, sc.left = sc.blocks[1:], sc.left[1:]
		sc.base++
	}
	sc.cond.Broadcast()
}

// Variants is [Variant] for every variant of a scenario (names and plans in the same
// order), with the stream generated once for all of them ([EachShared]). The results
// are the ones Variant gives for each; a variant whose placer cannot be built is left
// empty and its error joined to the one returned.
func Variants(ctx context.Context, names []string, plans []*design.Compiled, c *Cluster, newStream func() Stream, limit int64) ([]results.HotspotsVariant, int64, error) {
	obs := make([]*Observer, len(plans))
	var errs []error
	if len(plans) > 0 {
		// The tables' loaded data, computed at once for every variant (each placer then
		// finds its own ready).
		if err := PopulationOf(plans[0].Model).Prepare(plans); err != nil {
			errs = append(errs, err)
		}
	}
	for i, p := range plans {
		pl, err := NewPlacer(p, c)
		if err != nil {
			// That variant is left out (its result stays empty); the others run.
			errs = append(errs, fmt.Errorf("variant %s: %w", names[i], err))
			continue
		}
		obs[i] = NewObserver(pl)
	}
	ShareTables(obs)
	n, err := EachShared(ctx, newStream(), len(plans), limit, func(i int, ops []workloads.Op) {
		if o := obs[i]; o != nil {
			for k := range ops {
				o.Op(&ops[k])
			}
		}
	})
	out := make([]results.HotspotsVariant, len(plans))
	for i, o := range obs {
		if o == nil {
			continue
		}
		out[i] = o.Result(names[i], "computed", o.Placer.Topology())
		if err != nil {
			out[i].Notes = append(out[i].Notes, fmt.Sprintf("interrupted after %d operations", n))
		}
	}
	return out, n, errors.Join(append(errs, err)...)
}

// ShareTables lets each observer borrow ([Observer.Borrow]) the analysis of every table
// or collection an earlier observer in obs makes alike ([AlikeTables]). A sweep over one
// collection's shard key, or the derived designs of a seed, then places each distinct
// table once instead of once per variant, with the same results. The observers must
// observe the same operations. nil entries are skipped. It returns how many tables are
// borrowed.
func ShareTables(obs []*Observer) int {
	pls := make([]*Placer, len(obs))
	for i, o := range obs {
		if o != nil {
			pls[i] = o.Placer
		}
	}
	n := 0
	for _, t := range AlikeTables(pls) {
		for _, i := range t.Placers[1:] {
			obs[i].Borrow(t.Target, obs[t.Placers[0]])
			n++
		}
	}
	return n
}

// AlikeTable is a table or collection that two or more placers place alike, and which
// (indexes into the placers given to [AlikeTables], in order).
type AlikeTable struct {
	Target  string
	Placers []int
}

// AlikeTables finds the tables and collections that two or more of pls place alike: the
// same model, the same design signature ([design.Compiled.TargetSignature]) and the same
// layout (ring, replication, chunk table, shards), as [Placer.ShareKey] says. One of them
// can place and analyse such a table's accesses for all. nil entries are skipped; tables
// come in the order the placers first reach them.
func AlikeTables(pls []*Placer) []AlikeTable {
	var out []AlikeTable
	byKey := map[string]int{} // into out
	for i, pl := range pls {
		if pl == nil {
			continue
		}
		for _, target := range Targets(pl.Compiled) {
			key := pl.ShareKey(target)
			if key == "" {
				continue
			}
			k, ok := byKey[key]
			if !ok {
				k = len(out)
				byKey[key] = k
				out = append(out, AlikeTable{Target: target})
			}
			out[k].Placers = append(out[k].Placers, i)
		}
	}
	return slices.DeleteFunc(out, func(t AlikeTable) bool { return len(t.Placers) < 2 })
}

// Targets lists the tables and collections p's steps reach, in the order of its steps.
func Targets(p *design.Compiled) []string {
	var out []string
	for ty := range p.Model.Ops {
		for _, s := range p.Steps(ty) {
			if !slices.Contains(out, s.Target) {
				out = append(out, s.Target)
			}
		}
	}
	return out
}
