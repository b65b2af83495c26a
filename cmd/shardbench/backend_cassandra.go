package main

import (
	"context"
	"errors"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/backend/cassandra"
	"github.com/shardbench/shardbench/internal/design"
)

// The real Cassandra backend: --backend cassandra --target cassandra://h1,h2:9042?dc=DC,
// with credentials from SHARDBENCH_CASSANDRA_USERNAME / SHARDBENCH_CASSANDRA_PASSWORD (or
// SHARDBENCH_CASSANDRA_PASSWORD_FILE), never the command line. See docs/cassandra.md.
func init() {
	registerReal(realDatabase{
		name: "cassandra", database: "cassandra", db: design.Cassandra, other: "mongo", perVariant: "keyspace",
		has: func(d *design.Design) bool { return d.Cassandra != nil },
		open: func(ctx context.Context, cfg backend.Config) (realBackend, error) {
			return cassandra.Open(ctx, cfg)
		},
		usage: func(err error) bool { var ue *cassandra.UsageError; return errors.As(err, &ue) },
	})
}
