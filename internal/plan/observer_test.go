package plan

import (
	"slices"
	"testing"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/hotspot"
	"github.com/shardbench/shardbench/workloads"
)

// TestSightingsPruned: a table keeps the first sighting of each partition it sees and
// drops those of partitions the summary no longer holds once it keeps too many, so it
// stays bounded and describes each held partition by the operation that first reached
// it since it was last pruned.
func TestSightingsPruned(t *testing.T) {
	top, ts := hotspot.NewTopK(TopCounters), newSightings()
	var a design.Access
	first := map[uint64]uint64{} // partition → Seq of its first sighting
	seen, pruned := 0, false
	for seq := range uint64(20 * TopCounters) {
		fp := hotspot.Fingerprint([]byte{byte(seq), byte(seq >> 8), byte(seq >> 16)})
		if seq%3 == 0 {
			fp = uint64(seq % 7) // a few partitions seen again and again
		}
		top.Add(fp, []byte{1}, false, 0, 0)
		if ts.get(fp) == nil {
			first[fp] = seq
		}
		ts.see(fp, &a, &workloads.Op{Seq: seq}, top)
		if ts.len() > maxSightings {
			t.Fatalf("after %d: %d sightings kept", seq, ts.len())
		}
		pruned = pruned || ts.len() < seen
		seen = ts.len()
	}
	if !pruned {
		t.Fatal("never pruned")
	}
	for fp, want := range first {
		// Every access is seen right after the summary counts it, so a partition the
		// summary holds has a sighting: the first since it was last pruned.
		sg := ts.get(fp)
		if top.Holds(fp) && sg == nil {
			t.Fatalf("held partition %x has no sighting", fp)
		}
		if sg != nil && sg.op.Seq != want {
			t.Fatalf("partition %x described by operation %d, want %d", fp, sg.op.Seq, want)
		}
	}
	for fp := range uint64(7) {
		if ts.get(fp) == nil {
			t.Fatalf("hot partition %d lost its sighting", fp)
		}
	}
}

// TestNodeLoads: a node or shard beyond those counted so far (added during the run) gets
// its own entry; reads and writes count apart, bytes with writes only.
func TestNodeLoads(t *testing.T) {
	var l nodeLoads
	l.read(0)
	l.write(2, 100)
	l.read(2)
	l.write(2, 50)
	want := nodeLoads{{ops: 1, reads: 1}, {}, {ops: 3, reads: 1, writes: 2, bytes: 150}}
	if !slices.Equal(l, want) {
		t.Fatalf("loads %+v, want %+v", l, want)
	}
}
