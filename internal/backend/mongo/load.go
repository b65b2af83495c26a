package mongo

import (
	"context"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/design"
)

// load is the optional load phase: the first Load.Ops operations of the scenario's own
// stream run their MongoDB update and upsert steps, unmeasured, so that the measured run's
// reads and updates find the documents (carts, stock) the workload refers to. Inserts are
// left out: the stream is deterministic, so the measured run inserts the same documents
// and would otherwise meet its own duplicates.
func (b *Backend) load(ctx context.Context) error {
	r, err := backend.LoadPhase{
		Ops: b.opts.Load.Ops, Concurrency: b.opts.Load.Concurrency, Timeout: b.timeout,
		Keep: func(s *design.Step) bool {
			return s.Database == design.MongoDB && s.Kind.IsWrite() && s.Statement != "insertOne"
		},
		Exec:     b.run,
		Expected: func(err error) bool { return serverCode(err) == 11000 }, // duplicate key
		Redact:   b.log.Redact,
	}.Run(ctx, b.cfg)
	if err != nil {
		return err
	}
	b.log.Note("%s", r)
	return nil
}
