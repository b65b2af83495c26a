package hotspot

import (
	"math"
	"math/bits"
)

// Distinct counts distinct partitions in bounded memory: exactly (a set of
// fingerprints) up to ExactLimit partitions, then with HyperLogLog (Flajolet et al.
// 2007; 2^14 registers, standard error 1.04/sqrt(2^14) ≈ 0.8%, with the linear-counting
// correction for small cardinalities). Feed it well-mixed 64-bit fingerprints
// ([Fingerprint] or a partition token). Not safe for concurrent use; Merge per-worker
// counters.
type Distinct struct {
	exact *fpSet // nil once counting moved to the registers
	reg   []uint8
	// pending holds the last fingerprints added, np of them, not yet counted. Counting
	// one costs a cache miss (a random register, or slot of a set of up to a megabyte);
	// counted together, a batch's misses overlap instead of each stalling the caller.
	// The count is the same in any order.
	pending [distinctBatch]uint64
	np      int
}

const distinctBatch = 64

// ExactLimit is how many distinct partitions [Distinct] counts exactly.
const ExactLimit = 1 << 16

const hllP = 14

// NewDistinct returns an empty counter.
func NewDistinct() *Distinct { return &Distinct{exact: newFPSet()} }

// Add records one partition fingerprint.
func (d *Distinct) Add(fp uint64) {
	d.pending[d.np] = fp
	d.np++
	if d.np == distinctBatch {
		d.flush()
	}
}

// flush counts the pending fingerprints.
func (d *Distinct) flush() {
	fps := d.pending[:d.np]
	d.np = 0
	i := 0
	for ; i < len(fps) && d.exact != nil; i++ {
		d.count(fps[i])
	}
	for _, fp := range fps[i:] {
		d.addHLL(fp)
	}
}

// count counts one fingerprint.
func (d *Distinct) count(fp uint64) {
	if d.exact != nil {
		d.exact.add(fp)
		if d.exact.n <= ExactLimit {
			return
		}
		d.toHLL()
		return
	}
	d.addHLL(fp)
}

func (d *Distinct) toHLL() {
	d.reg = make([]uint8, 1<<hllP)
	d.exact.each(d.addHLL)
	d.exact = nil
}

func (d *Distinct) addHLL(fp uint64) {
	fp = mix(fp) // fingerprints from callers may be weak in their high bits
	idx := fp >> (64 - hllP)
	w := fp<<hllP | 1<<(hllP-1)
	r := uint8(bits.LeadingZeros64(w) + 1)
	if r > d.reg[idx] {
		d.reg[idx] = r
	}
}

// Merge adds another counter's partitions.
func (d *Distinct) Merge(o *Distinct) {
	d.flush()
	o.flush()
	if o.exact != nil {
		o.exact.each(d.count)
		return
	}
	if d.exact != nil {
		d.toHLL()
	}
	for i, r := range o.reg {
		if r > d.reg[i] {
			d.reg[i] = r
		}
	}
}

// Estimate is the number of distinct partitions, whether it is exact, and its relative
// standard error (0 when exact).
func (d *Distinct) Estimate() (n int64, exact bool, relErr float64) {
	d.flush()
	if d.exact != nil {
		return int64(d.exact.n), true, 0
	}
	m := float64(len(d.reg))
	sum, zeros := 0.0, 0
	for _, r := range d.reg {
		sum += 1 / float64(uint64(1)<<r)
		if r == 0 {
			zeros++
		}
	}
	alpha := 0.7213 / (1 + 1.079/m)
	e := alpha * m * m / sum
	if e <= 2.5*m && zeros > 0 {
		e = m * math.Log(m/float64(zeros))
	}
	return int64(math.Round(e)), false, 1.04 / math.Sqrt(m)
}

// fpSet is the exact phase's set of fingerprints: open addressing with linear probing
// and Fibonacci hashing, grown to keep the load at most 1/2. Every key is offered to
// Distinct, so this is on the hot path of plan and analyze; it is about twice as fast as
// a Go map of the same keys. Fingerprint 0 marks an empty slot, so it is kept aside.
type fpSet struct {
	slots   []uint64
	shift   uint
	n       int // distinct fingerprints, hasZero included
	hasZero bool
}

func newFPSet() *fpSet {
	const initial = 1 << 8
	return &fpSet{slots: make([]uint64, initial), shift: 64 - 8}
}

func (s *fpSet) add(fp uint64) {
	if fp == 0 {
		if !s.hasZero {
			s.hasZero = true
			s.n++
		}
		return
	}
	mask := uint64(len(s.slots) - 1)
	for i := (fp * 0x9e3779b97f4a7c15) >> s.shift; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case fp:
			return
		case 0:
			s.slots[i] = fp
			s.n++
			// Past ExactLimit the set is about to be dropped for the registers.
			if 2*s.n > len(s.slots) && s.n <= ExactLimit {
				s.grow()
			}
			return
		}
	}
}

func (s *fpSet) grow() {
	old := s.slots
	s.slots = make([]uint64, 2*len(old))
	s.shift--
	mask := uint64(len(s.slots) - 1)
	for _, fp := range old {
		if fp == 0 {
			continue
		}
		i := (fp * 0x9e3779b97f4a7c15) >> s.shift
		for s.slots[i] != 0 {
			i = (i + 1) & mask
		}
		s.slots[i] = fp
	}
}

// each calls f with every fingerprint in the set.
func (s *fpSet) each(f func(uint64)) {
	if s.hasZero {
		f(0)
	}
	for _, fp := range s.slots {
		if fp != 0 {
			f(fp)
		}
	}
}
