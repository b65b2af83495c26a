package main

import (
	"context"
	"errors"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/backend/sim"
	"github.com/shardbench/shardbench/internal/engine"
	"github.com/shardbench/shardbench/internal/results"
)

// The simulated cluster, the default backend: every variant runs in virtual time on a
// Cassandra ring and/or a sharded MongoDB cluster laid out by the scenario's
// backends.sim section (docs/simulator.md). No database needed.
func init() {
	registerBackend("sim", func(ctx context.Context, cfg backend.Config, v *engine.VariantBackend, info *results.BackendInfo) error {
		s, err := sim.Open(ctx, cfg)
		if err != nil {
			var ue *sim.UsageError
			if errors.As(err, &ue) {
				return usageError(err)
			}
			return err
		}
		v.Virtual = s
		d := s.Describe()
		info.Simulated, info.Server = true, d.Server
		if info.Details == nil {
			info.Details = map[string]string{}
		}
		for k, val := range d.Details {
			info.Details[k] = val
		}
		return nil
	})
}
