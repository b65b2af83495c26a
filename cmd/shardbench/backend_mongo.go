package main

import (
	"context"
	"errors"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/backend/mongo"
	"github.com/shardbench/shardbench/internal/engine"
	"github.com/shardbench/shardbench/internal/results"
)

// The real MongoDB backend: --backend mongo --target mongodb://host:port/?options, with
// credentials from SHARDBENCH_MONGODB_USERNAME / SHARDBENCH_MONGODB_PASSWORD (or
// SHARDBENCH_MONGODB_PASSWORD_FILE), never the command line. See docs/mongodb.md.
func init() {
	registerBackend("mongo", func(ctx context.Context, cfg backend.Config, v *engine.Variant, info *results.BackendInfo) error {
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
