package metrics

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

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
		st.moveInto(staged, nil, &pool)
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

// The collector's interval histograms are exactly those of recording every sample's
// response, service and lag times directly, whether the samples started on time (counted
// once, for both response and service) or late, or a mix; OnTime says which intervals had
// no late start, and only those.
func TestCollectorOnTimeShortcutEqualsDirectRecording(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	type direct struct{ response, service, lag *hdr.PackedHistogram }
	// What the sink saw of each histogram: its buckets, then its min and max.
	var got [][3][][2]int64
	var onTime []bool
	seen := func(h *hdr.PackedHistogram) [][2]int64 { return append(buckets(h), [2]int64{h.Min(), h.Max()}) }
	c := NewCollector(2, time.Millisecond, time.Second, func(iv *Interval) error {
		set := iv.Ops[1]
		got = append(got, [3][][2]int64{seen(set.Response), seen(set.Service), seen(set.Lag)})
		onTime = append(onTime, set.OnTime)
		return nil
	})
	share := []float64{1, 0, 0.5, 0.99, 1} // share of samples started on time, by interval
	for iv, p := range share {
		want := direct{NewIntervalHistogram(), NewIntervalHistogram(), NewIntervalHistogram()}
		for i := 0; i < 20_000; i++ {
			at := int64(iv)*int64(time.Second) + int64(i)*40_000
			s := Sample{Intended: at, Start: at, Op: 1}
			if rng.Float64() >= p {
				s.Start += int64(rng.ExpFloat64() * 2e6)
			}
			s.End = s.Start + int64(rng.ExpFloat64()*float64(int64(1)<<rng.IntN(30)))
			c.Add([]Sample{s})
			_ = want.response.RecordValue(Clamp(s.Response()))
			_ = want.service.RecordValue(Clamp(s.Service()))
			_ = want.lag.RecordValue(Clamp(s.Lag()))
		}
		c.Flush(time.Duration(iv+1)*time.Second, 0)
		for k, h := range []*hdr.PackedHistogram{want.response, want.service, want.lag} {
			if a, b := got[iv][k], seen(h); !slices.Equal(a, b) {
				t.Fatalf("interval %d (on-time share %v), histogram %d: collector %d buckets, direct %d", iv, p, k, len(a), len(b))
			}
		}
		if wantOnTime := p == 1; onTime[iv] != wantOnTime {
			t.Errorf("interval %d (on-time share %v): OnTime = %v", iv, p, onTime[iv])
		}
	}
}
