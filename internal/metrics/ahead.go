package metrics

import "time"

// Recording ahead (AddVirtual): a simulator knows an operation's completion as soon as it
// steps it, long before its virtual clock gets there. Holding each sample until then and
// reporting them in completion order cost a copy and a second pass per sample; instead
// the collector files each sample under the interval its report time falls in, and counts
// an interval's samples when the interval closes.
//
// A sample is filed as a record of 10 bytes (sampleRec: its operation, class, flags and
// bucket indexes, all its interval needs of it), appended to its interval's log: the
// current interval's in one slice, later ones' (a sample completing past the current
// interval, as a timeout or a saturated client's queue sends it, minutes or hours of
// virtual time ahead) in the far log. Counting each sample as it came touched half a dozen
// cache lines (its operation's set, counters, histogram page table and page) that the
// simulator's step between two samples had evicted, and most of a sample's cost was
// waiting for them; an append writes one line, in sequence, and counting a whole
// interval's log at its close finds those lines in cache.
//
// Histograms and counters do not depend on the order of their samples, so every interval
// holds exactly what completion-ordered reporting gave it.

// reportAt is when a sample is reported: its completion, or a dropped or unserved
// operation's intended time.
func reportAt(s *Sample) int64 {
	if s.Flags&(FlagDropped|FlagUnserved) != 0 {
		return s.Intended
	}
	return s.End
}

// ahead is the logs of the open intervals: the current one (Collector.cur) and any later
// one a sample was filed under.
type ahead struct {
	now []sampleRec // the current interval's records, reused from interval to interval
	far farLog      // later intervals'
	// unserved and dropped count the current interval's unserved and dropped samples by
	// operation, without a record: a design that serves a few of the mix's operations
	// reports mostly unserved ones, a saturated client mostly dropped ones.
	unserved, dropped []int64
	// latest is the latest report time of a sample recorded (-1: none): the intervals up
	// to it close before the last one does (Flush), as completion order closed them.
	latest int64
	// clock is the latest intended time recorded: no sample recorded later is due
	// before it, so the intervals that end by it can close.
	clock int64
}

// AddVirtual records one sample of a virtual-time run. Samples may come in any order in
// which none is due (completed, or for dropped and unserved operations intended) before
// the intended time of a sample recorded earlier: completion order, or intended order
// as a simulator steps operations, each sample recorded as soon as its completion is
// known. Every interval that ends by the sample's intended time closes first; the sample
// goes into the open interval of its report time.
func (c *Collector) AddVirtual(s *Sample) {
	a := c.ahead
	if a == nil {
		a = &ahead{latest: -1, unserved: make([]int64, len(c.cur)), dropped: make([]int64, len(c.cur))}
		c.ahead = a
	}
	a.clock = max(a.clock, s.Intended)
	for a.clock >= int64(c.start+c.tick) {
		c.closeVirtual()
	}
	at := reportAt(s)
	a.latest = max(a.latest, at)
	if s.Flags&FlagForeign != 0 {
		// Due at its intended time, in the current interval.
		if s.Flags&FlagUnserved != 0 {
			c.foreign++
		}
		return
	}
	c.addWindow(s)
	switch {
	// Due at its intended time, which the clock has reached: in the current interval,
	// counted without a record.
	case s.Flags&FlagUnserved != 0:
		a.unserved[s.Op]++
		return
	case s.Flags&FlagDropped != 0:
		a.dropped[s.Op]++
		return
	}
	end := int64(c.start + c.tick)
	if at < end {
		a.now = append(a.now, c.sampleRec(s))
		return
	}
	k := 1 + (at-end)/int64(c.tick)
	a.far.push(c.closed+k, c.closed+1, c.sampleRec(s))
}

// AddUnserved records an operation of type op, intended at t (virtual nanoseconds), that
// the variant does not serve: exactly what AddVirtual records of the Sample {Intended,
// Start and End: t, Op: op, Flags: FlagUnserved}, without one. A design that serves a few
// of the mix's operations reports mostly these (Black Friday: 212 M of 390 M
// variant-operations), and each cost a Sample's set-up and AddVirtual's checks for a
// counter bump; within the current interval, outside a measure window, it is that bump.
func (c *Collector) AddUnserved(op uint16, t int64) {
	a := c.ahead
	if a == nil || t >= int64(c.start+c.tick) || c.win != nil {
		// The first sample, one that closes intervals, or one a window may hold.
		c.AddVirtual(&Sample{Intended: t, Start: t, End: t, Op: op, Flags: FlagUnserved})
		return
	}
	// t is before the current interval's end, which only moves on: as clock and latest
	// AddVirtual would take it, it would never reach an interval's end, which is all
	// they are compared with. The operation is in the current interval.
	a.unserved[op]++
}

// closeVirtual closes the current interval, a whole tick.
func (c *Collector) closeVirtual() {
	c.countLogged()
	c.flush(c.start+c.tick, 0)
}

// countLogged counts the samples filed under the current interval into its sets.
func (c *Collector) countLogged() {
	a := c.ahead
	if a == nil {
		return
	}
	c.countRecs(c.cur, a.now)
	a.now = a.now[:0]
	for op, n := range a.unserved {
		if n != 0 {
			c.setOf(c.cur, uint16(op)).Unserved += n
			a.unserved[op] = 0
		}
	}
	for op, n := range a.dropped {
		if n != 0 {
			c.setOf(c.cur, uint16(op)).Dropped += n
			a.dropped[op] = 0
		}
	}
	a.far.take(c.closed, func(recs []sampleRec) { c.countRecs(c.cur, recs) })
}

// drainVirtual closes every whole interval that ends by the latest sample's report
// time, leaving the last one, which holds every sample still open, to Flush.
func (c *Collector) drainVirtual() {
	if c.ahead == nil {
		return
	}
	for c.ahead.latest >= int64(c.start+c.tick) {
		c.closeVirtual()
	}
	c.countLogged()
}

// sampleRec is one sample filed under its interval, in 10 bytes: its operation, class and
// flags (with recLate for late), and the bucket indexes (Geometry.CountsIndex) of its
// clamped response, service and lag times (none for a sample that did not complete; only
// the service time's for one that started on time), which are all its interval needs of
// it.
type sampleRec struct {
	op                 uint16
	class, flags       uint8
	resp, service, lag uint16
}

// recLate marks a late sample in sampleRec.flags (a bit no Sample flag uses).
const recLate = 1 << 7

func (c *Collector) sampleRec(s *Sample) sampleRec {
	r := sampleRec{op: s.Op, class: s.Class, flags: s.Flags}
	if s.Flags&(FlagUnserved|FlagDropped|FlagAbandoned) != 0 {
		return r // counted, with no times (IntervalSet.count)
	}
	lag := s.Lag()
	if s.Flags&FlagLate != 0 || lag > c.lateAfter {
		r.flags |= recLate
	}
	r.service = uint16(harness.CountsIndex(Clamp(s.Service())))
	if lag == 0 {
		r.lag = onTimeLag // its response time is its service time
		return r
	}
	r.resp = uint16(harness.CountsIndex(Clamp(s.Response())))
	r.lag = uint16(harness.CountsIndex(Clamp(lag)))
	return r
}

// onTimeLag marks in sampleRec.lag a sample that started at its intended time: an index no
// clamped value has (the largest, an hour's, is below 2^15).
const onTimeLag = 1<<16 - 1

// countRecs counts records into sets[r.op], as record counts the samples they were made
// of.
func (c *Collector) countRecs(sets []*IntervalSet, recs []sampleRec) {
	for i := range recs {
		r := &recs[i]
		set := c.setOf(sets, r.op)
		if !set.count(r.flags, r.class, r.flags&recLate != 0) {
			continue
		}
		if r.lag == onTimeLag {
			set.onTime.recordIndex(int32(r.service))
			continue
		}
		set.Response.recordIndex(int32(r.resp))
		set.Service.recordIndex(int32(r.service))
		set.Lag.recordIndex(int32(r.lag))
	}
}

// farLog holds the samples due in intervals after the current one, by interval number
// (Collector.closed counts them), each interval's in chunks of farChunk records.
type farLog struct {
	base int64           // the interval number of ivs[0]
	ivs  [][][]sampleRec // by interval number from base
	pool [][]sampleRec   // emptied chunks
	// tail is the chunk of interval tailN push appended to last (nil: none): a saturated
	// client's samples complete in order, each most often in the interval of the one
	// before.
	tail  *[]sampleRec
	tailN int64
}

const farChunk = 409 // records per chunk (4 KiB)

// push logs r for interval n; first is the first interval after the current one, the
// next one take will be called for.
func (f *farLog) push(n, first int64, r sampleRec) {
	if t := f.tail; t != nil && n == f.tailN && len(*t) < farChunk {
		*t = append(*t, r)
		return
	}
	if len(f.ivs) == 0 {
		f.base = first
	}
	for int64(len(f.ivs)) <= n-f.base {
		f.ivs = append(f.ivs, nil)
	}
	iv := &f.ivs[n-f.base]
	last := len(*iv) - 1
	if last < 0 || len((*iv)[last]) == farChunk {
		*iv = append(*iv, f.chunk())
		last++
	}
	(*iv)[last] = append((*iv)[last], r)
	// The chunk stays where it is until its interval is taken (ivs may grow, but it
	// holds the interval's list of chunks, not the chunks).
	f.tail, f.tailN = &(*iv)[last], n
}

func (f *farLog) chunk() []sampleRec {
	if n := len(f.pool); n > 0 {
		c := f.pool[n-1]
		f.pool = f.pool[:n-1]
		return c
	}
	return make([]sampleRec, 0, farChunk)
}

// take hands interval n's records to fn, a chunk at a time, and forgets them.
// Intervals are taken in order, each once, from the first after the current one.
func (f *farLog) take(n int64, fn func([]sampleRec)) {
	f.tail = nil
	if n < f.base || n-f.base >= int64(len(f.ivs)) {
		return
	}
	for _, c := range f.ivs[n-f.base] {
		fn(c)
		f.pool = append(f.pool, c[:0])
	}
	k := n - f.base + 1
	clear(f.ivs[:k])
	f.ivs = f.ivs[k:]
	f.base = n + 1
}

// nowVirtual is the start of the interval the latest sample falls in: where completion
// order would have the collector.
func (c *Collector) nowVirtual() time.Duration {
	if c.ahead == nil || c.ahead.latest < int64(c.start+c.tick) {
		return c.start
	}
	return c.start + time.Duration((c.ahead.latest-int64(c.start))/int64(c.tick))*c.tick
}
