package sim

import (
	"slices"

	"github.com/shardbench/shardbench/internal/design"
)

// WiredTiger's document-level concurrency is optimistic: an update or delete that finds
// the document it modifies holding another transaction's uncommitted update (or one
// committed after its snapshot) fails with a write conflict (WT_ROLLBACK), and mongod
// retries the operation itself (writeConflictRetry), so the client sees no error, only
// the time: the first three retries at once, then after 1 ms (up to attempt 10), 5 ms (to
// 100), 10 ms (to 200) and 100 ms, as logAndBackoff does, until the operation's time
// limit. Writes to one hot document thus serialise, each retry costing the primary
// another update's work. Inserts create new documents and do not conflict.
//
// Which of two overlapping updates conflicts is decided in the order the simulator serves
// operations: the update already served holds the document.

// documentOf reports whether an access writes one document the simulator can name: an
// update or delete whose filter is its shard key's values (every shard key field, and no
// other field), so the shard key identifies the document it modifies. Other writes (an
// insert, a filter on fields beyond the shard key, a broadcast) are not checked for
// conflicts.
func (c *mongoCluster) documentOf(s *design.Step, w *reach) bool {
	if !w.keyed {
		return false
	}
	switch c.docWrite[s.ID] {
	case 1:
		return true
	case 2:
		return false
	}
	ok := s.Statement != "insertOne" && s.Statement != "insertMany" && len(s.KeyColumns) > 0 && s.KeyFields >= len(s.KeyColumns)
	for _, f := range s.Filter {
		ok = ok && slices.Contains(s.KeyColumns, f)
	}
	c.docWrite[s.ID] = 2
	if ok {
		c.docWrite[s.ID] = 1
	}
	return ok
}

// Write conflict figures of a run, for server.json.
type conflictStats struct {
	writes, conflicted, retries int64
}

// primaryWrite runs a write on the primary p, arriving at t: an insert once; an update
// or delete of a document another update holds conflicts and is retried by the server
// after its backoff, each attempt costing the primary an update. It returns when the
// write is committed on the primary, or ok=false when it waited in the queue past
// queue.
func (c *mongoCluster) primaryWrite(p *Station, a *design.Access, w *reach, t, queue int64) (int64, bool) {
	s := c.sim
	m := &s.opt.MongoDB
	cost := m.Update
	if a.Step.Statement == "insertOne" || a.Step.Statement == "insertMany" {
		cost = m.Write
	}
	if !c.documentOf(a.Step, w) {
		_, e, ok := p.ServeAs(StageWrite, t, s.draw(cost), queue)
		return e, ok
	}
	st := &s.conflicts
	st.writes++
	doc := c.docs.of(w.fp, t)
	first := t
	for attempt := 1; ; attempt++ {
		start, e, ok := p.ServeAs(StageWrite, t, s.draw(cost), queue)
		if !ok {
			return e, false
		}
		if !doc.busy(start, e) {
			doc.add(start, e)
			return e, true
		}
		if attempt == 1 {
			st.conflicted++
		}
		st.retries++
		t = e + backoff(attempt)
		if queue > 0 && t-first > queue {
			return t, false // the operation's time limit passed while it retried
		}
	}
}

// backoff is mongod's wait before retrying a write conflict for the attempt-th time
// (logAndBackoff, MongoDB 7.0).
func backoff(attempt int) int64 {
	const ms = int64(1e6)
	switch {
	case attempt < 4:
		return 0
	case attempt < 10:
		return ms
	case attempt < 100:
		return 5 * ms
	case attempt < 200:
		return 10 * ms
	}
	return 100 * ms
}
