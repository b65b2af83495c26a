package cassandra

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
)

// observer attributes every request (each attempt, each page) to the node that
// coordinated it: per-node traffic as the client saw it. It is called on every request,
// so the counts of a host are found by the driver's *HostInfo (stable while the host is
// in the ring) without a lock or an allocation; the address is formatted once per host.
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

// ObserveQuery implements gocql.QueryObserver.
func (o *observer) ObserveQuery(_ context.Context, q gocql.ObservedQuery) {
	c := o.host(q.Host)
	c.requests.Add(1)
	c.nanos.Add(int64(q.End.Sub(q.Start)))
	if q.Err != nil {
		c.errors.Add(1)
	}
}

// ObserveBatch implements gocql.BatchObserver.
func (o *observer) ObserveBatch(_ context.Context, b gocql.ObservedBatch) {
	c := o.host(b.Host)
	c.requests.Add(1)
	c.batches.Add(1)
	c.nanos.Add(int64(b.End.Sub(b.Start)))
	if b.Err != nil {
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
