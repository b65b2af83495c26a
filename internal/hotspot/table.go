package hotspot

import "math/bits"

// FPTable maps 64-bit fingerprints to int32 values: open addressing with linear probing
// and Fibonacci hashing, sized for a load of at most 1/4 of the entries it is made for,
// faster than a Go map on the hot path that uses it (the hot-partition observer's
// sightings; TopK indexes its counters with counterIndex, its half-size cousin). A slot
// holds its fingerprint and its value side by side, so a lookup touches one cache line,
// not one in an array of fingerprints and another in an array of values.
//
// Entries are never removed one at a time, so a fingerprint has at most one slot and Put
// finds it; a user whose entries go stale rebuilds the table (Reset, then Put each live
// one), which Full says is due when half the slots are in use.
type FPTable struct {
	slots []fpSlot
	shift uint
	mask  uint64
	used  int // slots holding a fingerprint, live or stale
}

type fpSlot struct {
	fp  uint64
	val int32 // -1: empty
}

// NewFPTable makes a table for n entries.
func NewFPTable(n int) FPTable {
	size := 1 << bits.Len(uint(max(4*n, 8)-1))
	t := FPTable{slots: make([]fpSlot, size), mask: uint64(size - 1)}
	t.shift = uint(64 - bits.TrailingZeros(uint(size)))
	t.Reset()
	return t
}

func (t *FPTable) home(fp uint64) uint64 { return (fp * 0x9e3779b97f4a7c15) >> t.shift }

// Get is the value last put for fp.
func (t *FPTable) Get(fp uint64) (int32, bool) {
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

// Put sets fp's value.
func (t *FPTable) Put(fp uint64, v int32) {
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

// Full reports whether the table should be rebuilt: half its slots are in use, which
// with the n live entries it was made for in 4n slots leaves n or more stale ones.
func (t *FPTable) Full() bool { return 2*t.used >= len(t.slots) }

// Reset empties the table.
func (t *FPTable) Reset() {
	for i := range t.slots {
		t.slots[i] = fpSlot{val: -1}
	}
	t.used = 0
}

// counterIndex is TopK's index of its counters: FPTable's open addressing, but a slot
// holds only the low 32 bits of a fingerprint beside its counter, 8 bytes instead of
// 16, so that the index of every summary of a run takes half the cache. The counter's
// own fingerprint (TopK.nodes) tells a partition from another with the same 32 bits, or
// from the partition an evicted counter held before.
//
// A partition gets a new slot whenever it enters the summary; the slots it had before
// are left, stale, until TopK rebuilds the index (Full).
type counterIndex struct {
	slots []tagSlot
	shift uint
	mask  uint64
	used  int // slots in use, live or stale
}

type tagSlot struct {
	tag uint32 // the fingerprint's low 32 bits
	val int32  // the counter; -1: empty
}

// newCounterIndex makes an index for n counters.
func newCounterIndex(n int) counterIndex {
	size := 1 << bits.Len(uint(max(indexSlots*n, 8)-1))
	x := counterIndex{slots: make([]tagSlot, size), mask: uint64(size - 1)}
	x.shift = uint(64 - bits.TrailingZeros(uint(size)))
	x.reset()
	return x
}

// indexSlots is the index's slots per counter.
const indexSlots = 4

func (x *counterIndex) home(fp uint64) uint64 { return (fp * 0x9e3779b97f4a7c15) >> x.shift }

// find is the counter among nodes that holds fp, if a slot names it.
func (x *counterIndex) find(fp uint64, nodes []node) (int32, bool) {
	tag := uint32(fp)
	for i := x.home(fp); ; i = (i + 1) & x.mask {
		s := x.slots[i]
		if s.val < 0 {
			return 0, false
		}
		if s.tag == tag && nodes[s.val].fp == fp {
			return s.val, true
		}
	}
}

// add gives counter v, which now holds fp, a slot.
func (x *counterIndex) add(fp uint64, v int32) {
	for i := x.home(fp); ; i = (i + 1) & x.mask {
		if x.slots[i].val < 0 {
			x.slots[i] = tagSlot{tag: uint32(fp), val: v}
			x.used++
			return
		}
	}
}

// full reports whether the index should be rebuilt: half its slots are in use.
func (x *counterIndex) full() bool { return 2*x.used >= len(x.slots) }

func (x *counterIndex) reset() {
	for i := range x.slots {
		x.slots[i] = tagSlot{val: -1}
	}
	x.used = 0
}
