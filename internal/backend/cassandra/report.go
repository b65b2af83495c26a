package cassandra

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/shardbench/shardbench/internal/results"
)

// serverSnapshot is what each node said at one moment: per node, per table of the
// variant's keyspace, the local read/write counts from system_views.
type serverSnapshot struct {
	ok     bool
	err    string
	tables map[string]map[string]tableStat // node → table → stat
	// failed lists the nodes that did not answer (a node down during the run): the
	// others' figures still count.
	failed map[string]string
}

type tableStat struct {
	reads, writes   int64
	readMS, writeMS float64 // p99 over the views' recent window (system_views keeps no mean)
	// Requests this node coordinated for the table, its largest partition and the table's
	// size on its disk (whole MiB, as the views round them), rows per read (p99).
	coordReads, coordWrites  int64
	maxPartitionMiB, diskMiB int64
	rowsP99                  float64
	// From system.size_estimates (the node's local ranges): estimated partitions and
	// their total bytes (mean size × count, summed over ranges).
	estPartitions, estBytes int64
}

// nodeQuery is one per-table figure each node is asked for: from a table of the node's
// own (virtual tables, local size estimates), cols after table_name, and add folding one
// row's cells into the table's stat (size_estimates has a row per token range).
type nodeQuery struct {
	from, cols string
	// required: a node that cannot answer is left out of the per-node tables. Optional
	// figures only stay empty (older servers lack some views).
	required bool
	add      func(st *tableStat, cell []float64)
}

var nodeQueries = []nodeQuery{
	{"system_views.local_read_latency", "count, p99th_ms", true, func(st *tableStat, c []float64) { st.reads, st.readMS = int64(c[0]), c[1] }},
	{"system_views.local_write_latency", "count, p99th_ms", true, func(st *tableStat, c []float64) { st.writes, st.writeMS = int64(c[0]), c[1] }},
	{"system_views.coordinator_read_latency", "count", false, func(st *tableStat, c []float64) { st.coordReads = int64(c[0]) }},
	{"system_views.coordinator_write_latency", "count", false, func(st *tableStat, c []float64) { st.coordWrites = int64(c[0]) }},
	{"system_views.max_partition_size", "mebibytes", false, func(st *tableStat, c []float64) { st.maxPartitionMiB = int64(c[0]) }},
	{"system_views.disk_usage", "mebibytes", false, func(st *tableStat, c []float64) { st.diskMiB = int64(c[0]) }},
	{"system_views.rows_per_read", "p99th", false, func(st *tableStat, c []float64) { st.rowsP99 = c[0] }},
	// Per local token range, refreshed every size_estimates_update_interval (5 minutes
	// by default).
	{"system.size_estimates", "partitions_count, mean_partition_size", false, func(st *tableStat, c []float64) {
		st.estPartitions += int64(c[0])
		st.estBytes += int64(c[0] * c[1])
	}},
}

// snapshot asks every node (pinned with SetHostID) for the nodeQueries' figures of the
// variant's keyspace.
func (b *Backend) snapshot(ctx context.Context) serverSnapshot {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	s := serverSnapshot{tables: map[string]map[string]tableStat{}, failed: map[string]string{}}
nodes:
	for _, h := range b.session.GetHosts() {
		node := h.ConnectAddress().String()
		m := map[string]tableStat{}
		for _, q := range nodeQueries {
			iter := b.session.Query("SELECT table_name, "+q.cols+" FROM "+q.from+" WHERE keyspace_name = ?", b.keyspace).
				SetHostID(h.HostID()).Consistency(gocql.One).IterContext(ctx)
			var table string
			cells := make([]any, strings.Count(q.cols, ",")+1) // bigint counts and sizes, double percentiles
			dest := []any{&table}
			for i := range cells {
				dest = append(dest, &cells[i])
			}
			vals := make([]float64, len(cells))
			for iter.Scan(dest...) {
				for i, c := range cells {
					vals[i] = toFloat(c)
				}
				st := m[table]
				q.add(&st, vals)
				m[table] = st
			}
			if err := iter.Close(); err != nil && q.required {
				s.failed[node] = q.from + ": " + b.log.Redact(err.Error())
				continue nodes
			}
		}
		s.tables[node] = m
	}
	s.ok = len(s.tables) > 0
	if !s.ok {
		var errs []string
		for n, e := range s.failed {
			errs = append(errs, n+": "+e)
		}
		sort.Strings(errs)
		s.err = strings.Join(errs, "; ")
	}
	return s
}

// Report adds the per-node coordinator counts to the variant and the cluster's view to
// server.json: release version, nodes with DC/rack and token counts, requests each node
// coordinated (client-side), and per node and table the local reads and writes
// (system_views, after − before), which count replica work: at RF 3 every write lands on
// three nodes.
func (b *Backend) Report(ctx context.Context, v *results.SummaryVariant, dir *results.Dir) error {
	coords := b.obs.snapshot()
	after := b.snapshot(ctx)
	for _, n := range b.log.Notes() {
		if !contains(v.Notes, n) {
			v.Notes = append(v.Notes, n)
		}
	}
	if n := b.foreign.Load(); n > 0 {
		v.Notes = append(v.Notes, fmt.Sprintf("internal error (please report): %d operation(s) with steps on another database (MongoDB) reached the cassandra backend and were counted as client errors", n))
	}
	for _, c := range coords {
		v.Nodes = append(v.Nodes, results.NodeCount{Node: c.Node, Ops: c.Requests})
	}
	sv := results.ServerVariant{Variant: v.Name, Source: fmt.Sprintf("system.local/peers_v2 + system_views (Apache Cassandra %s, %d nodes)", b.release, len(b.peers))}
	nt := results.ServerTable{Title: "nodes (system.local / system.peers_v2)", Subject: "nodes",
		Columns: []string{"node", "dc", "rack", "tokens", "owns (primary)"}, Numeric: []bool{false, false, false, true, true}}
	own := make([]float64, len(b.ring.Nodes))
	for i := range b.ring.Tokens {
		own[b.ring.Owner[i]] += b.ring.Size(i)
	}
	for i, p := range b.peers {
		nt.Rows = append(nt.Rows, []string{p.Host, p.DC, p.Rack, strconv.Itoa(len(p.Tokens)), fmt.Sprintf("%.1f%%", 100*own[b.ring.NodeIndex(p.Host)])})
		_ = i
	}
	sv.Tables = append(sv.Tables, nt)
	ct := results.ServerTable{Title: "requests per coordinator (client-side, from the driver's iterator)", Subject: "nodes",
		Columns: []string{"node", "requests", "batches", "errors", "mean ms"}, Numeric: []bool{false, true, true, true, true}}
	var total int64
	for _, c := range coords {
		total += c.Requests
		ct.Rows = append(ct.Rows, []string{c.Node, itoa(c.Requests), itoa(c.Batches), itoa(c.Errors), strconv.FormatFloat(c.MeanMS, 'f', 2, 64)})
	}
	sv.Tables = append(sv.Tables, ct)
	if b.before.ok && after.ok {
		lt := results.ServerTable{Title: "local reads and writes per node and table during the run (system_views.local_read/write_latency, after − before)", Subject: "nodes",
			Columns: []string{"node", "table", "reads", "writes", "read p99 ms", "write p99 ms"}, Numeric: []bool{false, false, true, true, true, true}}
		var nodes []string
		for n := range after.tables {
			if _, ok := b.before.tables[n]; ok {
				nodes = append(nodes, n)
			}
		}
		sort.Strings(nodes)
		var missing []string
		for _, snap := range []serverSnapshot{b.before, after} {
			for n, e := range snap.failed {
				missing = append(missing, n+" ("+e+")")
			}
		}
		sort.Strings(missing)
		if len(missing) > 0 {
			sv.Notes = append(sv.Notes, "nodes that did not answer before or after the run, left out of the per-node tables: "+strings.Join(slices.Compact(missing), "; "))
		}
		st := results.ServerTable{Title: "per node and table after the run (system_views: " +
			"coordinator_read/write_latency, max_partition_size, disk_usage, rows_per_read; " +
			"system.size_estimates)",
			Subject: "nodes",
			Columns: []string{"node", "table", "coordinated reads", "coordinated writes",
				"largest partition MiB", "disk MiB", "rows per read p99", "estimated partitions",
				"mean partition bytes"},
			Numeric: []bool{false, false, true, true, true, true, true, true, true}}
		var localWrites int64
		for _, n := range nodes {
			for _, t := range slices.Sorted(maps.Keys(after.tables[n])) {
				a, p := after.tables[n][t], b.before.tables[n][t]
				lt.Rows = append(lt.Rows, []string{n, t, itoa(a.reads - p.reads), itoa(a.writes - p.writes), strconv.FormatFloat(a.readMS, 'f', 3, 64), strconv.FormatFloat(a.writeMS, 'f', 3, 64)})
				localWrites += a.writes - p.writes
				meanBytes := int64(0)
				if a.estPartitions > 0 {
					meanBytes = a.estBytes / a.estPartitions
				}
				st.Rows = append(st.Rows, []string{n, t, itoa(a.coordReads - p.coordReads),
					itoa(a.coordWrites - p.coordWrites), itoa(a.maxPartitionMiB), itoa(a.diskMiB),
					strconv.FormatFloat(a.rowsP99, 'f', 0, 64), itoa(a.estPartitions),
					itoa(meanBytes)})
			}
		}
		lt.Note = "p99 ms is each node's local latency percentile as system_views reports it (a decaying recent window, not this run alone)"
		sv.Tables = append(sv.Tables, lt)
		st.Note = "sizes are whole MiB as the views round them: 0 means under 1 MiB; memtables " +
			"not yet flushed are not on disk. Estimates come from system.size_estimates, " +
			"which each node refreshes every 5 minutes by default " +
			"(size_estimates_update_interval) from flushed SSTables: after a short run they " +
			"are 0 or stale"
		sv.Tables = append(sv.Tables, st)
		// Each write a coordinator sends should be applied by RF replicas.
		if w := b.statements.Load(); w > 0 && localWrites == 0 && b.writeSteps() {
			sv.Disagreements = append(sv.Disagreements, fmt.Sprintf("the client sent %d statements but no node counted a local write in %s", w, b.keyspace))
		}
	} else {
		msg := after.err
		if msg == "" {
			msg = b.before.err
		}
		sv.Notes = append(sv.Notes, "system_views not available before and after the run: "+msg)
	}
	if f, m := b.found.Load(), b.missed.Load(); f+m > 0 {
		sv.Notes = append(sv.Notes, fmt.Sprintf("reads that found rows: %d of %d (%.0f%%); the table of reads per step says which", f, f+m, 100*float64(f)/float64(f+m)))
	}
	b.loadTableView(&sv)
	if rt := b.reads.Table(); len(rt.Rows) > 0 {
		sv.Tables = append(sv.Tables, rt)
	}
	if a, n := b.applied.Load(), b.notApplied.Load(); a+n > 0 {
		sv.Notes = append(sv.Notes, fmt.Sprintf("lightweight transactions: %d applied, %d not applied (condition false: counted ok, the workload's outcome, not an error)", a, n))
	}
	sv.Notes = append(sv.Notes, b.log.Notes()...)
	_ = total
	return dir.AddServer(sv)
}

func (b *Backend) writeSteps() bool {
	for s := range b.stmts {
		if s.Kind.IsWrite() {
			return true
		}
	}
	return false
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// toFloat converts a virtual table's numeric cell (bigint, int, double, float).
func toFloat(x any) float64 {
	switch v := x.(type) {
	case int64:
		return float64(v)
	case int32:
		return float64(v)
	case int:
		return float64(v)
	case float64:
		return v
	case float32:
		return float64(v)
	}
	return 0
}
