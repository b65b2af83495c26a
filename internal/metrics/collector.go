package metrics

import (
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Counters are exact counts for one operation type (or all of them).
type Counters struct {
	Completed int64 // completed, successfully or not
	OK        int64
	Late      int64
	Dropped   int64
	Abandoned int64
	Errors    [NumClasses]int64 // by class; Errors[OK] is unused
	// Unserved operations were offered but the variant does not serve them: never
	// dispatched, in no histogram, and not part of Scheduled (nor of any rate built on it).
	Unserved int64
}

// Add adds other into c.
func (c *Counters) Add(o *Counters) {
	c.Completed += o.Completed
	c.OK += o.OK
	c.Late += o.Late
	c.Dropped += o.Dropped
	c.Abandoned += o.Abandoned
	c.Unserved += o.Unserved
	for i := range c.Errors {
		c.Errors[i] += o.Errors[i]
	}
}

// ErrorCount is the number of failed operations.
func (c *Counters) ErrorCount() int64 {
	var n int64
	for i := 1; i < len(c.Errors); i++ {
		n += c.Errors[i]
	}
	return n
}

// Scheduled is every served operation whose intended time came: completed, dropped or
// abandoned. Unserved operations are not in it.
func (c *Counters) Scheduled() int64 { return c.Completed + c.Dropped + c.Abandoned }

// Offered is every operation whose intended time came, served or not.
func (c *Counters) Offered() int64 { return c.Scheduled() + c.Unserved }

// Set is the three histograms and the counters of one operation type.
type Set struct {
	Response *hdr.Histogram
	Service  *hdr.Histogram
	Lag      *hdr.Histogram
	Counters
}

func newSet() *Set {
	return &Set{Response: NewHistogram(), Service: NewHistogram(), Lag: NewHistogram()}
}

// Merge adds other into s.
func (s *Set) Merge(o *Set) {
	s.Response.Merge(o.Response)
	s.Service.Merge(o.Service)
	s.Lag.Merge(o.Lag)
	s.Counters.Add(&o.Counters)
}

// IntervalSet is one operation type's histograms and counters over one interval.
type IntervalSet struct {
	Response PagedHistogram
	Service  PagedHistogram
	Lag      PagedHistogram
	Counters
	// OnTime says every sample recorded started at its intended time (a lag of zero), so
	// Service holds exactly Response's values and Lag only zeros: a writer may encode
	// Response once for both.
	OnTime bool

	// A sample that started on time, as most do until the client saturates, is counted
	// once here (its response time, which is its service time) instead of three times, and
	// added to Response and Service, with as many zero lags, when the interval closes.
	onTime PagedHistogram
}

func newIntervalSet(pool *pagePool) *IntervalSet {
	s := &IntervalSet{OnTime: true}
	for _, h := range []*PagedHistogram{&s.Response, &s.Service, &s.Lag, &s.onTime} {
		h.pool = pool
	}
	return s
}

// settle adds the on-time samples to the histograms.
func (s *IntervalSet) settle() {
	// Every late sample is in Response (on-time ones only in onTime).
	s.OnTime = s.Response.TotalCount() == 0
	s.Lag.recordN(Clamp(0), s.onTime.TotalCount())
	if s.OnTime {
		// Response is empty: it takes the on-time pages as they are, where adding them
		// copied every page.
		s.Response, s.onTime = s.onTime, s.Response
		s.Service.add(&s.Response)
		return
	}
	s.Response.add(&s.onTime)
	s.Service.add(&s.onTime)
	s.onTime.reset()
}

func (s *IntervalSet) reset() {
	s.Response.reset()
	s.Service.reset()
	s.Lag.reset()
	s.Counters = Counters{}
	s.OnTime = true
}

// merge adds other into s.
func (s *IntervalSet) merge(o *IntervalSet) {
	s.Response.add(&o.Response)
	s.Service.add(&o.Service)
	s.Lag.add(&o.Lag)
	s.Counters.Add(&o.Counters)
	s.OnTime = s.OnTime && o.OnTime
}

// cumSet is one operation type's cumulative histograms and counters, paged as an
// interval's are: folding an interval in adds whole pages, where a dense histogram took a
// RecordValues per bucket. Totals makes the dense Set of it.
type cumSet struct {
	Response, Service, Lag PagedHistogram // their own pages: no pool
	Counters
}

// mergeInto adds the interval into a cumulative set.
func (s *IntervalSet) mergeInto(c *cumSet) {
	c.Response.add(&s.Response)
	c.Service.add(&s.Service)
	c.Lag.add(&s.Lag)
	c.Counters.Add(&s.Counters)
}

// set is the dense Set of the same counts.
func (c *cumSet) set() *Set {
	s := newSet()
	c.Response.addTo(s.Response)
	c.Service.addTo(s.Service)
	c.Lag.addTo(s.Lag)
	s.Counters = c.Counters
	return s
}

// Interval is what was measured in [Start, End).
type Interval struct {
	Start, End time.Duration
	Ops        []*IntervalSet // by operation index; nil (or empty: Offered() == 0) where none came
	All        *IntervalSet   // every operation merged (unserved ones only in its Unserved count)
	InFlight   int64          // operations in flight at End (real-time runs)
	// ForeignUnserved counts other shards' operations due in the interval that the
	// variant does not serve (run --shard): not this shard's to count, but its share of
	// the run's served schedule leaves them out, as the whole run's does.
	ForeignUnserved int64
}

// Sink receives each finished interval. The interval and its histograms are reused after
// the call returns.
type Sink func(*Interval) error

// Collector turns samples into interval and cumulative histograms. It is used by one
// goroutine: the real-time engine's ticker, or the virtual-time driver.
type Collector struct {
	lateAfter int64
	cur       []*IntervalSet
	cum       []*cumSet
	all       *IntervalSet
	start     time.Duration
	foreign   int64 // other shards' unserved operations in the current interval
	sink      Sink
	err       error
	// Virtual time: intervals close when a sample's time crosses the boundary.
	tick time.Duration
	// The pages of every interval histogram: one interval's worth, reused.
	pages pagePool
	// A measure window (Measure): only operations intended in [mFrom, mTo) reach the
	// cumulative totals, through win; mLast is when the last of them ended.
	mFrom, mTo int64
	win        []*IntervalSet
	mLast      int64
	// closed counts the intervals closed: the number of the current one.
	closed int64
	// The open intervals after the current one, for samples recorded ahead of the clock
	// (AddVirtual); nil until the first.
	ahead *ahead
}

// NewCollector collects for nOps operation types. lateAfter marks late samples; sink gets
// every interval (it may be nil).
func NewCollector(nOps int, lateAfter time.Duration, tick time.Duration, sink Sink) *Collector {
	if tick <= 0 {
		tick = time.Second
	}
	c := &Collector{
		lateAfter: int64(lateAfter),
		cur:       make([]*IntervalSet, nOps),
		cum:       make([]*cumSet, nOps),
		sink:      sink,
		tick:      tick,
	}
	c.all = newIntervalSet(&c.pages)
	return c
}

// Add records samples into the current interval.
func (c *Collector) Add(samples []Sample) {
	for i := range samples {
		c.add(&samples[i])
	}
}

// Measure restricts the cumulative totals (Totals) to the operations intended in
// [from, to): a capacity search judges the whole schedule over the same peak window its
// shorter probes run, so that a long run's quiet hours do not dilute the peak's
// percentiles. The intervals (time series, histogram logs) still hold every operation.
// Call it before the first sample.
func (c *Collector) Measure(from, to time.Duration) {
	c.mFrom, c.mTo = int64(from), int64(to)
	c.win = make([]*IntervalSet, len(c.cur))
}

// MeasuredEnd is when the last operation of the measure window ended (0: none yet).
func (c *Collector) MeasuredEnd() time.Duration { return time.Duration(c.mLast) }

func (c *Collector) add(s *Sample) {
	if s.Flags&FlagForeign != 0 {
		if s.Flags&FlagUnserved != 0 {
			c.foreign++
		}
		return
	}
	c.record(c.cur, s)
	c.addWindow(s)
}

// addWindow records s into the measure window's sets if it was intended in the window.
func (c *Collector) addWindow(s *Sample) {
	if c.win != nil && s.Intended >= c.mFrom && s.Intended < c.mTo {
		c.record(c.win, s)
		if s.Flags&(FlagUnserved|FlagDropped) == 0 && s.End > c.mLast {
			c.mLast = s.End
		}
	}
}

// setOf is sets[op], made on first use.
func (c *Collector) setOf(sets []*IntervalSet, op uint16) *IntervalSet {
	set := sets[op]
	if set == nil {
		set = newIntervalSet(&c.pages)
		sets[op] = set
	}
	return set
}

// record counts one sample into sets[s.Op].
func (c *Collector) record(sets []*IntervalSet, s *Sample) {
	set := c.setOf(sets, s.Op)
	lag := s.Lag()
	if !set.count(s.Flags, s.Class, s.Flags&FlagLate != 0 || lag > c.lateAfter) {
		return
	}
	// A failed operation still took the time it took: leaving errors out of the latency
	// histograms would flatter a system that times out.
	if lag == 0 {
		set.onTime.record(Clamp(s.Service()))
		return
	}
	set.Response.record(Clamp(s.Response()))
	set.Service.record(Clamp(s.Service()))
	set.Lag.record(Clamp(lag))
}

// count counts a sample with these flags and class (late: it started late) and
// reports whether it completed, and so has times to record.
func (s *IntervalSet) count(flags, class uint8, late bool) bool {
	switch {
	case flags&FlagUnserved != 0:
		s.Unserved++
		return false
	case flags&FlagDropped != 0:
		s.Dropped++
		return false
	case flags&FlagAbandoned != 0:
		s.Abandoned++
		return false
	}
	s.Completed++
	if class == uint8(OK) {
		s.OK++
	} else if int(class) < NumClasses {
		s.Errors[class]++
	} else {
		s.Errors[Server]++
	}
	if late {
		s.Late++
	}
	return true
}

// Flush closes the interval [start, end), hands it to the sink and folds it into the
// cumulative totals. In a virtual-time run, the whole intervals before the one the
// latest sample falls in close first (AddVirtual leaves them open until the clock
// passes them), so that [start, end) is the one completion order would leave.
func (c *Collector) Flush(end time.Duration, inFlight int64) {
	c.drainVirtual()
	c.flush(end, inFlight)
}

func (c *Collector) flush(end time.Duration, inFlight int64) {
	iv := Interval{Start: c.start, End: end, Ops: c.cur, All: c.all, InFlight: inFlight, ForeignUnserved: c.foreign}
	for _, s := range c.cur {
		if s != nil {
			s.settle()
			c.all.merge(s)
		}
	}
	if c.sink != nil && c.err == nil {
		c.err = c.sink(&iv)
	}
	into := c.cur
	if c.win != nil {
		into = c.win
		for _, s := range c.cur {
			if s != nil {
				s.reset()
			}
		}
	}
	for i, s := range into {
		if s == nil {
			continue
		}
		if c.win != nil {
			s.settle() // the current sets were settled for the sink above; the window's were not
		}
		if c.cum[i] == nil {
			c.cum[i] = &cumSet{}
		}
		s.mergeInto(c.cum[i])
		s.reset() // kept allocated for the next interval
	}
	c.all.reset()
	c.foreign = 0
	c.start = end
	c.closed++
}

// Err is the first error the sink returned (writing stops at the first error).
func (c *Collector) Err() error { return c.err }

// Totals returns the cumulative set of every operation type (nil where none ran), made
// anew on each call. The current, unflushed interval is not included: Flush first.
func (c *Collector) Totals() []*Set {
	out := make([]*Set, len(c.cum))
	for i, cs := range c.cum {
		if cs != nil {
			out[i] = cs.set()
		}
	}
	return out
}

// Now is the start of the interval being collected: in a virtual-time run, the one the
// latest sample falls in.
func (c *Collector) Now() time.Duration { return c.nowVirtual() }
