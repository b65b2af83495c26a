package metrics

import "time"

// Recording ahead (AddVirtual): a simulator knows an operation's completion as soon as it
// steps it, long before its virtual clock gets there. Holding each sample until then and
// reporting them in completion order cost a copy and a second pass per sample; instead
// the collector records each straight into the interval its report time falls in. The
// intervals after the current one stay open in a small ring (aheadIntervals of them), and
// a sample due later still, as a saturated client's are (load.on_full: queue, minutes or
// hours of virtual time ahead), waits in its interval's compact log (farLog) until that
// interval enters the ring.
//
// Histograms and counters do not depend on the order of their samples, so every interval
// holds exactly what completion-ordered reporting gave it.

// aheadIntervals is how many intervals after the current one are open: with one-second
// ticks, twice Black Friday's 2 s timeout, so that only a client's own queueing sends a
// sample to the far log.
const aheadIntervals = 4

// reportAt is when a sample is reported: its completion, or a dropped or unserved
// operation's intended time.
func reportAt(s *Sample) int64 {
	if s.Flags&(FlagDropped|FlagUnserved) != 0 {
		return s.Intended
	}
	return s.End
}

// ahead is the open intervals after the current one (Collector.cur): interval k (1 for
// the next) at sets[(head+k-1)%aheadIntervals], with its other shards' unserved count.
type ahead struct {
	sets    [aheadIntervals][]*IntervalSet
	foreign [aheadIntervals]int64
	head    int
	far     farLog
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
		a = &ahead{latest: -1}
		for i := range a.sets {
			a.sets[i] = make([]*IntervalSet, len(c.cur))
		}
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
	end := int64(c.start + c.tick)
	if at < end {
		c.record(c.cur, s)
		return
	}
	k := 1 + (at-end)/int64(c.tick)
	if k <= aheadIntervals {
		c.record(a.sets[(a.head+int(k)-1)%aheadIntervals], s)
		return
	}
	a.far.push(c.closed+k, c.closed+aheadIntervals+1, c.farRec(s))
}

// closeVirtual closes the current interval, a whole tick, and opens the first one
// after the ring's, with the samples that waited for it in the far log.
func (c *Collector) closeVirtual() {
	c.flush(c.start+c.tick, 0)
	a := c.ahead
	// The next interval becomes the current one; the current one's sets, emptied, are
	// the newly opened interval's.
	c.cur, a.sets[a.head] = a.sets[a.head], c.cur
	c.foreign, a.foreign[a.head] = a.foreign[a.head], 0
	last := a.sets[a.head]
	a.head = (a.head + 1) % aheadIntervals
	a.far.take(c.closed+aheadIntervals, func(r *farRec) { c.recordFar(last, r) })
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
}

// farRec is one sample waiting in the far log in 10 bytes: its operation, class and flags
// (with farLate for late), and the bucket indexes (Geometry.CountsIndex) of its clamped
// response, service and lag times, which are all its interval needs of it.
type farRec struct {
	op                 uint16
	class, flags       uint8
	resp, service, lag uint16
}

// farLate marks a late sample in farRec.flags (a bit no Sample flag uses).
const farLate = 1 << 7

func (c *Collector) farRec(s *Sample) farRec {
	r := farRec{op: s.Op, class: s.Class, flags: s.Flags}
	lag := s.Lag()
	if s.Flags&FlagLate != 0 || lag > c.lateAfter {
		r.flags |= farLate
	}
	r.resp = uint16(harness.CountsIndex(Clamp(s.Response())))
	r.service = uint16(harness.CountsIndex(Clamp(s.Service())))
	r.lag = uint16(harness.CountsIndex(Clamp(lag)))
	if lag == 0 {
		r.lag = onTimeLag
	}
	return r
}

// onTimeLag marks in farRec.lag a sample that started at its intended time: an index no
// clamped value has (the largest, an hour's, is below 2^15).
const onTimeLag = 1<<16 - 1

// recordFar counts r into sets[r.op], as record counts the sample it was made of.
func (c *Collector) recordFar(sets []*IntervalSet, r *farRec) {
	set := c.setOf(sets, r.op)
	if !set.count(r.flags, r.class, r.flags&farLate != 0) {
		return
	}
	if r.lag == onTimeLag {
		set.onTime.recordIndex(int32(r.service))
		return
	}
	set.Response.recordIndex(int32(r.resp))
	set.Service.recordIndex(int32(r.service))
	set.Lag.recordIndex(int32(r.lag))
}

// farLog holds the samples due in intervals after the ring's, by interval number
// (Collector.closed counts them), each interval's in chunks of farChunk records.
type farLog struct {
	base int64        // the interval number of ivs[0]
	ivs  [][][]farRec // by interval number from base
	pool [][]farRec   // emptied chunks
}

const farChunk = 409 // records per chunk (4 KiB)

// push logs r for interval n; first is the first interval after the ring's, the next
// one take will be called for.
func (f *farLog) push(n, first int64, r farRec) {
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
}

func (f *farLog) chunk() []farRec {
	if n := len(f.pool); n > 0 {
		c := f.pool[n-1]
		f.pool = f.pool[:n-1]
		return c
	}
	return make([]farRec, 0, farChunk)
}

// take hands interval n's records to fn and forgets them. Intervals are taken in
// order, each once, from the first after the ring's.
func (f *farLog) take(n int64, fn func(*farRec)) {
	if n < f.base || n-f.base >= int64(len(f.ivs)) {
		return
	}
	for _, c := range f.ivs[n-f.base] {
		for i := range c {
			fn(&c[i])
		}
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
