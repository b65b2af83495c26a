package plan

import (
	"testing"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/hotspot"
	"github.com/shardbench/shardbench/workloads"
)

// TestSightingsPruned: a table keeps the first sighting of each partition it sees,
// drops those of partitions the summary no longer holds once it keeps too many, and
// reuses their slots, so it stays bounded and describes each held partition by the
// operation that first reached it.
func TestSightingsPruned(t *testing.T) {
	ts := &tableStats{top: hotspot.NewTopK(TopCounters), seen: map[uint64]int32{}}
	var a design.Access
	first := map[uint64]uint64{} // partition → Seq of its first sighting
	for seq := range uint64(20 * TopCounters) {
		fp := hotspot.Fingerprint([]byte{byte(seq), byte(seq >> 8), byte(seq >> 16)})
		if seq%3 == 0 {
			fp = uint64(seq % 7) // a few partitions seen again and again
		}
		ts.top.Add(fp, []byte{1}, false, 0, 0)
		if _, kept := ts.seen[fp]; !kept {
			first[fp] = seq
		}
		ts.see(fp, &a, &workloads.Op{Seq: seq})
		if len(ts.seen) > 4*TopCounters {
			t.Fatalf("after %d: %d sightings kept", seq, len(ts.seen))
		}
	}
	if len(ts.free) == 0 && len(ts.seen) == len(first) {
		t.Fatal("never pruned")
	}
	if len(ts.sightings) > 4*TopCounters+1 {
		t.Fatalf("%d sighting slots for at most %d kept", len(ts.sightings), 4*TopCounters+1)
	}
	used := map[int32]uint64{}
	for fp, i := range ts.seen {
		if fp2, dup := used[i]; dup {
			t.Fatalf("slot %d holds both %x and %x", i, fp, fp2)
		}
		used[i] = fp
		if got := ts.sightings[i].op.Seq; got != first[fp] {
			t.Fatalf("partition %x described by operation %d, want %d", fp, got, first[fp])
		}
	}
	for fp := range uint64(7) {
		if _, ok := ts.seen[fp]; !ok {
			t.Fatalf("hot partition %d lost its sighting", fp)
		}
	}
}
