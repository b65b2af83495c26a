package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSlotsMatchExactPool: the lazily tracked client slots give, operation after
// operation, the same answers as a pool that tracks every slot exactly (whether it is
// full at the intended time, and if so when its earliest slot frees), for pools that
// stay mostly idle, that saturate now and then, and that stay saturated.
func TestSlotsMatchExactPool(t *testing.T) {
	for _, tc := range []struct {
		name       string
		size       int
		gap, dur   int64 // mean time between operations and mean duration (ns)
		drop       bool
		operations int
	}{
		{"mostly idle", 4096, 1000, 200_000, false, 200_000},
		{"saturating now and then", 64, 1000, 60_000, false, 200_000},
		{"saturated", 16, 1000, 40_000, false, 100_000},
		{"saturated, dropping", 16, 1000, 40_000, true, 100_000},
		{"one slot", 1, 1000, 1500, false, 50_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(tc.size)))
			lazy := slots{size: tc.size}
			var exact []int64 // end times of the busy slots
			var now int64
			heapSeen := false
			for i := range tc.operations {
				now += int64(r.ExpFloat64() * float64(tc.gap))
				exact = slices.DeleteFunc(exact, func(end int64) bool { return end <= now })
				wantFull := len(exact) >= tc.size
				if got := lazy.full(now); got != wantFull {
					t.Fatalf("operation %d: full %v, want %v", i, got, wantFull)
				}
				heapSeen = heapSeen || lazy.heap
				start := now
				if wantFull {
					if tc.drop {
						continue
					}
					k := slices.Index(exact, slices.Min(exact))
					want := exact[k]
					exact = slices.Delete(exact, k, k+1)
					if got := lazy.take(); got != want {
						t.Fatalf("operation %d: earliest slot frees at %d, want %d", i, got, want)
					}
					start = want
				}
				end := start + 1 + int64(r.ExpFloat64()*float64(tc.dur))
				exact = append(exact, end)
				lazy.push(end)
			}
			if tc.size > 1 && tc.dur/tc.gap > int64(tc.size) && !heapSeen {
				t.Error("a saturated pool never switched to its heap")
			}
		})
	}
}

// BenchmarkSlotsSaturated: a client of 4096 slots that stays saturated, as Black Friday's
// plateau keeps it on a design that cannot keep up: every operation waits for the
// earliest slot to free (full, take, push).
func BenchmarkSlotsSaturated(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	gaps, durs := make([]int64, 1<<16), make([]int64, 1<<16)
	for i := range gaps {
		gaps[i], durs[i] = int64(r.ExpFloat64()*1000), 1+int64(r.ExpFloat64()*8e6)
	}
	p := slots{size: 4096}
	var now int64
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		now += gaps[i&(1<<16-1)]
		start := now
		if p.full(now) {
			start = p.take()
		}
		p.push(start + durs[i&(1<<16-1)])
		i++
	}
}
