package plan

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/shardbench/shardbench/internal/design"
	pc "github.com/shardbench/shardbench/internal/placement/cassandra"
	pm "github.com/shardbench/shardbench/internal/placement/mongo"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/yamlx"
)

// Cluster is the layout keys are placed on when no live cluster is read: a synthetic
// Cassandra ring and a set of MongoDB shards. It is the `cluster:` part of the sim
// backend's options (backends.sim.cluster) and what `shardbench plan` uses.
type Cluster struct {
	Loc yamlx.Loc
	// DCs are the Cassandra data centers. Default: every data center the design
	// replicates to, each with DefaultNodesPerDC nodes on 3 racks.
	DCs []DC `yaml:"dcs,omitempty"`
	// NumTokens is num_tokens per node (default 16, as cassandra.yaml ships since 4.0).
	NumTokens int `yaml:"num_tokens,omitempty"`
	// Allocation is "balanced" (allocate_tokens_for_local_replication_factor, the 4.0+
	// default) or "random" (the pre-4.0 random tokens).
	Allocation string `yaml:"allocation,omitempty"`
	// Shards is the number of MongoDB shards (default 3), named shard0..shardN-1.
	Shards int `yaml:"shards,omitempty"`
	// Seed makes token allocation reproducible (default: the scenario's seed).
	Seed uint64 `yaml:"seed,omitempty"`
	// Clients are the data centers the application's clients run in, with their shares
	// of the operations ({DC1: 70, DC2: 30}); default: every client in the first data
	// center. See [Clients].
	Clients scenario.Weights `yaml:"clients,omitempty"`
	// Live, when set, is a ring read from a live cluster (system.local and
	// system.peers_v2): keys are placed on it instead of a synthetic layout.
	Live *pc.Ring `yaml:"-"`
	// Replication, when set, is the replication a live keyspace has (read from
	// system_schema.keyspaces): keys are placed with it instead of the design's, which a
	// run may have overridden (backends.cassandra.replication).
	Replication *pc.Replication `yaml:"-"`
}

// DC is one synthetic data center.
type DC struct {
	Loc   yamlx.Loc
	Name  string `yaml:"name"`
	Nodes int    `yaml:"nodes"`
	Racks int    `yaml:"racks,omitempty"`
}

// DefaultNodesPerDC is the nodes per data center of the default ring: twice the usual
// replication factor, so that replica sets differ and a hot partition shows as hot nodes
// (with RF 3 on 3 nodes every node holds every partition).
const DefaultNodesPerDC = 6

// DefaultShards is the default MongoDB shard count.
const DefaultShards = 3

// Check validates the layout and names the offending field.
func (c *Cluster) Check() error {
	var errs yamlx.Errors
	seen := map[string]bool{}
	for _, dc := range c.DCs {
		if dc.Name == "" {
			errs.AddAt(dc.Loc, "name", "a data center needs a name")
		}
		if seen[dc.Name] {
			errs.AddAt(dc.Loc, "name", "data center %q is listed twice", dc.Name)
		}
		seen[dc.Name] = true
		if dc.Nodes < 1 || dc.Nodes > 1000 {
			errs.AddAt(dc.Loc, "nodes", "must be between 1 and 1000, got %d", dc.Nodes)
		}
		if dc.Racks < 0 || dc.Racks > dc.Nodes {
			errs.AddAt(dc.Loc, "racks", "must be between 1 and the node count, got %d", dc.Racks)
		}
	}
	if c.NumTokens < 0 || c.NumTokens > 1024 {
		errs.AddAt(c.Loc, "num_tokens", "must be between 1 and 1024, got %d", c.NumTokens)
	}
	switch c.Allocation {
	case "", "balanced", "random":
	default:
		errs.AddAt(c.Loc, "allocation", "must be balanced or random, got %q", c.Allocation)
	}
	if c.Shards < 0 || c.Shards > 1000 {
		errs.AddAt(c.Loc, "shards", "must be between 1 and 1000, got %d", c.Shards)
	}
	c.checkClients(&errs)
	return errs.Err()
}

// Replication converts a design's keyspace replication.
func Replication(r design.Replication) (pc.Replication, error) {
	m := map[string]string{"class": r.Class}
	if r.Factor > 0 {
		m["replication_factor"] = strconv.Itoa(r.Factor)
	}
	var dcs []string
	for _, dc := range r.DCs {
		m[dc.DC] = strconv.Itoa(dc.Factor)
		dcs = append(dcs, dc.DC)
	}
	return pc.ParseReplication(m, dcs)
}

// Ring builds the synthetic ring for a design's replication: the listed data centers, or
// by default one per replicated data center ("dc1" for SimpleStrategy).
func (c *Cluster) Ring(rep pc.Replication) (*pc.Ring, error) {
	if c.Live != nil {
		have := map[string]bool{}
		for _, n := range c.Live.Nodes {
			have[n.DC] = true
		}
		for _, dc := range ReplicatedDCs(rep) {
			if !have[dc] && rep.Strategy == pc.NetworkTopologyStrategy {
				return nil, fmt.Errorf("the design replicates to data center %q, which the live cluster does not have", dc)
			}
		}
		return c.Live, nil
	}
	spec := pc.RingSpec{NumTokens: c.NumTokens, Seed: c.Seed}
	if c.Allocation == "random" {
		spec.Allocation = pc.AllocRandom
	}
	for _, dc := range c.DCs {
		spec.DCs = append(spec.DCs, pc.DCSpec{Name: dc.Name, Nodes: dc.Nodes, Racks: max(dc.Racks, 1)})
	}
	if len(spec.DCs) == 0 {
		for _, n := range ReplicatedDCs(rep) {
			spec.DCs = append(spec.DCs, pc.DCSpec{Name: n, Nodes: DefaultNodesPerDC, Racks: 3})
		}
	}
	for dc, f := range rep.DCs {
		if f <= 0 {
			continue
		}
		found := false
		for _, d := range spec.DCs {
			found = found || d.Name == dc
		}
		if !found {
			return nil, fmt.Errorf("the design replicates to data center %q, which the cluster does not have (cluster.dcs)", dc)
		}
	}
	if rf := rep.Total(); rf > 0 {
		spec.AllocRF = min(rf, 3)
	}
	return pc.BuildRing(spec)
}

// ReplicatedDCs are the data centers a replication places replicas in, sorted: those
// with a factor under NetworkTopologyStrategy, "dc1" under SimpleStrategy.
func ReplicatedDCs(rep pc.Replication) []string {
	if rep.Strategy != pc.NetworkTopologyStrategy || len(rep.DCs) == 0 {
		return []string{"dc1"}
	}
	var names []string
	for dc, f := range rep.DCs {
		if f > 0 {
			names = append(names, dc)
		}
	}
	slices.Sort(names)
	return names
}

// ShardNames are the MongoDB shard names of the layout.
func (c *Cluster) ShardNames() []string {
	n := c.Shards
	if n <= 0 {
		n = DefaultShards
	}
	out := make([]string, n)
	for i := range out {
		out[i] = "shard" + strconv.Itoa(i)
	}
	return out
}

// Pattern is a MongoDB step's shard key pattern (nil for an unsharded collection).
func Pattern(s *design.Step) pm.KeyPattern {
	if len(s.KeyColumns) == 0 {
		return nil
	}
	p := make(pm.KeyPattern, len(s.KeyColumns))
	for i, name := range s.KeyColumns {
		p[i] = pm.KeyField{Name: name, Hashed: i < len(s.Hashed) && s.Hashed[i]}
	}
	return p
}
