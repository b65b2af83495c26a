package cassandra

import (
	"sort"
	"sync"
	"sync/atomic"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
)

// observer attributes every request to the node that coordinated it, from the driver's
// iterator once the request has returned (Iter.Host, Attempts, Latency): per-node traffic
// as the client saw it. It is not a gocql QueryObserver: with one set, the driver builds
// a map and formats host addresses for every query. It counts on every request, so the
// counts of a host are found by the driver's *HostInfo (stable while the host is in the
// ring) without a lock or an allocation; the address is formatted once per host.
type observer struct {
	byHost sync.Map // *gocql.HostInfo (nil: unknown) -> *hostCount
	mu     sync.Mutex
	hosts  map[string]*hostCount // by address: what snapshot reports
}

type hostCount struct {
	requests, errors, batches atomic.Int64
	nanos                     atomic.Int64
}

func newObserver() *observer { return &observer{hosts: map[string]*hostCount{}} }

func (o *observer) host(h *gocql.HostInfo) *hostCount {
	if c, ok := o.byHost.Load(h); ok {
		return c.(*hostCount)
	}
	name := "unknown"
	if h != nil {
		name = h.ConnectAddress().String()
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	c := o.hosts[name]
	if c == nil {
		c = &hostCount{}
		o.hosts[name] = c
	}
	o.byHost.Store(h, c)
	return c
}

// count adds a request's attempts to the host that served it (the last attempt's host:
// with retries, earlier attempts on other hosts count there too).
func (o *observer) count(iter *gocql.Iter, batch bool, err error) {
	n := int64(iter.Attempts())
	if n == 0 {
		return // never sent: no host was available
	}
	c := o.host(iter.Host())
	c.requests.Add(n)
	c.nanos.Add(iter.Latency() * n)
	if batch {
		c.batches.Add(n)
	}
	if err != nil {
		c.errors.Add(1)
	}
}

// NodeStat is one coordinator's requests as the client saw them.
type NodeStat struct {
	Node                      string
	Requests, Errors, Batches int64
	MeanMS                    float64
}

func (o *observer) snapshot() []NodeStat {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]NodeStat, 0, len(o.hosts))
	for n, c := range o.hosts {
		s := NodeStat{Node: n, Requests: c.requests.Load(), Errors: c.errors.Load(), Batches: c.batches.Load()}
		if s.Requests > 0 {
			s.MeanMS = float64(c.nanos.Load()) / float64(s.Requests) / 1e6
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out
}

func (o *observer) reset() {
	o.mu.Lock()
	o.hosts = map[string]*hostCount{}
	o.byHost.Clear()
	o.mu.Unlock()
}

// Coordinators returns the requests each node coordinated since Open (after set-up).
func (b *Backend) Coordinators() []NodeStat { return b.obs.snapshot() }
