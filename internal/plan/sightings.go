package plan

import (
	"math/bits"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/hotspot"
	"github.com/shardbench/shardbench/workloads"
)

// maxSightings is how many sightings a table keeps before it prunes those of partitions
// its summary no longer holds.
const maxSightings = 4 * TopCounters

// sightings keeps, per partition a table's summary holds that proved more than a
// one-off, the first access and operation that reached it since it was last pruned, from
// which the report describes it (human key, placement) at the end. Describing costs
// microseconds and most partitions that enter the summary leave it again, so it is done
// only for the few reported.
//
// Every second operation of a partition's tenure in the summary asks for its sighting,
// so the lookup is on the hot path: an open-addressing index (linear probing, Fibonacci
// hashing, a load of at most 1/2) over the list, never deleted from but rebuilt when
// the list is pruned, rather than a Go map, which would also allocate each sighting
// apart (it is larger than a map keeps in place).
type sightings struct {
	index []sightSlot
	shift uint
	list  []sighting
	fps   []uint64 // the partition of each of list
}

type sightSlot struct {
	fp  uint64
	pos int32 // in list; -1: empty
}

func newSightings() *sightings {
	size := 1 << bits.Len(uint(2*maxSightings+1))
	s := &sightings{index: make([]sightSlot, size), shift: uint(64 - bits.TrailingZeros(uint(size)))}
	s.reindex()
	return s
}

func (s *sightings) slot(fp uint64) *sightSlot {
	mask := uint64(len(s.index) - 1)
	for i := (fp * 0x9e3779b97f4a7c15) >> s.shift; ; i = (i + 1) & mask {
		if sl := &s.index[i]; sl.pos < 0 || sl.fp == fp {
			return sl
		}
	}
}

// get is partition fp's sighting, nil when it has none.
func (s *sightings) get(fp uint64) *sighting {
	if sl := s.slot(fp); sl.pos >= 0 {
		return &s.list[sl.pos]
	}
	return nil
}

// see keeps access a of op as partition fp's sighting, unless it has one. Past
// maxSightings it drops those of the partitions top no longer holds.
func (s *sightings) see(fp uint64, a *design.Access, op *workloads.Op, top *hotspot.TopK) {
	sl := s.slot(fp)
	if sl.pos >= 0 {
		return
	}
	sl.fp, sl.pos = fp, int32(len(s.list))
	s.list = append(s.list, sighting{a: *a, op: *op})
	s.fps = append(s.fps, fp)
	if len(s.list) > maxSightings {
		s.prune(top)
	}
}

// prune keeps the sightings of the partitions top holds, in their order.
func (s *sightings) prune(top *hotspot.TopK) {
	n := 0
	for i, fp := range s.fps {
		if top.Holds(fp) {
			s.list[n], s.fps[n] = s.list[i], fp
			n++
		}
	}
	clear(s.list[n:]) // let go of what the dropped ones point to
	s.list, s.fps = s.list[:n], s.fps[:n]
	s.reindex()
}

func (s *sightings) reindex() {
	for i := range s.index {
		s.index[i] = sightSlot{pos: -1}
	}
	for i, fp := range s.fps {
		*s.slot(fp) = sightSlot{fp: fp, pos: int32(i)}
	}
}

func (s *sightings) len() int { return len(s.list) }
