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

// The queue reports exactly what a plain ordering would: every sample whole (its
// intended, start and end times, operation, class and flags), by grain, in push order
// within a grain. Samples range from on time to hours ahead (a saturated client's, which
// go through the compact far blocks), with gaps, service times and lags too large for a
// compact record.
func TestGrainQueueKeepsSamplesAndOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var q grainQueue
	type held struct {
		g, seq int64
		s      metrics.Sample
	}
	var want []held
	var got []metrics.Sample
	record := func(s *metrics.Sample) { got = append(got, *s) }
	now, backlog := int64(0), int64(0)
	for i := int64(0); i < 300_000; i++ {
		now += int64(rng.ExpFloat64() * 20_000)
		if rng.IntN(20_000) == 0 {
			now += int64(rng.IntN(8)) * int64(1e9) // an idle stretch, over a record's 4.3 s gap
		}
		q.emitBefore(now, record)
		s := metrics.Sample{Intended: now, Start: now, Op: uint16(rng.IntN(300)), Class: uint8(rng.IntN(4)), Flags: uint8(rng.IntN(2)) * metrics.FlagLate}
		switch k := rng.IntN(100); {
		case k < 30: // a saturated client: started ever later
			backlog += int64(rng.IntN(400_000))
			s.Start = now + backlog
		case k == 30:
			s.Start = now + int64(rng.IntN(3))*int64(3600e9) // hours late
		}
		s.End = s.Start + int64(rng.ExpFloat64()*1e6)
		switch rng.IntN(1000) {
		case 0:
			s.Flags = metrics.FlagDropped
			s.Start, s.End = now, now
		case 1:
			s.End = s.Start + 5e9 // a service time over a record's 4.3 s
		}
		want = append(want, held{g: max(reportAt(&s)/grain, q.first), seq: i, s: s})
		q.push(s)
	}
	q.emitAll(record)
	slices.SortStableFunc(want, func(a, b held) int {
		if a.g != b.g {
			return int(a.g - b.g)
		}
		return int(a.seq - b.seq)
	})
	if len(got) != len(want) {
		t.Fatalf("%d samples reported, %d pushed", len(got), len(want))
	}
	far := 0
	for i := range want {
		if got[i] != want[i].s {
			t.Fatalf("sample %d: reported %+v, want %+v", i, got[i], want[i].s)
		}
		if reportAt(&want[i].s)-want[i].s.Intended > 2*blockGrains*grain {
			far++
		}
	}
	if far < len(want)/10 {
		t.Fatalf("only %d of %d samples went far ahead: the test does not reach the far blocks", far, len(want))
	}
}
