package cassandra

// Integration tests against the project's 3-node Apache Cassandra (testenv/cassandra,
// started by make test; SHARDBENCH_CASSANDRA lists the nodes).

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/itest"
	"github.com/shardbench/shardbench/internal/metrics"
	placement "github.com/shardbench/shardbench/internal/placement/cassandra"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/schedule"
	"github.com/shardbench/shardbench/workloads"
)

const repo = "../../.."

func clusterHosts(t *testing.T) string { return itest.Cassandra(t) }

func targetOf(hosts string) string { return "cassandra://" + hosts + ":9042?dc=dc1" }

// cassandraDesigns lists every shipped design file with a Cassandra part.
func cassandraDesigns(t *testing.T) []string {
	return itest.Designs(t, repo, func(d *design.Design) bool { return d.Cassandra != nil }, 5)
}

// scenarioWith is scenarios/smoke.yaml (its workload, population and mix) driving the
// given design variants, with a test keyspace prefix and the test cluster's DC.
func scenarioWith(t *testing.T, mix string, variants ...string) (*design.Prepared, *scenario.Scenario) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, "scenarios/smoke.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	body, _, _ := strings.Cut(string(b), "\ndesigns:")
	// These tests check correctness, not latency: the three nodes share two cores with
	// the other packages' tests, so a read can wait seconds for CPU. A generous operation
	// timeout keeps a starved read from counting as a design error.
	body = strings.Replace(body, "timeout: 5s", "timeout: 30s", 1)
	if mix != "" {
		head, _, _ := strings.Cut(body, "\nmix:")
		body = head + "\nmix:\n" + mix
	}
	// A fifth of the population: enough to load every table of every design, quickly.
	body += "\nbackends:\n  cassandra:\n    keyspace: sbtest_pkg\n    replication: {class: NetworkTopologyStrategy, dc1: 3}\n    load: {scale: 0.2}\n"
	body += "\ndesigns:\n" + strings.Join(variants, "\n") + "\n"
	p := filepath.Join(t.TempDir(), "scenario.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	prep, err := design.Prepare(sc)
	if err != nil {
		t.Fatal(err)
	}
	return prep, sc
}

func designEntry(path string) string {
	abs, _ := filepath.Abs(path)
	return "  - design: " + abs
}

func openVariant(t *testing.T, prep *design.Prepared, sc *scenario.Scenario, i int, hosts string) *Backend {
	t.Helper()
	var log strings.Builder
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(log.String())
		}
	})
	b, err := Open(context.Background(), backend.Config{Scenario: sc, Model: prep.Model, Variant: prep.Variants[i], Compiled: prep.Compiled[i],
		VariantIndex: i, Target: targetOf(hosts), Recreate: true, Log: &log, Options: sc.Backends["cassandra"]})
	if err != nil {
		t.Fatalf("Open %s: %v", prep.Variants[i].Name, err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// drive runs the first n operations of the scenario's stream through Execute with 16
// workers and returns the outcomes by class with an example error each.
func drive(t *testing.T, b *Backend, prep *design.Prepared, sc *scenario.Scenario, n int, keep func(*workloads.Op) bool) (map[metrics.Class]int, map[metrics.Class]string) {
	t.Helper()
	st := prep.Model.NewStream(schedule.New(sc))
	ops := make(chan workloads.Op, 64)
	var mu sync.Mutex
	counts := map[metrics.Class]int{}
	examples := map[metrics.Class]string{}
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for op := range ops {
				out := b.Execute(context.Background(), &op)
				c := out.Class
				if c == metrics.Timeout && strings.Contains(out.Err.Error(), "CAS operation timed out") {
					c = casTimeout
				}
				mu.Lock()
				counts[c]++
				if out.Err != nil && examples[c] == "" {
					examples[c] = out.Err.Error()
				}
				mu.Unlock()
			}
		}()
	}
	var op workloads.Op
	for sent := 0; sent < n && st.Next(&op); {
		if keep == nil || keep(&op) {
			ops <- op
			sent++
		}
	}
	close(ops)
	wg.Wait()
	return counts, examples
}

// casTimeout is what drive counts a Paxos round that timed out as (a WriteTimeout of
// write type CAS), apart from ordinary timeouts: the server's answer to contention on one
// partition, like a CAS_WRITE_UNKNOWN conflict.
const casTimeout = metrics.Class(metrics.NumClasses)

// hasLWTStep reports whether an operation runs a lightweight transaction.
func hasLWTStep(p *design.Compiled, op *workloads.Op) bool {
	for _, s := range p.Steps(int(op.Type)) {
		if s.Kind == design.LWT {
			return true
		}
	}
	return false
}

// hasMongoStep reports whether an operation of a mixed design has a MongoDB step.
func hasMongoStep(p *design.Compiled, op *workloads.Op) bool {
	for _, s := range p.Steps(int(op.Type)) {
		if s.Database == design.MongoDB {
			return true
		}
	}
	return false
}

// Every Cassandra design: its schema is accepted by Cassandra 5.0, every statement
// prepares, a smoke stream of every operation type runs without an error (operations of a
// mixed design with MongoDB steps are not served by this backend, so never sent), and for every
// partition key shape the designs use the token the placement code computes from the
// design's key bytes equals Cassandra's token() of the partition written.
func TestEveryCassandraDesign(t *testing.T) {
	hosts := clusterHosts(t)
	keyTypes := map[string]bool{}
	for _, f := range cassandraDesigns(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			prep, sc := scenarioWith(t, "", designEntry(f))
			b := openVariant(t, prep, sc, 0, hosts)
			plan := prep.Compiled[0]
			// What the engine dispatches: the operations this backend serves.
			unserved := backend.Unserved(plan, design.Cassandra, "cassandra")
			served := func(op *workloads.Op) bool { return unserved == nil || unserved[op.Type] == "" }
			for ty := range prep.Model.Ops {
				op := workloads.Op{Type: uint16(ty)}
				if served(&op) && hasMongoStep(plan, &op) {
					t.Errorf("%s has a MongoDB step, yet backend.Unserved says the cassandra backend serves it", prep.Model.Ops[ty].Name)
				}
			}
			counts, ex := drive(t, b, prep, sc, 500, served)
			lwt := 0
			st := prep.Model.NewStream(schedule.New(sc))
			var op workloads.Op
			for i := 0; i < 500 && st.Next(&op); {
				if served(&op) {
					i++
					if hasLWTStep(plan, &op) {
						lwt++
					}
				}
			}
			for c, n := range counts {
				switch {
				case c == metrics.OK:
				// 16 workers racing Paxos rounds on the hottest product (the population
				// holds it, so every CAS applies and contends): an outcome that is unknown
				// (CAS_WRITE_UNKNOWN) or a Paxos round that timed out is the server's honest
				// answer; up to half of the LWTs may end so on a busy machine.
				case (c == metrics.Conflict || c == casTimeout) && n <= max(lwt/2, 3):
					t.Logf("%d of %d LWT operations ended unknown or timed out under contention, e.g. %s", n, lwt, ex[c])
				default:
					t.Errorf("%d operations failed with %s, e.g. %s", n, c, ex[c])
				}
			}
			sent := 0 // up to 500: the scenario's stream may hold fewer operations this backend serves
			for _, n := range counts {
				sent += n
			}
			if sent < 300 || counts[metrics.OK] < sent-counts[metrics.Conflict]-counts[casTimeout] {
				t.Errorf("only %d of %d operations ok: %v", counts[metrics.OK], sent, counts)
			}
			coords := b.Coordinators()
			if len(coords) != 3 {
				t.Errorf("requests were coordinated by %d nodes, want all 3: %+v", len(coords), coords)
			}
			for _, kt := range checkTokens(t, b, prep, sc) {
				keyTypes[kt] = true
			}
		})
	}
	var kts []string
	for k := range keyTypes {
		kts = append(kts, k)
	}
	sort.Strings(kts)
	t.Logf("partition key shapes checked against token(): %s", strings.Join(kts, "; "))
	for _, want := range []string{"uuid", "text", "date"} {
		if !slices.ContainsFunc(kts, func(s string) bool { return strings.Contains(s, want) }) {
			t.Errorf("no partition key with a %s column was checked (shapes: %v)", want, kts)
		}
	}
}

// checkTokens writes, per write step, a few partitions of the stream and asks Cassandra
// for token(<partition key>) of exactly the token the placement code computed: the row
// must be there. Returns the key shapes (CQL types) checked.
func checkTokens(t *testing.T, b *Backend, prep *design.Prepared, sc *scenario.Scenario) []string {
	t.Helper()
	ctx := context.Background()
	plan := prep.Compiled[0]
	perStep := map[*design.Step]int{}
	var shapes []string
	st := prep.Model.NewStream(schedule.New(sc))
	var op workloads.Op
	var acc []design.Access
	for i := 0; i < 3000 && st.Next(&op); i++ {
		acc = plan.Accesses(&op, acc[:0])
		for j := range acc {
			a := &acc[j]
			s := a.Step
			if s.Database != design.Cassandra || s.Kind != design.Write || s.Statement == "DELETE" || perStep[s] >= 3 || len(s.KeyColumns) == 0 {
				continue
			}
			if err := b.run(ctx, a, &op); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
			want := placement.TokenOf(a.AppendKey(nil, &op))
			cols := strings.Join(s.KeyColumns, ", ")
			q := fmt.Sprintf("SELECT token(%s) FROM %s.%s WHERE token(%s) = ? LIMIT 1", cols, b.keyspace, s.Target, cols)
			var got int64
			if err := b.session.Query(q, int64(want)).Consistency(gocql.All).ScanContext(ctx, &got); err != nil {
				t.Errorf("%s key %s: no partition with the computed token %d (%v)", s, a.KeyString(&op), want, err)
				continue
			}
			if got != int64(want) {
				t.Errorf("%s key %s: token() %d, placement %d", s, a.KeyString(&op), got, want)
			}
			if perStep[s] == 0 {
				shapes = append(shapes, keyShape(b, s))
			}
			perStep[s]++
		}
	}
	if len(perStep) == 0 {
		t.Fatal("no write step checked")
	}
	return shapes
}

// keyShape is the partition key's CQL types as the server's schema has them.
func keyShape(b *Backend, s *design.Step) string {
	km, err := b.session.KeyspaceMetadata(b.keyspace)
	if err != nil {
		return s.Target + "(?)"
	}
	tm := km.Tables[s.Target]
	if tm == nil {
		return s.Target + "(?)"
	}
	var types []string
	for _, c := range tm.PartitionKey {
		types = append(types, c.Validator)
	}
	return "(" + strings.Join(types, ", ") + ")"
}

// Replicas from our ring (system.local/peers_v2 tokens, placement code) equal the
// driver's token-aware replicas and what the servers themselves did: at RF 1 and RF 2,
// each node's count of local writes (system_views.local_write_latency) equals the number
// of written keys our placement gives it.
func TestReplicasMatchDriverAndServer(t *testing.T) {
	hosts := clusterHosts(t)
	ctx := context.Background()
	tg, err := parseTarget(targetOf(hosts), "")
	if err != nil {
		t.Fatal(err)
	}
	b := &Backend{target: tg, opts: Options{ConnectTimeout: 10 * time.Second, NumConns: 1}, timeout: 10 * time.Second, obs: newObserver(), log: backend.NewLog(nil, "cassandra", tg.secrets)}
	setup, err := b.connect(gocql.RoundRobinHostPolicy(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer setup.Close()
	peers, _, err := readPeers(ctx, setup)
	if err != nil {
		t.Fatal(err)
	}
	ring, err := placement.RingFromPeers(peers)
	if err != nil {
		t.Fatal(err)
	}
	if len(ring.Nodes) != 3 {
		t.Fatalf("ring has %d nodes: %+v", len(ring.Nodes), ring.Nodes)
	}
	for _, rf := range []int{1, 2} {
		ks := fmt.Sprintf("sbtest_ring_rf%d", rf)
		for _, q := range []string{
			"DROP KEYSPACE IF EXISTS " + ks,
			fmt.Sprintf("CREATE KEYSPACE %s WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': %d}", ks, rf),
			"CREATE TABLE " + ks + ".t (k text, b int, v int, PRIMARY KEY ((k, b)))",
		} {
			if err := setup.Query(q).Consistency(gocql.All).ExecContext(ctx); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	if err := setup.AwaitSchemaAgreement(ctx); err != nil {
		t.Fatal(err)
	}
	policy := gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy(), gocql.DoNotShuffleReplicas())
	s, err := b.connect(policy, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const keys = 150
	for _, rf := range []int{1, 2} {
		ks := fmt.Sprintf("sbtest_ring_rf%d", rf)
		pl, err := ring.Place(placement.NTS(map[string]int{"dc1": rf}))
		if err != nil {
			t.Fatal(err)
		}
		before := localWrites(t, s, ks)
		want := map[string]int64{}
		mismatch := 0
		for i := range keys {
			k, bk := fmt.Sprintf("user-%d", i), int32(i%7)
			var kb placement.KeyBuilder
			kb.Reset(2)
			kb.Text(k)
			kb.Int(bk)
			key := slices.Clone(kb.Bytes())
			tok := placement.TokenOf(key)
			var ours []string
			for _, n := range pl.Replicas(tok) {
				ours = append(ours, ring.Nodes[n].Name)
				want[ring.Nodes[n].Name]++
			}
			q := s.Query("INSERT INTO "+ks+".t (k, b, v) VALUES (?, ?, ?)", k, bk, int32(i)).RoutingKey(key).SetKeyspace(ks)
			next := policy.Pick(routed{key: key, ks: ks})
			var driver []string
			for range rf {
				h := next()
				if h == nil {
					break
				}
				driver = append(driver, h.Info().ConnectAddress().String())
			}
			if !sameSet(ours, driver) {
				mismatch++
				if mismatch <= 5 {
					t.Errorf("RF %d key (%s, %d) token %d: our replicas %v, driver's %v", rf, k, bk, tok, ours, driver)
				}
			}
			if err := q.Consistency(gocql.All).ExecContext(ctx); err != nil {
				t.Fatal(err)
			}
		}
		after := localWrites(t, s, ks)
		for _, p := range peers {
			got := after[p.Host] - before[p.Host]
			if got != want[p.Host] {
				t.Errorf("RF %d: node %s applied %d local writes, our placement gives it %d of %d keys", rf, p.Host, got, want[p.Host], keys)
			}
		}
		t.Logf("RF %d: %d keys, local writes per node %v (placement agrees), driver mismatches %d", rf, keys, want, mismatch)
	}
}

func localWrites(t *testing.T, s *gocql.Session, ks string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, h := range s.GetHosts() {
		var n int64
		err := s.Query("SELECT count FROM system_views.local_write_latency WHERE keyspace_name = ? AND table_name = 't'", ks).
			SetHostID(h.HostID()).Consistency(gocql.One).Scan(&n)
		if err != nil && err != gocql.ErrNotFound {
			t.Fatalf("%s: %v", h.ConnectAddress(), err)
		}
		out[h.ConnectAddress().String()] = n
	}
	return out
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// With one node of three stopped (testenv/cassandra/stop-node.sh), a design at QUORUM
// keeps succeeding and the same design at ALL fails, counted as unavailable.
func TestOneNodeDownQuorumAndAll(t *testing.T) {
	hosts := clusterHosts(t)
	scripts := itest.Env(t, "SHARDBENCH_CASSANDRA_TESTENV", "the testenv/cassandra scripts")
	f := filepath.Join(repo, "scenarios/designs/seed003.yaml")
	mix := "  carts.add_item: 1\n  carts.read: 1\n  carts.change_qty: 1\n"
	prep, sc := scenarioWith(t, mix,
		designEntry(f)+"\n    name: quorum\n    set: {carts.consistency: QUORUM}",
		designEntry(f)+"\n    name: all\n    set: {carts.consistency: ALL}")
	quorum := openVariant(t, prep, sc, 0, hosts)
	all := openVariant(t, prep, sc, 1, hosts)
	if c, ex := drive(t, all, prep, sc, 60, nil); c[metrics.OK] != 60 {
		t.Fatalf("ALL with every node up: %v %v", c, ex)
	}
	stop := exec.Command(filepath.Join(scripts, "stop-node.sh"), "3")
	if out, err := stop.CombinedOutput(); err != nil {
		t.Fatalf("stop-node.sh 3: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		start := exec.Command(filepath.Join(scripts, "start-node.sh"), "3")
		if out, err := start.CombinedOutput(); err != nil {
			t.Errorf("start-node.sh 3: %v\n%s", err, out)
		}
	})
	// A cleanly stopped node announces its shutdown: the coordinators know at once. Give
	// the driver a moment to see the event too.
	time.Sleep(2 * time.Second)
	cq, exq := drive(t, quorum, prep, sc, 150, nil)
	if cq[metrics.OK] != 150 {
		t.Errorf("QUORUM with one node down: %v, e.g. %v", cq, exq)
	}
	ca, exa := drive(t, all, prep, sc, 150, nil)
	if ca[metrics.OK] != 0 || ca[metrics.Unavailable] < 100 {
		t.Errorf("ALL with one node down: %v, e.g. %v (want unavailable)", ca, exa)
	}
	if ca[metrics.Unavailable]+ca[metrics.Timeout] != 150 {
		t.Errorf("ALL with one node down: %v: every operation must fail as unavailable (or timeout)", ca)
	}
	t.Logf("one node down: QUORUM %v; ALL %v, e.g. %s", cq, ca, exa[metrics.Unavailable])
}

// routed is the routing information the token-aware policy picks hosts by.
type routed struct {
	key []byte
	ks  string
}

func (r routed) GetRoutingKey() ([]byte, error) { return r.key, nil }
func (r routed) Keyspace() string               { return r.ks }
func (r routed) Table() string                  { return "t" }
func (r routed) IsIdempotent() bool             { return true }
func (r routed) GetHostID() string              { return "" }
func (r routed) Statement() gocql.Statement     { return nil }

// Every CQL type `shardbench key` parses: the token computed from the text a user types
// equals token() of the same literal written by cqlsh-style CQL, single-column and in a
// composite key.
func TestLiteralTokensMatchServer(t *testing.T) {
	hosts := clusterHosts(t)
	ctx := context.Background()
	cl := gocql.NewCluster(strings.Split(hosts, ",")...)
	cl.Consistency = gocql.All
	cl.Timeout = 10 * time.Second
	s, err := cl.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cases := []struct{ typ, cql, input string }{
		{"uuid", "9a7ee8da-a274-466d-ab99-cc97ad5f3db5", "9a7ee8da-a274-466d-ab99-cc97ad5f3db5"},
		{"timeuuid", "50554d6e-29bb-11e5-b345-feff819cdc9f", "50554d6e-29bb-11e5-b345-feff819cdc9f"},
		{"text", "'user:42'", "user:42"},
		{"text", "'Москва'", "Москва"},
		{"ascii", "'electronics'", "electronics"},
		{"varchar", "'it''s'", "'it''s'"},
		{"int", "-42", "-42"},
		{"bigint", "9007199254740993", "9007199254740993"},
		{"smallint", "-300", "-300"},
		{"tinyint", "7", "7"},
		{"varint", "-123456789012345678901234567890", "-123456789012345678901234567890"},
		{"varint", "128", "128"},
		{"boolean", "true", "true"},
		{"double", "3.25", "3.25"},
		{"float", "-1.5", "-1.5"},
		{"date", "'2025-11-28'", "2025-11-28"},
		{"date", "'1969-12-31'", "1969-12-31"},
		{"timestamp", "'2025-11-28T10:00:00.123Z'", "2025-11-28T10:00:00.123Z"},
		{"timestamp", "1764324000123", "1764324000123"},
		{"time", "'10:00:00.123456789'", "10:00:00.123456789"},
		{"inet", "'10.0.0.1'", "10.0.0.1"},
		{"inet", "'2001:db8::1'", "2001:db8::1"},
		{"blob", "0xcafe00", "0xcafe00"},
	}
	const ks = "sbtest_literals"
	ddl := []string{
		"DROP KEYSPACE IF EXISTS " + ks,
		"CREATE KEYSPACE " + ks + " WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 1}",
	}
	types := map[string]bool{}
	for _, c := range cases {
		if !types[c.typ] {
			types[c.typ] = true
			ddl = append(ddl, fmt.Sprintf("CREATE TABLE %s.t_%s (k %s PRIMARY KEY, v int)", ks, c.typ, c.typ))
		}
	}
	ddl = append(ddl, "CREATE TABLE "+ks+".composite (a text, b date, c int, v int, PRIMARY KEY ((a, b, c)))")
	for _, q := range ddl {
		if err := s.Query(q).ExecContext(ctx); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := s.AwaitSchemaAgreement(ctx); err != nil {
		t.Fatal(err)
	}
	serverToken := func(table, cols, where string) int64 {
		t.Helper()
		var tok int64
		q := fmt.Sprintf("SELECT token(%s) FROM %s.%s WHERE %s", cols, ks, table, where)
		if err := s.Query(q).ScanContext(ctx, &tok); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return tok
	}
	for _, c := range cases {
		table := "t_" + c.typ
		if err := s.Query(fmt.Sprintf("INSERT INTO %s.%s (k, v) VALUES (%s, 1)", ks, table, c.cql)).ExecContext(ctx); err != nil {
			t.Fatalf("%s %s: %v", c.typ, c.cql, err)
		}
		got := serverToken(table, "k", "k = "+c.cql)
		b, err := placement.AppendLiteral(nil, c.typ, c.input)
		if err != nil {
			t.Errorf("%s %q: %v", c.typ, c.input, err)
			continue
		}
		if want := int64(placement.TokenOf(b)); want != got {
			t.Errorf("%s %s: server token %d, ours %d (key bytes %x)", c.typ, c.cql, got, want, b)
		}
	}
	if err := s.Query("INSERT INTO " + ks + ".composite (a, b, c, v) VALUES ('moscow', '2025-11-28', 7, 1)").ExecContext(ctx); err != nil {
		t.Fatal(err)
	}
	got := serverToken("composite", "a, b, c", "a = 'moscow' AND b = '2025-11-28' AND c = 7")
	var kb placement.KeyBuilder
	kb.Reset(3)
	for _, v := range [][2]string{{"text", "moscow"}, {"date", "2025-11-28"}, {"int", "7"}} {
		b, err := placement.AppendLiteral(nil, v[0], v[1])
		if err != nil {
			t.Fatal(err)
		}
		kb.Raw(b)
	}
	if want := int64(kb.Token()); want != got {
		t.Errorf("composite (text, date, int): server token %d, ours %d", got, want)
	}
	t.Logf("%d literals of %d CQL types and a 3-column composite key: tokens equal the server's", len(cases), len(types))
}
