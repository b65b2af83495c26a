package engine

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/workloads"
)

// checkpointEvery is how often (in ticks) an in-progress summary is written, so even a
// SIGKILLed run leaves a readable summary.json that is at most this old.
const checkpointEvery = 5

type worker struct {
	rec  *metrics.Recorder
	busy atomic.Int32 // 1 + op type while executing, 0 when idle
	_    [52]byte     // a cache line of its own: workers on other cores store busy too
}

// runRealtime drives one variant in wall-clock time.
func runRealtime(ctx context.Context, cfg *Config, vi int, checkpoint func(results.SummaryVariant)) (results.SummaryVariant, error) {
	v := &cfg.Variants[vi]
	sc := cfg.Scenario
	src, err := cfg.NewSource()
	if err != nil {
		return results.SummaryVariant{Name: v.Name, Interrupted: true}, err
	}
	started, ok := cfg.variantStart(ctx, vi) // now, or the variant's start on the common clock
	if !ok {
		return results.SummaryVariant{Name: v.Name, Design: v.Design, Database: v.Database, Params: v.Params, Notes: v.Notes, Interrupted: true}, nil
	}
	vw := cfg.Dir.Variant(v.Name, opNames(cfg.Ops), started, timeline(cfg))
	defer vw.Close()
	col := metrics.NewCollector(len(cfg.Ops), sc.Load.LateAfter, cfg.Tick, progressSink(cfg, vi, false, vw.Sink))

	// Operations keep running after an interrupt until the drain timeout; execCtx is
	// canceled only then (or on a hard stop), so a graceful stop measures their real end.
	// It keeps ctx's values: the variant's profiler label among them.
	execCtx, cancelExec := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelExec()

	examples := newExamples()
	workers := make([]*worker, sc.Load.MaxInFlight)
	// inFlight counts the operations handed to a worker and not yet recorded: the
	// dispatcher counts one in before it hands it over, the worker counts it out once done.
	var inFlight atomic.Int64
	ch := make(chan workloads.Op)
	var wg sync.WaitGroup
	origin := cfg.variantOrigin(started) // every sample is nanoseconds since origin (monotonic clock)
	for i := range workers {
		w := &worker{rec: metrics.NewRecorder()}
		workers[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			runWorker(execCtx, w, ch, v.Backend, origin, &inFlight, examples)
		}()
	}
	dispatchRec := metrics.NewRecorder()
	cpuBefore := metrics.ProcessCPU()

	// The ticker owns the collector: it drains every recorder and closes an interval.
	var colMu sync.Mutex // held by the ticker and by the final flush
	drainAll := func() {
		for _, w := range workers {
			w.rec.Drain(col.Add)
		}
		dispatchRec.Drain(col.Add)
	}
	tickerDone := make(chan struct{})
	stopTicker := make(chan struct{})
	go func() {
		defer close(tickerDone)
		clk := newIntervalClock(origin, cfg.Tick, cfg.alignedIntervals())
		defer clk.Stop()
		n := 0
		for {
			select {
			case <-stopTicker:
				return
			case <-clk.C():
			}
			colMu.Lock()
			drainAll()
			// The count includes the one operation the dispatcher may hold while it waits
			// for a worker: in flight are at most the workers.
			col.Flush(clk.End(), min(inFlight.Load(), int64(len(workers))))
			n++
			if n%checkpointEvery == 0 && checkpoint != nil {
				now := time.Since(origin)
				r := variantResult(cfg, vi, col, started, now, min(now, cfg.Schedule.Duration()))
				r.Interrupted = true // not finished yet
				checkpoint(r)
			}
			colMu.Unlock()
		}
	}()

	events := startEvents(ctx, sc.Events, v, origin)
	lateNote := cfg.lateStartNote(origin, time.Now())

	if v.Unserved != nil {
		sw := newWaiter(origin, cfg.SpinBelow, ctx.Done())
		defer sw.stop()
		src = &servedSource{src: src, v: v, sh: cfg.Shard, rec: dispatchRec, w: sw}
	}
	if cfg.Shard.On() {
		src = &ownSource{src: src, sh: cfg.Shard} // after servedSource, which counts every shard's unserved operations
	}
	stopReason := dispatch(ctx, src, ch, dispatchRec, origin, sc.Load.OnFull, &inFlight, len(workers), cfg.SpinBelow, cfg.Schedule.Duration())
	if stopReason == "" && ctx.Err() != nil {
		stopReason = "interrupted" // while servedSource waited for an unserved operation
	}
	close(ch)
	due := min(time.Since(origin), cfg.Schedule.Duration())

	// Drain: wait for in-flight operations up to the drain timeout, or until a hard stop.
	drained := make(chan struct{})
	go func() { wg.Wait(); close(drained) }()
	timer := time.NewTimer(sc.Load.DrainTimeout)
	select {
	case <-drained:
	case <-timer.C:
	case <-cfg.HardStop:
	}
	timer.Stop()
	cancelExec()
	select {
	case <-drained:
	case <-time.After(2 * time.Second): // backends that ignore cancellation
	}
	close(stopTicker)
	<-tickerDone
	// The client's CPU is that of the measured loop (dispatch, operations, intervals,
	// checkpoints, drain), as a bare driver loop would measure its own: the summary
	// computed next is reporting, not a cost per operation.
	cpu := metrics.ProcessCPU() - cpuBefore
	evs := events.stop()

	colMu.Lock()
	defer colMu.Unlock()
	drainAll()
	// Operations still executing now are abandoned: counted, never silently lost.
	for _, w := range workers {
		if b := w.busy.Load(); b > 0 {
			s := metrics.Sample{Op: uint16(b - 1), Flags: metrics.FlagAbandoned}
			col.Add([]metrics.Sample{s})
		}
	}
	span := time.Since(origin)
	col.Flush(span, 0)
	out := variantResult(cfg, vi, col, started, span, due)
	if cpu > 0 {
		out.Client = &results.ClientCost{CPUS: cpu.Seconds()}
		if n := out.Totals.Completed; n > 0 {
			out.Client.PerOpUS = float64(cpu.Microseconds()) / float64(n)
		}
	}
	out.Events = evs
	if lateNote != "" {
		out.Notes = append(out.Notes, lateNote)
	}
	out.ErrorExamples = examples.list()
	out.Interrupted = stopReason != ""
	if r, ok := v.Backend.(backend.Reporter); ok {
		if err := r.Report(context.Background(), &out, cfg.Dir); err != nil {
			out.Notes = append(out.Notes, "backend report failed: "+err.Error())
		}
	}
	return out, col.Err()
}

func opNames(ops []OpInfo) []string {
	out := make([]string, len(ops))
	for i, o := range ops {
		out[i] = o.Name
	}
	return out
}

func runWorker(ctx context.Context, w *worker, ch <-chan workloads.Op, be backend.Backend, origin time.Time, inFlight *atomic.Int64, ex *examples) {
	// One operation the backend sees through a pointer, for the worker's life: a loop
	// variable passed by address to an interface method would be allocated on every
	// operation.
	op := new(workloads.Op)
	for o := range ch {
		*op = o
		w.busy.Store(int32(op.Type) + 1)
		start := time.Since(origin)
		out := be.Execute(ctx, op)
		end := time.Since(origin)
		w.busy.Store(0)
		w.rec.Record(metrics.Sample{
			Intended: int64(op.Intended), Start: int64(start), End: int64(end),
			Op: op.Type, Class: uint8(out.Class),
		})
		inFlight.Add(-1)
		if out.Class != metrics.OK {
			ex.note(out)
		}
	}
}

// servedSource yields the operations the variant serves. One it does not serve is never
// dispatched and takes no worker: it is counted unserved when it comes due (waited for as
// the dispatcher waits, so it falls in its own interval and an interrupt before it is due
// leaves it uncounted, as a dispatched one would be).
type servedSource struct {
	src Source
	v   *VariantBackend
	sh  Shard // another shard's unserved operation is recorded as foreign
	rec *metrics.Recorder
	w   *waiter
}

func (s *servedSource) Next(op *workloads.Op) bool {
	for s.src.Next(op) {
		if !s.v.unserved(op.Type) {
			return true
		}
		if !s.w.until(op.Intended) {
			return false
		}
		flags := uint8(metrics.FlagUnserved)
		if s.sh.On() && !s.sh.owns(op) {
			flags |= metrics.FlagForeign
		}
		s.rec.Record(metrics.Sample{Intended: int64(op.Intended), Start: int64(op.Intended), End: int64(op.Intended), Op: op.Type, Flags: flags})
	}
	return false
}

// dispatch releases operations at their intended times. It returns why it stopped early
// ("" when the schedule ended).
//
// With on_full: drop, an operation is dropped only when all workers are busy (inFlight at
// the pool's size); otherwise it waits for the free worker to take it, which on a starved
// machine may not be waiting on the channel yet (counted late if it takes long, never
// dropped for it).
//
// The run ends with its schedule (end, from origin; ≤ 0: no end): an operation still
// waiting for a worker when the schedule has ended never starts, nor does any the
// stream still holds, all due by then. Each is counted dropped. A saturated client
// with on_full: queue would otherwise go on starting its backlog long after the
// schedule, a ten-minute scenario lasting hours.
func dispatch(ctx context.Context, src Source, ch chan<- workloads.Op, rec *metrics.Recorder, origin time.Time, onFull string, inFlight *atomic.Int64, workers int, spinBelow, end time.Duration) string {
	var op workloads.Op
	done := ctx.Done()
	drop := onFull == scenario.OnFullDrop
	w := newWaiter(origin, spinBelow, done)
	defer w.stop()
	var ended chan struct{} // closed at the schedule's end; nil: never
	if end > 0 {
		ended = make(chan struct{})
		t := time.AfterFunc(time.Until(origin.Add(end)), func() { close(ended) })
		defer t.Stop()
	}
	for {
		select {
		case <-done:
			return "interrupted"
		default:
		}
		if !src.Next(&op) {
			return ""
		}
		if !w.until(op.Intended) {
			return "interrupted" // not yet due: never intended, so not counted
		}
		// Only this goroutine counts in, so a free worker found here stays free.
		if drop && inFlight.Load() >= int64(workers) {
			rec.Record(metrics.Sample{Intended: int64(op.Intended), Op: op.Type, Flags: metrics.FlagDropped})
			continue
		}
		inFlight.Add(1)
		// A worker waiting takes it at once: the wait below, where the schedule's end is
		// as ready as a worker, could otherwise pick the end and drop an operation a
		// worker was there to start.
		select {
		case ch <- op:
			continue
		default:
		}
		select {
		case ch <- op:
		case <-done:
			// Due but never started: dropped by the interrupt, and counted.
			inFlight.Add(-1)
			rec.Record(metrics.Sample{Intended: int64(op.Intended), Op: op.Type, Flags: metrics.FlagDropped})
			return "interrupted"
		case <-ended:
			inFlight.Add(-1)
			for ok := true; ok; ok = src.Next(&op) {
				rec.Record(metrics.Sample{Intended: int64(op.Intended), Op: op.Type, Flags: metrics.FlagDropped})
			}
			return ""
		}
	}
}

// examples keeps the first few error messages per class, for the summary.
type examples struct {
	mu sync.Mutex
	m  map[string][]string
}

func newExamples() *examples { return &examples{m: map[string][]string{}} }

func (e *examples) note(out backend.Outcome) {
	if out.Err == nil {
		return
	}
	cls := out.Class.String()
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.m[cls]) >= 3 {
		return
	}
	msg := out.Err.Error()
	for _, seen := range e.m[cls] {
		if seen == msg {
			return
		}
	}
	e.m[cls] = append(e.m[cls], msg)
}

func (e *examples) list() map[string][]string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.m) == 0 {
		return nil
	}
	return e.m
}

// eventRunner fires scenario events at their times during a real-time run.
type eventRunner struct {
	mu     sync.Mutex
	out    []results.Event
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func startEvents(ctx context.Context, evs []scenario.Event, v *VariantBackend, origin time.Time) *eventRunner {
	r := &eventRunner{}
	ctx, r.cancel = context.WithCancel(ctx)
	for _, e := range evs {
		r.wg.Add(1)
		go func(e scenario.Event) {
			defer r.wg.Done()
			t := time.NewTimer(e.At - time.Since(origin))
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return
			}
			rec := results.Event{AtS: time.Since(origin).Seconds(), Action: e.Action, Target: eventTarget(e), Note: e.Note}
			switch {
			case e.Action == scenario.EventExec:
				cmd := exec.CommandContext(ctx, e.Command[0], e.Command[1:]...)
				if out, err := cmd.CombinedOutput(); err != nil {
					rec.Error = fmt.Sprintf("%v: %s", err, lastLine(string(out)))
				}
			default:
				if h, ok := v.Backend.(backend.EventHandler); ok {
					if err := h.HandleEvent(ctx, e.Action, eventTarget(e)); err != nil {
						rec.Error = err.Error()
					}
				} else {
					rec.Error = "this backend does not act on " + e.Action + " events (use an exec event with a script)"
				}
			}
			r.mu.Lock()
			r.out = append(r.out, rec)
			r.mu.Unlock()
		}(e)
	}
	return r
}

func eventTarget(e scenario.Event) string {
	switch {
	case e.Node != "":
		return e.Node
	case e.Shard != "":
		return e.Shard
	case len(e.Command) > 0:
		return strings.Join(e.Command, " ")
	}
	return e.DC
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func (r *eventRunner) stop() []results.Event {
	r.cancel()
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out
}
