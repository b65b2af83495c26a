package plan

import (
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
// so the lookup is on the hot path: a fingerprint table over the list (rebuilt when the
// list is pruned) rather than a Go map, which would also allocate each sighting apart
// (it is larger than a map keeps in place).
type sightings struct {
	index hotspot.FPTable // partition → position in list
	list  []sighting
	fps   []uint64 // the partition of each of list
}

func newSightings() *sightings {
	return &sightings{index: hotspot.NewFPTable(maxSightings)}
}

// get is partition fp's sighting, nil when it has none.
func (s *sightings) get(fp uint64) *sighting {
	if pos, ok := s.index.Get(fp); ok {
		return &s.list[pos]
	}
	return nil
}

// see keeps access a of op as partition fp's sighting, unless it has one. Past
// maxSightings it drops those of the partitions top no longer holds.
func (s *sightings) see(fp uint64, a *design.Access, op *workloads.Op, top *hotspot.TopK) {
	if _, ok := s.index.Get(fp); ok {
		return
	}
	s.index.Put(fp, int32(len(s.list)))
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
	s.index.Reset()
	for i, fp := range s.fps {
		s.index.Put(fp, int32(i))
	}
}

func (s *sightings) len() int { return len(s.list) }
