// Package backend defines what the engine drives: a Backend executes one logical
// operation against one design variant. Real backends (cassandra, mongo) and the test
// backends here (null, delay) run in real time; the simulator implements Virtual instead
// and runs the whole stream in virtual time.
//
// Only the packages under backend/ that talk to a database import its driver.
package backend

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/placement/cassandra"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/yamlx"
	"github.com/shardbench/shardbench/workloads"
)

// Outcome is the result of one operation. Err is kept only to show examples of each class
// to the user; it must not contain credentials.
type Outcome struct {
	Class metrics.Class
	Err   error
}

// Backend executes operations for one variant. Execute is called concurrently by many
// workers; it must be safe for concurrent use and must not retain op.
type Backend interface {
	Execute(ctx context.Context, op *workloads.Op) Outcome
	Close() error
}

// Func adapts a function to a Backend with nothing to close.
type Func func(ctx context.Context, op *workloads.Op) Outcome

// Execute calls f.
func (f Func) Execute(ctx context.Context, op *workloads.Op) Outcome { return f(ctx, op) }

// Close does nothing.
func (Func) Close() error { return nil }

// Virtual is implemented by backends that simulate in virtual time. Simulate pulls every
// operation from next (in intended-time order; nil at the end of the stream) and reports
// each one's timing to record, in an order in which none is due (completed; dropped or
// unserved: intended) before the intended time of one reported earlier: a simulator reports each operation as soon as it
// has stepped it, however far ahead of its clock it completes (completion order would do
// too). The collector (metrics.Collector.AddVirtual) files each sample under the interval
// of its time, and closes an interval once the intended times have passed its end.
//
// An operation the variant does not serve (Unserved) is reported at its intended time
// with metrics.FlagUnserved and nothing else: never simulated, it takes no client slot.
//
// The operation next gives is read in place, shared with the other variants reading the
// same stream (workloads.Pull): Simulate must not modify it, nor keep its pointer past
// the next call (copy what it needs for later).
type Virtual interface {
	Simulate(ctx context.Context, next func() *workloads.Op, record func(*metrics.Sample)) error
	Close() error
}

// UnservedCounter is implemented by Virtual backends that can report the operations they
// do not serve as a count instead of a Sample each: Simulate then reports each of its own
// operations it does not serve (one of another shard still goes to record, flagged
// metrics.FlagForeign) by calling count(op.Type, its intended time) where it would have
// recorded the Sample, and the collector counts it as it counted that Sample
// (metrics.Collector.AddUnserved). CountUnserved is called before Simulate.
type UnservedCounter interface {
	CountUnserved(count func(op uint16, intended int64))
}

// VirtualGrain is the resolution of a virtual-time run's intervals: its ticks are whole
// multiples of it, which the histogram logs state exactly (in milliseconds).
const VirtualGrain = time.Millisecond

// Sharing is implemented by Virtual backends whose variants, simulated together on one
// shared stream, can do part of their work once for all of them: the simulator places
// and analyses once a table that several variants define alike (a sweep over one
// collection's shard key shares every other collection).
type Sharing interface {
	// Share is called on one member of a group, with every member (itself among them),
	// before any of them simulates. newSource gives a fresh stream, the one the group
	// will read. The function returned is called on every block of the shared stream, in
	// stream order, before any member reads the block (see workloads.Share); nil when
	// nothing is shared.
	Share(ctx context.Context, members []Virtual, newSource func() (workloads.Source, error)) func(block []workloads.Op)
}

// Sharded is implemented by Virtual backends that can simulate one shard of a distributed
// run (run --shard). Such a backend still simulates every operation of the stream, since
// the servers see the whole run's load, but reports those own rejects with
// metrics.FlagForeign: the shard that owns them records them. own is called once per
// operation, in stream order, before Simulate reads it.
type Sharded interface {
	RecordOnly(own func(*workloads.Op) bool)
}

// EventHandler is implemented by backends that act on scenario events themselves (the
// simulator's node_down, a real backend refreshing its topology after add_node).
type EventHandler interface {
	HandleEvent(ctx context.Context, action, target string) error
}

// Reporter is implemented by backends with something to add to the results: per-node
// counts as the client saw them, server-side figures, what could not be applied.
type Reporter interface {
	Report(ctx context.Context, v *results.SummaryVariant, dir *results.Dir) error
}

// TokenRinger is implemented by backends that read their cluster's token ring
// (Cassandra: system.local and system.peers_v2), so that the hot-partition placement of
// a real run uses the cluster's own replicas rather than a synthetic layout. Ring is nil
// when it could not be read.
type TokenRinger interface {
	Ring() *cassandra.Ring
}

// Servers is implemented by backends that send operations to database servers: the hosts
// (addresses or names, optionally with a port) they talk to, so the engine can tell whether
// a server shares the machine with the harness (and then not spin a core it needs).
type Servers interface {
	ServerHosts() []string
}

// Info describes a backend for the summary.
type Info struct {
	Name      string
	Simulated bool
	Target    string // redacted
	Server    string
	Details   map[string]string
}

// Describer is implemented by backends that know more about what they are talking to.
type Describer interface {
	Describe() Info
}

// Null completes every operation at once: for measuring the harness itself.
func Null() Backend {
	return Func(func(context.Context, *workloads.Op) Outcome { return Outcome{} })
}

// Config is what every backend constructor receives for one variant: the scenario, the
// compiled workload and the variant's design plan (nil Variant and Plan for the "default"
// variant of a scenario without designs), the --target and the scenario's options section
// for this backend (backends.<name>, decoded strictly by the backend).
//
// Backend packages export `Open(ctx, Config) (Backend, error)` (real time) or
// `Open(ctx, Config) (Virtual, error)` (simulators); the CLI maps names to them.
type Config struct {
	Scenario *scenario.Scenario
	Model    *workloads.Model
	Variant  *design.Variant
	Compiled *design.Compiled
	// VariantIndex is the variant's position in the run (variants of a real run go one after
	// another; backends may use it to name keyspaces or databases).
	VariantIndex int
	// Target is where the database is (--target), without credentials: those come from the
	// environment or a file and must never be logged.
	Target string
	// Options is the scenario's backends.<name> section.
	Options yamlx.Raw
	// Recreate drops and recreates the schema instead of leaving existing data alone.
	Recreate bool
	// SkipSetup leaves the schema to a setup step that ran once before (run
	// --setup-only): a shard of a distributed run must not create tables beside the
	// others. The backend uses what exists; the load step is left out too (SkipLoad).
	SkipSetup bool
	// SkipLoad leaves out the load step (run --skip-load): the database is one loaded
	// before, which the backend checks and notes.
	SkipLoad bool
	// Log receives progress and warnings meant for the user (stderr); never secrets.
	Log io.Writer
}

// Unserved is, by operation type of the plan's model, why a variant does not serve it:
// the design's not_served reason or, for a backend that drives only one database (db;
// 0 for one that simulates every database), that a step of the operation runs on
// another. "" where the operation is served; nil when every one is. The engine never
// dispatches an unserved operation (engine.VariantBackend.Unserved): it counts it apart, and
// the results show it as coverage, not as an error.
//
// An operation with steps on two databases is unserved by a backend that drives one of
// them: half an operation is not a measurement of it.
func Unserved(p *design.Compiled, db design.Database, backendName string) []string {
	if p == nil {
		return nil
	}
	var out []string
	for t := range p.Model.Ops {
		why := ""
		if ok, reason := p.Served(t); !ok {
			why = reason
			if why == "" {
				why = "the design does not serve it"
			}
		} else if db != 0 {
			for _, st := range p.Steps(t) {
				if st.Database != db {
					why = fmt.Sprintf("step %d runs on %s: the %s backend drives only the design's %s steps (run it with the sim backend, or the backend of that database)", st.Index, st.Database, backendName, db)
					break
				}
			}
		}
		if why != "" {
			if out == nil {
				out = make([]string, len(p.Model.Ops))
			}
			out[t] = why
		}
	}
	return out
}
