package workloads

import (
	"time"

	"github.com/shardbench/shardbench/internal/schedule"
)

// Stream assembles the schedule (intended start times), the mix (which operation) and
// the workloads' generators (what it acts on) into the operation stream. Next implements
// engine.Source. A Stream is used from one goroutine; every stream of a model and schedule
// yields the identical operations.
type Stream struct {
	m     *Model
	arr   *schedule.Arrivals
	st    *State
	gens  []Generator // per op table entry
	local []int       // per op table entry: index into its workload's ops
	seq   uint64
}

// NewStream returns a fresh stream over the schedule's arrivals.
func (m *Model) NewStream(sch *schedule.Schedule) *Stream {
	return m.newStream(sch.Arrivals())
}

func (m *Model) newStream(arr *schedule.Arrivals) *Stream {
	s := &Stream{m: m, arr: arr, st: newState(m)}
	byWorkload := map[*Meta]Generator{}
	for _, info := range m.Ops {
		g, ok := byWorkload[info.Workload]
		if !ok {
			g = info.Workload.New(s.st)
			byWorkload[info.Workload] = g
		}
		s.gens = append(s.gens, g)
		s.local = append(s.local, info.Index)
	}
	return s
}

// Next fills op with the next operation; false at the end of the schedule.
func (s *Stream) Next(op *Op) bool {
	t, ok := s.arr.Next()
	if !ok {
		return false
	}
	s.fill(op, t)
	return true
}

func (s *Stream) fill(op *Op, t time.Duration) {
	m := s.m
	k := 0
	if len(s.gens) > 1 {
		k = m.mixAlias.Sample(&s.st.Rand)
	}
	*op = Op{
		Seq: s.seq, Type: uint16(k), Intended: t,
		Time: m.Start + int64(float64(t)*m.Scale),
		User: -1, Session: -1, Product: -1, Order: -1,
		Category: NoCategory, Sub: NoSub,
	}
	s.seq++
	s.st.Op = op
	s.gens[k].Fill(s.local[k], op)
}

// Stats collects the counters of the generators that report them (Stater), by name.
func (s *Stream) Stats() map[string]int64 {
	out := map[string]int64{}
	seen := map[Generator]bool{}
	for i, g := range s.gens {
		if seen[g] {
			continue
		}
		seen[g] = true
		if st, ok := g.(Stater); ok {
			prefix := s.m.Ops[i].Workload.Name + "."
			st.Stats(func(name string, v int64) { out[prefix+name] += v })
		}
	}
	return out
}

// State exposes the stream's state (tests inspect it).
func (s *Stream) State() *State { return s.st }
