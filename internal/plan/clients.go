package plan

import (
	"fmt"
	"math"
	"slices"
	"strings"

	pc "github.com/shardbench/shardbench/internal/placement/cassandra"
	"github.com/shardbench/shardbench/internal/yamlx"
)

// Clients says in which data center each operation's client runs: the application servers
// the scenario declares (backends.sim.cluster.clients, DC name to share), or by default
// every client in the first data center of the ring. A driver with a DC-aware,
// token-aware policy (gocql's TokenAwareHostPolicy over DCAwareRoundRobinPolicy, the Java
// driver's default policy) sends a request to a coordinator in its client's data center,
// and LOCAL_* consistency levels count that data center only; the simulator and the
// hot-partition observer place reads by it alike.
type Clients struct {
	// DCs are the ring's data centers in the order their first node appears.
	DCs []string
	// cum[i] is the share of clients in DCs[0..i]; single is the index of the data
	// center that takes every client (-1 when they are spread).
	cum    []float64
	single int
	// nodeDC is each node's index into DCs, extended when the ring grows (ring points
	// at the placer's, which a node joining replaces).
	nodeDC []int8
	ring   **pc.Ring
}

// MaxDCs bounds the data centers of a ring (a node's DC index is an int8).
const MaxDCs = 100

// ClientsOf resolves the scenario's client data centers against the ring *ring points
// at (a placer's, which a joining node replaces). A name the ring does not have is an
// error naming the scenario's file, line and field.
func (c *Cluster) ClientsOf(ring **pc.Ring) (*Clients, error) {
	r := *ring
	cl := &Clients{ring: ring, single: 0}
	for _, n := range r.Nodes {
		if !slices.Contains(cl.DCs, n.DC) {
			cl.DCs = append(cl.DCs, n.DC)
		}
	}
	if len(cl.DCs) > MaxDCs {
		return nil, fmt.Errorf("the ring has %d data centers; at most %d are simulated", len(cl.DCs), MaxDCs)
	}
	cl.cum = make([]float64, len(cl.DCs))
	if len(c.Clients) == 0 {
		for i := range cl.cum {
			cl.cum[i] = 1
		}
		cl.nodes()
		return cl, nil
	}
	var errs yamlx.Errors
	total := c.Clients.Total()
	path := yamlx.JoinPath(c.Loc.Path, "clients")
	for _, w := range c.Clients {
		i := slices.Index(cl.DCs, w.Name)
		if i < 0 {
			errs.Add(w.Pos, yamlx.JoinPath(path, w.Name), "no data center %q in the cluster (it has %s)", w.Name, strings.Join(cl.DCs, ", "))
			continue
		}
		cl.cum[i] += w.Weight / total
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	acc := 0.0
	cl.single = -1
	for i, s := range cl.cum {
		if s == 1 {
			cl.single = i
		}
		acc += s
		cl.cum[i] = acc
	}
	cl.cum[len(cl.cum)-1] = math.Inf(1) // rounding never leaves an operation without a DC
	cl.nodes()
	return cl, nil
}

// checkClients validates the clients field on its own (names are checked against the
// ring when it is built).
func (c *Cluster) checkClients(errs *yamlx.Errors) {
	if len(c.Clients) == 0 {
		return
	}
	if c.Clients.Total() <= 0 {
		errs.AddAt(c.Loc, "clients", "the shares must add up to more than 0")
	}
	if len(c.DCs) > 0 {
		for _, w := range c.Clients {
			if !slices.ContainsFunc(c.DCs, func(d DC) bool { return d.Name == w.Name }) {
				errs.Add(w.Pos, yamlx.JoinPath(yamlx.JoinPath(c.Loc.Path, "clients"), w.Name), "no data center %q under dcs", w.Name)
			}
		}
	}
}

func (cl *Clients) nodes() {
	r := *cl.ring
	for len(cl.nodeDC) < len(r.Nodes) {
		n := r.Nodes[len(cl.nodeDC)]
		i := slices.Index(cl.DCs, n.DC)
		if i < 0 {
			i = len(cl.DCs) // a data center a joining node brought
			cl.DCs = append(cl.DCs, n.DC)
			cl.cum = append(cl.cum, cl.cum[len(cl.cum)-1])
		}
		cl.nodeDC = append(cl.nodeDC, int8(i))
	}
}

// Of is the data center (index into DCs) of the client of the operation with sequence
// number seq: fixed per operation, spread over the data centers by their shares.
func (cl *Clients) Of(seq uint64) int {
	if cl.single >= 0 {
		return cl.single
	}
	u := unitOf(seq)
	for i, c := range cl.cum {
		if u < c {
			return i
		}
	}
	return len(cl.cum) - 1
}

// NodeDC is node i's data center (index into DCs).
func (cl *Clients) NodeDC(i int32) int {
	if int(i) >= len(cl.nodeDC) {
		cl.nodes()
	}
	return int(cl.nodeDC[i])
}

// Multi reports whether the ring spans more than one data center.
func (cl *Clients) Multi() bool { return len(cl.DCs) > 1 }

// unitOf maps a sequence number to [0, 1) (SplitMix64's finaliser): the client of an
// operation is a fixed draw, not a rotation that would align with other per-Seq choices.
func unitOf(x uint64) float64 {
	x += 0x6a09e667f3bcc909
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11) / (1 << 53)
}

// Quota is how many replica responses a request waits for, by data center: Total from
// any data centers (the local one first) when PerDC is nil, else PerDC[d] from data
// center d (LOCAL_* levels: the client's only; EACH_QUORUM: a quorum in each).
type Quota struct {
	Total int
	PerDC []int // by index into Clients.DCs; nil: any data center
}

// Quota resolves a consistency level for a client in data center dc: blockFor of the
// level (ConsistencyLevel.blockFor, with the local data center the coordinator's, which
// a DC-aware client keeps in its own). An unparsable level counts as ONE.
func (cl *Clients) Quota(level string, rep pc.Replication, dc int) Quota {
	c, err := pc.ParseConsistency(level)
	if err != nil {
		return Quota{Total: 1}
	}
	need := c.Need(rep, cl.DCs[dc])
	q := Quota{Total: max(need.Total, 1)}
	if need.PerDC != nil {
		q.PerDC = make([]int, len(cl.DCs))
		for name, n := range need.PerDC {
			if i := slices.Index(cl.DCs, name); i >= 0 {
				q.PerDC[i] = n
			} else {
				q.PerDC = append(q.PerDC, n) // a data center with no node: never satisfied
			}
		}
	}
	return q
}

// Pick appends to dst the replicas a read with quota q from a client in data center dc
// asks, rotating by seq as a token-aware, shuffling client spreads them: for a per-DC
// quota, that many from each data center; otherwise q.Total, the local data center's
// first. Fewer when too few replicas exist.
func (cl *Clients) Pick(dst, reps []int32, dc int, q Quota, seq uint64) []int32 {
	n := len(reps)
	if n == 0 {
		return dst
	}
	off := int(seq % uint64(n))
	if q.PerDC != nil {
		for d, want := range q.PerDC {
			for i := 0; i < n && want > 0; i++ {
				r := reps[(off+i)%n]
				if d < len(cl.DCs) && cl.NodeDC(r) == d {
					dst = append(dst, r)
					want--
				}
			}
		}
		return dst
	}
	want := min(q.Total, n)
	for pass := 0; pass < 2 && want > 0; pass++ {
		for i := 0; i < n && want > 0; i++ {
			r := reps[(off+i)%n]
			if (cl.NodeDC(r) == dc) == (pass == 0) {
				dst = append(dst, r)
				want--
			}
		}
	}
	return dst
}

// CheckClients checks the client data centers against a design's replication before any
// ring is built (shardbench validate): each must be a data center the ring will have.
func (c *Cluster) CheckClients(rep pc.Replication) error {
	if len(c.Clients) == 0 {
		return nil
	}
	var have []string
	if len(c.DCs) > 0 {
		for _, d := range c.DCs {
			have = append(have, d.Name)
		}
	} else {
		have = ReplicatedDCs(rep)
	}
	var errs yamlx.Errors
	for _, w := range c.Clients {
		if !slices.Contains(have, w.Name) {
			errs.Add(w.Pos, yamlx.JoinPath(yamlx.JoinPath(c.Loc.Path, "clients"), w.Name), "no data center %q in the cluster (it has %s)", w.Name, strings.Join(have, ", "))
		}
	}
	return errs.Err()
}
