package engine

import (
	"context"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/scenario"
)

// serverBackend is a backend that says which hosts it talks to.
type serverBackend struct {
	backend.Backend
	hosts []string
}

func (s serverBackend) ServerHosts() []string { return s.hosts }

func withServers(hosts ...string) Variant {
	return Variant{Name: "v", Backend: serverBackend{Backend: backend.Null(), hosts: hosts}}
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
		spin, reason := AutoSpin([]Variant{withServers(remote, h)})
		if spin >= 0 || !strings.Contains(reason, h) || !strings.Contains(reason, "no spin") {
			t.Errorf("server on %s: spin %v, reason %q; want no spin, naming the host", h, spin, reason)
		}
	}
	for _, vs := range [][]Variant{
		{withServers(remote, remote+":9042")},
		{{Name: "null", Backend: backend.Null()}}, // no server at all
	} {
		if spin, reason := AutoSpin(vs); spin != DefaultSpinBelow || !strings.Contains(reason, "4 CPUs") {
			t.Errorf("no local server, 4 CPUs: spin %v, reason %q; want %v", spin, reason, DefaultSpinBelow)
		}
	}
	runtime.GOMAXPROCS(1)
	if spin, reason := AutoSpin([]Variant{withServers(remote)}); spin >= 0 || !strings.Contains(reason, "one CPU") {
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
