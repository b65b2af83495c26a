package metrics

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Concurrent writers and a draining reader: every sample is seen exactly once.
func TestRecorderLosesNothingUnderConcurrentDrains(t *testing.T) {
	const writers, perWriter = 4, 200_000
	recs := make([]*Recorder, writers)
	for i := range recs {
		recs[i] = NewRecorder()
	}
	var wg sync.WaitGroup
	var stop atomic.Bool
	seen := make([]int64, writers)
	sum := make([]int64, writers)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			last := stop.Load()
			for i, r := range recs {
				r.Drain(func(s []Sample) {
					for _, x := range s {
						seen[i]++
						sum[i] += x.End
					}
				})
			}
			if last {
				return
			}
			time.Sleep(50 * time.Microsecond)
		}
	}()
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 1; i <= perWriter; i++ {
				recs[w].Record(Sample{End: int64(i)})
			}
		}(w)
	}
	wg.Wait()
	stop.Store(true)
	<-done
	for i := range recs {
		if seen[i] != perWriter || sum[i] != perWriter*(perWriter+1)/2 {
			t.Errorf("writer %d: saw %d samples (sum %d), want %d", i, seen[i], sum[i], perWriter)
		}
	}
}

func TestCollectorIntervalsAndTotals(t *testing.T) {
	var intervals []Interval
	c := NewCollector(2, time.Millisecond, time.Second, func(iv *Interval) error {
		cp := *iv
		cp.All = &IntervalSet{Counters: iv.All.Counters}
		intervals = append(intervals, cp)
		return nil
	})
	ms := int64(time.Millisecond)
	c.Add([]Sample{
		{Intended: 0, Start: 0, End: 5 * ms, Op: 0},
		{Intended: 0, Start: 3 * ms, End: 4 * ms, Op: 1, Class: uint8(Timeout)},
		{Intended: 10 * ms, Op: 1, Flags: FlagDropped},
	})
	c.Flush(time.Second, 7)
	c.AddVirtual(&Sample{Intended: 2500 * ms, Start: 2500 * ms, End: 2600 * ms, Op: 0})
	c.Flush(3*time.Second, 0)
	if len(intervals) != 3 {
		t.Fatalf("want intervals [0,1) [1,2) [2,3), got %d", len(intervals))
	}
	first := intervals[0].All.Counters
	if first.Completed != 2 || first.OK != 1 || first.Errors[Timeout] != 1 || first.Dropped != 1 || first.Late != 1 {
		t.Errorf("first interval counters: %+v", first)
	}
	if intervals[0].InFlight != 7 || intervals[1].All.Completed != 0 || intervals[2].All.Completed != 1 {
		t.Error("empty seconds must still produce an interval; in-flight must be kept")
	}
	tot := c.Totals()
	if tot[0].Completed != 2 || tot[0].Response.Max() < 99*ms || tot[1].Scheduled() != 2 {
		t.Errorf("totals: op0 %+v op1 %+v", tot[0].Counters, tot[1].Counters)
	}
	if got := tot[1].Lag.Max(); got < 3*ms-ms/100 || got > 3*ms+ms/100 {
		t.Errorf("lag of the timed-out op = %d, want 3ms", got)
	}
}

func BenchmarkRecord(b *testing.B) {
	r := NewRecorder()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r.Record(Sample{End: int64(i)})
		if i&0xffff == 0 {
			r.Drain(func([]Sample) {})
		}
	}
}

func BenchmarkCollectorAdd(b *testing.B) {
	c := NewCollector(8, time.Millisecond, time.Second, nil)
	batch := make([]Sample, 1024)
	for i := range batch {
		batch[i] = Sample{Intended: int64(i) * 1000, Start: int64(i)*1000 + 200, End: int64(i)*1000 + 900_000, Op: uint16(i % 8)}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i += len(batch) {
		c.Add(batch)
	}
}

// An unserved sample is counted apart: in no histogram, not scheduled, not completed,
// not an error; it falls in the interval of its intended time and in "all" by count only.
func TestUnservedCountedApart(t *testing.T) {
	var ivs []Interval
	c := NewCollector(2, time.Millisecond, time.Second, func(iv *Interval) error {
		cp := *iv
		cp.All = &IntervalSet{Counters: iv.All.Counters}
		ivs = append(ivs, cp)
		return nil
	})
	served := Sample{Intended: int64(200 * time.Millisecond), Start: int64(200 * time.Millisecond), End: int64(205 * time.Millisecond), Op: 0}
	c.AddVirtual(&served)
	for _, at := range []time.Duration{300 * time.Millisecond, 1500 * time.Millisecond} {
		s := Sample{Intended: int64(at), Start: int64(at), End: int64(at), Op: 1, Flags: FlagUnserved}
		c.AddVirtual(&s)
	}
	c.Flush(2*time.Second, 0)
	if len(ivs) != 2 || ivs[0].All.Unserved != 1 || ivs[1].All.Unserved != 1 || ivs[0].All.Completed != 1 || ivs[1].All.Completed != 0 {
		t.Fatalf("intervals: %+v", ivs)
	}
	tot := c.Totals()
	u := tot[1]
	if u.Unserved != 2 || u.Scheduled() != 0 || u.Offered() != 2 || u.Completed != 0 || u.ErrorCount() != 0 || u.Response.TotalCount() != 0 || u.Service.TotalCount() != 0 || u.Lag.TotalCount() != 0 {
		t.Errorf("unserved set: %+v", u.Counters)
	}
	if s := tot[0]; s.Completed != 1 || s.Response.TotalCount() != 1 || s.Unserved != 0 {
		t.Errorf("served set: %+v", s.Counters)
	}
}

// With a measure window, the totals hold only the operations intended in it (a dropped
// or unserved one by its intended time too), every interval still holds every operation,
// and MeasuredEnd is when the window's last completed operation ended.
func TestCollectorMeasureWindow(t *testing.T) {
	ms := int64(time.Millisecond)
	var seen int64
	c := NewCollector(1, time.Millisecond, time.Second, func(iv *Interval) error {
		seen += iv.All.Completed + iv.All.Dropped + iv.All.Unserved
		return nil
	})
	c.Measure(time.Second, 2*time.Second)
	for _, s := range []Sample{
		{Intended: 500 * ms, Start: 500 * ms, End: 501 * ms},    // before
		{Intended: 999 * ms, Start: 999 * ms, End: 1500 * ms},   // before, ends inside
		{Intended: 1000 * ms, Start: 1000 * ms, End: 1002 * ms}, // inside
		{Intended: 1900 * ms, Start: 1950 * ms, End: 2600 * ms}, // inside, late, ends after
		{Intended: 1990 * ms, Flags: FlagDropped},               // inside, dropped
		{Intended: 2000 * ms, Start: 2000 * ms, End: 2001 * ms}, // after
	} {
		c.AddVirtual(&s)
	}
	c.Flush(3*time.Second, 0)
	tot := c.Totals()[0]
	if tot.Completed != 2 || tot.Dropped != 1 || tot.Late != 1 {
		t.Errorf("window totals %+v, want the 2 completed and 1 dropped intended in [1s, 2s)", tot.Counters)
	}
	if got := tot.Response.Max(); got < 699*ms || got > 701*ms {
		t.Errorf("window's largest response %d, want the late one's 700 ms", got)
	}
	if tot.Lag.TotalCount() != 2 || tot.Service.TotalCount() != 2 {
		t.Errorf("service %d and lag %d samples, want 2 each", tot.Service.TotalCount(), tot.Lag.TotalCount())
	}
	if seen != 6 {
		t.Errorf("the intervals held %d operations, want all 6", seen)
	}
	if got := c.MeasuredEnd(); got != 2600*time.Millisecond {
		t.Errorf("MeasuredEnd %v, want 2.6s", got)
	}
}
