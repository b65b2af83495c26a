package hotspot

import "math/bits"

// fpTable maps fingerprints to counter slots for [TopK]: open addressing with linear
// probing and Fibonacci hashing, faster than a Go map for the summary's lookup/evict/insert
// cycle. A slot holds its fingerprint and its value side by side, so a lookup touches one
// cache line, not one in an array of fingerprints and another in an array of values.
//
// Deletion is lazy: an evicted partition's slot stays, naming a counter that now holds
// another partition, and [TopK.lookup] tells the two apart by the counter's fingerprint.
// An eviction then costs no probe of a second, random part of the table (most operations
// on a large table evict). Slots are never emptied one at a time, so a fingerprint has
// at most one slot and put finds it; when the slots in use reach half the table it is
// rebuilt from the live partitions alone (reset, then put each), keeping probes short.
type fpTable struct {
	slots []fpSlot
	shift uint
	mask  uint64
	used  int // slots holding a fingerprint, live or stale
}

type fpSlot struct {
	fp  uint64
	val int32 // -1: empty
}

func newFPTable(n int) fpTable {
	size := 1 << bits.Len(uint(max(4*n, 8)-1))
	t := fpTable{slots: make([]fpSlot, size), mask: uint64(size - 1)}
	t.shift = uint(64 - bits.TrailingZeros(uint(size)))
	t.reset()
	return t
}

func (t *fpTable) home(fp uint64) uint64 { return (fp * 0x9e3779b97f4a7c15) >> t.shift }

// get is the value last put for fp, which may be stale (see fpTable).
func (t *fpTable) get(fp uint64) (int32, bool) {
	for i := t.home(fp); ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.val < 0 {
			return 0, false
		}
		if s.fp == fp {
			return s.val, true
		}
	}
}

func (t *fpTable) put(fp uint64, v int32) {
	for i := t.home(fp); ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.val < 0 {
			s.fp, s.val = fp, v
			t.used++
			return
		}
		if s.fp == fp {
			s.val = v
			return
		}
	}
}

// full reports whether the table should be rebuilt: half its slots are in use, which
// with k live partitions in 4k slots leaves k or more stale ones.
func (t *fpTable) full() bool { return 2*t.used >= len(t.slots) }

// reset empties the table.
func (t *fpTable) reset() {
	for i := range t.slots {
		t.slots[i] = fpSlot{val: -1}
	}
	t.used = 0
}
