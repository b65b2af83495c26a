package engine

import (
	"context"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/workloads"
)

// serverBackend is a backend that says which hosts it talks to.
type serverBackend struct {
	backend.Backend
	hosts []string
}

func (s serverBackend) ServerHosts() []string { return s.hosts }

func withServers(hosts ...string) VariantBackend {
	return VariantBackend{Name: "v", Backend: serverBackend{Backend: backend.Null(), hosts: hosts}}
}

// A remote address: one of this machine's own is never in TEST-NET-1 (RFC 5737).
const remote = "192.0.2.7"

func TestAutoSpinAvoidsServersOnThisMachine(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	local := []string{"127.0.0.4", "127.0.0.1:9042", "localhost", "[::1]:27017"}
	// An address of one of this machine's interfaces counts as local too.
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() {
				local = append(local, n.IP.String())
				break
			}
		}
	}
	for _, h := range local {
		spin, reason := AutoSpin([]VariantBackend{withServers(remote, h)})
		if spin >= 0 || !strings.Contains(reason, h) || !strings.Contains(reason, "no spin") {
			t.Errorf("server on %s: spin %v, reason %q; want no spin, naming the host", h, spin, reason)
		}
	}
	for _, vs := range [][]VariantBackend{
		{withServers(remote, remote+":9042")},
		{{Name: "null", Backend: backend.Null()}}, // no server at all
	} {
		if spin, reason := AutoSpin(vs); spin != DefaultSpinBelow || !strings.Contains(reason, "4 CPUs") {
			t.Errorf("no local server, 4 CPUs: spin %v, reason %q; want %v", spin, reason, DefaultSpinBelow)
		}
	}
	runtime.GOMAXPROCS(1)
	if spin, reason := AutoSpin([]VariantBackend{withServers(remote)}); spin >= 0 || !strings.Contains(reason, "one CPU") {
		t.Errorf("one CPU: spin %v, reason %q; want no spin", spin, reason)
	}
}

// The choice is in summary.json, with the reason; a spin the caller set is recorded as such.
func TestSummaryRecordsTheDispatchChoice(t *testing.T) {
	sc := testScenario("uniform", 2, scenario.Phase{Name: "c", Type: "constant", Rate: 200, Duration: 100 * time.Millisecond})
	cfg := testConfig(t, sc, 1, withServers("127.0.0.1"))
	cfg.SpinBelow = 0 // auto
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	d := sum.Dispatch
	if d == nil || d.SpinBelowMS != 0 || !strings.Contains(d.Reason, "127.0.0.1") || d.CPUs != runtime.GOMAXPROCS(0) {
		t.Fatalf("dispatch %+v", d)
	}
	if c := sum.Variants[0].Client; c == nil || c.CPUS <= 0 || c.PerOpUS <= 0 {
		t.Errorf("client CPU not recorded: %+v", c)
	}
	cfg = testConfig(t, sc, 1, withServers("127.0.0.1"))
	cfg.SpinBelow = 3 * time.Millisecond
	sum, err = Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if d := sum.Dispatch; d.SpinBelowMS != 3 || !strings.Contains(d.Reason, "set by the caller") {
		t.Errorf("dispatch %+v", d)
	}
}

// The waiter returns no earlier than the intended time, and at once when done closes.
func TestWaiterWaitsAndStops(t *testing.T) {
	for _, spin := range []time.Duration{-1, DefaultSpinBelow} {
		done := make(chan struct{})
		origin := time.Now()
		w := newWaiter(origin, spin, done)
		for _, at := range []time.Duration{0, 3 * time.Millisecond, 7 * time.Millisecond, 20 * time.Millisecond} {
			if !w.until(at) {
				t.Fatalf("spin %v: until(%v) = false", spin, at)
			}
			if now := time.Since(origin); now < at {
				t.Errorf("spin %v: returned at %v, before %v", spin, now, at)
			}
		}
		go func() { time.Sleep(20 * time.Millisecond); close(done) }()
		start := time.Now()
		if w.until(time.Since(origin) + time.Hour) {
			t.Errorf("spin %v: until an hour away returned true", spin)
		}
		if waited := time.Since(start); waited > 10*time.Second {
			t.Errorf("spin %v: stopped after %v", spin, waited)
		}
		w.stop()
	}
}

// sliceSource yields fixed operations.
type sliceSource struct{ ops []workloads.Op }

func (s *sliceSource) Next(op *workloads.Op) bool {
	if len(s.ops) == 0 {
		return false
	}
	*op, s.ops = s.ops[0], s.ops[1:]
	return true
}

// With on_full: drop, an operation is dropped when every worker is busy, not when a free
// worker has not yet come back to the channel (a goroutine the machine has not scheduled
// yet): that one waits, and is late if it takes long.
func TestDropOnlyWhenEveryWorkerIsBusy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ops := []workloads.Op{{Seq: 0, Intended: 0}, {Seq: 1, Intended: time.Millisecond}, {Seq: 2, Intended: 2 * time.Millisecond}}
		ch := make(chan workloads.Op)
		rec := metrics.NewRecorder()
		var inFlight atomic.Int64
		got := make(chan workloads.Op, 3)
		exited := make(chan struct{})
		go func() {
			defer close(exited)
			// The one worker is free but reaches the channel 5 ms late, each time; it
			// counts itself out when done, as runWorker does.
			for {
				time.Sleep(5 * time.Millisecond)
				op, ok := <-ch
				if !ok {
					return
				}
				got <- op
				inFlight.Add(-1)
			}
		}()
		reason := dispatch(context.Background(), &sliceSource{ops: ops}, ch, rec, time.Now(), scenario.OnFullDrop, &inFlight, 1, -1, 0)
		close(ch)
		<-exited
		if reason != "" {
			t.Fatalf("stopped: %s", reason)
		}
		var dropped int
		rec.Drain(func(ss []metrics.Sample) { dropped = len(ss) })
		if dropped != 0 || len(got) != 3 {
			t.Errorf("%d dropped, %d delivered; want 0 and 3 (the worker was free, only slow to come back)", dropped, len(got))
		}

		// Every worker busy: dropped at once, counted.
		inFlight.Store(1)
		ch2 := make(chan workloads.Op)
		reason = dispatch(context.Background(), &sliceSource{ops: ops}, ch2, rec, time.Now(), scenario.OnFullDrop, &inFlight, 1, -1, 0)
		if reason != "" {
			t.Fatalf("stopped: %s", reason)
		}
		rec.Drain(func(ss []metrics.Sample) {
			dropped = 0
			for _, s := range ss {
				if s.Flags&metrics.FlagDropped != 0 {
					dropped++
				}
			}
		})
		if dropped != 3 {
			t.Errorf("all workers busy: %d dropped, want 3", dropped)
		}
	})
}

// With on_full: queue the run still ends with its schedule: the operation waiting for a
// worker at the end, and every one the stream still holds, never start and are counted
// dropped; dispatch returns at the end, not when the backlog would have been served.
func TestQueueEndsWithTheSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ops []workloads.Op
		for i := range 10 {
			ops = append(ops, workloads.Op{Seq: uint64(i), Intended: time.Duration(i) * time.Millisecond})
		}
		ch := make(chan workloads.Op)
		rec := metrics.NewRecorder()
		var inFlight atomic.Int64
		var got []workloads.Op
		exited := make(chan struct{})
		go func() {
			defer close(exited)
			for op := range ch { // one worker, 4 ms an operation
				got = append(got, op)
				time.Sleep(4 * time.Millisecond)
				inFlight.Add(-1)
			}
		}()
		start := time.Now()
		reason := dispatch(context.Background(), &sliceSource{ops: ops}, ch, rec, start, scenario.OnFullQueue, &inFlight, 1, -1, 10*time.Millisecond)
		took := time.Since(start)
		close(ch)
		<-exited
		if reason != "" {
			t.Fatalf("stopped: %s", reason)
		}
		var dropped []int64
		rec.Drain(func(ss []metrics.Sample) {
			for _, s := range ss {
				if s.Flags&metrics.FlagDropped != 0 {
					dropped = append(dropped, s.Intended)
				}
			}
		})
		// Started at 0, 4 and 8 ms; the one due at 3 ms still waits at 10 ms.
		if len(got) != 3 || len(dropped) != 7 || dropped[0] != int64(3*time.Millisecond) {
			t.Errorf("%d started, dropped (intended ns) %v: want 3 started and the 7 from 3 ms dropped", len(got), dropped)
		}
		if took != 10*time.Millisecond {
			t.Errorf("dispatch returned after %v, want at the schedule's end (10ms)", took)
		}
	})
}
