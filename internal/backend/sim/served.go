package sim

import (
	"strconv"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/results"
)

// Served is what one simulated Cassandra node did for one table: the requests it served
// as a replica and those it coordinated, counted as the servers' own counters count them
// (system_views.local_read_latency / local_write_latency and coordinator_read_latency /
// coordinator_write_latency), so that `shardbench fidelity` can put the two side by side.
type Served struct {
	Node, Table string
	// Reads counts every replica a read asked (data and digest requests alike); Writes
	// every live replica a mutation went to. A request without its partition key (a
	// range scan) is counted by neither: Cassandra counts those apart (range latency).
	Reads, Writes int64
	// CoordinatorReads and CoordinatorWrites are the requests this node coordinated.
	CoordinatorReads, CoordinatorWrites int64
}

// servedCounts is the simulator's count of Served, per node and table.
type servedCounts struct {
	tables  []string
	index   map[string]int32
	byStep  []int32 // by Step.ID: the step's table index, -1 until seen
	perNode [][]Served
}

func (c *servedCounts) table(s *design.Step) int32 {
	for int(s.ID) >= len(c.byStep) {
		c.byStep = append(c.byStep, -1)
	}
	if t := c.byStep[s.ID]; t >= 0 {
		return t
	}
	if c.index == nil {
		c.index = map[string]int32{}
	}
	t, ok := c.index[s.Target]
	if !ok {
		t = int32(len(c.tables))
		c.index[s.Target] = t
		c.tables = append(c.tables, s.Target)
	}
	c.byStep[s.ID] = t
	return t
}

// at is the count of node n and table t.
func (c *servedCounts) at(n int32, t int32) *Served {
	if int(n) < len(c.perNode) && int(t) < len(c.perNode[n]) {
		return &c.perNode[n][t]
	}
	return c.grow(n, t)
}

// grow makes room for the count of node n and table t, and returns it.
func (c *servedCounts) grow(n int32, t int32) *Served {
	for int(n) >= len(c.perNode) {
		c.perNode = append(c.perNode, nil)
	}
	row := c.perNode[n]
	for int(t) >= len(row) {
		row = append(row, Served{})
	}
	c.perNode[n] = row
	return &row[t]
}

// write counts a mutation of step s coordinated by coord and sent to replicas.
func (c *servedCounts) write(s *design.Step, coord int32, replicas []int32) {
	t := c.table(s)
	c.at(coord, t).CoordinatorWrites++
	for _, r := range replicas {
		c.at(r, t).Writes++
	}
}

// read counts a read of step s coordinated by coord (-1: not counted as coordinated)
// that asked replicas.
func (c *servedCounts) read(s *design.Step, coord int32, replicas []int32) {
	t := c.table(s)
	if coord >= 0 {
		c.at(coord, t).CoordinatorReads++
	}
	for _, r := range replicas {
		c.at(r, t).Reads++
	}
}

// list is every node's counts for every table the run touched, node names from names.
func (c *servedCounts) list(names []string) []Served {
	var out []Served
	for n, name := range names {
		for t, table := range c.tables {
			s := Served{}
			if n < len(c.perNode) && t < len(c.perNode[n]) {
				s = c.perNode[n][t]
			}
			s.Node, s.Table = name, table
			out = append(out, s)
		}
	}
	return out
}

// Served is, per simulated Cassandra node and table, the requests served and coordinated
// (nil for a design without a Cassandra part, or before the run).
func (s *Simulator) Served() []Served {
	if s.cass == nil {
		return nil
	}
	return s.cass.served.list(s.cass.names())
}

// servedTable is Served as a server.json table, with the columns of a real run's
// "local reads and writes per node and table" beside the coordinated requests.
func servedTable(list []Served) results.ServerTable {
	t := results.ServerTable{Title: "simulated local reads and writes per node and table, and requests coordinated", Subject: "nodes",
		Columns: []string{"node", "table", "reads", "writes", "coordinated reads", "coordinated writes"},
		Numeric: []bool{false, false, true, true, true, true},
		Note:    "counted as Cassandra's own counters count them: a read on every replica asked, a write on every live replica; scans (no partition key) are not counted"}
	i64 := func(n int64) string { return strconv.FormatInt(n, 10) }
	for _, s := range list {
		t.Rows = append(t.Rows, []string{s.Node, s.Table, i64(s.Reads), i64(s.Writes), i64(s.CoordinatorReads), i64(s.CoordinatorWrites)})
	}
	return t
}

// Utilisation is each simulated node's (or MongoDB member's) mean utilisation over the
// run, as server.json's per-node table gives it.
func (s *Simulator) Utilisation() map[string]float64 {
	out := map[string]float64{}
	for name, ns := range s.nodes {
		var sum float64
		for _, p := range ns.util {
			sum += p[1]
		}
		if len(ns.util) > 0 {
			out[name] = sum / float64(len(ns.util))
		}
	}
	return out
}

// Unserve marks more operation types as not served (unserved[t] != ""), beyond those the
// design does not serve: a simulation compared with a real backend that drives one
// database serves what that backend serves, no more.
func (s *Simulator) Unserve(unserved []string) {
	for t, why := range unserved {
		if why != "" && t < len(s.unserved) {
			s.unserved[t] = true
		}
	}
}
