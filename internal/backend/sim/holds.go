package sim

// holdTable holds, per partition or document (by the fingerprint of its key), the recent
// intervals during which a request held it: a Paxos round that won, from its prepare to
// its commit; an update, from its start to its commit. Only keys held now or later
// matter, a few hundred at a time however many keys the run touches, so the table is a
// fixed array (open addressing, probes slots from the key's) whose slot a key takes over
// once its holder's intervals have all ended; an overflow map takes the rare key that
// finds every probed slot held.
type holdTable struct {
	slots    []holdSlot
	mask     uint64
	overflow map[uint64]*holds
}

type holdSlot struct {
	fp   uint64
	used bool
	h    holds
}

type holds struct{ spans []interval }

type interval struct{ from, until int64 }

const (
	holdSlots  = 1 << 12
	holdProbes = 8
)

func newHoldTable() holdTable {
	return holdTable{slots: make([]holdSlot, holdSlots), mask: holdSlots - 1}
}

// of is the holds of the key with fingerprint fp, forgetting the intervals that ended
// before now (no request served later starts before now).
func (t *holdTable) of(fp uint64, now int64) *holds {
	for i := uint64(0); i < holdProbes; i++ {
		if sl := &t.slots[(fp+i)&t.mask]; sl.used && sl.fp == fp {
			sl.h.prune(now)
			return &sl.h
		}
	}
	if h, ok := t.overflow[fp]; ok {
		h.prune(now)
		if len(h.spans) == 0 {
			delete(t.overflow, fp) // taken back into the array below
		} else {
			return h
		}
	}
	for i := uint64(0); i < holdProbes; i++ {
		sl := &t.slots[(fp+i)&t.mask]
		if sl.used {
			sl.h.prune(now)
		}
		if !sl.used || len(sl.h.spans) == 0 {
			sl.fp, sl.used = fp, true
			sl.h.spans = sl.h.spans[:0]
			return &sl.h
		}
	}
	if t.overflow == nil {
		t.overflow = map[uint64]*holds{}
	}
	h := &holds{}
	t.overflow[fp] = h
	return h
}

// prune forgets the intervals that ended before now.
func (h *holds) prune(now int64) {
	n := 0
	for _, r := range h.spans {
		if r.until >= now {
			h.spans[n] = r
			n++
		}
	}
	h.spans = h.spans[:n]
}

// busy reports whether another request holds the key during [from, until].
func (h *holds) busy(from, until int64) bool {
	for _, r := range h.spans {
		if r.from <= until && from <= r.until {
			return true
		}
	}
	return false
}

func (h *holds) add(from, until int64) { h.spans = append(h.spans, interval{from, until}) }
