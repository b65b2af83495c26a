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
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
)

type options struct {
	hosts      string
	port       int
	dc         string
	keyspace   string
	rate       int
	duration   time.Duration
	workers    int
	keys       int
	conns      int
	coalesce   time.Duration
	timeout    time.Duration
	tokenAware bool
	stall      time.Duration
	label      string
	profile    string
	progress   bool
}

// result is the JSON line printed at the end.
type result struct {
	Client     string  `json:"client"`
	Rate       int     `json:"rate"`
	Workers    int     `json:"workers"`
	DurationS  float64 `json:"duration_s"`
	Completed  int64   `json:"completed"`
	Errors     int64   `json:"errors"`
	Dropped    int64   `json:"dropped"`
	Stalled    int64   `json:"stalled"`
	MaxRespMS  float64 `json:"max_response_ms"`
	Achieved   float64 `json:"achieved_per_s"`
	CPUUserS   float64 `json:"cpu_user_s"`
	CPUSysS    float64 `json:"cpu_sys_s"`
	CPUPerOpUS float64 `json:"cpu_per_op_us"`
	FirstError string  `json:"first_error,omitempty"`
}

func main() {
	var o options
	flag.StringVar(&o.hosts, "hosts", "127.0.0.1", "contact points, comma separated")
	flag.IntVar(&o.port, "port", 9042, "native transport port")
	flag.StringVar(&o.dc, "dc", "", "local data centre (default: the driver's round robin over all)")
	flag.StringVar(&o.keyspace, "keyspace", "bareloop", "keyspace to create and write (replication: 1 in -dc, or SimpleStrategy 1)")
	flag.IntVar(&o.rate, "rate", 5000, "operations per second")
	flag.DurationVar(&o.duration, "duration", 20*time.Second, "how long to send")
	flag.IntVar(&o.workers, "workers", 128, "goroutines executing operations (an operation due when all are busy is dropped)")
	flag.IntVar(&o.keys, "keys", 100000, "distinct session ids written, uniformly")
	flag.IntVar(&o.conns, "conns", 2, "connections per host (gocql NumConns)")
	flag.DurationVar(&o.coalesce, "coalesce", 200*time.Microsecond, "gocql WriteCoalesceWaitTime (the driver's default is 200µs; 0 writes each frame at once)")
	flag.DurationVar(&o.timeout, "timeout", 5*time.Second, "per-request timeout")
	flag.BoolVar(&o.tokenAware, "token-aware", true, "token-aware host selection over DC-aware round robin (what a production client configures)")
	flag.DurationVar(&o.stall, "stall", 100*time.Millisecond, "a response (from the intended start) longer than this counts as stalled")
	flag.StringVar(&o.label, "label", "bare-gocql", "client name in the output")
	flag.StringVar(&o.profile, "cpuprofile", "", "write a Go CPU profile of the measured loop to this file")
	flag.BoolVar(&o.progress, "progress", false, "print completions and drops each second to stderr")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bareloop cql:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.rate <= 0 || o.workers <= 0 || o.keys <= 0 || o.duration <= 0 {
		return fmt.Errorf("-rate, -workers, -keys and -duration must be positive")
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

	var completed, errs, stalled, maxResp, busy atomic.Int64
	var firstErr atomic.Pointer[string]
	work := make(chan int64) // intended start, ns since t0
	var wg sync.WaitGroup
	t0 := time.Now()
	for w := 0; w < o.workers; w++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, 7))
			for intended := range work {
				id := ids[r.IntN(len(ids))]
				err := s.Query(stmt, time.Now(), id).Consistency(gocql.One).Idempotent(true).Exec()
				resp := int64(time.Since(t0)) - intended
				completed.Add(1)
				busy.Add(-1)
				if err != nil {
					errs.Add(1)
					msg := err.Error()
					firstErr.CompareAndSwap(nil, &msg)
				}
				if resp > int64(o.stall) {
					stalled.Add(1)
				}
				for m := maxResp.Load(); resp > m && !maxResp.CompareAndSwap(m, resp); m = maxResp.Load() {
				}
			}
		}(uint64(w))
	}

	if o.profile != "" {
		f, err := os.Create(o.profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	var dropped atomic.Int64
	before := rusage()
	t0 = time.Now()
	if o.progress {
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			var lastC, lastD int64
			for tick := time.NewTicker(time.Second); ; {
				select {
				case <-stop:
					tick.Stop()
					return
				case <-tick.C:
				}
				c, d := completed.Load(), dropped.Load()
				fmt.Fprintf(os.Stderr, "%.0f s: %d completed, %d dropped\n", time.Since(t0).Seconds(), c-lastC, d-lastD)
				lastC, lastD = c, d
			}
		}()
	}
	interval := time.Second / time.Duration(o.rate)
	total := int64(o.duration / interval)
	// The paced producer: sleep until the next operation is due (timer sleeps overshoot by
	// up to a millisecond, so several operations then go at once), then hand it over
	// without waiting.
	for i := int64(0); i < total; i++ {
		due := time.Duration(i) * interval
		if d := due - time.Since(t0); d > 0 {
			time.Sleep(d)
		}
		// Dropped only when every goroutine is busy; a free one that has not come back to
		// the channel yet is waited for (as shardbench does).
		if busy.Load() >= int64(o.workers) {
			dropped.Add(1)
			continue
		}
		busy.Add(1)
		work <- int64(due)
	}
	close(work)
	wg.Wait()
	elapsed := time.Since(t0)
	after := rusage()

	res := result{
		Client: o.label, Rate: o.rate, Workers: o.workers, DurationS: elapsed.Seconds(),
		Completed: completed.Load(), Errors: errs.Load(), Dropped: dropped.Load(), Stalled: stalled.Load(),
		MaxRespMS: float64(maxResp.Load()) / 1e6,
		CPUUserS:  after.user - before.user, CPUSysS: after.sys - before.sys,
	}
	res.Achieved = float64(res.Completed) / o.duration.Seconds()
	if res.Completed > 0 {
		res.CPUPerOpUS = 1e6 * (res.CPUUserS + res.CPUSysS) / float64(res.Completed)
	}
	if p := firstErr.Load(); p != nil {
		res.FirstError = *p
	}
	return json.NewEncoder(os.Stdout).Encode(res)
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

type cpu struct{ user, sys float64 }

func rusage() cpu {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return cpu{
		user: float64(ru.Utime.Sec) + float64(ru.Utime.Usec)/1e6,
		sys:  float64(ru.Stime.Sec) + float64(ru.Stime.Usec)/1e6,
	}
}
