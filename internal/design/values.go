package design

import (
	"encoding/binary"

	placement "github.com/shardbench/shardbench/internal/placement/cassandra"
	"math"
	"math/big"
	"net"
	"sort"
	"strconv"
	"time"

	"github.com/shardbench/shardbench/workloads"
)

// Decimal is a driver-neutral decimal: Unscaled × 10^-Scale.
type Decimal struct {
	Unscaled int64
	Scale    int32
}

// String formats the decimal.
func (d Decimal) String() string {
	if d.Scale == 2 {
		return workloads.FormatDecimal(d.Unscaled)
	}
	r := new(big.Rat).SetFrac(big.NewInt(d.Unscaled), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale)), nil))
	return r.FloatString(int(d.Scale))
}

// ObjectID is a MongoDB ObjectId.
type ObjectID [12]byte

// String is the ObjectId's hex form.
func (o ObjectID) String() string { return string(workloads.AppendHex(nil, o[:])) }

// valueFn derives one column's (or document field's) value for an operation and a
// partition index of a fan-out.
type valueFn func(op *workloads.Op, part int32, buf []byte) workloads.Value

// bindFn derives one driver-neutral bind value.
type bindFn func(op *workloads.Op, part int32) any

// conv converts a value between representations. Text is appended to v.Bytes[:0], so a
// value that carries its caller's buffer (see withBuf) converts without allocating.
type conv func(v workloads.Value) workloads.Value

// cqlConv converts a field's natural value to the representation of a CQL type (nil: no
// conversion needed).
func cqlConv(from workloads.Type, to *cqlType) conv {
	n := to.Name
	text := func(f func(dst []byte, v workloads.Value) []byte) conv {
		return func(v workloads.Value) workloads.Value {
			if !v.Null {
				v.Bytes = f(v.Bytes[:0], v)
			}
			v.Type = workloads.TText
			return v
		}
	}
	switch from {
	case workloads.TUUID:
		if to.isText() {
			return text(func(dst []byte, v workloads.Value) []byte { return workloads.AppendUUID(dst, v.ID) })
		}
		if n == "blob" {
			return text(func(dst []byte, v workloads.Value) []byte { return append(dst, v.ID[:]...) })
		}
	case workloads.TObjectID:
		if to.isText() {
			return text(func(dst []byte, v workloads.Value) []byte { return workloads.AppendHex(dst, v.ID[:12]) })
		}
		return text(func(dst []byte, v workloads.Value) []byte { return append(dst, v.ID[:12]...) })
	case workloads.TInt, workloads.TBigInt:
		switch {
		case to.isText():
			return text(func(dst []byte, v workloads.Value) []byte { return strconv.AppendInt(dst, v.Int, 10) })
		case n == "double" || n == "float":
			return func(v workloads.Value) workloads.Value { v.Float, v.Type = float64(v.Int), workloads.TFloat; return v }
		}
	case workloads.TTimestamp:
		switch {
		case n == "date":
			return func(v workloads.Value) workloads.Value {
				v.Int, v.Type = workloads.FloorDiv(v.Int, msDay), workloads.TDate
				return v
			}
		case n == "bigint":
			return func(v workloads.Value) workloads.Value { v.Type = workloads.TBigInt; return v }
		case to.isText():
			return text(func(dst []byte, v workloads.Value) []byte { return append(dst, workloads.FormatMillis(v.Int)...) })
		}
	case workloads.TDate:
		switch {
		case n == "timestamp":
			return func(v workloads.Value) workloads.Value { v.Int, v.Type = v.Int*msDay, workloads.TTimestamp; return v }
		case to.isText():
			return text(func(dst []byte, v workloads.Value) []byte {
				y, m, d := workloads.CivilFromDays(v.Int)
				return appendTimeFormat(dst, "YYYY-MM-DD", y, m, d, 0)
			})
		}
	case workloads.TDecimal:
		switch {
		case n == "double" || n == "float":
			return func(v workloads.Value) workloads.Value {
				v.Float, v.Type = float64(v.Int)/100, workloads.TFloat
				return v
			}
		case n == "bigint" || n == "int":
			return func(v workloads.Value) workloads.Value { v.Type = workloads.TBigInt; return v }
		case to.isText():
			return text(func(dst []byte, v workloads.Value) []byte { return workloads.AppendDecimal(dst, v.Int) })
		}
	case workloads.TFloat:
		if n == "decimal" {
			return func(v workloads.Value) workloads.Value {
				v.Int, v.Type = int64(math.Round(v.Float*100)), workloads.TDecimal
				return v
			}
		}
	case workloads.TInet:
		if to.isText() {
			return text(func(dst []byte, v workloads.Value) []byte {
				var ip [16]byte
				n := copy(ip[:], v.Bytes)
				for i := 0; i < n; i++ {
					if i > 0 {
						dst = append(dst, '.')
					}
					dst = strconv.AppendInt(dst, int64(ip[i]), 10)
				}
				return dst
			})
		}
	}
	return nil
}

// appendCQL appends a value serialised as the native protocol serialises the CQL type,
// with the placement package's serialisers (the bytes Murmur3 turns into the token).
func appendCQL(dst []byte, t *cqlType, v *workloads.Value) []byte {
	if v.Null {
		return dst
	}
	switch t.Name {
	case "uuid", "timeuuid":
		return placement.AppendUUID(dst, v.ID)
	case "text", "varchar", "ascii", "blob", "inet":
		return placement.AppendBlob(dst, v.Bytes)
	case "int":
		return placement.AppendInt(dst, int32(v.Int))
	case "smallint":
		return placement.AppendSmallInt(dst, int16(v.Int))
	case "tinyint":
		return placement.AppendTinyInt(dst, int8(v.Int))
	case "bigint", "counter":
		return placement.AppendBigInt(dst, v.Int)
	case "timestamp":
		return placement.AppendTimestamp(dst, v.Int)
	case "varint":
		return placement.AppendVarint(dst, v.Int)
	case "date":
		return placement.AppendDate(dst, int32(v.Int))
	case "boolean":
		return placement.AppendBoolean(dst, v.Int != 0)
	case "double":
		return placement.AppendDouble(dst, v.Float)
	case "float":
		return placement.AppendFloat(dst, float32(v.Float))
	case "decimal":
		return placement.AppendDecimal(dst, v.Int, 2)
	}
	return dst
}

// appendVarint appends the minimal big-endian two's complement form of x.
func appendVarint(dst []byte, x int64) []byte { return placement.AppendVarint(dst, x) }

// cqlGo converts a value to the driver-neutral Go value for a CQL type.
func cqlGo(t *cqlType, v *workloads.Value) any {
	if v.Null {
		return nil
	}
	switch t.Name {
	case "uuid", "timeuuid":
		return v.ID
	case "text", "varchar", "ascii":
		return string(v.Bytes)
	case "blob":
		return append([]byte(nil), v.Bytes...)
	case "inet":
		return net.IP(append([]byte(nil), v.Bytes...))
	case "int":
		return int32(v.Int)
	case "smallint":
		return int16(v.Int)
	case "tinyint":
		return int8(v.Int)
	case "bigint", "counter", "varint":
		return v.Int
	case "timestamp":
		return time.UnixMilli(v.Int).UTC()
	case "date":
		return time.Unix(v.Int*86400, 0).UTC()
	case "boolean":
		return v.Int != 0
	case "double":
		return v.Float
	case "float":
		return float32(v.Float)
	case "decimal":
		return Decimal{Unscaled: v.Int, Scale: 2}
	}
	return nil
}

// bsonConv converts a natural value for a BSON type (nil: no conversion needed).
func bsonConv(from workloads.Type, to string) conv {
	switch {
	case from == workloads.TUUID && to == "string":
		return cqlConv(from, &cqlType{Name: "text"})
	case from == workloads.TObjectID && to == "string":
		return cqlConv(from, &cqlType{Name: "text"})
	case from == workloads.TDate && to == "date":
		return cqlConv(from, &cqlType{Name: "timestamp"})
	case from == workloads.TDate && to == "string":
		return cqlConv(from, &cqlType{Name: "text"})
	case from == workloads.TDecimal && to == "double":
		return cqlConv(from, &cqlType{Name: "double"})
	case from == workloads.TDecimal && to == "long":
		return cqlConv(from, &cqlType{Name: "bigint"})
	case (from == workloads.TInt || from == workloads.TBigInt) && to == "double":
		return cqlConv(from, &cqlType{Name: "double"})
	case from == workloads.TInt && to == "long":
		return func(v workloads.Value) workloads.Value { v.Type = workloads.TBigInt; return v }
	case from == workloads.TInt && to == "decimal":
		return func(v workloads.Value) workloads.Value { v.Int, v.Type = v.Int*100, workloads.TDecimal; return v }
	case from == workloads.TTimestamp && to == "long":
		return cqlConv(from, &cqlType{Name: "bigint"})
	case from == workloads.TFloat && to == "decimal":
		return cqlConv(from, &cqlType{Name: "decimal"})
	case from == workloads.TInet && to == "string":
		return cqlConv(from, &cqlType{Name: "text"})
	}
	return nil
}

// bsonGo converts a scalar value to the driver-neutral Go value of a BSON type.
func bsonGo(to string, v *workloads.Value) any {
	if v.Null {
		return nil
	}
	switch v.Type {
	case workloads.TUUID:
		return v.ID
	case workloads.TObjectID:
		var o ObjectID
		copy(o[:], v.ID[:12])
		return o
	case workloads.TText, workloads.TInet:
		return string(v.Bytes)
	case workloads.TInt:
		return int32(v.Int)
	case workloads.TBigInt:
		return v.Int
	case workloads.TTimestamp:
		return time.UnixMilli(v.Int).UTC()
	case workloads.TDate:
		return time.Unix(v.Int*86400, 0).UTC()
	case workloads.TDecimal:
		return Decimal{Unscaled: v.Int, Scale: 2}
	case workloads.TFloat:
		return v.Float
	case workloads.TBool:
		return v.Int != 0
	}
	return nil
}

// appendCanonical appends a type-tagged encoding of a scalar value: MongoDB shard key
// bytes for hot-partition counting.
func appendCanonical(dst []byte, v *workloads.Value) []byte {
	if v.Null {
		return append(dst, 0)
	}
	dst = append(dst, byte(v.Type))
	switch v.Type {
	case workloads.TUUID:
		return append(dst, v.ID[:]...)
	case workloads.TObjectID:
		return append(dst, v.ID[:12]...)
	case workloads.TText, workloads.TInet:
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(v.Bytes)))
		return append(dst, v.Bytes...)
	case workloads.TFloat:
		return binary.BigEndian.AppendUint64(dst, math.Float64bits(v.Float))
	}
	return binary.BigEndian.AppendUint64(dst, uint64(v.Int))
}

// appendTimeFormat writes a time bucket with YYYY, MM, DD and HH replaced.
func appendTimeFormat(dst []byte, format string, y int64, mo, d, h int) []byte {
	for i := 0; i < len(format); {
		switch {
		case i+4 <= len(format) && format[i:i+4] == "YYYY":
			dst = appendPadded(dst, y, 4)
			i += 4
		case i+2 <= len(format) && format[i:i+2] == "MM":
			dst = appendPadded(dst, int64(mo), 2)
			i += 2
		case i+2 <= len(format) && format[i:i+2] == "DD":
			dst = appendPadded(dst, int64(d), 2)
			i += 2
		case i+2 <= len(format) && format[i:i+2] == "HH":
			dst = appendPadded(dst, int64(h), 2)
			i += 2
		default:
			dst = append(dst, format[i])
			i++
		}
	}
	return dst
}

func appendPadded(dst []byte, x int64, width int) []byte {
	switch {
	case width == 2 && x >= 0 && x < 100:
		return append(dst, byte('0'+x/10), byte('0'+x%10))
	case width == 4 && x >= 0 && x < 10000:
		return append(dst, byte('0'+x/1000), byte('0'+x/100%10), byte('0'+x/10%10), byte('0'+x%10))
	}
	var buf [20]byte
	i := len(buf)
	for x > 0 || len(buf)-i < width {
		i--
		buf[i] = byte('0' + x%10)
		x /= 10
	}
	return append(dst, buf[i:]...)
}

const (
	msHour = int64(time.Hour / time.Millisecond)
	msDay  = 24 * msHour
)

// bucketIndex numbers the time bucket of local unix ms t.
func bucketIndex(unit string, t int64) int64 {
	switch unit {
	case "hour":
		return workloads.FloorDiv(t, msHour)
	case "day":
		return workloads.FloorDiv(t, msDay)
	case "month":
		y, m, _ := workloads.CivilFromDays(workloads.FloorDiv(t, msDay))
		return y*12 + int64(m-1)
	case "year":
		y, _, _ := workloads.CivilFromDays(workloads.FloorDiv(t, msDay))
		return y
	}
	return 0
}

// bucketStart is the local unix ms where bucket idx starts.
func bucketStart(unit string, idx int64) int64 {
	switch unit {
	case "hour":
		return idx * msHour
	case "day":
		return idx * msDay
	case "month":
		y := workloads.FloorDiv(idx, 12)
		return workloads.DaysFromCivil(y, int(idx-y*12)+1, 1) * msDay
	case "year":
		return workloads.DaysFromCivil(idx, 1, 1) * msDay
	}
	return 0
}

// timeBucketValue is bucket idx as the column type wants it (text appended to buf).
func timeBucketValue(tb *timeBucket, idx int64, t *cqlType, buf []byte) workloads.Value {
	local := bucketStart(tb.unit, idx)
	days := workloads.FloorDiv(local, msDay)
	y, mo, d := workloads.CivilFromDays(days)
	h := int((local - days*msDay) / msHour)
	switch t.Name {
	case "date":
		return workloads.Value{Type: workloads.TDate, Int: days}
	case "timestamp":
		return workloads.Value{Type: workloads.TTimestamp, Int: local - tb.offMs}
	case "int":
		var x int64
		switch tb.unit {
		case "year":
			x = y
		case "month":
			x = y*100 + int64(mo)
		case "day":
			x = y*10000 + int64(mo)*100 + int64(d)
		default:
			x = (y*10000+int64(mo)*100+int64(d))*100 + int64(h)
		}
		return workloads.Value{Type: workloads.TInt, Int: x}
	}
	return workloads.Value{Type: workloads.TText, Bytes: appendTimeFormat(buf[:0], tb.format, y, mo, d, h)}
}

// valueMillis reads a time value (timestamp or date) as unix ms.
func valueMillis(v *workloads.Value) int64 {
	if v.Type == workloads.TDate {
		return v.Int * msDay
	}
	return v.Int
}

// sortedKeys lists a map's keys in order (maps become ordered documents).
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
