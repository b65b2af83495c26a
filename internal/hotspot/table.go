package hotspot

import "math/bits"

// fpTable maps fingerprints to counter slots: open addressing with linear probing,
// Fibonacci hashing and backward-shift deletion (no tombstones), sized for a load of at
// most 1/4. Faster than a Go map for the summary's lookup/evict/insert cycle. A slot holds
// its fingerprint and its value side by side, so a lookup touches one cache line, not one
// in an array of fingerprints and another in an array of values.
type fpTable struct {
	slots []fpSlot
	shift uint
	mask  uint64
}

type fpSlot struct {
	fp  uint64
	val int32 // -1: empty
}

func newFPTable(n int) fpTable {
	size := 1 << bits.Len(uint(max(4*n, 8)-1))
	t := fpTable{slots: make([]fpSlot, size), mask: uint64(size - 1)}
	t.shift = uint(64 - bits.TrailingZeros(uint(size)))
	for i := range t.slots {
		t.slots[i].val = -1
	}
	return t
}

func (t *fpTable) home(fp uint64) uint64 { return (fp * 0x9e3779b97f4a7c15) >> t.shift }

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
		if s.val < 0 || s.fp == fp {
			s.fp, s.val = fp, v
			return
		}
	}
}

func (t *fpTable) del(fp uint64) {
	i := t.home(fp)
	for ; ; i = (i + 1) & t.mask {
		if t.slots[i].val < 0 {
			return
		}
		if t.slots[i].fp == fp {
			break
		}
	}
	// Backward shift: pull later entries of the cluster into the hole when their home
	// position does not lie cyclically in (hole, j].
	for j := (i + 1) & t.mask; t.slots[j].val >= 0; j = (j + 1) & t.mask {
		h := t.home(t.slots[j].fp)
		if (j-h)&t.mask >= (j-i)&t.mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i].val = -1
}

func (t *fpTable) len() int {
	n := 0
	for _, s := range t.slots {
		if s.val >= 0 {
			n++
		}
	}
	return n
}
