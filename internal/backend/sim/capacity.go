package sim

import (
	"fmt"
	"strings"
	"time"

	"github.com/shardbench/shardbench/internal/results"
)

// Capacity is what one simulated server sustains at saturation: operations per second
// of each kind of request it serves alone, cores / mean cost. A mixed load shares the
// cores: the shares of capacity it uses add up to the utilisation.
type Capacity struct {
	Server string // "Cassandra node", "MongoDB member"
	Cores  int
	Rows   []CapacityRow
}

// CapacityRow is one kind of request: its mean CPU cost and the rate one server
// sustains at saturation.
type CapacityRow struct {
	Request string
	Cost    time.Duration
	PerSec  float64
}

// sliceRows is the partition slice the capacity table quotes (a listing reading 100 rows
// of one partition).
const sliceRows = 100

// scanRows is the size of the scan the capacity table quotes (its rows say 100,000):
// rows (documents) read on one node (shard).
const scanRows = 100_000

// Capacities are the servers the options model: a Cassandra node (one replica's share of
// each request) and a MongoDB replica set member.
func (o *Options) Capacities() []Capacity {
	c, m := &o.Cassandra, &o.MongoDB
	row := func(name string, cost time.Duration, cores int) CapacityRow {
		r := CapacityRow{Request: name, Cost: cost}
		if cost > 0 {
			r.PerSec = float64(cores) / cost.Seconds()
		}
		return r
	}
	cass := Capacity{Server: "Cassandra node", Cores: c.Cores, Rows: []CapacityRow{
		row("point read (one replica, one SSTable)", c.Read, c.Cores),
		row("single-row write (one replica's mutation)", c.Write, c.Cores),
		row(fmt.Sprintf("partition slice of %d rows (one replica)", sliceRows), c.Read+c.Row*(sliceRows-1), c.Cores),
		row("scan reading 100,000 rows on the node (its share of a request without partition key)", c.Scan+c.ScanRow*scanRows, c.Cores),
		row("LWT, uncontended (one replica's prepare, read, propose, commit)", 3*c.Write+c.Read, c.Cores),
	}}
	mongo := Capacity{Server: "MongoDB member", Cores: m.Cores, Rows: []CapacityRow{
		row("find by key, one document", m.Find, m.Cores),
		row("insert (primary)", m.Write, m.Cores),
		row("update or delete (primary)", m.Update, m.Cores),
		row("oplog entry applied (secondary)", m.Apply, m.Cores),
		row("broadcast part from an index (one shard's lookup)", m.Find, m.Cores),
		row("collection scan of 100,000 documents (a broadcast without an index)", m.Scan+m.Examine*scanRows, m.Cores),
	}}
	return []Capacity{cass, mongo}
}

// Summary is the capacity in one line, for summary.json's backend details.
func (c Capacity) Summary() string {
	parts := make([]string, len(c.Rows))
	for i, r := range c.Rows {
		name, _, _ := strings.Cut(r.Request, " (")
		name, _, _ = strings.Cut(name, ":")
		parts[i] = fmt.Sprintf("%s %s/s", name, formatRate(r.PerSec))
	}
	return fmt.Sprintf("%d cores; at saturation %s", c.Cores, strings.Join(parts, ", "))
}

// table is the capacity as a server.json table.
func (c Capacity) table() results.ServerTable {
	t := results.ServerTable{
		Title:   fmt.Sprintf("capacity the model assumes: one %s (%d cores) at saturation", c.Server, c.Cores),
		Columns: []string{"request", "mean CPU cost", "per second"},
		Numeric: []bool{false, true, true},
		Note:    "Each kind of request alone; a mixed load shares the cores. Sources: docs/simulator.md.",
	}
	for _, r := range c.Rows {
		t.Rows = append(t.Rows, []string{r.Request, r.Cost.String(), formatRate(r.PerSec)})
	}
	return t
}

// formatRate writes a rate with three significant digits (44.4K, 2.67K, 800).
func formatRate(x float64) string {
	switch {
	case x >= 1e6:
		return fmt.Sprintf("%.3gM", x/1e6)
	case x >= 1e3:
		return fmt.Sprintf("%.3gK", x/1e3)
	}
	return fmt.Sprintf("%.3g", x)
}
