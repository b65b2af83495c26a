package design

import (
	"strconv"

	"github.com/shardbench/shardbench/workloads"
)

// D is an ordered document: the MongoDB backend turns it into bson.D. Values are
// driver-neutral: string, int32, int64, float64, bool, time.Time, Decimal, ObjectID,
// [16]byte (a UUID, binary subtype 4), []any, D, nil.
type D []E

// E is one element of a D.
type E struct {
	Key   string
	Value any
}

// Command is one MongoDB request.
type Command struct {
	Database   string
	Collection string
	// Op is insertOne, updateOne, deleteOne, findOne or find.
	Op       string
	Filter   D
	Update   D
	Document D
	Sort     D
	Limit    int64
	Upsert   bool
	// Read preference, write concern and read concern of the request.
	ReadPref     ReadPref
	WriteConcern WriteConcern
	ReadConcern  string
}

// hashedWithin reports whether one of the first n shard key fields is hashed: equality on
// a hashed field pins the hash, so the request targets one chunk range.
func hashedWithin(hashed []bool, n int) bool {
	for i := 0; i < n && i < len(hashed); i++ {
		if hashed[i] {
			return true
		}
	}
	return false
}

// productIDValue is the item's product id as the item documents store it.
func productIDValue(it workloads.Item, fields Ordered[string], key string) any {
	if t, ok := fields.Get(key); ok && *t == "string" {
		return string(workloads.AppendUUID(nil, it.ProductID))
	}
	return it.ProductID
}

func itemToDoc(fields Ordered[string]) func(workloads.Item) D {
	return func(it workloads.Item) D {
		out := make(D, 0, len(fields))
		for _, e := range fields {
			attr := workloads.ItemAttrOf(e.Key)
			v := it.Attr(attr)
			if conv := bsonConv(attr.Type(), e.Value); conv != nil {
				v = conv(v)
			}
			out = append(out, E{e.Key, bsonGo(e.Value, &v)})
		}
		return out
	}
}

// bsonConst parses a constant for a BSON type.
func bsonConst(s, bson string) valueFn {
	var c workloads.Value
	switch bson {
	case "int", "long":
		c.Type = workloads.TInt
		if bson == "long" {
			c.Type = workloads.TBigInt
		}
		c.Int, _ = strconv.ParseInt(s, 10, 64)
	case "bool":
		c.Type = workloads.TBool
		if s == "true" {
			c.Int = 1
		}
	case "double":
		c.Type = workloads.TFloat
		c.Float, _ = strconv.ParseFloat(s, 64)
	default:
		c.Type, c.Bytes = workloads.TText, []byte(s)
	}
	return func(_ *workloads.Op, _ int32, buf []byte) workloads.Value {
		v := c
		v.Bytes = append(buf[:0], c.Bytes...)
		return v
	}
}

// bsonComposite converts a composite field for a document.
func bsonComposite(f *docField, m *workloads.Model) func(*workloads.Op) any {
	get := f.field.Composite(m)
	itemDoc := itemToDoc(f.itemFields)
	return func(op *workloads.Op) any {
		switch x := get(op).(type) {
		case []workloads.Item:
			arr := make([]any, len(x))
			for i := range x {
				arr[i] = itemDoc(x[i])
			}
			return arr
		case []workloads.Doc:
			arr := make([]any, len(x))
			for i := range x {
				arr[i] = docToD(x[i])
			}
			return arr
		case workloads.Doc:
			return docToD(x)
		case map[string]string:
			out := make(D, 0, len(x))
			for _, k := range sortedKeys(x) {
				out = append(out, E{k, x[k]})
			}
			return out
		case map[string]int32:
			out := make(D, 0, len(x))
			for _, k := range sortedKeys(x) {
				out = append(out, E{k, x[k]})
			}
			return out
		}
		return nil
	}
}

func docToD(doc workloads.Doc) D {
	out := make(D, len(doc))
	for i, e := range doc {
		out[i] = E{e.Key, e.Value}
	}
	return out
}
