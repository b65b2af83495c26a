package sim

import (
	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/plan"
	"github.com/shardbench/shardbench/workloads"
)

// A lightweight transaction (UPDATE … IF, INSERT … IF NOT EXISTS) is Cassandra's Paxos
// v1 (the 5.0 default, StorageProxy.cas): four rounds from the coordinator, each waiting
// for the serial level's quorum of the Paxos participants (every live replica for
// SERIAL, the local data center's for LOCAL_SERIAL):
//
//	prepare/promise  every participant persists its promise of the ballot (a write)
//	read/results     a quorum reads the current row (a read)
//	propose/accept   every participant persists the proposal (a write)
//	commit/ack       every replica in every data center applies the mutation (a write),
//	                 acknowledged at the statement's consistency level
//
// Rounds on one partition serialise: a proposer whose prepare meets another's round in
// progress, or whose proposal is overtaken by a later prepare, loses the round, sleeps a
// random time in [0, paxos_backoff) ("to give the other proposer a chance to finish") and
// starts again with a new ballot, until cas_contention_timeout has passed since the
// request started; then the request fails with a write timeout of type CAS. A lost round
// still cost its replicas the work it did. So concurrent LWTs on one partition contend
// and time out, where the same rate spread over partitions does not.
//
// Which of two overlapping rounds loses is decided in the order the simulator serves
// operations (intended-time order): the round already served wins. Real proposers can
// also both lose (duelling ballots), so the contention simulated is a lower bound.

// overtaken reports whether another round prepared during (from, until]: its higher
// ballot makes this round's proposal fail.
func (h *holds) overtaken(from, until int64) bool {
	for _, r := range h.spans {
		if r.from > from && r.from <= until {
			return true
		}
	}
	return false
}

// LWT figures of a run, for server.json.
type paxosStats struct {
	lwts      int64 // LWTs served
	rounds    int64 // Paxos rounds started (prepares)
	contended int64 // LWTs that lost a round at least once
	timeouts  int64 // LWTs that failed with a CAS write timeout
}

// lwt runs a lightweight transaction from coordinator coord (the live replicas are in
// c.live) for a client in data center dc, starting at t.
func (c *cassCluster) lwt(a *design.Access, op *workloads.Op, w *reach, q *stepQuota, coord int32, dc int, t int64) (int64, metrics.Class) {
	s := c.sim
	m := &s.opt.Cassandra
	timeout := int64(m.WriteTimeout)
	st := &s.paxos
	st.lwts++
	// The Paxos participants: the serial level's data centers' live replicas.
	participants := c.paxosBuf[:0]
	for _, r := range c.live {
		if q.serial.PerDC == nil || c.dcOf(r) < len(q.serial.PerDC) && q.serial.PerDC[c.dcOf(r)] > 0 {
			participants = append(participants, r)
		}
	}
	c.paxosBuf = participants
	// As the servers count them: Paxos reads the partition at the serial level, and the
	// commit is a mutation to every live replica.
	c.served.read(a.Step, -1, participants)
	c.served.write(a.Step, coord, c.live)
	pp := c.paxos.of(w.fp, t)
	cur := t + c.clientHop(dc, coord)
	for attempt := 1; ; attempt++ {
		st.rounds++
		prepared, ok := c.round(StageWrite, m.Write, participants, &q.serial, coord, cur, timeout)
		if !ok || prepared-cur > timeout {
			st.timeouts++
			return cur + timeout, metrics.Timeout
		}
		lost := pp.busy(cur, prepared)
		var committed int64
		if !lost {
			read, ok := c.paxosRead(participants, &q.serial, coord, prepared, timeout)
			if !ok {
				st.timeouts++
				return prepared + timeout, metrics.Timeout
			}
			proposed, ok := c.round(StageWrite, m.Write, participants, &q.serial, coord, read, timeout)
			if !ok {
				st.timeouts++
				return read + timeout, metrics.Timeout
			}
			lost = pp.overtaken(cur, proposed)
			if !lost {
				// Commit: every live replica applies the mutation; the client waits for
				// the statement's consistency level.
				committed, ok = c.round(StageWrite, m.Write, c.live, &q.level, coord, proposed, timeout)
				if !ok {
					st.timeouts++
					return proposed + timeout, metrics.Timeout
				}
				pp.add(cur, committed)
				if w.keyed {
					s.sizes.add(w.fp, int64(max(a.Bytes, 0)), rowsAdded(a.Step, a), op.Time, a.Step.TTL)
				}
				return committed + c.clientHop(dc, coord), metrics.OK
			}
			prepared = proposed
		}
		if attempt == 1 {
			st.contended++
		}
		next := prepared + int64(s.rng.Float64()*float64(m.PaxosBackoff))
		if next-t >= int64(m.CasContentionTimeout) {
			st.timeouts++
			return next + c.clientHop(dc, coord), metrics.Timeout
		}
		cur = next
	}
}

// paxosRead is the read round: the serial quorum's least backlogged participants read
// the row (the coordinator first when it is one).
func (c *cassCluster) paxosRead(participants []int32, q *plan.Quota, coord int32, at, timeout int64) (int64, bool) {
	s := c.sim
	m := &s.opt.Cassandra
	c.pickReplicas(participants, q, coord, c.dcOf(coord), at)
	end := at
	for _, r := range c.pick {
		h := c.hop(coord, r)
		_, e, ok := c.nodes[r].ServeAs(StageRead, at+h, s.draw(m.Read), timeout)
		if !ok {
			return 0, false
		}
		end = max(end, e+h)
	}
	return end, len(c.pick) > 0
}
