package main

import (
	"context"
	"errors"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/backend/mongo"
	"github.com/shardbench/shardbench/internal/design"
)

// The real MongoDB backend: --backend mongo --target mongodb://host:port/?options, with
// credentials from SHARDBENCH_MONGODB_USERNAME / SHARDBENCH_MONGODB_PASSWORD (or
// SHARDBENCH_MONGODB_PASSWORD_FILE), never the command line. See docs/mongodb.md.
func init() {
	registerReal(realDatabase{
		name: "mongo", database: "mongodb", db: design.MongoDB, other: "cassandra", perVariant: "database",
		has: func(d *design.Design) bool { return d.MongoDB != nil },
		open: func(ctx context.Context, cfg backend.Config) (realBackend, error) {
			return mongo.Open(ctx, cfg)
		},
		usage: func(err error) bool { var ue *mongo.UsageError; return errors.As(err, &ue) },
	})
}
