package metrics

import (
	"math/rand/v2"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// The geometry maps values to the library's buckets: a dense histogram given
// ValueFromIndex(CountsIndex(v)) instead of v puts it in the same bucket, and the bucket's
// lowest value is the library's lowest equivalent value.
func TestGeometryMatchesTheLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	values := []int64{Lowest, Lowest + 1, 2047, 2048, 2049, 1_000_000, Highest - 1, Highest}
	for i := 0; i < 100_000; i++ {
		values = append(values, Clamp(int64(rng.ExpFloat64()*float64(int64(1)<<rng.IntN(40)))))
	}
	for _, v := range values {
		idx := harness.CountsIndex(v)
		low := harness.ValueFromIndex(idx)
		one := NewIntervalHistogram()
		if err := one.RecordValue(v); err != nil {
			t.Fatal(err)
		}
		if want := one.Min(); low != want {
			t.Fatalf("value %d: bucket %d starts at %d, the library says %d", v, idx, low, want)
		}
		if harness.CountsIndex(low) != idx {
			t.Fatalf("value %d: the bucket's lowest value %d maps to index %d, not %d", v, low, harness.CountsIndex(low), idx)
		}
		if int(idx)>>stagePageShift >= stagePages {
			t.Fatalf("value %d: index %d is past the stage's %d pages", v, idx, stagePages)
		}
	}
}

// Staged values moved into a PackedHistogram give exactly the histogram that recording
// them directly gives, interval after interval, with the pages reused.
func TestStageEqualsDirectRecording(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var pool pagePool
	st := newStage()
	for interval := 0; interval < 5; interval++ {
		direct, staged := NewIntervalHistogram(), NewIntervalHistogram()
		n := rng.IntN(50_000)
		for i := 0; i < n; i++ {
			v := Clamp(int64(rng.ExpFloat64() * float64(int64(1)<<rng.IntN(36))))
			if err := direct.RecordValue(v); err != nil {
				t.Fatal(err)
			}
			st.record(v, &pool)
		}
		st.moveInto(staged, &pool)
		if len(st.used) != 0 {
			t.Fatalf("interval %d: stage not cleared: %d pages", interval, len(st.used))
		}
		if got, want := buckets(staged), buckets(direct); len(got) != len(want) || staged.TotalCount() != direct.TotalCount() ||
			staged.Max() != direct.Max() || staged.Min() != direct.Min() {
			t.Fatalf("interval %d: staged %d buckets, %d values; direct %d buckets, %d values", interval, len(got), staged.TotalCount(), len(want), direct.TotalCount())
		} else {
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("interval %d: bucket %d: staged %v, direct %v", interval, i, got[i], want[i])
				}
			}
		}
		if staged.ValueAtPercentile(99) != direct.ValueAtPercentile(99) {
			t.Fatalf("interval %d: p99 differs", interval)
		}
	}
	if len(pool.free) == 0 {
		t.Fatal("no page came back to the pool")
	}
}

func buckets(h *hdr.PackedHistogram) [][2]int64 {
	var out [][2]int64
	h.ForEachBucket(func(v, c int64) bool { out = append(out, [2]int64{v, c}); return true })
	return out
}
