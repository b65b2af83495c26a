package engine

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"strings"
	"time"

	"github.com/shardbench/shardbench/internal/backend"
)

// DefaultSpinBelow: when the dispatcher spins, waits shorter than this are spun (yielding)
// instead of slept, because a timer sleep overshoots: Go's runtime waits for timers in
// epoll with a millisecond granularity, so any requested sleep under a millisecond takes
// about one (1.05–2 ms on the 2-core Debian VMs this was measured on): a hundred times
// the gap between operations at 100K ops/s. Longer waits sleep until spinBelow before the
// deadline, then spin.
const DefaultSpinBelow = 2 * time.Millisecond

// AutoSpin chooses how the dispatcher waits for intended starts when the user did not
// (--spin auto, Config.SpinBelow 0), and says why in words for the results.
//
// Spinning gives starts within microseconds of their intended times for up to a core of
// CPU; sleeping on timers costs almost nothing and starts up to about a millisecond late,
// in bursts of what fell due meanwhile (counted as schedule lag; response time still
// counts from the intended start). A spinning dispatcher beside a database on the same
// machine takes a core the server needs: the run would measure the harness's
// interference. So: no spinning when a server the run drives is on this machine or the
// process has one CPU; spinning otherwise (a dedicated load machine, or a backend without
// a server).
func AutoSpin(variants []VariantBackend) (spinBelow time.Duration, reason string) {
	cpus := runtime.GOMAXPROCS(0)
	if host := localServer(variants); host != "" {
		return -1, fmt.Sprintf("sleeps on timers (no spin): a server of this run is on this "+
			"machine (%s) and a spinning dispatcher would take a core from it; starts may be "+
			"up to ~1 ms late, counted as schedule lag",
			host)
	}
	if cpus < 2 {
		return -1, "sleeps on timers (no spin): one CPU; starts may be up to ~1 ms late, counted as schedule lag"
	}
	return DefaultSpinBelow, fmt.Sprintf("spins the last %s before each start: no server of this run is on this machine and it has %d CPUs (spinning uses up to one)", DefaultSpinBelow, cpus)
}

// localServer is the first server host of the variants' backends that is an address of
// this machine, or "".
func localServer(variants []VariantBackend) string {
	var local map[string]bool
	for _, v := range variants {
		s, ok := v.Backend.(backend.Servers)
		if !ok {
			continue
		}
		for _, h := range s.ServerHosts() {
			if local == nil {
				local = localAddrs()
			}
			if onThisHost(h, local) {
				return h
			}
		}
	}
	return ""
}

// localAddrs is every address of this machine's interfaces.
func localAddrs() map[string]bool {
	out := map[string]bool{}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return out
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			out[n.IP.String()] = true
		}
	}
	return out
}

// onThisHost reports whether host (an IP address or a name, with or without a port) is
// this machine: a loopback address or one of its interfaces' addresses. Names are
// resolved with a short timeout; an unresolvable name counts as remote.
func onThisHost(host string, local map[string]bool) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "" {
		return false
	}
	ips := []net.IP{net.ParseIP(host)}
	if ips[0] == nil {
		if strings.EqualFold(host, "localhost") {
			return true
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
		if err != nil {
			return false
		}
		ips = ips[:0]
		for _, a := range addrs {
			ips = append(ips, a.IP)
		}
	}
	for _, ip := range ips {
		if ip.IsLoopback() || local[ip.String()] {
			return true
		}
	}
	return false
}

// waiter waits for intended start times on one reused timer (a timer per operation costs
// an allocation and a timer-heap insertion for each).
type waiter struct {
	origin time.Time
	spin   time.Duration // < 0: never spin
	timer  *time.Timer
	done   <-chan struct{}
}

func newWaiter(origin time.Time, spin time.Duration, done <-chan struct{}) *waiter {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &waiter{origin: origin, spin: spin, timer: t, done: done}
}

// until returns at (or just after) origin+at, or false if done is closed first. Waits
// longer than spin sleep on the timer until spin before the deadline; the rest is spun,
// yielding to other goroutines.
func (w *waiter) until(at time.Duration) bool {
	for {
		wait := at - time.Since(w.origin)
		if wait <= 0 {
			return true
		}
		if wait > w.spin {
			// Since Go 1.23 Reset and Stop leave no stale tick in the channel.
			w.timer.Reset(wait - max(w.spin, 0))
			select {
			case <-w.timer.C:
			case <-w.done:
				w.timer.Stop()
				return false
			}
			continue
		}
		runtime.Gosched()
	}
}

func (w *waiter) stop() { w.timer.Stop() }
