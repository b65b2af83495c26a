package design

import (
	"fmt"
	"strconv"
	"strings"

	placement "github.com/shardbench/shardbench/internal/placement/cassandra"
	"github.com/shardbench/shardbench/workloads"
)

// The values of Cassandra columns: what a CQL step binds, and the partition key it
// serialises.

func textBind(f valueFn) bindFn {
	return func(op *workloads.Op, p int32) any {
		v := f(op, p, nil)
		return string(v.Bytes)
	}
}

// columnValue compiles a scalar column's value for a use.
func (d *Design) columnValue(u *colUse, m *workloads.Model) valueFn {
	col := u.col
	if u.over != nil || col.kind == srcConst {
		node := u.over
		if node == nil {
			node = col.cnode
		}
		return constValue(node.Value, col.typ)
	}
	switch col.kind {
	case srcField:
		conv := cqlConv(col.field.Type, col.typ)
		if conv == nil {
			return fieldValue(col.field, m)
		}
		// The closures below call the field's getter itself, not fieldValue's wrapper of
		// it: one call less for every key a placer serialises.
		get := col.field.Get(m)
		return func(op *workloads.Op, _ int32, buf []byte) workloads.Value {
			return conv(withBuf(get(op, buf), buf))
		}
	case srcBucket:
		b := col.bucket
		n := int64(max(1, b.Count))
		text := col.typ.isText()
		out := func(buf []byte, x int64) workloads.Value {
			if text {
				return workloads.Value{Type: workloads.TText, Bytes: strconv.AppendInt(buf[:0], x, 10)}
			}
			return workloads.Value{Type: workloads.TInt, Int: x}
		}
		if u.mode == modeFanHash {
			stride := int64(u.stride)
			return func(_ *workloads.Op, p int32, buf []byte) workloads.Value {
				return out(buf, int64(p)/stride%n)
			}
		}
		get := col.field.Get(m)
		ftype := col.field.Type
		return func(op *workloads.Op, _ int32, buf []byte) workloads.Value {
			v := get(op, buf)
			return out(buf, bucketOf(b.Hash, ftype, &v, n))
		}
	case srcTimeBucket:
		tb := col.tb
		get := col.field.Get(m)
		stride := int32(0)
		if u.mode == modeFanTime {
			stride = u.stride
		}
		return func(op *workloads.Op, p int32, buf []byte) workloads.Value {
			v := get(op, buf)
			idx := bucketIndex(tb.unit, valueMillis(&v)+tb.offMs)
			if stride > 0 {
				idx += int64(p / stride)
			}
			return timeBucketValue(tb, idx, col.typ, buf)
		}
	}
	return func(*workloads.Op, int32, []byte) workloads.Value { return workloads.Value{Null: true} }
}

// bucketOf hashes a field value into [0, n) as the bucket's hash says.
func bucketOf(hash string, ftype workloads.Type, v *workloads.Value, n int64) int64 {
	switch hash {
	case "java_uuid_hashcode":
		return int64(javaAbsMod(javaUUIDHashCode(v.ID), int32(n)))
	case "java_string_hashcode":
		var buf [40]byte
		b := v.Bytes
		if ftype == workloads.TUUID {
			b = workloads.AppendUUID(buf[:0], v.ID)
		}
		return int64(javaAbsMod(javaStringHashCode(b), int32(n)))
	}
	var buf [40]byte
	var b []byte
	switch v.Type {
	case workloads.TUUID:
		b = append(buf[:0], v.ID[:]...)
	case workloads.TText, workloads.TInet:
		b = v.Bytes
	default:
		b = appendVarint(buf[:0], v.Int)
	}
	if hash == "fnv1a" {
		return int64(fnv1a32(b) % uint32(n))
	}
	return int64(murmur3H1(b) % uint64(n))
}

// constValue parses a constant for a CQL type once.
func constValue(s string, t *cqlType) valueFn {
	var c workloads.Value
	c.Null = false
	switch t.Name {
	case "int", "bigint", "smallint", "tinyint", "varint", "counter":
		c.Type = workloads.TInt
		c.Int, _ = strconv.ParseInt(s, 10, 64)
	case "boolean":
		c.Type = workloads.TBool
		if s == "true" {
			c.Int = 1
		}
	case "double", "float":
		c.Type = workloads.TFloat
		c.Float, _ = strconv.ParseFloat(s, 64)
	default:
		c.Type = workloads.TText
		c.Bytes = []byte(s)
	}
	return func(_ *workloads.Op, _ int32, buf []byte) workloads.Value {
		v := c
		v.Bytes = append(buf[:0], c.Bytes...)
		return v
	}
}

func cqlBind(t *cqlType, f valueFn) bindFn {
	return func(op *workloads.Op, p int32) any {
		v := f(op, p, nil)
		return cqlGo(t, &v)
	}
}

// columnBind compiles a column's bind value, composite types included.
func (d *Design) columnBind(u *colUse, m *workloads.Model) bindFn {
	col := u.col
	if u.over == nil {
		switch {
		case col.kind == srcUDT:
			return d.udtBind(col, m)
		case col.kind == srcField && !col.field.Type.Scalar():
			return d.compositeBind(col, m)
		}
	}
	return cqlBind(col.typ, d.columnValue(u, m))
}

func (d *Design) udtBind(col *column, m *workloads.Model) bindFn {
	meta := entityMeta(d.entityOfColumn(col))
	type part struct {
		name string
		get  valueFn
		conv func(workloads.Value) workloads.Value
		typ  *cqlType
	}
	var parts []part
	for _, uf := range col.typ.UDT.Fields {
		f := meta.Field(uf.Name)
		parts = append(parts, part{uf.Name, fieldValue(f, m), cqlConv(f.Type, uf.Type), uf.Type})
	}
	return func(op *workloads.Op, p int32) any {
		out := make(map[string]any, len(parts))
		for _, x := range parts {
			v := x.get(op, p, nil)
			if x.conv != nil {
				v = x.conv(v)
			}
			out[x.name] = cqlGo(x.typ, &v)
		}
		return out
	}
}

func (d *Design) entityOfColumn(col *column) string {
	for _, t := range d.tables {
		for _, c := range t.cols {
			if c == col {
				return t.meta.Entity
			}
		}
	}
	return ""
}

// compositeBind converts a composite field (items, maps, objects) for a CQL column.
func (d *Design) compositeBind(col *column, m *workloads.Model) bindFn {
	get := col.field.Composite(m)
	switch col.field.Type {
	case workloads.TItems:
		conv := itemsToCQL(col.typ)
		return func(op *workloads.Op, _ int32) any { return conv(get(op)) }
	case workloads.TObject:
		return func(op *workloads.Op, _ int32) any { return docLine(get(op).(workloads.Doc)) }
	case workloads.TTextMap:
		if col.typ.isText() {
			return func(op *workloads.Op, _ int32) any { return jsonObject(get(op).(map[string]string)) }
		}
	}
	return func(op *workloads.Op, _ int32) any { return get(op) }
}

// itemsToCQL converts []workloads.Item to a list of UDT maps.
func itemsToCQL(t *cqlType) func(any) any {
	udt := t.Args[0].UDT
	return func(x any) any {
		items := x.([]workloads.Item)
		out := make([]map[string]any, len(items))
		for i := range items {
			row := make(map[string]any, len(udt.Fields))
			for _, f := range udt.Fields {
				attr := workloads.ItemAttrOf(f.Name)
				v := items[i].Attr(attr)
				if conv := cqlConv(attr.Type(), f.Type); conv != nil {
					v = conv(v)
				}
				row[f.Name] = cqlGo(f.Type, &v)
			}
			out[i] = row
		}
		return out
	}
}

// itemsBind binds an items column: the one item an item operation adds (append mode) or
// the whole list.
func (d *Design) itemsBind(col *column, meta *workloads.Meta, m *workloads.Model, appendMode bool) bindFn {
	conv := itemsToCQL(col.typ)
	if appendMode {
		one := meta.Item(m)
		return func(op *workloads.Op, _ int32) any { return conv([]workloads.Item{one(op)}) }
	}
	all := col.field.Composite(m)
	return func(op *workloads.Op, _ int32) any { return conv(all(op)) }
}

// partitionKeyAppender serialises a partition key: one column as its value, several as
// the composite encoding (2-byte length, value, 0 for each). direct holds, per column,
// the appender of a column that needs no Value (directKeyPart), or nil.
func partitionKeyAppender(cols []*column, vals []valueFn, direct []keyAppender) keyAppender {
	if len(cols) == 1 {
		t, f := cols[0].typ, vals[0]
		if d := direct[0]; d != nil {
			return d
		}
		return func(dst []byte, op *workloads.Op, part int32) []byte {
			// The value's text is appended right where it belongs in dst (buf is dst's
			// spare capacity), so appendCQL copies it onto itself.
			v := f(op, part, dst[len(dst):])
			return appendCQL(dst, t, &v)
		}
	}
	return func(dst []byte, op *workloads.Op, part int32) []byte {
		for i, c := range cols {
			at := len(dst)
			dst = append(dst, 0, 0)
			if d := direct[i]; d != nil {
				dst = d(dst, op, part)
			} else {
				v := vals[i](op, part, dst[len(dst):])
				dst = appendCQL(dst, c.typ, &v)
			}
			n := len(dst) - at - 2
			dst[at], dst[at+1] = byte(n>>8), byte(n)
			dst = append(dst, 0)
		}
		return dst
	}
}

// directKeyPart is the appender of a key column that holds a UUID identity as it is
// (uuid or timeuuid) or as text, straight from the field's UUID accessor: what
// columnValue and appendCQL give, without the Value between them. Most partition keys
// are such columns, and each access serialises one. nil for any other column.
func directKeyPart(u *colUse, m *workloads.Model) keyAppender {
	col := u.col
	if u.over != nil || col.kind != srcField || col.field.UUID == nil || col.field.Type != workloads.TUUID {
		return nil
	}
	uuid := col.field.UUID(m)
	switch {
	case col.typ.Name == "uuid" || col.typ.Name == "timeuuid":
		return func(dst []byte, op *workloads.Op, _ int32) []byte {
			if u, ok := uuid(op); ok {
				return placement.AppendUUID(dst, u)
			}
			return dst
		}
	case col.typ.isText():
		return func(dst []byte, op *workloads.Op, _ int32) []byte {
			if u, ok := uuid(op); ok {
				return workloads.AppendUUID(dst, u)
			}
			return dst
		}
	}
	return nil
}

func docLine(doc workloads.Doc) string {
	var b strings.Builder
	for i, e := range doc {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, e.Value)
	}
	return b.String()
}

func jsonObject(m map[string]string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range sortedKeys(m) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(k))
		b.WriteByte(':')
		b.WriteString(strconv.Quote(m[k]))
	}
	b.WriteByte('}')
	return b.String()
}
