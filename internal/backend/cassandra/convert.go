package cassandra

import (
	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"gopkg.in/inf.v0"

	"github.com/shardbench/shardbench/internal/design"
)

// toDriver converts design.Bind's driver-neutral values to what gocql marshals: decimals
// to *inf.Dec and UUIDs to gocql.UUID, inside lists and user types too.
func toDriver(v any) any {
	switch x := v.(type) {
	case design.Decimal:
		return inf.NewDec(x.Unscaled, inf.Scale(x.Scale))
	case [16]byte:
		return gocql.UUID(x)
	case map[string]any:
		for k, e := range x {
			x[k] = toDriver(e)
		}
		return x
	case []map[string]any:
		for _, m := range x {
			toDriver(m)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = toDriver(e)
		}
		return x
	}
	return v
}
