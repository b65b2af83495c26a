package cassandra

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/schedule"
	"github.com/shardbench/shardbench/workloads"
)

// distributedScenario: sessions and carts against seeds 000 and 003, 1,000 operations a
// second for 30 s: modest for the shared three nodes on two cores. Its mix holds only
// operations both designs serve (seed000 keeps no abandoned carts), so that every
// operation of the schedule is offered. Its SLO rules (the
// gate on the merged directory) are about the run's accounting, not latency, which on
// two cores shared with three Cassandra nodes and four clients says little; the test
// adds a rule that every operation of the schedule was accounted for.
const distributedScenario = `name: distributed
seed: 11
load:
  arrival: poisson
  max_in_flight: 256
  late_after: 100ms
  timeout: 10s
  drain_timeout: 5s
  phases:
    - {name: steady, type: constant, rate: 1000, duration: 30s}
population:
  users: 20000
  sessions: 40000
  carts: 10000
  products: 2000
  orders_per_user: 3
  bots: {count: 2, share: 0.02}
mix:
  sessions.create: 3
  sessions.touch: 4
  sessions.read: 4
  sessions.expire: 1
  carts.add_item: 3
  carts.change_qty: 1
  carts.remove_item: 1
  carts.read: 2
  carts.checkout: 1
backends:
  cassandra:
    keyspace: sbtest_dist
    replication: {class: NetworkTopologyStrategy, dc1: 3}
designs:
`

// Four shardbench processes on this machine, each a shard of one run (its index in
// JOB_COMPLETION_INDEX, as a Kubernetes Indexed Job gives it; the last one started 3 s
// after the common start, as a pod scheduled late), against the real 3-node cluster:
// the merged result holds exactly the single schedule's operations, per operation; the
// late shard's missed operations are counted late, not shifted; the gate on the merged
// directory passes; and in the database every session the run created went through its
// life cycle in order: created (the row has what only the create writes), last touched
// by its last touch, gone when expired.
func TestDistributedRunAgainstCassandra(t *testing.T) {
	hosts := clusterHosts(t)
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "shardbench")
	if out, err := exec.Command("go", "build", "-o", bin, filepath.Join(repo, "cmd", "shardbench")).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	body := distributedScenario
	for _, d := range []string{"seed000", "seed003"} {
		body += designEntry(filepath.Join(repo, "scenarios", "designs", d+".yaml")) + "\n"
	}
	path := filepath.Join(tmp, "distributed.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}

	// The single schedule, generated here: the operations the run is to send.
	sc, err := scenario.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := workloads.New(sc)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	var total int64
	life := map[int64][]sessionWrite{}
	const shards, straggle = 4, 3
	var perShard [shards][]uint64 // each shard's operations, by Seq in stream order
	s := m.NewStream(schedule.New(sc))
	var op workloads.Op
	for s.Next(&op) {
		name := m.Ops[op.Type].Name
		want[name]++
		total++
		sh := m.Shard(&op, shards)
		perShard[sh] = append(perShard[sh], op.Seq)
		if op.Session >= m.Sessions {
			switch name {
			case "sessions.create", "sessions.touch", "sessions.expire":
				life[op.Session] = append(life[op.Session], sessionWrite{name, op.Intended, op.Time, op.Seq})
			}
		}
	}
	// The gate rules on the schedule and on timeouts, not error_rate: that counts the
	// operations a client too far behind still held when the schedule ended, dropped (5.7%
	// of seed000's in one CI run, with the three nodes and four clients on two cores).
	slo := fmt.Sprintf("slo:\n  - all scheduled == %d\n  - all error_rate.timeout < 5%%\n", total)
	if err := os.WriteFile(path, []byte(body+slo), 0o644); err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(tmp, "run")
	cmd := exec.Command(filepath.Join(repo, "testenv", "distributed-run.sh"), "--bin", bin, "--out", out,
		"--shards", fmt.Sprint(shards), "--recreate", "--lead", "20", "--straggle", fmt.Sprint(straggle), "--gate",
		// --spin 0: four processes spinning for precise starts would take the two cores
		// from the three Cassandra nodes beside them (docs/cassandra.md).
		path, "--", "--backend", "cassandra", "--target", targetOf(hosts), "--spin", "0")
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	if err := cmd.Run(); err != nil {
		t.Errorf("distributed run (shards, merge, gate): %v\nstdout:\n%s\nstderr:\n%s", err, so.String(), se.String())
	} else {
		t.Logf("gate on the merged directory:\n%s", so.String())
	}

	merged := filepath.Join(out, "merged")
	sum, err := results.Read(merged)
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Complete || sum.Merge == nil || sum.Merge.Kind != results.MergeShards || sum.Merge.Runs != shards || len(sum.Variants) != 2 {
		t.Fatalf("merged: complete %v, merge %+v, %d variants", sum.Complete, sum.Merge, len(sum.Variants))
	}
	for vi, v := range sum.Variants {
		// Every operation of the schedule is accounted for once: completed, or dropped
		// because it still waited for a worker when the schedule ended (the clients fall
		// behind on this loaded machine; the run ends with its schedule). None is dropped
		// before the end (checked on each shard's time series below).
		if v.Totals.Scheduled != total || v.Totals.Completed+v.Totals.Dropped != total {
			t.Errorf("%s: %d scheduled, %d completed, %d dropped; the schedule has %d", v.Name, v.Totals.Scheduled, v.Totals.Completed, v.Totals.Dropped, total)
		}
		for _, o := range v.Ops {
			if o.Scheduled != want[o.Op] {
				t.Errorf("%s/%s: %d sent, the schedule has %d", v.Name, o.Op, o.Scheduled, want[o.Op])
			}
		}
		t.Logf("%s: %d operations, %d late, errors %v, p50 %.2fms p99 %.2fms", v.Name, v.Totals.Scheduled, v.Totals.Late, v.Totals.Errors, v.Totals.Response.P50, v.Totals.Response.P99)
		// The straggler missed the first seconds of the first variant only (the second
		// one starts on the common clock after the first's stride).
		if late := v.Totals.Late; vi == 0 && late < total/shards*straggle/30/2 {
			t.Errorf("%s: %d late; the shard %d s late missed about %d", v.Name, late, straggle, total/shards*straggle/30)
		}
	}
	if hs, err := results.ReadHotspots(merged); err != nil || hs == nil || len(hs.Variants) != 2 {
		t.Errorf("merged hotspots.json: %v", err)
	} else if n := hs.Variants[0].Notes; len(n) == 0 || !strings.Contains(strings.Join(n, " "), "whole run") {
		t.Errorf("hot partitions should be the whole run's: %v", n)
	}

	// Life cycles in the database (seed000's user_sessions), at two levels.
	//
	// Created: every session the run created and touched but never expired has its row,
	// with what only the create writes (a shard touching sessions another never created,
	// as runs with different seeds did, leaves rows without it). Left out: a session whose
	// create its shard dropped at the schedule's end, and one created when an operation
	// that failed may have been intended (a timed-out create may or may not have landed).
	// A shard sends its operations in stream order and drops only at the end, so what it
	// dropped is the last of its operations, as many as its results count dropped; every
	// operation of a session is on one shard (workloads.Model.Shard). A failure is counted
	// in the second it ended, at most the longest response time after it was intended.
	//
	// In order: a session whose writes a client sends in order (at least gap apart in
	// intended time, each in a second when no operation started more than late_after,
	// 100 ms, late, nor the next: operations are counted when they complete) ends as its
	// last write left it: last_activity from its last create or touch, or gone when it
	// expired last. A client behind its schedule releases what is due together onto its
	// pool of workers, in either order, so on a machine too loaded for the clients to
	// keep up (the three nodes and four clients share two cores) this level has nothing
	// to judge, and the test says so rather than judging noise.
	ks := keyspaceName("sbtest_dist", "", "seed000")
	rows := readSessions(t, hosts, ks)
	const gap = 250 * time.Millisecond
	pts, err := results.ReadTimeseries(merged)
	if err != nil {
		t.Fatal(err)
	}
	dropped := droppedAtEnd(t, out, "seed000", perShard[:], schedule.New(sc).Duration())
	longest := int64(math.Ceil(sum.Variant("seed000").Totals.Response.Max / 1e3))
	failed, kept := map[int64]bool{}, map[int64]bool{}
	for _, p := range pts {
		if p.Variant != "seed000" {
			continue
		}
		// An interval is a second unless a starved client closed several at once.
		sec, end := int64(p.StartS), int64(math.Ceil(p.EndS))
		bad := len(p.Errors) > 0 || p.Abandoned > 0 || p.Dropped > 0
		kept[sec] = p.Late == 0 && !bad && end == sec+1
		if len(p.Errors) > 0 || p.Abandoned > 0 {
			for b := sec - longest - 1; b <= end; b++ {
				failed[b] = true
			}
		}
	}
	created, ordered, broken, unsent := 0, 0, 0, 0
	var examples []string
	fail := func(id int64, ws []sessionWrite, why string) {
		broken++
		if len(examples) < 5 {
			examples = append(examples, fmt.Sprintf("session %d (%d writes): %s", id, len(ws), why))
		}
	}
	for id, ws := range life {
		if ws[0].op != "sessions.create" {
			t.Fatalf("session %d: first written by %s, before its create", id, ws[0].op)
		}
		row, present := rows[m.UUID(workloads.KindSession, id)]
		createSec := int64(ws[0].at / time.Second)
		if dropped[ws[0].seq] {
			// Its shard dropped every write of it (the rest come after the create): no
			// row, or the dropped operations were not the shard's last.
			unsent++
			if present {
				fail(id, ws, "its shard dropped the create and what followed, but the row is there")
			}
			continue
		}
		clean := !failed[createSec]
		expired, inOrder := false, ws[0].at > (straggle+2)*time.Second
		for i, w := range ws {
			sec := int64(w.at / time.Second)
			expired = expired || w.op == "sessions.expire"
			inOrder = inOrder && kept[sec] && kept[sec+1] && (i == 0 || w.at-ws[i-1].at >= gap)
		}
		if !expired && clean && len(ws) > 1 {
			created++
			if !present || !row.created {
				fail(id, ws, "touched, but the create's row is missing")
				continue
			}
		}
		if !inOrder {
			continue
		}
		ordered++
		last := ws[len(ws)-1]
		switch {
		case last.op == "sessions.expire" && present:
			fail(id, ws, "expired last, but the row is there")
		case last.op == "sessions.expire":
		case !present:
			fail(id, ws, "not in the table")
		case row.lastActivity != workloads.FloorDiv(last.time, 1e6):
			fail(id, ws, fmt.Sprintf("last_activity %d, want %d (its last %s)", row.lastActivity, workloads.FloorDiv(last.time, 1e6), last.op))
		}
	}
	t.Logf("life cycles in %s.user_sessions, of %d sessions the run created: %d touched and created, %d never sent (of %d operations dropped at the end; failures in %d intended seconds left out), %d checked in order (%d clean seconds); %d broken",
		ks, len(life), created, unsent, len(dropped), count(failed), ordered, count(kept), broken)
	// About 845 of the sessions are created and touched; a freshly started cluster on a
	// loaded machine left 333 to judge in one run (102 timeouts, 15% dropped at the end).
	if created < 150 {
		t.Errorf("only %d created-and-touched sessions could be checked: operations failed in most seconds", created)
	}
	if ordered < 100 {
		t.Logf("the clients fell behind their schedule in most seconds (too loaded a machine): the order of %d sessions' writes only was judged", ordered)
	}
	if broken > 0 {
		t.Errorf("%d life cycles broken, e.g. %s", broken, strings.Join(examples, "; "))
	}
}

func count(m map[int64]bool) int {
	n := 0
	for _, v := range m {
		if v {
			n++
		}
	}
	return n
}

type sessionWrite struct {
	op   string
	at   time.Duration // intended
	time int64         // store time, unix ns
	seq  uint64
}

// droppedAtEnd is the operations (by Seq) of the variant that the shards under out
// dropped: each shard's last ones, as many as its results count (perShard: each shard's
// operations in stream order). It checks that each shard dropped them when its schedule
// ended: in an interval that ends then or later (a client starved at the end may close
// several seconds as one), never before; a queued operation is dropped only then.
func droppedAtEnd(t *testing.T, out, variant string, perShard [][]uint64, schedule time.Duration) map[uint64]bool {
	t.Helper()
	dropped := map[uint64]bool{}
	for i, seqs := range perShard {
		dir := filepath.Join(out, fmt.Sprintf("shard-%d", i))
		sum, err := results.Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		pts, err := results.ReadTimeseries(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pts {
			if p.Dropped > 0 && p.EndS < schedule.Seconds() {
				t.Errorf("shard %d, %s: %d operations dropped in [%gs, %gs] of a %s schedule: a queued operation is dropped only when the schedule has ended", i, p.Variant, p.Dropped, p.StartS, p.EndS, schedule)
			}
		}
		v := sum.Variant(variant)
		if v == nil || v.Totals.Dropped > int64(len(seqs)) {
			t.Fatalf("shard %d: variant %s missing, or more dropped than its %d operations", i, variant, len(seqs))
		}
		for _, q := range seqs[len(seqs)-int(v.Totals.Dropped):] {
			dropped[q] = true
		}
	}
	return dropped
}

type sessionRow struct {
	lastActivity int64 // unix ms
	created      bool  // user_agent, which only the create writes, is set
}

// readSessions reads every row of ks.user_sessions, by session UUID.
func readSessions(t *testing.T, hosts, ks string) map[[16]byte]sessionRow {
	t.Helper()
	c := gocql.NewCluster(strings.Split(hosts, ",")...)
	c.Consistency = gocql.Quorum
	c.Timeout = 30 * time.Second
	s, err := c.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out := map[[16]byte]sessionRow{}
	iter := s.Query("SELECT session_id, last_activity, user_agent FROM " + ks + ".user_sessions").PageSize(5000).IterContext(context.Background())
	var id gocql.UUID
	var last time.Time
	var ua string
	for iter.Scan(&id, &last, &ua) {
		out[[16]byte(id)] = sessionRow{lastActivity: last.UnixMilli(), created: ua != ""}
		ua = ""
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}
