package cassandra

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Strategy is a keyspace replication class.
type Strategy int

const (
	SimpleStrategy Strategy = iota
	NetworkTopologyStrategy
)

func (s Strategy) String() string {
	if s == NetworkTopologyStrategy {
		return "NetworkTopologyStrategy"
	}
	return "SimpleStrategy"
}

// Replication is a keyspace's replication: SimpleStrategy with RF, or
// NetworkTopologyStrategy with a replication factor per data center.
type Replication struct {
	Strategy Strategy
	RF       int            // SimpleStrategy
	DCs      map[string]int // NetworkTopologyStrategy
}

// Simple is SimpleStrategy with the given replication factor.
func Simple(rf int) Replication { return Replication{Strategy: SimpleStrategy, RF: rf} }

// NTS is NetworkTopologyStrategy with the given per-DC factors.
func NTS(dcs map[string]int) Replication {
	return Replication{Strategy: NetworkTopologyStrategy, DCs: maps.Clone(dcs)}
}

// ParseReplication reads a CQL replication map, e.g. {'class': 'NetworkTopologyStrategy',
// 'dc1': '3'} or {'class': 'SimpleStrategy', 'replication_factor': '3'}, as
// system_schema.keyspaces returns it. For NetworkTopologyStrategy a
// 'replication_factor' (4.0+ shorthand) applies to every data center in dcs that the map
// does not name. Transient replication ("3/1") is not supported.
func ParseReplication(m map[string]string, dcs []string) (Replication, error) {
	class := m["class"]
	if i := strings.LastIndexByte(class, '.'); i >= 0 {
		class = class[i+1:]
	}
	num := func(k, v string) (int, error) {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("cassandra: replication %s: %q is not a replication factor", k, v)
		}
		return n, nil
	}
	switch class {
	case "SimpleStrategy":
		v, ok := m["replication_factor"]
		if !ok {
			return Replication{}, errors.New("cassandra: SimpleStrategy needs replication_factor")
		}
		rf, err := num("replication_factor", v)
		return Simple(rf), err
	case "NetworkTopologyStrategy":
		r := Replication{Strategy: NetworkTopologyStrategy, DCs: map[string]int{}}
		def := -1
		for k, v := range m {
			if k == "class" {
				continue
			}
			n, err := num(k, v)
			if err != nil {
				return Replication{}, err
			}
			if k == "replication_factor" {
				def = n
				continue
			}
			r.DCs[k] = n
		}
		if def >= 0 {
			for _, dc := range dcs {
				if _, ok := r.DCs[dc]; !ok {
					r.DCs[dc] = def
				}
			}
		}
		return r, nil
	}
	return Replication{}, fmt.Errorf("cassandra: unsupported replication class %q", m["class"])
}

// Total is the total replication factor (the sum over data centers for NTS).
func (r Replication) Total() int {
	if r.Strategy == SimpleStrategy {
		return r.RF
	}
	n := 0
	for _, v := range r.DCs {
		n += v
	}
	return n
}

// Factor is the replication factor in one data center (SimpleStrategy: its RF, as
// Cassandra's localQuorumFor does for non-NTS keyspaces).
func (r Replication) Factor(dc string) int {
	if r.Strategy == SimpleStrategy {
		return r.RF
	}
	return r.DCs[dc]
}

// String is e.g. "SimpleStrategy RF 3" or "NetworkTopologyStrategy dc1:3 dc2:3".
func (r Replication) String() string {
	if r.Strategy == SimpleStrategy {
		return "SimpleStrategy RF " + strconv.Itoa(r.RF)
	}
	var b strings.Builder
	b.WriteString("NetworkTopologyStrategy")
	for _, dc := range slices.Sorted(maps.Keys(r.DCs)) {
		b.WriteString(" " + dc + ":" + strconv.Itoa(r.DCs[dc]))
	}
	return b.String()
}

// Placement is a ring with a replication: the replicas of every vnode, precomputed, so a
// lookup is one binary search and a slice.
type Placement struct {
	Ring        *Ring
	Replication Replication
	offs        []int32
	reps        []int32
}

// Place precomputes the replicas of every vnode.
func (r *Ring) Place(rep Replication) (*Placement, error) {
	p := &Placement{Ring: r, Replication: rep, offs: make([]int32, len(r.Tokens)+1)}
	switch rep.Strategy {
	case SimpleStrategy:
		if rep.RF < 0 {
			return nil, fmt.Errorf("cassandra: replication factor %d", rep.RF)
		}
		for i := range r.Tokens {
			p.reps = r.simpleReplicas(p.reps, i, rep.RF)
			p.offs[i+1] = int32(len(p.reps))
		}
	case NetworkTopologyStrategy:
		w := r.newNTSWalker(rep.DCs)
		for i := range r.Tokens {
			p.reps = w.replicas(p.reps, i)
			p.offs[i+1] = int32(len(p.reps))
		}
	default:
		return nil, fmt.Errorf("cassandra: unknown strategy %d", rep.Strategy)
	}
	return p, nil
}

// Replicas are the nodes (indexes into Ring.Nodes) holding t, the primary first, in the
// order Cassandra lists its natural replicas. The slice must not be modified.
func (p *Placement) Replicas(t Token) []int32 { return p.ReplicasOf(p.Ring.VNode(t)) }

// ReplicasOf are the replicas of vnode i.
func (p *Placement) ReplicasOf(i int) []int32 { return p.reps[p.offs[i]:p.offs[i+1]:p.offs[i+1]] }

// Ownership is, per node, the fraction of the token space it holds a replica of (the
// fractions sum to the number of replicas per range, e.g. 3 for RF 3 on enough nodes).
func (p *Placement) Ownership() []float64 {
	own := make([]float64, len(p.Ring.Nodes))
	for i := range p.Ring.Tokens {
		s := p.Ring.Size(i)
		for _, n := range p.ReplicasOf(i) {
			own[n] += s
		}
	}
	return own
}

// SimpleStrategy.calculateNaturalReplicas: walk clockwise from the owning token, adding
// each node not yet added, until RF nodes or the ring is exhausted.
func (r *Ring) simpleReplicas(dst []int32, start, rf int) []int32 {
	base := len(dst)
	n := len(r.Tokens)
	for k := 0; k < n && len(dst)-base < rf; k++ {
		o := r.Owner[(start+k)%n]
		if !slices.Contains(dst[base:], o) {
			dst = append(dst, o)
		}
	}
	return dst
}

type ntsDC struct {
	rf, racks, nodes int
}

type ntsWalker struct {
	r      *Ring
	dcs    []ntsDC // by DC index
	nodeDC []int32 // node -> DC index (-1: DC not replicated)
	nodeRk []int32 // node -> global rack index
	nRacks int
	// scratch
	rackSeen []bool
	rfLeft   []int
	repeats  []int
}

func (r *Ring) newNTSWalker(factors map[string]int) *ntsWalker {
	w := &ntsWalker{r: r, nodeDC: make([]int32, len(r.Nodes)), nodeRk: make([]int32, len(r.Nodes))}
	dcIdx := map[string]int{}
	rackIdx := map[[2]string]int{}
	for i, n := range r.Nodes {
		rf := factors[n.DC]
		if rf <= 0 {
			w.nodeDC[i] = -1
			continue
		}
		d, ok := dcIdx[n.DC]
		if !ok {
			d = len(w.dcs)
			dcIdx[n.DC] = d
			w.dcs = append(w.dcs, ntsDC{rf: rf})
		}
		w.nodeDC[i] = int32(d)
		w.dcs[d].nodes++
		k := [2]string{n.DC, n.Rack}
		rk, ok := rackIdx[k]
		if !ok {
			rk = len(rackIdx)
			rackIdx[k] = rk
			w.dcs[d].racks++
		}
		w.nodeRk[i] = int32(rk)
	}
	w.nRacks = len(rackIdx)
	w.rackSeen = make([]bool, w.nRacks)
	w.rfLeft = make([]int, len(w.dcs))
	w.repeats = make([]int, len(w.dcs))
	return w
}

// replicas follows NetworkTopologyStrategy.calculateNaturalReplicas: one pass over the
// ring from the owning token; per DC, rfLeft = min(rf, nodes in DC) and
// acceptableRackRepeats = rf - racks in DC; a node on a new rack is always taken, a node
// on an already seen rack only while acceptableRackRepeats > 0 (and not already taken).
func (w *ntsWalker) replicas(dst []int32, start int) []int32 {
	base := len(dst)
	toFill := 0
	for d, dc := range w.dcs {
		w.rfLeft[d] = min(dc.rf, dc.nodes)
		w.repeats[d] = dc.rf - dc.racks
		toFill++
	}
	clear(w.rackSeen)
	n := len(w.r.Tokens)
	for k := 0; k < n && toFill > 0; k++ {
		o := w.r.Owner[(start+k)%n]
		d := w.nodeDC[o]
		if d < 0 || w.rfLeft[d] == 0 {
			continue
		}
		rk := w.nodeRk[o]
		if !w.rackSeen[rk] {
			w.rackSeen[rk] = true
			dst = append(dst, o)
		} else {
			if w.repeats[d] <= 0 || slices.Contains(dst[base:], o) {
				continue
			}
			w.repeats[d]--
			dst = append(dst, o)
		}
		w.rfLeft[d]--
		if w.rfLeft[d] == 0 {
			toFill--
		}
	}
	return dst
}
