package cassandra

import (
	"context"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/design"
)

// load is the optional load phase: the first Load.Ops operations of the scenario's own
// stream run their Cassandra INSERT and UPDATE steps (not DELETEs, not LWTs), unmeasured,
// at Load.Concurrency, so the measured run's reads find the rows (carts, sessions, order
// history, products) the workload refers to. Cassandra writes are upserts, so the measured
// run's own inserts of the same rows simply overwrite them.
func (b *Backend) load(ctx context.Context) error {
	r, err := backend.LoadPhase{
		Ops: b.opts.Load.Ops, Concurrency: b.opts.Load.Concurrency, Timeout: b.timeout,
		Keep: func(s *design.Step) bool {
			return s.Database == design.Cassandra && s.Kind == design.Write && s.Statement != "DELETE"
		},
		Exec:   b.run,
		Redact: b.log.Redact,
	}.Run(ctx, b.cfg)
	if err != nil {
		return err
	}
	b.log.Note("%s", r)
	return nil
}
