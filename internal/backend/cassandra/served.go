package cassandra

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	placement "github.com/shardbench/shardbench/internal/placement/cassandra"
)

// Served is what one node's own counters say it did for one table of the variant's
// keyspace during the measured run (system_views, after − before): the requests it
// served as a replica and those it coordinated. This is the servers' side of
// `shardbench fidelity`'s placement comparison, in numbers (server.json has the same
// figures as display text).
type Served struct {
	Node, Table string
	// Reads and Writes are local reads and writes (system_views.local_read_latency and
	// local_write_latency counts): replica work, so at RF 2 a write counts on two nodes,
	// and a read counts on every replica the coordinator asked (digest and read-repair
	// reads included). Range reads (scans) are not counted there.
	Reads, Writes int64
	// CoordinatorReads and CoordinatorWrites are the requests this node coordinated for
	// the table (coordinator_read_latency, coordinator_write_latency).
	CoordinatorReads, CoordinatorWrites int64
}

// ServedSince asks every node for its counters now and returns, per node and table, what
// they counted since the measured run started (Open takes the first snapshot after the
// load phase). missing names the nodes that did not answer now or then, with why: their
// rows are left out, the others' stay.
func (b *Backend) ServedSince(ctx context.Context) (served []Served, missing []string) {
	now := b.snapshot(ctx)
	for _, snap := range []serverSnapshot{b.before, now} {
		for n, e := range snap.failed {
			missing = append(missing, n+" ("+e+")")
		}
	}
	for node, tables := range now.tables {
		was, ok := b.before.tables[node]
		if !ok {
			if _, failed := b.before.failed[node]; !failed {
				missing = append(missing, node+" (not in the first snapshot)")
			}
			continue
		}
		for _, t := range slices.Sorted(maps.Keys(tables)) {
			a, p := tables[t], was[t]
			served = append(served, Served{Node: node, Table: t,
				Reads: a.reads - p.reads, Writes: a.writes - p.writes,
				CoordinatorReads: a.coordReads - p.coordReads, CoordinatorWrites: a.coordWrites - p.coordWrites})
		}
	}
	sort.Slice(served, func(i, j int) bool {
		if served[i].Node != served[j].Node {
			return served[i].Node < served[j].Node
		}
		return served[i].Table < served[j].Table
	})
	sort.Strings(missing)
	return served, slices.Compact(missing)
}

// Replication is the variant keyspace's replication as the cluster holds it
// (system_schema.keyspaces): the design's, or backends.cassandra.replication when the run
// overrode it. Placement that is to match the cluster's replicas uses this one.
func (b *Backend) Replication(ctx context.Context) (placement.Replication, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var m map[string]string
	err := b.session.Query("SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = ?", b.keyspace).
		Consistency(gocql.One).ScanContext(ctx, &m)
	if err != nil {
		return placement.Replication{}, fmt.Errorf("cassandra %s: keyspace %s: reading its replication from system_schema.keyspaces: %s", b.target.redacted, b.keyspace, b.log.Redact(err.Error()))
	}
	rep, err := placement.ParseReplication(m, dcs(b.peers))
	if err != nil {
		return placement.Replication{}, fmt.Errorf("cassandra %s: keyspace %s: %w", b.target.redacted, b.keyspace, err)
	}
	return rep, nil
}

// RoundTrip is the median time of n trivial requests to every node, each pinned to its
// node (SELECT release_version FROM system.local): the client-to-node round trip with the
// native protocol's own cost, which is what the simulator's network round trip stands
// for. Measured after the run, on an idle cluster.
func (b *Backend) RoundTrip(ctx context.Context, n int) (time.Duration, error) {
	var times []time.Duration
	for _, h := range b.session.GetHosts() {
		for range n {
			var v string
			start := time.Now()
			err := b.session.Query("SELECT release_version FROM system.local").SetHostID(h.HostID()).
				Consistency(gocql.One).ScanContext(ctx, &v)
			if err != nil {
				return 0, fmt.Errorf("cassandra %s: round trip to %s: %s", b.target.redacted, h.ConnectAddress(), b.log.Redact(err.Error()))
			}
			times = append(times, time.Since(start))
		}
	}
	if len(times) == 0 {
		return 0, fmt.Errorf("cassandra %s: round trip: the driver knows no host", b.target.redacted)
	}
	slices.Sort(times)
	return times[len(times)/2], nil
}
