package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/backend/mongo"
	"github.com/shardbench/shardbench/internal/engine"
	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/workloads"
)

// The real MongoDB backend: --backend mongo --target mongodb://host:port/?options, with
// credentials from SHARDBENCH_MONGODB_USERNAME / SHARDBENCH_MONGODB_PASSWORD (or
// SHARDBENCH_MONGODB_PASSWORD_FILE), never the command line. See docs/mongodb.md.
func init() {
	registerBackend("mongo", func(ctx context.Context, cfg backend.Config, v *engine.Variant, info *results.BackendInfo) error {
		if cfg.Plan != nil && cfg.Plan.Design.MongoDB == nil {
			// A scenario comparing Cassandra and MongoDB designs (smoke.yaml) still runs: the
			// Cassandra-only variants are measured as not supported, and say why.
			note := fmt.Sprintf("design %s has no mongodb section: the mongo backend ran none of its operations (all counted not_supported); run it with --backend cassandra or sim", cfg.Plan.Design.Name)
			fmt.Fprintf(cfg.Log, "mongo: variant %s: %s\n", v.Name, note)
			v.Notes = append(v.Notes, note)
			errNoMongo := errors.New(note)
			v.Backend = backend.Func(func(context.Context, *workloads.Op) backend.Outcome {
				return backend.Outcome{Class: metrics.NotSupported, Err: errNoMongo}
			})
			return nil
		}
		b, err := mongo.Open(ctx, cfg)
		if err != nil {
			var ue *mongo.UsageError
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
			if k == "database" {
				k = "database." + v.Name
			}
			info.Details[k] = val
		}
		return nil
	})
}
