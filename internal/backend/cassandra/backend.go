// Package cassandra is the real Apache Cassandra backend: it drives a design's Cassandra
// accesses through the gocql driver (github.com/apache/cassandra-gocql-driver/v2) with
// token-aware host selection (DC-aware round robin as the fallback), prepared statements,
// the design's consistency and serial consistency per step, batches and LWTs; creates each
// variant's keyspace from the design's DDL; attributes every request to the coordinator
// that served it (from the driver's iterator: Host, Attempts, Latency); and writes the
// cluster's own view (release version, nodes, tokens, system_views figures) to server.json.
//
// Only this package (and internal/backend/mongo) imports a database driver.
package cassandra

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/metrics"
	placement "github.com/shardbench/shardbench/internal/placement/cassandra"
	"github.com/shardbench/shardbench/workloads"
)

// Backend runs one variant's operations against Cassandra.
type Backend struct {
	cfg      backend.Config
	opts     Options
	target   target
	session  *gocql.Session
	keyspace string
	timeout  time.Duration
	localDC  string
	release  string
	cluster  string

	// stmts holds, per step, the CQL rewritten to the variant's keyspace and its settings.
	stmts map[*design.Step]*stmt
	obs   *observer
	ring  *placement.Ring
	peers []placement.Peer
	// log tells the user what happens and keeps the notes the results show, with the
	// target's secrets scrubbed.
	log *backend.Log

	before serverSnapshot
	// loaded is what the load step wrote (nil: none ran); reads counts, per read step,
	// the reads and the rows they returned.
	loaded *backend.LoadResult
	// loadRetries counts the load's writes tried again (retryLoadWrite).
	loadRetries atomic.Int64
	reads       *backend.ReadRows

	// scratch holds what Execute reuses (*scratch).
	scratch sync.Pool
	// driverBounds: the driver's request timeout is the operation's and nothing retries,
	// so an operation of one request needs no deadline of its own.
	driverBounds bool

	foreign    atomic.Int64
	found      atomic.Int64
	missed     atomic.Int64
	applied    atomic.Int64
	notApplied atomic.Int64
	batches    atomic.Int64
	statements atomic.Int64
}

// stmt is one step's statement as sent.
type stmt struct {
	cql         string
	consistency gocql.Consistency
	serial      gocql.Consistency
	idempotent  bool
	lwt         bool
	read        bool
}

// UsageError marks bad input (backends.cassandra, --target): the CLI exits 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Open connects, creates (or, with Recreate, drops and recreates) the variant's keyspace
// from the design's DDL, prepares every statement and returns the backend. Errors in
// backends.cassandra or --target are *UsageError; an unreachable cluster is an error
// naming the target.
func Open(ctx context.Context, cfg backend.Config) (*Backend, error) {
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	o, err := ParseOptions(cfg.Options)
	if err != nil {
		return nil, &UsageError{err}
	}
	if cfg.Compiled == nil || cfg.Variant == nil || cfg.Compiled.Design.Cassandra == nil {
		name := "the scenario"
		if cfg.Variant != nil && cfg.Compiled != nil {
			name = "variant " + cfg.Variant.Name + " (design " + cfg.Compiled.Design.Name + ")"
		}
		return nil, &UsageError{fmt.Errorf("%s has no cassandra section: the cassandra backend runs Cassandra designs only (use --backend mongo or sim for it)", name)}
	}
	t, err := parseTarget(cfg.Target, o.PasswordFile)
	if err != nil {
		return nil, &UsageError{err}
	}
	b := &Backend{cfg: cfg, opts: o, target: t, stmts: map[*design.Step]*stmt{}, obs: newObserver(), reads: backend.NewReadRows(cfg.Compiled), log: backend.NewLog(cfg.Log, "cassandra", t.secrets)}
	b.timeout = 5 * time.Second
	if cfg.Scenario != nil && cfg.Scenario.Load.Timeout > 0 {
		b.timeout = cfg.Scenario.Load.Timeout
	}
	b.keyspace = keyspaceName(o.Keyspace, cfg.Compiled.Design.Cassandra.Keyspace, cfg.Variant.Name)
	b.driverBounds = (o.RequestTimeout == 0 || o.RequestTimeout <= b.timeout) && o.Retry.Attempts == 0

	// A first session with plain round robin: it learns the cluster (local DC, ring,
	// version) and runs the DDL; the measuring session is then opened knowing the local DC
	// and with the keyspace in place, so token awareness has replica metadata from the start.
	setup, err := b.connect(gocql.RoundRobinHostPolicy(), false)
	if err != nil {
		return nil, err
	}
	if err := b.discover(ctx, setup); err != nil {
		setup.Close()
		return nil, err
	}
	b.log.Logf("variant %s → keyspace %s on %s (Cassandra %s, %d nodes, local dc %s)", cfg.Variant.Name, b.keyspace, t.redacted, b.release, len(b.peers), b.localDC)
	if cfg.SkipSetup {
		b.log.Note("schema and load phase left to the distributed run's setup step (run --setup-only)")
	} else if err := b.createSchema(ctx, setup); err != nil {
		setup.Close()
		return nil, err
	}
	setup.Close()
	policy := gocql.TokenAwareHostPolicy(gocql.DCAwareRoundRobinPolicy(b.localDC), gocql.ShuffleReplicas())
	b.session, err = b.connect(policy, true)
	if err != nil {
		return nil, err
	}
	if err := b.prepare(ctx); err != nil {
		b.session.Close()
		return nil, err
	}
	if err := b.load(ctx); err != nil {
		b.session.Close()
		return nil, err
	}
	b.before = b.snapshot(ctx)
	b.obs.reset()
	return b, nil
}

// schemaTimeout bounds one schema statement and the wait for schema agreement.
const schemaTimeout = 60 * time.Second

// connect opens a session on the target; observe marks the measured session (with the
// operations' request timeout) as opposed to the set-up session.
func (b *Backend) connect(policy gocql.HostSelectionPolicy, observe bool) (*gocql.Session, error) {
	c := gocql.NewCluster(b.target.hosts...)
	c.Port = b.target.port
	c.ConnectTimeout = b.opts.ConnectTimeout
	c.Timeout = b.opts.RequestTimeout
	if c.Timeout == 0 {
		c.Timeout = b.timeout
	}
	if !observe {
		// The set-up session runs DDL: a DROP KEYSPACE snapshots and a CREATE waits for
		// every node, seconds on a busy cluster, so it gets the schema timeout rather
		// than the operations' request timeout.
		c.Timeout = max(c.Timeout, schemaTimeout)
	}
	c.NumConns = b.opts.NumConns
	c.ProtoVersion = b.opts.ProtocolVersion
	c.PoolConfig.HostSelectionPolicy = policy
	c.Logger = quietLogger{}
	c.MaxWaitSchemaAgreement = schemaTimeout
	if b.opts.Retry.Attempts > 0 {
		c.RetryPolicy = &gocql.ExponentialBackoffRetryPolicy{NumRetries: b.opts.Retry.Attempts, Min: b.opts.Retry.MinBackoff, Max: b.opts.Retry.MaxBackoff}
	} else {
		c.RetryPolicy = &gocql.SimpleRetryPolicy{NumRetries: 0}
	}
	if b.target.user != "" {
		c.Authenticator = gocql.PasswordAuthenticator{Username: b.target.user, Password: b.target.password}
	}
	if b.opts.TLS.Enabled {
		c.SslOpts = &gocql.SslOptions{
			Config:                 &tls.Config{InsecureSkipVerify: b.opts.TLS.InsecureSkipVerify}, //nolint:gosec // the user asked for it
			CaPath:                 b.opts.TLS.CAFile,
			CertPath:               b.opts.TLS.CertFile,
			KeyPath:                b.opts.TLS.KeyFile,
			EnableHostVerification: !b.opts.TLS.InsecureSkipVerify,
		}
	}
	s, err := c.CreateSession()
	if err != nil {
		return nil, fmt.Errorf("cassandra %s: connect (connect_timeout %s): %s", b.target.redacted, b.opts.ConnectTimeout, b.log.Redact(err.Error()))
	}
	return s, nil
}

// discover reads the local DC, release version and ring from system.local/peers_v2.
func (b *Backend) discover(ctx context.Context, s *gocql.Session) error {
	ctx, cancel := context.WithTimeout(ctx, b.opts.ConnectTimeout)
	defer cancel()
	peers, local, err := readPeers(ctx, s)
	if err != nil {
		return fmt.Errorf("cassandra %s: reading system.local/system.peers_v2: %s", b.target.redacted, b.log.Redact(err.Error()))
	}
	b.peers, b.release, b.cluster = peers, local.release, local.cluster
	b.localDC = b.target.dc
	if b.localDC == "" {
		b.localDC = b.opts.LocalDC
	}
	if b.localDC == "" {
		b.localDC = local.dc
	} else if !hasDC(peers, b.localDC) {
		return &UsageError{fmt.Errorf("--target %s: data centre %q is not in the cluster (it has %s)", b.target.redacted, b.localDC, strings.Join(dcs(peers), ", "))}
	}
	b.ring, err = placement.RingFromPeers(peers)
	if err != nil {
		return fmt.Errorf("cassandra %s: ring: %v", b.target.redacted, err)
	}
	return nil
}

// prepare rewrites every Cassandra step's CQL to the variant's keyspace and prepares it on
// the cluster now, so a statement the server rejects fails Open (naming the step) rather
// than every operation of the run.
func (b *Backend) prepare(ctx context.Context) error {
	m := b.cfg.Compiled.Model
	dks := b.cfg.Compiled.Design.Cassandra.Keyspace
	for i := range m.Ops {
		for _, s := range b.cfg.Compiled.Steps(i) {
			if s.Database != design.Cassandra || b.stmts[s] != nil {
				continue
			}
			st := &stmt{cql: rewriteKeyspace(s.CQL, dks, b.keyspace), lwt: s.Kind == design.LWT, read: !s.Kind.IsWrite()}
			cl := s.Consistency
			if cl == "" {
				cl = "LOCAL_QUORUM"
			}
			c, err := gocql.ParseConsistencyWrapper(cl)
			if err != nil {
				return &UsageError{fmt.Errorf("%s step %d: consistency %q: %v", s.Op, s.Index, cl, err)}
			}
			st.consistency = c
			st.serial = gocql.Serial
			if s.Serial != "" {
				if st.serial, err = gocql.ParseConsistencyWrapper(s.Serial); err != nil {
					return &UsageError{fmt.Errorf("%s step %d: serial consistency %q: %v", s.Op, s.Index, s.Serial, err)}
				}
			}
			st.idempotent = idempotent(s, st.cql)
			pctx, cancel := context.WithTimeout(ctx, b.opts.ConnectTimeout)
			_, err = b.session.StatementMetadata(pctx, st.cql, b.keyspace)
			cancel()
			if err != nil {
				return fmt.Errorf("cassandra %s: preparing %s step %d (%s): %s", b.target.redacted, s.Op, s.Index, st.cql, b.log.Redact(err.Error()))
			}
			b.stmts[s] = st
		}
	}
	return nil
}

// idempotent reports whether a retry cannot change the outcome: reads, and writes that
// set values (not LWTs, counters, or list appends/removals).
func idempotent(s *design.Step, cql string) bool {
	if !s.Kind.IsWrite() {
		return true
	}
	if s.Kind == design.LWT {
		return false
	}
	set := cql
	if i := strings.Index(cql, " SET "); i >= 0 {
		set = cql[i:]
		if j := strings.Index(set, " WHERE "); j >= 0 {
			set = set[:j]
		}
		if strings.Contains(set, "+") || strings.Contains(set, " - ") {
			return false
		}
	}
	return true
}

// rewriteKeyspace points a statement at the variant's keyspace (the design's CQL names the
// design's keyspace: INSERT INTO ks.t, UPDATE ks.t, SELECT … FROM ks.t, DELETE FROM ks.t).
func rewriteKeyspace(cql, designKS, ks string) string {
	for _, q := range []string{designKS, `"` + strings.ReplaceAll(designKS, `"`, `""`) + `"`} {
		if i := strings.Index(cql, " "+q+"."); i >= 0 {
			return cql[:i+1] + ks + cql[i+1+len(q):]
		}
	}
	return cql
}

// Execute runs the operation's Cassandra accesses in order; consecutive writes of the same
// batch group travel in one batch. The first failure ends the operation.
func (b *Backend) Execute(ctx context.Context, op *workloads.Op) backend.Outcome {
	sc, _ := b.scratch.Get().(*scratch)
	if sc == nil {
		sc = new(scratch)
	}
	defer b.scratch.Put(sc)
	acc := b.cfg.Compiled.Accesses(op, sc.acc[:0])
	sc.acc = acc
	// An operation of one request is bounded by the driver's request timeout, which is
	// the operation's (connect): a context deadline too would cost a timer and an
	// allocation on every operation. Several requests, retries or a longer request
	// timeout need the operation's own deadline.
	if !b.driverBounds || !oneRequest(acc) {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, b.timeout)
		defer cancel()
	}
	for i := 0; i < len(acc); i++ {
		a := &acc[i]
		if a.Step.Database != design.Cassandra {
			b.foreign.Add(1)
			return backend.Outcome{Class: metrics.Client,
				Err: fmt.Errorf("internal error (please report): %s step %d runs on %s, yet the "+
					"cassandra backend was given the operation (the engine does not dispatch "+
					"what a backend does not serve)",
					a.Step.Op, a.Step.Index, a.Step.Database)}
		}
		if j := batchEnd(acc, i); j-i > 1 {
			if err := b.runBatch(ctx, acc[i:j], op); err != nil {
				return b.fail(ctx, a, err)
			}
			i = j - 1
			continue
		}
		if err := b.send(ctx, a, op, &sc.args); err != nil {
			return b.fail(ctx, a, err)
		}
	}
	return backend.Outcome{}
}

// scratch is what one Execute reuses from the last: the accesses and the bound values.
type scratch struct {
	acc  []design.Access
	args []any
}

// batchEnd is the end of the batch that starts at acc[i]: consecutive Cassandra writes of
// the same batch group (i+1 when acc[i] is not batched).
func batchEnd(acc []design.Access, i int) int {
	a := &acc[i]
	j := i + 1
	if a.Step.Batch == design.NoBatch {
		return j
	}
	for j < len(acc) && acc[j].Step.Batch == a.Step.Batch && acc[j].Step.BatchGroup == a.Step.BatchGroup && acc[j].Step.Database == design.Cassandra {
		j++
	}
	return j
}

// oneRequest reports whether the accesses go in one request: a single statement, or one
// batch.
func oneRequest(acc []design.Access) bool {
	return len(acc) == 1 || len(acc) > 1 && batchEnd(acc, 0) == len(acc)
}

func (b *Backend) fail(ctx context.Context, a *design.Access, err error) backend.Outcome {
	return backend.Outcome{Class: Classify(err, ctx.Err()), Err: errors.New(b.log.Redact(fmt.Sprintf("%s step %d %s %s: %v", a.Step.Op, a.Step.Index, a.Step.Statement, a.Step.Target, err)))}
}

// args binds an access's values for the driver into dst.
func args(a *design.Access, op *workloads.Op, dst []any) []any {
	vals := a.Bind(op, dst)
	for i, v := range vals {
		vals[i] = toDriver(v)
	}
	return vals
}

// run sends one access's statement.
func (b *Backend) run(ctx context.Context, a *design.Access, op *workloads.Op) error {
	var buf []any
	return b.send(ctx, a, op, &buf)
}

// send sends one access's statement with its values bound into *buf, which the caller
// reuses: the driver keeps no reference to them once the request has returned.
func (b *Backend) send(ctx context.Context, a *design.Access, op *workloads.Op, buf *[]any) error {
	st := b.stmts[a.Step]
	if st == nil {
		return fmt.Errorf("no prepared statement for %s", a.Step)
	}
	b.statements.Add(1)
	vals := args(a, op, (*buf)[:0])
	*buf = vals
	defer clear(vals) // keep no values alive between operations
	q := b.session.Query(st.cql, vals...).Consistency(st.consistency).Idempotent(st.idempotent)
	if st.lwt {
		q = q.SerialConsistency(st.serial)
	}
	iter := q.IterContext(ctx)
	applied, rows := true, 0
	switch {
	case st.lwt:
		applied = casApplied(iter)
	case st.read:
		rows = iter.NumRows()
	}
	err := iter.Close()
	b.obs.count(iter, false, err)
	switch {
	case err != nil:
		return err
	case st.lwt && applied:
		b.applied.Add(1)
	case st.lwt:
		b.notApplied.Add(1)
	case st.read:
		b.countRead(a.Step, rows)
	}
	return nil
}

// casApplied reads a lightweight transaction's [applied] column (true when the result has
// none).
func casApplied(iter *gocql.Iter) bool {
	if cols := iter.Columns(); len(cols) > 0 && cols[0].Name == "[applied]" {
		m := map[string]any{}
		if iter.MapScan(m) {
			applied, _ := m["[applied]"].(bool)
			return applied
		}
	}
	return true
}

// runBatch sends the accesses in one batch, at the first step's consistency.
func (b *Backend) runBatch(ctx context.Context, acc []design.Access, op *workloads.Op) error {
	typ := gocql.LoggedBatch
	if acc[0].Step.Batch == design.UnloggedBatch {
		typ = gocql.UnloggedBatch
	}
	first := b.stmts[acc[0].Step]
	bt := b.session.Batch(typ).Consistency(first.consistency).SerialConsistency(first.serial)
	lwt := false
	for i := range acc {
		st := b.stmts[acc[i].Step]
		if st == nil {
			return fmt.Errorf("no prepared statement for %s", acc[i].Step)
		}
		lwt = lwt || st.lwt
		bt.Query(st.cql, args(&acc[i], op, nil)...)
	}
	b.batches.Add(1)
	b.statements.Add(int64(len(acc)))
	iter := bt.IterContext(ctx)
	applied := !lwt || casApplied(iter)
	err := iter.Close()
	b.obs.count(iter, true, err)
	switch {
	case err != nil || !lwt:
	case applied:
		b.applied.Add(1)
	default:
		b.notApplied.Add(1)
	}
	return err
}

// Close closes the session.
func (b *Backend) Close() error {
	if b.session != nil {
		b.session.Close()
	}
	return nil
}

// Keyspace is the variant's keyspace.
func (b *Backend) Keyspace() string { return b.keyspace }

// Ring is the cluster's token ring as read at Open (system.local and system.peers_v2).
func (b *Backend) Ring() *placement.Ring { return b.ring }

// ServerHosts is every node the operations may reach: the contact points and the nodes
// read from system.local/peers_v2 (backend.Servers).
func (b *Backend) ServerHosts() []string {
	out := append([]string(nil), b.target.hosts...)
	for _, p := range b.peers {
		out = append(out, p.Host)
	}
	return out
}

// LocalDC is the data centre the client prefers.
func (b *Backend) LocalDC() string { return b.localDC }

// Release is the contact point's release_version.
func (b *Backend) Release() string { return b.release }

// Notes lists what the results must say (design features changed to fit the cluster).
func (b *Backend) Notes() []string { return b.log.Notes() }

// Describe says what the backend talks to, for the summary.
func (b *Backend) Describe() backend.Info {
	d := map[string]string{
		"keyspace":  b.keyspace,
		"local_dc":  b.localDC,
		"nodes":     fmt.Sprint(len(b.peers)),
		"num_conns": fmt.Sprint(b.opts.NumConns),
		"timeout":   b.timeout.String(),
		"policy":    "token-aware (shuffled replicas), DC-aware round robin fallback",
		"retries":   fmt.Sprint(b.opts.Retry.Attempts),
	}
	if b.cluster != "" {
		d["cluster"] = b.cluster
	}
	return backend.Info{Name: "cassandra", Target: b.target.redacted, Server: "Apache Cassandra " + b.release, Details: d}
}

// quietLogger drops the driver's log lines: they go to stderr mid-run (reconnect
// attempts to a stopped node, every few seconds) and say nothing the error classes and
// per-node counts do not.
type quietLogger struct{}

func (quietLogger) Error(string, ...gocql.LogField)   {}
func (quietLogger) Warning(string, ...gocql.LogField) {}
func (quietLogger) Info(string, ...gocql.LogField)    {}
func (quietLogger) Debug(string, ...gocql.LogField)   {}
