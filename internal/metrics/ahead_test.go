package metrics

import (
	"fmt"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// intervalDigest is everything a sink can read of an interval, as text.
func intervalDigest(iv *Interval) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%v,%v) inflight=%d foreign=%d\n", iv.Start, iv.End, iv.InFlight, iv.ForeignUnserved)
	set := func(name string, s *IntervalSet) {
		if s == nil || s.Offered() == 0 {
			return
		}
		fmt.Fprintf(&b, " %s %+v ontime=%v\n", name, s.Counters, s.OnTime)
		for _, h := range []*PagedHistogram{&s.Response, &s.Service, &s.Lag} {
			fmt.Fprintf(&b, "  n=%d max=%d:", h.TotalCount(), h.Max())
			for idx, c := range h.Buckets() {
				fmt.Fprintf(&b, " %d:%d", idx, c)
			}
			b.WriteByte('\n')
		}
	}
	for i, s := range iv.Ops {
		set(fmt.Sprint("op", i), s)
	}
	set("all", iv.All)
	return b.String()
}

func totalsDigest(c *Collector) string {
	var b strings.Builder
	for i, s := range c.Totals() {
		if s == nil {
			continue
		}
		fmt.Fprintf(&b, "op%d %+v", i, s.Counters)
		for _, h := range [](interface {
			TotalCount() int64
			Max() int64
			Min() int64
			ValueAtPercentile(float64) int64
		}){s.Response, s.Service, s.Lag} {
			fmt.Fprintf(&b, " [%d %d %d %d]", h.TotalCount(), h.Min(), h.Max(), h.ValueAtPercentile(99.9))
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "measured end %v", c.MeasuredEnd())
	return b.String()
}

// aheadStream is samples in intended order as a simulator steps them: most completing
// within milliseconds, some at their timeout seconds ahead, a saturated client's ever
// later (minutes ahead, past the open intervals into the far log), some hours late
// (clamped), dropped, unserved, abandoned, failed, other shards' (foreign), with idle
// stretches.
func aheadStream(rng *rand.Rand, n int) []Sample {
	var out []Sample
	now, backlog := int64(0), int64(0)
	for i := 0; i < n; i++ {
		now += int64(rng.ExpFloat64() * 50_000)
		if rng.IntN(5_000) == 0 {
			now += int64(rng.IntN(8)) * int64(time.Second)
		}
		s := Sample{Intended: now, Start: now, Op: uint16(rng.IntN(5)), Class: uint8(rng.IntN(20) / 16 * rng.IntN(NumClasses+1))}
		switch k := rng.IntN(100); {
		case k < 25: // saturated: started ever later
			backlog += int64(rng.IntN(4_000_000))
			s.Start = now + backlog
			s.Flags |= FlagLate
		case k < 30:
			s.Start = now + int64(rng.IntN(2_000_000)) // a little late, maybe under late_after
		case k == 30:
			s.Start = now + int64(rng.IntN(3)+1)*int64(time.Hour) // over the range: clamped
		}
		s.End = s.Start + int64(rng.ExpFloat64()*2e6)
		switch k := rng.IntN(200); {
		case k == 0:
			s.End = s.Start + 2e9 // a timeout
		case k == 1:
			s.Flags, s.Start, s.End = FlagDropped, now, now
		case k == 2:
			s.Flags, s.Start, s.End = FlagUnserved, now, now
		case k == 3:
			s.Flags |= FlagAbandoned
		case k == 4:
			s.Flags |= FlagForeign
		case k == 5:
			s.Flags, s.Start, s.End = FlagForeign|FlagUnserved, now, now
		}
		out = append(out, s)
	}
	return out
}

// Recording ahead gives every interval, the cumulative totals, the measure window's end
// and the clock exactly what adding the samples in completion order to the current
// interval, interval by interval, gives: samples in intended order, reaching the ring of
// open intervals and the far log, against the real-time path (Add, Flush).
func TestAddVirtualAheadMatchesCompletionOrder(t *testing.T) {
	for _, tick := range []time.Duration{time.Second, 250 * time.Millisecond} {
		t.Run(tick.String(), func(t *testing.T) {
			samples := aheadStream(rand.New(rand.NewPCG(3, uint64(tick))), 300_000)
			const nOps = 5
			from, to := 20*time.Second, 40*time.Second

			var got []string
			c := NewCollector(nOps, time.Millisecond, tick, func(iv *Interval) error {
				got = append(got, intervalDigest(iv))
				return nil
			})
			c.Measure(from, to)
			var latest int64
			far := 0
			for i := range samples {
				s := &samples[i]
				if at := reportAt(s); at-s.Intended > 5*int64(tick) {
					far++
				}
				latest = max(latest, reportAt(s))
				c.AddVirtual(s)
			}
			if far < len(samples)/10 {
				t.Fatalf("only %d of %d samples due past the open intervals: the far log is not tested", far, len(samples))
			}
			gotNow := c.Now()
			end := time.Duration(latest) + 3*tick/2
			c.Flush(end, 0)

			// The reference: each interval's samples added whole, then closed.
			var want []string
			ref := NewCollector(nOps, time.Millisecond, tick, func(iv *Interval) error {
				want = append(want, intervalDigest(iv))
				return nil
			})
			ref.Measure(from, to)
			byTime := slices.Clone(samples)
			slices.SortStableFunc(byTime, func(a, b Sample) int { return int(reportAt(&a) - reportAt(&b)) })
			for i := 0; i < len(byTime); {
				ivEnd := int64(ref.Now() + tick)
				j := i
				for j < len(byTime) && reportAt(&byTime[j]) < ivEnd {
					j++
				}
				ref.Add(byTime[i:j])
				if j == len(byTime) {
					break
				}
				ref.Flush(time.Duration(ivEnd), 0)
				i = j
			}
			if gotNow != ref.Now() {
				t.Errorf("Now before the last flush %v, want %v", gotNow, ref.Now())
			}
			ref.Flush(end, 0)

			if len(got) != len(want) {
				t.Fatalf("%d intervals, want %d", len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("interval %d:\n%s\nwant:\n%s", i, got[i], want[i])
				}
			}
			if g, w := totalsDigest(c), totalsDigest(ref); g != w {
				t.Fatalf("totals:\n%s\nwant:\n%s", g, w)
			}
		})
	}
}

// A sample due exactly at an interval's end belongs to the next interval: recorded ahead,
// it leaves the intervals before open until the clock or the last flush closes them.
func TestAddVirtualBoundary(t *testing.T) {
	var ivs []string
	c := NewCollector(1, time.Millisecond, time.Second, func(iv *Interval) error {
		ivs = append(ivs, fmt.Sprintf("[%v,%v) %d", iv.Start, iv.End, iv.All.Completed))
		return nil
	})
	ms := int64(time.Millisecond)
	c.AddVirtual(&Sample{Intended: 500 * ms, Start: 500 * ms, End: 2000 * ms})
	if len(ivs) != 0 || c.Now() != 2*time.Second {
		t.Fatalf("after a sample due at 2 s: intervals %v, now %v; want none closed, now 2s", ivs, c.Now())
	}
	c.Flush(2500*time.Millisecond, 0)
	if want := []string{"[0s,1s) 0", "[1s,2s) 0", "[2s,2.5s) 1"}; !slices.Equal(ivs, want) {
		t.Fatalf("intervals %v, want %v", ivs, want)
	}
}

// The cumulative totals, folded interval by interval as pages, are the dense histograms
// of every completed sample: the same encoding byte for byte (what a summary embeds), the
// same statistics.
func TestTotalsAreEverySample(t *testing.T) {
	samples := aheadStream(rand.New(rand.NewPCG(5, 6)), 100_000)
	c := NewCollector(5, time.Millisecond, time.Second, nil)
	want := make([]*Set, 5)
	for i := range want {
		want[i] = newSet()
	}
	var latest int64
	for i := range samples {
		s := &samples[i]
		c.AddVirtual(s)
		latest = max(latest, reportAt(s))
		if s.Flags&(FlagForeign|FlagUnserved|FlagDropped|FlagAbandoned) != 0 {
			continue
		}
		w := want[s.Op]
		_ = w.Response.RecordValue(Clamp(s.Response()))
		_ = w.Service.RecordValue(Clamp(s.Service()))
		_ = w.Lag.RecordValue(Clamp(s.Lag()))
	}
	c.Flush(time.Duration(latest)+time.Second, 0)
	for op, got := range c.Totals() {
		if got == nil {
			t.Fatalf("op %d: no totals", op)
		}
		for k, pair := range [][2]*hdr.Histogram{{got.Response, want[op].Response}, {got.Service, want[op].Service}, {got.Lag, want[op].Lag}} {
			g, w := pair[0], pair[1]
			ge, _ := g.Encode(hdr.V2CompressedEncodingCookieBase)
			we, _ := w.Encode(hdr.V2CompressedEncodingCookieBase)
			if string(ge) != string(we) || g.Mean() != w.Mean() || g.StdDev() != w.StdDev() || g.Min() != w.Min() || g.Max() != w.Max() {
				t.Fatalf("op %d histogram %d: %d values, mean %v, max %d; want %d, %v, %d", op, k, g.TotalCount(), g.Mean(), g.Max(), w.TotalCount(), w.Mean(), w.Max())
			}
		}
	}
}

// AddUnserved counts an unserved operation exactly as AddVirtual counts its Sample: in
// every interval (those it closes too), the totals, the measure window and the clock;
// with half the stream unserved, the first sample among them, with and without a window.
func TestAddUnservedIsAddVirtual(t *testing.T) {
	for _, window := range []bool{false, true} {
		t.Run(fmt.Sprintf("window=%v", window), func(t *testing.T) {
			samples := aheadStream(rand.New(rand.NewPCG(7, 8)), 200_000)
			rng := rand.New(rand.NewPCG(9, 10))
			for i := range samples {
				s := &samples[i]
				if i == 0 || s.Flags&FlagForeign == 0 && rng.IntN(2) == 0 {
					s.Flags, s.Start, s.End = FlagUnserved, s.Intended, s.Intended
				}
			}
			run := func(count bool) (ivs []string, now time.Duration, totals string) {
				c := NewCollector(5, time.Millisecond, time.Second, func(iv *Interval) error {
					ivs = append(ivs, intervalDigest(iv))
					return nil
				})
				if window {
					c.Measure(20*time.Second, 40*time.Second)
				}
				var latest int64
				for i := range samples {
					s := &samples[i]
					latest = max(latest, reportAt(s))
					if count && s.Flags == FlagUnserved {
						c.AddUnserved(s.Op, s.Intended)
						continue
					}
					c.AddVirtual(s)
				}
				now = c.Now()
				c.Flush(time.Duration(latest)+time.Second, 0)
				return ivs, now, totalsDigest(c)
			}
			got, gotNow, gotTotals := run(true)
			want, wantNow, wantTotals := run(false)
			if len(got) != len(want) || len(want) < 100 {
				t.Fatalf("%d intervals, want %d (at least 100)", len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("interval %d:\n%s\nwant:\n%s", i, got[i], want[i])
				}
			}
			if gotNow != wantNow || gotTotals != wantTotals {
				t.Fatalf("now %v, totals:\n%s\nwant %v:\n%s", gotNow, gotTotals, wantNow, wantTotals)
			}
		})
	}
}

// Every clamped value's bucket index fits a far record, below the on-time mark.
func TestFarRecordHoldsEveryBucket(t *testing.T) {
	if idx := harness.CountsIndex(Clamp(Highest)); idx >= onTimeLag {
		t.Fatalf("the highest bucket index %d does not fit below %d", idx, onTimeLag)
	}
}

// BenchmarkAddVirtual: a sample recorded in intended order, completing within
// milliseconds (an unsaturated variant) or minutes ahead (a saturated one, through the
// far log), intervals closing as the clock passes them. With cold=true each sample comes
// after a few random reads of a table far larger than the caches, as a simulator's step
// makes them (its cluster and hot-partition tables): what a sample costs then is mostly
// the cache lines it touches, which a warm loop hides. The cold variants' time includes
// the reads' (compare cold=true against itself, across versions). The mix=bf variants
// are unsaturated with Black Friday's share of unserved samples (212 M of its 390 M);
// bf-count reports those through AddUnserved.
func BenchmarkAddVirtual(b *testing.B) {
	for _, cold := range []bool{false, true} {
		for _, mix := range []string{"unsaturated", "saturated", "bf", "bf-count"} {
			b.Run(fmt.Sprintf("cold=%v/mix=%s", cold, mix), func(b *testing.B) {
				benchAddVirtual(b, cold, mix)
			})
		}
	}
}

func benchAddVirtual(b *testing.B, cold bool, mix string) {
	saturated, count := mix == "saturated", mix == "bf-count"
	rng := rand.New(rand.NewPCG(1, 2))
	batch := make([]Sample, 1<<16)
	now, backlog := int64(0), int64(0)
	for i := range batch {
		now += 20_000 // 50K per second
		s := Sample{Intended: now, Start: now, Op: uint16(rng.IntN(8))}
		if saturated {
			backlog += 5_000
			s.Start += backlog
		} else if rng.IntN(10) == 0 {
			s.Start += int64(rng.IntN(1e6))
		}
		s.End = s.Start + int64(rng.ExpFloat64()*1e6)
		if strings.HasPrefix(mix, "bf") && rng.IntN(390) < 212 {
			s.Start, s.End, s.Flags = s.Intended, s.Intended, FlagUnserved
		}
		batch[i] = s
	}
	var table []uint64
	if cold {
		table = make([]uint64, 64<<20/8) // 64 MiB
	}
	var sink uint64
	c := NewCollector(8, time.Millisecond, time.Second, nil)
	b.ResetTimer()
	shift := int64(0)
	for i := 0; i < b.N; i++ {
		s := batch[i&(len(batch)-1)]
		if i&(len(batch)-1) == 0 && i > 0 {
			shift += now
		}
		s.Intended, s.Start, s.End = s.Intended+shift, s.Start+shift, s.End+shift
		if cold {
			h := uint64(i) * 0x9e3779b97f4a7c15
			for k := 0; k < 16; k++ {
				h = h*0x9e3779b97f4a7c15 + uint64(k)
				table[h>>40%uint64(len(table))]++
			}
		}
		if count && s.Flags == FlagUnserved {
			c.AddUnserved(s.Op, s.Intended)
			continue
		}
		c.AddVirtual(&s)
	}
	_ = sink
}
