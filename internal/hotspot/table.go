package hotspot

import "math/bits"

// fpTable maps fingerprints to counter slots: open addressing with linear probing,
// Fibonacci hashing and backward-shift deletion (no tombstones), sized for a load of at
// most 1/4. Faster than a Go map for the summary's lookup/evict/insert cycle.
type fpTable struct {
	keys  []uint64
	vals  []int32 // -1: empty
	shift uint
	mask  uint64
}

func newFPTable(n int) fpTable {
	size := 1 << bits.Len(uint(max(4*n, 8)-1))
	t := fpTable{keys: make([]uint64, size), vals: make([]int32, size), mask: uint64(size - 1)}
	t.shift = uint(64 - bits.TrailingZeros(uint(size)))
	for i := range t.vals {
		t.vals[i] = -1
	}
	return t
}

func (t *fpTable) home(fp uint64) uint64 { return (fp * 0x9e3779b97f4a7c15) >> t.shift }

func (t *fpTable) get(fp uint64) (int32, bool) {
	for i := t.home(fp); ; i = (i + 1) & t.mask {
		v := t.vals[i]
		if v < 0 {
			return 0, false
		}
		if t.keys[i] == fp {
			return v, true
		}
	}
}

func (t *fpTable) put(fp uint64, v int32) {
	for i := t.home(fp); ; i = (i + 1) & t.mask {
		if t.vals[i] < 0 || t.keys[i] == fp {
			t.keys[i], t.vals[i] = fp, v
			return
		}
	}
}

func (t *fpTable) del(fp uint64) {
	i := t.home(fp)
	for ; ; i = (i + 1) & t.mask {
		if t.vals[i] < 0 {
			return
		}
		if t.keys[i] == fp {
			break
		}
	}
	// Backward shift: pull later entries of the cluster into the hole when their home
	// position does not lie cyclically in (hole, j].
	for j := (i + 1) & t.mask; t.vals[j] >= 0; j = (j + 1) & t.mask {
		h := t.home(t.keys[j])
		if (j-h)&t.mask >= (j-i)&t.mask {
			t.keys[i], t.vals[i] = t.keys[j], t.vals[j]
			i = j
		}
	}
	t.vals[i] = -1
}

func (t *fpTable) len() int {
	n := 0
	for _, v := range t.vals {
		if v >= 0 {
			n++
		}
	}
	return n
}
