package cassandra

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/shardbench/shardbench/internal/design"
	placement "github.com/shardbench/shardbench/internal/placement/cassandra"
)

// keyspaceName gives each variant its own keyspace: the design's keyspace (or the
// backends.cassandra.keyspace prefix) and a hash of the variant's name, so variants of a
// sweep never share data and a rerun of the same variant finds its own.
func keyspaceName(prefix, designKS, variant string) string {
	if prefix == "" {
		prefix = designKS
	}
	prefix = strings.ToLower(prefix)
	h := fnv.New32a()
	h.Write([]byte(variant))
	suffix := fmt.Sprintf("_%08x", h.Sum32())
	if len(prefix)+len(suffix) > 48 {
		prefix = prefix[:48-len(suffix)]
	}
	return prefix + suffix
}

// DDL returns the statements that create a design's Cassandra schema in keyspace ks:
// CREATE KEYSPACE with the given replication (the design's when empty), then the design's
// CREATE TYPE and CREATE TABLE statements (design.WriteSchema) pointed at ks.
func DDL(d *design.Design, ks, replication string) ([]string, error) {
	var buf bytes.Buffer
	if err := design.WriteSchema(&buf, d); err != nil {
		return nil, err
	}
	var out []string
	var cur []string
	sc := bufio.NewScanner(&buf)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "// design") { // the MongoDB part of a mixed design
			break
		}
		if len(cur) == 0 && (strings.TrimSpace(line) == "" || strings.HasPrefix(line, "--")) {
			continue
		}
		cur = append(cur, line)
		if strings.HasSuffix(line, ";") {
			s := strings.TrimSuffix(strings.Join(cur, "\n"), ";")
			cur = cur[:0]
			if strings.HasPrefix(s, "CREATE KEYSPACE") {
				if replication != "" {
					i := strings.Index(s, "WITH replication = {")
					j := strings.Index(s[i:], "}")
					s = s[:i] + "WITH replication = " + replication + s[i+j+1:]
				}
			}
			out = append(out, rewriteDDL(s, d.Cassandra.Keyspace, ks))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("design %s has no Cassandra DDL", d.Name)
	}
	return out, nil
}

// rewriteDDL points CREATE KEYSPACE/TYPE/TABLE … IF NOT EXISTS <designKS>[.x] at ks.
func rewriteDDL(s, designKS, ks string) string {
	for _, q := range []string{designKS, `"` + strings.ReplaceAll(designKS, `"`, `""`) + `"`} {
		for _, pre := range []string{"IF NOT EXISTS " + q + ".", "IF NOT EXISTS " + q + "\n", "IF NOT EXISTS " + q + " "} {
			if i := strings.Index(s, pre); i >= 0 {
				return s[:i] + "IF NOT EXISTS " + ks + pre[len("IF NOT EXISTS ")+len(q):] + s[i+len(pre):]
			}
		}
	}
	return s
}

// createSchema creates the variant's keyspace, types and tables (dropping the keyspace
// first with Recreate) and waits for schema agreement, so every coordinator knows the
// tables before the first operation.
func (b *Backend) createSchema(ctx context.Context, s *gocql.Session) error {
	d := b.cfg.Compiled.Design
	repl := ""
	if b.opts.Replication != nil {
		repl, _ = replicationCQL(*b.opts.Replication)
		b.log.Note("keyspace replication %s (backends.cassandra.replication) instead of the design's", repl)
	} else if r := d.Cassandra.Replication; strings.HasSuffix(r.Class, "NetworkTopologyStrategy") {
		var missing []string
		for _, dc := range r.DCs {
			if dc.Factor > 0 && !hasDC(b.peers, dc.DC) {
				missing = append(missing, dc.DC)
			}
		}
		if len(missing) > 0 {
			return &UsageError{fmt.Errorf("design %s replicates to data centre(s) %s, which "+
				"cluster %s does not have (it has %s): set backends.cassandra.replication, "+
				"e.g. {class: NetworkTopologyStrategy, %s: 3}",
				d.Name, strings.Join(missing, ", "), b.target.redacted, strings.Join(dcs(b.peers), ", "), b.localDC)}
		}
	}
	stmts, err := DDL(d, b.keyspace, repl)
	if err != nil {
		return err
	}
	run := func(q string) error {
		qctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		if err := s.Query(q).Consistency(gocql.All).ExecContext(qctx); err != nil {
			return fmt.Errorf("cassandra %s: %s: %s", b.target.redacted, firstLineOf(q), b.log.Redact(err.Error()))
		}
		return nil
	}
	if b.cfg.Recreate {
		b.log.Logf("--recreate: dropping keyspace %s", b.keyspace)
		if err := run("DROP KEYSPACE IF EXISTS " + b.keyspace); err != nil {
			return err
		}
	}
	for _, q := range stmts {
		if err := run(q); err != nil {
			return err
		}
	}
	actx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := s.AwaitSchemaAgreement(actx); err != nil {
		return fmt.Errorf("cassandra %s: schema agreement after creating %s: %s", b.target.redacted, b.keyspace, b.log.Redact(err.Error()))
	}
	return nil
}

func firstLineOf(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// localInfo is what system.local says about the contact point.
type localInfo struct {
	dc, release, cluster, partitioner string
}

// readPeers reads system.local and system.peers_v2 from one connection's coordinator: the
// ring as that node sees it.
func readPeers(ctx context.Context, s *gocql.Session) ([]placement.Peer, localInfo, error) {
	var li localInfo
	var local placement.Peer
	var rpc string
	var port int
	// Both queries must reach the same node: system.local and system.peers_v2 are each
	// node's own view (a round-robin session would ask two nodes and see one node twice).
	hosts := s.GetHosts()
	if len(hosts) == 0 {
		return nil, li, fmt.Errorf("the driver knows no host")
	}
	hostID := hosts[0].HostID()
	err := s.Query("SELECT rpc_address, rpc_port, data_center, rack, tokens, release_version, cluster_name, partitioner FROM system.local").SetHostID(hostID).
		Consistency(gocql.One).ScanContext(ctx, &rpc, &port, &local.DC, &local.Rack, &local.Tokens, &li.release, &li.cluster, &li.partitioner)
	if err != nil {
		return nil, li, err
	}
	local.Host = rpc
	li.dc = local.DC
	if li.partitioner != "" && !strings.HasSuffix(li.partitioner, "Murmur3Partitioner") {
		return nil, li, fmt.Errorf("partitioner %s: the placement code (and this backend's ring) know only Murmur3Partitioner", li.partitioner)
	}
	peers := []placement.Peer{local}
	iter := s.Query("SELECT native_address, native_port, data_center, rack, tokens FROM system.peers_v2").SetHostID(hostID).Consistency(gocql.One).IterContext(ctx)
	var p placement.Peer
	for iter.Scan(&rpc, &port, &p.DC, &p.Rack, &p.Tokens) {
		p.Host = rpc
		peers = append(peers, p)
		p = placement.Peer{}
	}
	if err := iter.Close(); err != nil {
		return nil, li, err
	}
	sort.Slice(peers, func(i, j int) bool { return peers[i].Host < peers[j].Host })
	return peers, li, nil
}

func hasDC(peers []placement.Peer, dc string) bool {
	for _, p := range peers {
		if p.DC == dc {
			return true
		}
	}
	return false
}

func dcs(peers []placement.Peer) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range peers {
		if !seen[p.DC] {
			seen[p.DC] = true
			out = append(out, p.DC)
		}
	}
	sort.Strings(out)
	return out
}
