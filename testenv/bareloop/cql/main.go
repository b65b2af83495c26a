// Command cql is the bare gocql loop shardbench's client cost is measured against: a paced
// producer releases one prepared single-row write (seed 001's session touch: UPDATE
// user_sessions SET last_activity = ? WHERE session_id = ?) per intended start to a fixed
// pool of goroutines, as anyone would write it with the driver alone: no scenario, no
// design, no histograms. It counts what it must to be compared fairly (completed, errors,
// operations dropped because every goroutine was busy, and responses from the intended
// start over -stall, the server's stalls as the loop saw them) and prints one JSON line
// with its own CPU during the measured loop.
//
// It lives in the main module so that it is built with exactly the driver version
// shardbench is. testenv/bench-client.sh runs it beside shardbench and latte.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/shardbench/shardbench/testenv/bareloop/pace"
)

type options struct {
	pace.Loop
	hosts      string
	port       int
	dc         string
	keyspace   string
	keys       int
	conns      int
	coalesce   time.Duration
	timeout    time.Duration
	tokenAware bool
}

func main() {
	var o options
	flag.StringVar(&o.hosts, "hosts", "127.0.0.1", "contact points, comma separated")
	flag.IntVar(&o.port, "port", 9042, "native transport port")
	flag.StringVar(&o.dc, "dc", "", "local data centre (default: the driver's round robin over all)")
	flag.StringVar(&o.keyspace, "keyspace", "bareloop", "keyspace to create and write (replication: 1 in -dc, or SimpleStrategy 1)")
	flag.IntVar(&o.Rate, "rate", 5000, "operations per second")
	flag.DurationVar(&o.Duration, "duration", 20*time.Second, "how long to send")
	flag.IntVar(&o.Workers, "workers", 128, "goroutines executing operations (an operation due when all are busy is dropped)")
	flag.IntVar(&o.keys, "keys", 100000, "distinct session ids written, uniformly")
	flag.IntVar(&o.conns, "conns", 2, "connections per host (gocql NumConns)")
	flag.DurationVar(&o.coalesce, "coalesce", 200*time.Microsecond, "gocql WriteCoalesceWaitTime (the driver's default is 200µs; 0 writes each frame at once)")
	flag.DurationVar(&o.timeout, "timeout", 5*time.Second, "per-request timeout")
	flag.BoolVar(&o.tokenAware, "token-aware", true, "token-aware host selection over DC-aware round robin (what a production client configures)")
	flag.DurationVar(&o.Stall, "stall", 100*time.Millisecond, "a response (from the intended start) longer than this counts as stalled")
	flag.StringVar(&o.Label, "label", "bare-gocql", "client name in the output")
	flag.StringVar(&o.Profile, "cpuprofile", "", "write a Go CPU profile of the measured loop to this file")
	flag.BoolVar(&o.Progress, "progress", false, "print completions and drops each second to stderr")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bareloop cql:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if err := o.Check(); err != nil {
		return err
	}
	if o.keys <= 0 {
		return fmt.Errorf("-keys must be positive")
	}
	s, err := connect(o)
	if err != nil {
		return err
	}
	defer s.Close()
	stmt := "UPDATE " + o.keyspace + ".user_sessions SET last_activity = ? WHERE session_id = ?"
	// Prepare before measuring, as shardbench does at Open.
	if err := s.Query(stmt, time.Now(), gocql.UUID{}).Consistency(gocql.One).Exec(); err != nil {
		return fmt.Errorf("first write: %w", err)
	}
	ids := make([]gocql.UUID, o.keys)
	rng := rand.New(rand.NewPCG(11, 12))
	for i := range ids {
		for j := range ids[i] {
			ids[i][j] = byte(rng.Uint32())
		}
		ids[i][6] = ids[i][6]&0x0f | 0x40 // version 4
		ids[i][8] = ids[i][8]&0x3f | 0x80
	}
	return o.Run(os.Stdout, func(r *rand.Rand) error {
		return s.Query(stmt, time.Now(), ids[r.IntN(len(ids))]).Consistency(gocql.One).Idempotent(true).Exec()
	})
}

// connect opens a session and creates the keyspace and table (seed 001's user_sessions).
func connect(o options) (*gocql.Session, error) {
	c := gocql.NewCluster(strings.Split(o.hosts, ",")...)
	c.Port = o.port
	c.NumConns = o.conns
	c.Timeout = o.timeout
	c.ConnectTimeout = 10 * time.Second
	c.WriteCoalesceWaitTime = o.coalesce
	if o.tokenAware {
		fallback := gocql.RoundRobinHostPolicy()
		if o.dc != "" {
			fallback = gocql.DCAwareRoundRobinPolicy(o.dc)
		}
		c.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(fallback, gocql.ShuffleReplicas())
	}
	s, err := c.CreateSession()
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", o.hosts, err)
	}
	repl := "{'class': 'SimpleStrategy', 'replication_factor': 1}"
	if o.dc != "" {
		repl = fmt.Sprintf("{'class': 'NetworkTopologyStrategy', '%s': 1}", o.dc)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, q := range []string{
		"CREATE KEYSPACE IF NOT EXISTS " + o.keyspace + " WITH replication = " + repl,
		"CREATE TABLE IF NOT EXISTS " + o.keyspace + `.user_sessions (
			session_id uuid, user_id text, created_at timestamp, last_activity timestamp,
			ip_address inet, user_agent text, data map<text, text>,
			PRIMARY KEY ((session_id))
		) WITH default_time_to_live = 86400 AND gc_grace_seconds = 3600`,
	} {
		if err := s.Query(q).Consistency(gocql.All).ExecContext(ctx); err != nil {
			s.Close()
			return nil, fmt.Errorf("schema: %w", err)
		}
	}
	if err := s.AwaitSchemaAgreement(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("schema agreement: %w", err)
	}
	return s, nil
}
