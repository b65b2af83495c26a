package plan

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/hotspot"
	pm "github.com/shardbench/shardbench/internal/placement/mongo"
	"github.com/shardbench/shardbench/workloads"
)

// The data that exists before the run: every table and collection starts with the rows
// its design's loader writes from the scenario's population (design.Loader). plan and the
// simulator need three things from it: each table's loaded rows and bytes, the partitions
// large enough to matter (their size slows Cassandra reads and is what a size projection
// starts from), and, for a MongoDB collection with a ranged or compound shard key, its
// keys in order with their sizes, from which the balancer's chunks are cut.
//
// Black Friday's population is 10 million sessions and 100 million historic orders, more
// rows than the whole run has operations, so a table with more rows than Budget is
// sampled: the head of every record set (the busiest records: bots, the most active
// users, the most popular products, HeadShare of the budget) is enumerated whole, the
// rest one record in k, each sampled row weighing k. What that keeps exact and what it
// estimates is in docs/population.md.

// Budgets of rows enumerated per table: sizes (Cassandra tables and every collection)
// and ranged shard keys (whose every row is kept until its chunks are cut).
const (
	SizeBudget = 500_000
	KeyBudget  = 100_000
	// HeadShare of a budget goes to the head of the record sets, enumerated whole.
	HeadShare = 0.5
	// BigPartition is the smallest loaded partition a TableLoad lists (64 KiB); with a
	// sample, a partition must also hold MinSamples sampled rows to be listed.
	BigPartition = 64 << 10
	MinSamples   = 16
	// loadCounters is the Space-Saving summary's size: a partition holding more than
	// 1/loadCounters of the enumerated rows is always in it.
	loadCounters = 1024
)

// TableLoad is one table's or collection's data before the run.
type TableLoad struct {
	Target, Entity string
	// Rows and Bytes in the table (estimates when Stride > 1); Records the entity's
	// records it took them from.
	Rows, Bytes, Records int64
	// Head is how many candidates of each record set were enumerated whole; Stride is 1
	// when every candidate was, else one candidate in Stride beyond the head was, each
	// weighing Stride.
	Head   int64
	Stride int64
	// Partitions are the partitions holding BigPartition bytes or more, largest first
	// (rows and bytes estimated like the totals).
	Partitions []LoadedPartition
	// Keys: for a collection whose chunks follow its data (a ranged or compound shard key
	// without a hashed prefix), every enumerated row's shard key in chunk-key form with
	// its (weighted) size; nil otherwise.
	Keys []pm.SizedKey

	loader *design.Loader
	byFP   map[uint64]int
	exact  sync.Map // fingerprint -> [2]int64, the head's rows and bytes in a partition
}

// LoadedPartition is one large partition before the run.
type LoadedPartition struct {
	FP          uint64
	Key         []byte // AppendKey's bytes
	Rows, Bytes int64
	// Exact: every row of the partition was enumerated (no sampled row in it).
	Exact bool
	// Row is one row in it, from which its key is described.
	Row workloads.Op
}

// KeyString describes a large partition's key for people, as the design shows keys.
func (t *TableLoad) KeyString(p *LoadedPartition) string {
	a := design.Access{Step: t.loader.Step, Parts: 1}
	return a.KeyString(&p.Row)
}

// Size is the loaded rows and bytes of the partition with fingerprint fp as far as the
// large partitions go (0 for a partition not among them).
func (t *TableLoad) Size(fp uint64) (rows, bytes int64) {
	if t == nil {
		return 0, 0
	}
	if i, ok := t.byFP[fp]; ok {
		return t.Partitions[i].Rows, t.Partitions[i].Bytes
	}
	return 0, 0
}

// Sampled reports whether the table was sampled rather than enumerated whole.
func (t *TableLoad) Sampled() bool { return t != nil && t.Stride > 1 }

// Population is the data a model's population puts in each table, computed once per
// table definition (design.Loader.Signature) for every variant and caller.
type Population struct {
	Model  *workloads.Model
	loads  memo[*TableLoad]
	chunks memo[chunkStart] // see chunkTable
}

type populationKey struct{}

// PopulationOf is the model's Population (one per model, made on first use).
func PopulationOf(m *workloads.Model) *Population {
	return m.Derived(populationKey{}, func() any {
		return &Population{Model: m}
	}).(*Population)
}

// Load is l's table's data; pattern is the collection's shard key when its chunks follow
// its data (nil otherwise).
func (p *Population) Load(l *design.Loader, pattern pm.KeyPattern) (*TableLoad, error) {
	key := l.Signature()
	if pattern != nil {
		key += " keys " + fmt.Sprint(pattern)
	}
	return p.loads.get(key, func() (*TableLoad, error) { return p.compute(l, pattern) })
}

// Prepare loads every table of the plans at once, one goroutine per CPU, so that the
// placers built next find them ready (each is computed once however many plans share it).
func (p *Population) Prepare(plans []*design.Compiled) error {
	type job struct {
		l   *design.Loader
		pat pm.KeyPattern
	}
	var jobs []job
	for _, pl := range plans {
		if pl == nil {
			continue
		}
		ls, err := pl.Loaders()
		if err != nil {
			return err
		}
		for _, l := range ls {
			jobs = append(jobs, job{l, splitPattern(l.Step)})
		}
	}
	// The largest first, so the last to finish is a small one.
	slices.SortStableFunc(jobs, func(a, b job) int {
		return int(workloads.Records(b.l.Sets) - workloads.Records(a.l.Sets))
	})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	next := 0
	for range min(runtime.GOMAXPROCS(0), len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if next >= len(jobs) {
					mu.Unlock()
					return
				}
				j := jobs[next]
				next++
				mu.Unlock()
				if _, err := p.Load(j.l, j.pat); err != nil {
					mu.Lock()
					first = errors.Join(first, err)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// splitPattern is the step's shard key when its collection's chunks follow its data: a
// sharded MongoDB collection whose key does not start with a hashed field.
func splitPattern(s *design.Step) pm.KeyPattern {
	if s.Database != design.MongoDB || len(s.KeyColumns) == 0 {
		return nil
	}
	pat := Pattern(s)
	if pat.HashedPrefix() {
		return nil
	}
	return pat
}

// sampling decides which candidates of l's sets are enumerated: the first head of each
// set whole, then one at random in each run of stride.
type sampling struct {
	head, stride int64
	perRecord    float64 // rows a record stands for, on average
}

func (p *Population) plan(l *design.Loader, budget int64) sampling {
	// Rows per record (the expansions: five zones, a cart's items), from the first few
	// records of each set.
	var recs, rows int64
	var op workloads.Op
	for i := range l.Sets {
		for c := int64(0); c < min(l.Count(i), 64); c++ {
			if l.Sets[i].Record(c, &op) {
				recs++
				l.Rows(&op, func(*design.Access, *workloads.Op) { rows++ })
			}
		}
	}
	perRecord := 1.0
	if recs > 0 {
		perRecord = max(float64(rows)/float64(recs), 1e-3)
	}
	var total int64
	for i := range l.Sets {
		total += l.Count(i)
	}
	if float64(total)*perRecord <= float64(budget) || len(l.Sets) == 0 {
		return sampling{head: total, stride: 1, perRecord: perRecord}
	}
	head := int64(float64(budget) * HeadShare / perRecord / float64(len(l.Sets)))
	var rest int64
	for i := range l.Sets {
		rest += max(l.Count(i)-head, 0)
	}
	stride := int64(float64(rest)*perRecord/(float64(budget)*(1-HeadShare))) + 1
	return sampling{head: head, stride: stride, perRecord: perRecord}
}

// compute enumerates l's rows (sampled beyond a budget) into a TableLoad.
func (p *Population) compute(l *design.Loader, pattern pm.KeyPattern) (*TableLoad, error) {
	budget := int64(SizeBudget)
	if pattern != nil {
		budget = KeyBudget
	}
	sm := p.plan(l, budget)
	t := &TableLoad{Target: l.Target, Entity: l.Entity, Head: sm.head, Stride: sm.stride, loader: l, byFP: map[uint64]int{}}
	top := hotspot.NewTopK(loadCounters)
	// Rows weighing more than one (sampled) are counted in a second summary, to tell
	// partitions made of enumerated rows only (exact) from estimated ones.
	sampledTop := hotspot.NewTopK(loadCounters)
	var key []byte
	var vals []workloads.Value
	var mv, arena []pm.Value
	intern := map[string]string{}
	rowOf := map[uint64]workloads.Op{}
	var op workloads.Op
	visit := func(set int, c int64, weight int64) {
		if !l.Sets[set].Record(c, &op) {
			return
		}
		t.Records += weight
		l.Rows(&op, func(a *design.Access, row *workloads.Op) {
			t.Rows += weight
			t.Bytes += weight * int64(a.Bytes)
			if pattern != nil {
				vals, _ = a.ShardKey(row, vals[:0], nil)
				mv = mv[:0]
				for k := range vals {
					mv = append(mv, ownValue(design.MongoValue(&vals[k]), intern))
				}
				// The keys' values share large arrays: fewer objects for the collector.
				if len(arena)+len(pattern) > cap(arena) {
					arena = make([]pm.Value, 0, 4096*len(pattern))
				}
				n := len(arena)
				arena = pattern.Key(arena, mv)
				t.Keys = append(t.Keys, pm.SizedKey{Key: arena[n:len(arena):len(arena)], Bytes: weight * int64(max(a.Bytes, 1))})
			}
			key = a.AppendKey(key[:0], row)
			if len(key) == 0 {
				return
			}
			fp := hotspot.Fingerprint(key)
			if top.Add(fp, key, true, 1, int64(a.Bytes)) == 2 {
				// A partition proving more than a one-off: keep a row to describe it by.
				if _, ok := rowOf[fp]; !ok {
					rowOf[fp] = *row
					if len(rowOf) > 8*loadCounters {
						keep := map[uint64]bool{}
						for _, e := range top.Top(-1) {
							keep[e.FP] = true
						}
						for k := range rowOf {
							if !keep[k] {
								delete(rowOf, k)
							}
						}
					}
				}
			}
			if weight > 1 {
				sampledTop.Add(fp, key, true, 1, int64(a.Bytes))
			}
		})
	}
	for i := range l.Sets {
		n := l.Count(i)
		h := min(n, sm.head)
		for c := int64(0); c < h; c++ {
			visit(i, c, 1)
		}
		// One candidate at random in each run of Stride (a fixed step would alias with
		// the sets' structure: every tenth candidate of the orders is the same slot of
		// every user's history).
		for b := h; b < n; b += sm.stride {
			if c := b + int64(workloads.Hash(p.Model.Seed, 0x5a3b1e, b)%uint64(sm.stride)); c < n {
				visit(i, c, sm.stride)
			}
		}
	}
	// Large partitions: Space-Saving counts rows; a partition's sampled rows weigh Stride.
	sampled := map[uint64]int64{}
	for _, e := range sampledTop.Top(-1) {
		sampled[e.FP] = e.Ops - e.Err
	}
	for _, e := range top.Top(-1) {
		n := e.Ops - e.Err // rows surely in it (enumerated or sampled)
		if n <= 0 || e.Rows == 0 {
			continue
		}
		s := sampled[e.FP]
		rows := n + s*(sm.stride-1)
		bytes := rows * e.Bytes / e.Rows
		// A sampled partition needs MinSamples sampled records (rows of one record, a
		// cart's items, are not independent draws).
		if bytes < BigPartition || s > 0 && float64(s) < MinSamples*sm.perRecord {
			continue
		}
		row, ok := rowOf[e.FP]
		if !ok {
			continue // seen once: a single row is never 64 KiB
		}
		t.Partitions = append(t.Partitions, LoadedPartition{FP: e.FP, Key: e.Key, Rows: rows, Bytes: bytes, Exact: s == 0 && e.Err == 0, Row: row})
	}
	slices.SortFunc(t.Partitions, func(a, b LoadedPartition) int {
		if a.Bytes != b.Bytes {
			return int(sign(b.Bytes - a.Bytes))
		}
		return strings.Compare(string(a.Key), string(b.Key))
	})
	for i, lp := range t.Partitions {
		t.byFP[lp.FP] = i
	}
	return t, nil
}

func sign(x int64) int64 {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

// ownValue gives a key value its own memory (MongoValue aliases the getter's buffer);
// strings repeat (categories, zones), so they are interned.
func ownValue(v pm.Value, intern map[string]string) pm.Value {
	switch v.Kind {
	case pm.KindString:
		s, ok := intern[v.S]
		if !ok {
			s = strings.Clone(v.S)
			if len(intern) < 1<<16 {
				intern[s] = s
			}
		}
		v.S = s
	case pm.KindBinary:
		v.B = slices.Clone(v.B)
	}
	return v
}

// Exact is the loaded rows and bytes of the partitions with the given fingerprints among
// the enumerated (head) candidates: exact for a partition whose records all come first in
// their sets (a heavy buyer's own history), a lower bound otherwise. It enumerates the
// head again; results are kept.
func (t *TableLoad) Exact(fps []uint64) map[uint64][2]int64 {
	out := map[uint64][2]int64{}
	var want []uint64
	for _, fp := range fps {
		if v, ok := t.exact.Load(fp); ok {
			out[fp] = v.([2]int64)
		} else {
			want = append(want, fp)
		}
	}
	if len(want) == 0 || t.loader == nil {
		return out
	}
	got := map[uint64][2]int64{}
	for _, fp := range want {
		got[fp] = [2]int64{}
	}
	l := t.loader
	var key []byte
	var op workloads.Op
	for i := range l.Sets {
		n := min(l.Count(i), t.Head)
		for c := int64(0); c < n; c++ {
			if !l.Sets[i].Record(c, &op) {
				continue
			}
			l.Rows(&op, func(a *design.Access, row *workloads.Op) {
				key = a.AppendKey(key[:0], row)
				fp := hotspot.Fingerprint(key)
				if v, ok := got[fp]; ok {
					got[fp] = [2]int64{v[0] + 1, v[1] + int64(a.Bytes)}
				}
			})
		}
	}
	for fp, v := range got {
		t.exact.Store(fp, v)
		out[fp] = v
	}
	return out
}
