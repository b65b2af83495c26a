package sim

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/plan"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/yamlx"
)

// CheckEvents checks that every node_down and node_up event of the scenario names a node
// the simulated cluster of each design variant has (at the event's time, after the nodes
// and shards earlier events add), so a mistyped node is an error at its line rather than
// an event the run records as failed. Names are those the simulator uses: a Cassandra
// node ("dc1-n3", or its 1-based index), a MongoDB shard ("shard1", its primary) or
// member ("shard1-m2").
func CheckEvents(sc *scenario.Scenario, plans []*design.Compiled) yamlx.Errors {
	var errs yamlx.Errors
	if len(sc.Events) == 0 || len(plans) == 0 {
		return nil
	}
	cluster, err := Layout(sc)
	if err != nil {
		return nil // reported with the sim section
	}
	o, err := ParseOptions(sc.Backends["sim"])
	if err != nil {
		return nil
	}
	events := slices.Clone(sc.Events)
	sort.SliceStable(events, func(i, j int) bool { return events[i].At < events[j].At })
	reported := map[string]bool{}
	for _, p := range plans {
		names, err := eventNames(p.Design, &cluster, o.MongoDB.Members)
		if err != nil {
			continue // the layout's own error is reported by plan and run
		}
		for _, e := range events {
			switch e.Action {
			case scenario.EventAddNode:
				names.addNode(e.DC)
			case scenario.EventAddShard:
				names.addShard(e.Shard)
			case scenario.EventNodeDown, scenario.EventNodeUp:
				if e.Node == "" || names.has(e.Node) {
					continue
				}
				pos, path := e.Loc.At("node")
				msg := fmt.Sprintf("design %s's simulated cluster has no node %s (%s)", p.Design.Name, yamlx.QuoteValue(e.Node), names.describe())
				if key := pos.String() + msg; !reported[key] {
					reported[key] = true
					errs.Add(pos, path, "%s", msg)
				}
			}
		}
	}
	return errs
}

// nodeNames are the node, shard and member names events may use for one design's
// simulated cluster.
type nodeNames struct {
	nodes   []string // Cassandra nodes, in ring order (events may give a 1-based index)
	dcs     []string // the DC of each node
	shards  []string
	members int
}

func eventNames(d *design.Design, c *plan.Cluster, members int) (*nodeNames, error) {
	n := &nodeNames{members: members}
	if d.Cassandra != nil {
		rep, err := plan.Replication(d.Cassandra.Replication)
		if err != nil {
			return nil, err
		}
		ring, err := c.Ring(rep)
		if err != nil {
			return nil, err
		}
		for _, node := range ring.Nodes {
			n.nodes = append(n.nodes, node.Name)
			n.dcs = append(n.dcs, node.DC)
		}
	}
	if d.MongoDB != nil {
		n.shards = c.ShardNames()
	}
	return n, nil
}

// addNode names a joining node as plan.Placer.AddNode does.
func (n *nodeNames) addNode(dc string) {
	if len(n.nodes) == 0 {
		return
	}
	if dc == "" {
		dc = n.dcs[0]
	}
	k := 1
	for _, d := range n.dcs {
		if d == dc {
			k++
		}
	}
	name := dc + "-n" + strconv.Itoa(k)
	for slices.Contains(n.nodes, name) {
		k++
		name = dc + "-n" + strconv.Itoa(k)
	}
	n.nodes = append(n.nodes, name)
	n.dcs = append(n.dcs, dc)
}

// addShard names a new shard as plan.Placer.AddShard does.
func (n *nodeNames) addShard(name string) {
	if n.shards == nil {
		return
	}
	if name == "" {
		name = "shard" + strconv.Itoa(len(n.shards))
	}
	n.shards = append(n.shards, name)
}

func (n *nodeNames) has(node string) bool {
	if nodeIndex(n.nodes, node) >= 0 {
		return true
	}
	for _, s := range n.shards {
		if node == s {
			return true
		}
		if m, ok := strings.CutPrefix(node, s+"-m"); ok {
			if i, err := strconv.Atoi(m); err == nil && i >= 0 && i < n.members {
				return true
			}
		}
	}
	return false
}

func (n *nodeNames) describe() string {
	var parts []string
	if len(n.nodes) > 0 {
		parts = append(parts, fmt.Sprintf("nodes %s … %s, or 1 to %d", n.nodes[0], n.nodes[len(n.nodes)-1], len(n.nodes)))
	}
	if len(n.shards) > 0 {
		parts = append(parts, fmt.Sprintf("shards %s, members like %s-m0 … %s-m%d", strings.Join(n.shards, ", "), n.shards[0], n.shards[0], n.members-1))
	}
	if len(parts) == 0 {
		return "it has none"
	}
	return "it has " + strings.Join(parts, "; ")
}

// maxHeld bounds the operations a simulated run may hold at once. The collector keeps
// every operation until its interval closes (metrics.Collector.AddVirtual), so at worst
// — every node saturated, every operation waiting out load.timeout — it holds the peak
// rate times the timeout: 500,000 for Black Friday's 100K ops/s and 5 s. Those due within
// a few intervals are counted in their histograms at once, those due later wait in 10
// bytes each: 16 M of them stay well under a gigabyte.
const maxHeld = 16 << 20

// CheckMemory refuses a scenario the simulator could not hold in memory: a peak rate and
// load.timeout whose product is more operations than maxHeld. The error names both and
// what to lower.
func CheckMemory(sc *scenario.Scenario) error {
	var peak float64
	for _, p := range sc.Load.Phases {
		peak = max(peak, float64(p.Rate), float64(p.From), float64(p.To), float64(p.Peak))
	}
	held := peak * sc.Load.Timeout.Seconds()
	if held <= maxHeld {
		return nil
	}
	pos, path := sc.Load.Loc.At("timeout")
	return yamlx.Errors{{Pos: pos, Path: path, Msg: fmt.Sprintf(
		"the simulator keeps each operation until it completes or times out: at the peak of %g "+
			"ops/s with a timeout of %s it may hold %.3g operations, over the %d it can "+
			"(lower the rate, --rate-scale, or load.timeout)",
		peak, yamlx.FormatDuration(sc.Load.Timeout), held, maxHeld)}}
}
