package mongo

import (
	"math"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.yaml.in/yaml/v3"

	"github.com/shardbench/shardbench/internal/design"
)

// converter turns the design's driver-neutral values (see design.Command) into the
// driver's. decimalAsDouble sends decimals as doubles: FerretDB 1.24 has no decimal128
// (it drops the connection on one), and the backend says so in the results.
type converter struct{ decimalAsDouble bool }

func (c converter) value(v any) any {
	switch x := v.(type) {
	case design.D:
		return c.doc(x)
	case []any:
		a := make(bson.A, len(x))
		for i := range x {
			a[i] = c.value(x[i])
		}
		return a
	case design.Decimal:
		if c.decimalAsDouble {
			return float64(x.Unscaled) / math.Pow10(int(x.Scale))
		}
		return decimal128(x.Unscaled, x.Scale)
	case design.ObjectID:
		return bson.ObjectID(x)
	case [16]byte:
		return bson.Binary{Subtype: bson.TypeBinaryUUID, Data: append([]byte(nil), x[:]...)}
	case time.Time:
		return bson.NewDateTimeFromTime(x)
	}
	return v // string, int32, int64, float64, bool, nil
}

func (c converter) doc(d design.D) bson.D {
	if d == nil {
		return nil
	}
	out := make(bson.D, len(d))
	for i, e := range d {
		out[i] = bson.E{Key: e.Key, Value: c.value(e.Value)}
	}
	return out
}

// decimal128 builds the IEEE 754-2008 BID decimal unscaled × 10^-scale without big.Int:
// the coefficient fits the low 64 bits and the biased exponent (6176 - scale) sits above
// bit 49 of the high word, beside the sign.
func decimal128(unscaled int64, scale int32) bson.Decimal128 {
	var hi uint64
	lo := uint64(unscaled)
	if unscaled < 0 {
		hi = 1 << 63
		lo = uint64(-unscaled)
	}
	hi |= uint64(6176-int64(scale)) << 49
	return bson.NewDecimal128(hi, lo)
}

// yamlToBSON converts a design file's YAML (validators, shard keys, split points) to BSON
// values: mappings keep their order, integers become int32 when they fit (what mongosh
// would send for a literal), else int64.
func yamlToBSON(n *yaml.Node) any {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil
		}
		return yamlToBSON(n.Content[0])
	case yaml.MappingNode:
		d := make(bson.D, 0, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			d = append(d, bson.E{Key: n.Content[i].Value, Value: yamlToBSON(n.Content[i+1])})
		}
		return d
	case yaml.SequenceNode:
		a := make(bson.A, len(n.Content))
		for i, c := range n.Content {
			a[i] = yamlToBSON(c)
		}
		return a
	}
	switch n.Tag {
	case "!!int":
		if i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64); err == nil {
			if i == int64(int32(i)) {
				return int32(i)
			}
			return i
		}
	case "!!float":
		if f, err := strconv.ParseFloat(n.Value, 64); err == nil {
			return f
		}
	case "!!bool":
		return n.Value == "true"
	case "!!null":
		return nil
	}
	return n.Value
}

// keyDoc is an index or shard key document: field → 1, -1 or a string such as "hashed".
func keyDoc(key design.Ordered[yaml.Node]) bson.D {
	d := make(bson.D, 0, len(key))
	for i := range key {
		d = append(d, bson.E{Key: key[i].Key, Value: yamlToBSON(&key[i].Value)})
	}
	return d
}

// formatDoc renders a small document in shell syntax for messages: {user_id: "hashed", created_at: 1}.
func formatDoc(d bson.D) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, e := range d {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(e.Key)
		b.WriteString(": ")
		switch v := e.Value.(type) {
		case string:
			b.WriteString(strconv.Quote(v))
		case bson.D:
			b.WriteString(formatDoc(v))
		default:
			b.WriteString(strings.TrimSpace(strings.Trim(bsonString(v), "\"")))
		}
	}
	b.WriteByte('}')
	return b.String()
}

func bsonString(v any) string {
	switch x := v.(type) {
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case nil:
		return "null"
	}
	if s, ok := v.(interface{ String() string }); ok {
		return s.String()
	}
	return "?"
}
