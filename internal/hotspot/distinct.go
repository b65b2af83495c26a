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
	exact map[uint64]struct{}
	reg   []uint8
}

// ExactLimit is how many distinct partitions [Distinct] counts exactly.
const ExactLimit = 1 << 16

const hllP = 14

// NewDistinct returns an empty counter.
func NewDistinct() *Distinct { return &Distinct{exact: map[uint64]struct{}{}} }

// Add records one partition fingerprint.
func (d *Distinct) Add(fp uint64) {
	if d.exact != nil {
		d.exact[fp] = struct{}{}
		if len(d.exact) <= ExactLimit {
			return
		}
		d.toHLL()
		return
	}
	d.addHLL(fp)
}

func (d *Distinct) toHLL() {
	d.reg = make([]uint8, 1<<hllP)
	for fp := range d.exact {
		d.addHLL(fp)
	}
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
	if o.exact != nil {
		for fp := range o.exact {
			d.Add(fp)
		}
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
	if d.exact != nil {
		return int64(len(d.exact)), true, 0
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
