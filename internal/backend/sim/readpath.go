package sim

import (
	"math/bits"
	"time"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/workloads"
)

// A Cassandra replica's single-partition read, by what the partition really holds (the
// data loaded before the run and the run's writes): the rows it scans for the slice and
// its LIMIT, the partition-index blocks it searches and the SSTables it merges. The
// sources of each rule are in docs/simulator.md ("Read path").

// columnIndexSize is the granularity of a partition's row index in Cassandra 5.0's
// default SSTable format (BIG): one index entry per 64 KiB of the partition
// (BigFormatPartitionWriter: DatabaseDescriptor.getColumnIndexSize(64 KiB) when
// column_index_size is unset, as cassandra.yaml ships it).
const columnIndexSize = 64 << 10

// readWork is what one replica does for a single-partition read.
type readWork struct {
	rows     int64 // rows scanned (live rows read until the slice or the LIMIT ends)
	index    int32 // partition-index blocks read by the binary search for the slice start
	sstables int32 // further SSTables merged
}

// readWorkOf is the work of a read of a partition of size bytes holding rows rows: a
// read naming the whole primary key scans one row; any other scans the partition's rows
// up to limit (0: no LIMIT, the whole slice). A partition above the index granularity has
// a row index of ⌈size/64 KiB⌉ blocks, searched in ⌈log2(blocks)⌉ reads; the SSTables
// merged grow with the partition's size (sstables).
func readWorkOf(singleRow bool, size, rows, limit int64) readWork {
	w := readWork{rows: rows, sstables: sstables(size)}
	switch {
	case singleRow:
		w.rows = min(rows, 1)
	case limit > 0:
		w.rows = min(rows, limit)
	}
	if size > columnIndexSize {
		blocks := (size + columnIndexSize - 1) / columnIndexSize
		w.index = int32(bits.Len64(uint64(blocks - 1)))
	}
	return w
}

// readLimit is the LIMIT a step's read runs with for op (0: none).
func readLimit(s *design.Step, op *workloads.Op) int64 {
	switch {
	case s.Limit > 0:
		return int64(s.Limit)
	case s.LimitQty && op.Qty > 0:
		return int64(op.Qty)
	}
	return 0
}

// readCost is one replica's service time for access a of op, a single-partition read of
// the partition with fingerprint fp. A partition the size table does not track holds, in
// a table loaded before the run, the rows the workload expects (a partition below 64 KiB
// of loaded data, which plan does not list); in a table the run alone fills, nothing.
func (s *Simulator) readCost(a *design.Access, op *workloads.Op, fp uint64) time.Duration {
	m := &s.opt.Cassandra
	step := a.Step
	size, rows := s.sizes.get(fp, op.Time, step.TTL)
	if rows == 0 && s.preloaded(step) {
		rows = int64(max(a.Rows, 1))
	}
	w := readWorkOf(step.SingleRow, size, rows, readLimit(step, op))
	return m.Read + m.Row*durationOf(max(w.rows, 1)-1) + m.SSTable*durationOf(w.sstables) + m.Index*durationOf(w.index)
}

// preloaded reports whether step's table held rows before the run (plan.TableLoad),
// remembered by Step.ID: most reads find their partition untracked, and a lookup by the
// table's name for each would cost more than the rest of the read's model.
func (s *Simulator) preloaded(step *design.Step) bool {
	if s.loaded == nil {
		s.loaded = make([]int8, s.cfg.Compiled.NumSteps())
	}
	if k := s.loaded[step.ID]; k != 0 {
		return k > 0
	}
	k := int8(-1)
	if t := s.placer.Loaded[step.Target]; t != nil && t.Rows > 0 {
		k = 1
	}
	s.loaded[step.ID] = k
	return k > 0
}

// rowsAdded is the rows a write adds to its partition: an insert's rows (an update or a
// delete adds none; deletes' tombstones are not modelled).
func rowsAdded(s *design.Step, a *design.Access) int64 {
	if s.Statement != "INSERT" {
		return 0
	}
	return int64(max(a.Rows, 1))
}

// partitionSizes estimates each partition's live bytes and rows in fixed memory: a
// 4-way set-associative table indexed by the key's fingerprint. A partition that finds
// its set full replaces the smallest entry, so large partitions (those whose reads cost
// more) keep their counts and a small one evicted reads as untracked. An entry resets
// when its TTL window passes, so data written with a TTL ages out; a time-bucketed key
// starts a new partition (a new entry) every bucket.
//
// A set is two cache lines, its four fingerprints and byte counts in the first: a read of
// an untracked partition (most are) and the choice of the entry to replace need only it.
type partitionSizes struct {
	sets []sizeSet
	mask uint64 // of the set index
}

const sizeWays = 4

// sizeSet is one set's entries, way by way: an entry is live when it has bytes or rows.
type sizeSet struct {
	fp, bytes   [sizeWays]int64
	rows, epoch [sizeWays]int64
}

// newPartitionSizes is a table of 1<<bits entries.
func newPartitionSizes(bits int) partitionSizes {
	n := 1 << bits / sizeWays
	return partitionSizes{sets: make([]sizeSet, n), mask: uint64(n - 1)}
}

func epochOf(now int64, ttl time.Duration) int64 {
	if ttl <= 0 {
		return 0
	}
	return now / int64(ttl)
}

// set is fp's set.
func (p *partitionSizes) set(fp uint64) *sizeSet { return &p.sets[fp&p.mask] }

// add counts b bytes and rows new rows written to the partition with fingerprint fp.
func (p *partitionSizes) add(fp uint64, b, rows int64, now int64, ttl time.Duration) {
	e := epochOf(now, ttl)
	set := p.set(fp)
	victim := 0
	for i := range sizeWays {
		if set.fp[i] == int64(fp) && (set.bytes[i] > 0 || set.rows[i] > 0) {
			if set.epoch[i] != e {
				set.epoch[i], set.bytes[i], set.rows[i] = e, 0, 0
			}
			set.bytes[i] += b
			set.rows[i] += rows
			return
		}
		if set.bytes[i] < set.bytes[victim] {
			victim = i
		}
	}
	set.fp[victim], set.bytes[victim], set.rows[victim], set.epoch[victim] = int64(fp), b, rows, e
}

// get is the live bytes and rows of the partition with fingerprint fp (0, 0: untracked).
func (p *partitionSizes) get(fp uint64, now int64, ttl time.Duration) (bytes, rows int64) {
	set := p.set(fp)
	for i := range sizeWays {
		if set.fp[i] == int64(fp) && (set.bytes[i] > 0 || set.rows[i] > 0) {
			if set.epoch[i] != epochOf(now, ttl) {
				return 0, 0
			}
			return set.bytes[i], set.rows[i]
		}
	}
	return 0, 0
}

// sstables is how many more SSTables a read of a partition of size bytes consults:
// ⌊log2(1 + size/1 MiB)⌋, one more each time the partition doubles past 1 MiB, in integer
// arithmetic (the same value as in floating point for any partition under 8 TiB).
func sstables(size int64) int32 {
	return int32(bits.Len64(uint64(max(size, 0))+1<<20)) - 21
}
