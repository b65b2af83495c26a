package backend

import (
	"fmt"
	"sync/atomic"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/results"
)

// ReadRows counts, per read step of a compiled design, the reads sent, those that found rows
// (documents), and the rows they returned: whether a run's reads met the data they look
// for, which an empty database would make cheaper than any real read.
type ReadRows struct {
	compiled *design.Compiled
	steps    []readCount // by Step.ID
}

type readCount struct{ reads, found, rows atomic.Int64 }

// NewReadRows counts the reads of compiled's steps; nil (counting nothing) without one,
// as a connection made only to probe the server has.
func NewReadRows(compiled *design.Compiled) *ReadRows {
	if compiled == nil {
		return nil
	}
	return &ReadRows{compiled: compiled, steps: make([]readCount, compiled.NumSteps())}
}

// Add counts one read of step s that returned n rows. Safe for concurrent use.
func (r *ReadRows) Add(s *design.Step, n int) {
	if r == nil || s.ID < 0 || s.ID >= len(r.steps) {
		return
	}
	c := &r.steps[s.ID]
	c.reads.Add(1)
	if n > 0 {
		c.found.Add(1)
		c.rows.Add(int64(n))
	}
}

// StepReads is one read step's counts.
type StepReads struct {
	Op, Target         string
	Step               int
	Reads, Found, Rows int64
}

// Steps lists the counts of every read step that ran, by operation then step.
func (r *ReadRows) Steps() []StepReads {
	if r == nil {
		return nil
	}
	var out []StepReads
	for ty := range r.compiled.Model.Ops {
		for _, s := range r.compiled.Steps(ty) {
			c := &r.steps[s.ID]
			if n := c.reads.Load(); n > 0 {
				out = append(out, StepReads{Op: s.Op, Target: s.Target, Step: s.Index, Reads: n, Found: c.found.Load(), Rows: c.rows.Load()})
			}
		}
	}
	return out
}

// Table is the counts as server.json shows them.
func (r *ReadRows) Table() results.ServerTable {
	t := results.ServerTable{
		Title:   "reads and the rows they returned, per operation step",
		Columns: []string{"operation", "step", "table", "reads", "found rows", "found %", "rows returned"},
		Numeric: []bool{false, true, false, true, true, true, true},
	}
	for _, s := range r.Steps() {
		t.Rows = append(t.Rows, []string{s.Op, fmt.Sprint(s.Step), s.Target, fmt.Sprint(s.Reads), fmt.Sprint(s.Found),
			fmt.Sprintf("%.1f%%", 100*float64(s.Found)/float64(s.Reads)), fmt.Sprint(s.Rows)})
	}
	return t
}
