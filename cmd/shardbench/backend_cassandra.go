package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/backend/cassandra"
	"github.com/shardbench/shardbench/internal/engine"
	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/workloads"
)

// The real Cassandra backend: --backend cassandra --target cassandra://h1,h2:9042?dc=DC,
// with credentials from SHARDBENCH_CASSANDRA_USERNAME / SHARDBENCH_CASSANDRA_PASSWORD (or
// SHARDBENCH_CASSANDRA_PASSWORD_FILE), never the command line. See docs/cassandra.md.
func init() {
	registerBackend("cassandra", func(ctx context.Context, cfg backend.Config, v *engine.Variant, info *results.BackendInfo) error {
		if cfg.Plan != nil && cfg.Plan.Design.Cassandra == nil {
			// A scenario comparing Cassandra and MongoDB designs (smoke.yaml) still runs: the
			// MongoDB-only variants are measured as not supported, and say why.
			note := fmt.Sprintf("design %s has no cassandra section: the cassandra backend ran none of its operations (all counted not_supported); run it with --backend mongo or sim", cfg.Plan.Design.Name)
			fmt.Fprintf(cfg.Log, "cassandra: variant %s: %s\n", v.Name, note)
			v.Notes = append(v.Notes, note)
			errNoCassandra := errors.New(note)
			v.Backend = backend.Func(func(context.Context, *workloads.Op) backend.Outcome {
				return backend.Outcome{Class: metrics.NotSupported, Err: errNoCassandra}
			})
			return nil
		}
		b, err := cassandra.Open(ctx, cfg)
		if err != nil {
			var ue *cassandra.UsageError
			if errors.As(err, &ue) {
				return usageError(err)
			}
			return err
		}
		v.Backend = b
		v.Notes = append(v.Notes, b.Notes()...)
		d := b.Describe()
		info.Target, info.Server = d.Target, d.Server
		if info.Details == nil {
			info.Details = map[string]string{}
		}
		for k, val := range d.Details {
			if k == "keyspace" {
				k = "keyspace." + v.Name
			}
			info.Details[k] = val
		}
		return nil
	})
}
