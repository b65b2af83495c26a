package cassandra

import (
	"gopkg.in/inf.v0"

	"github.com/shardbench/shardbench/internal/design"
)

// toDriver converts design.Bind's driver-neutral values to what gocql marshals: decimals
// to *inf.Dec, inside lists and user types too. UUIDs stay [16]byte, which gocql marshals
// as uuid and timeuuid (converting would box a second copy on every operation).
func toDriver(v any) any {
	switch x := v.(type) {
	case design.Decimal:
		return inf.NewDec(x.Unscaled, inf.Scale(x.Scale))
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
