package sim

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/shardbench/shardbench/internal/metrics"
)

// The grain queue reports every sample once, grain by grain, and only grains that are
// over: against a straightforward reference (everything sorted by time at the end), with
// samples due from now to far ahead (the ring grows), dropped ones due at their intended
// time, and time jumping over empty stretches.
func TestGrainQueueReportsGrainByGrain(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var q grainQueue
	var pushed, reported []int64
	now := int64(0)
	record := func(s *metrics.Sample) {
		at := reportAt(s)
		if now != -1 && at/grain >= now/grain {
			t.Fatalf("sample due at %d reported at time %d: its grain is not over", at, now)
		}
		if n := len(reported); n > 0 && at/grain < reported[n-1]/grain {
			t.Fatalf("sample due at %d reported after one due at %d", at, reported[n-1])
		}
		reported = append(reported, at)
	}
	for i := 0; i < 200_000; i++ {
		now += int64(rng.ExpFloat64() * 20_000) // ~50K operations per second
		if rng.IntN(10_000) == 0 {
			now += int64(rng.IntN(5)) * int64(1e9) // an idle stretch
		}
		q.emitBefore(now, record)
		s := metrics.Sample{Intended: now, Start: now, End: now + int64(rng.ExpFloat64()*float64(rng.IntN(3)+1)*1e6)}
		switch rng.IntN(1000) {
		case 0:
			s.Flags = metrics.FlagDropped
			s.End = now
		case 1:
			s.End = now + 3e9 + int64(rng.IntN(1e9)) // a timeout far ahead: the ring grows
		}
		q.push(s)
		pushed = append(pushed, reportAt(&s))
	}
	now = -1
	q.emitAll(record)
	if len(reported) != len(pushed) {
		t.Fatalf("%d samples pushed, %d reported", len(pushed), len(reported))
	}
	slices.Sort(pushed)
	got := slices.Clone(reported)
	slices.Sort(got)
	if !slices.Equal(got, pushed) {
		t.Fatal("the samples reported are not the samples pushed")
	}
	if q.latest != pushed[len(pushed)-1] {
		t.Fatalf("latest %d, want %d", q.latest, pushed[len(pushed)-1])
	}
}
