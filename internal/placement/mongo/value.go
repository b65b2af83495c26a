package mongo

import (
	"cmp"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Kind is a BSON type as far as shard keys need it.
type Kind int8

const (
	KindMinKey Kind = iota
	KindUndefined
	KindNull
	KindInt32
	KindInt64
	KindDouble
	KindDecimal // Unscaled × 10^-Scale (no NaN or infinities)
	KindString
	KindObject
	KindArray
	KindBinary
	KindObjectID
	KindBool
	KindDate
	KindTimestamp
	KindMaxKey
)

var kindNames = [...]string{"MinKey", "undefined", "null", "int", "long", "double", "decimal", "string", "object", "array", "binData", "objectId", "bool", "date", "timestamp", "MaxKey"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// canonical is canonicalizeBSONType (bsontypes.h): the sort class, and the int hashed.
func (k Kind) canonical() int32 {
	switch k {
	case KindMinKey:
		return -1
	case KindUndefined:
		return 0
	case KindNull:
		return 5
	case KindInt32, KindInt64, KindDouble, KindDecimal:
		return 10
	case KindString:
		return 15
	case KindObject:
		return 20
	case KindArray:
		return 25
	case KindBinary:
		return 30
	case KindObjectID:
		return 35
	case KindBool:
		return 40
	case KindDate:
		return 45
	case KindTimestamp:
		return 47
	case KindMaxKey:
		return 127
	}
	return -2
}

// Value is one BSON value: a shard key field, a chunk bound, or a query operand. Build it
// with the constructors (Int64, String, ObjectID, ...).
type Value struct {
	Kind  Kind
	I     int64   // int, long, bool (0/1), date (ms since epoch), timestamp (secs<<32 | inc), decimal unscaled
	F     float64 // double
	Scale int32   // decimal
	S     string  // string
	B     []byte  // binData bytes
	Sub   byte    // binData subtype
	ID    [12]byte
	Doc   []Field // object
	Arr   []Value // array
}

// Field is one field of an embedded document.
type Field struct {
	Name  string
	Value Value
}

func MinKey() Value               { return Value{Kind: KindMinKey} }
func MaxKey() Value               { return Value{Kind: KindMaxKey} }
func Null() Value                 { return Value{Kind: KindNull} }
func Undefined() Value            { return Value{Kind: KindUndefined} }
func Int32(v int32) Value         { return Value{Kind: KindInt32, I: int64(v)} }
func Int64(v int64) Value         { return Value{Kind: KindInt64, I: v} }
func Double(v float64) Value      { return Value{Kind: KindDouble, F: v} }
func String(s string) Value       { return Value{Kind: KindString, S: s} }
func ObjectID(id [12]byte) Value  { return Value{Kind: KindObjectID, ID: id} }
func Date(ms int64) Value         { return Value{Kind: KindDate, I: ms} }
func Doc(fields ...Field) Value   { return Value{Kind: KindObject, Doc: fields} }
func Array(values ...Value) Value { return Value{Kind: KindArray, Arr: values} }

// Decimal is a Decimal128 holding unscaled × 10^-scale.
func Decimal(unscaled int64, scale int32) Value {
	return Value{Kind: KindDecimal, I: unscaled, Scale: scale}
}

// Bool is a boolean.
func Bool(v bool) Value {
	if v {
		return Value{Kind: KindBool, I: 1}
	}
	return Value{Kind: KindBool}
}

// Binary is binData with a subtype (4 for a UUID). The bytes are not copied.
func Binary(sub byte, b []byte) Value { return Value{Kind: KindBinary, Sub: sub, B: b} }

// UUID is binData subtype 4.
func UUID(u *[16]byte) Value { return Binary(4, u[:]) }

// Timestamp is a BSON timestamp (seconds, increment).
func Timestamp(secs, inc uint32) Value {
	return Value{Kind: KindTimestamp, I: int64(uint64(secs)<<32 | uint64(inc))}
}

// ParseObjectID parses 24 hex digits.
func ParseObjectID(s string) (Value, error) {
	var id [12]byte
	if len(s) != 24 {
		return Value{}, fmt.Errorf("mongo: ObjectId %q is not 24 hex digits", s)
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return Value{}, fmt.Errorf("mongo: ObjectId %q: %w", s, err)
	}
	return ObjectID(id), nil
}

// IsNumber reports the numeric kinds (which compare and hash alike).
func (v *Value) IsNumber() bool { return v.Kind >= KindInt32 && v.Kind <= KindDecimal }

// String renders the value in shell-like syntax: 42, NumberLong(42), "abc",
// ObjectId("..."), MinKey, {a: 1}.
func (v Value) String() string {
	var b strings.Builder
	v.format(&b)
	return b.String()
}

func (v *Value) format(b *strings.Builder) {
	switch v.Kind {
	case KindMinKey, KindMaxKey, KindNull, KindUndefined:
		b.WriteString(v.Kind.String())
	case KindInt32:
		b.WriteString(strconv.FormatInt(v.I, 10))
	case KindInt64:
		b.WriteString("NumberLong(" + strconv.FormatInt(v.I, 10) + ")")
	case KindDouble:
		b.WriteString(strconv.FormatFloat(v.F, 'g', -1, 64))
	case KindDecimal:
		b.WriteString("NumberDecimal(\"" + decimalRat(v).FloatString(int(max(v.Scale, 0))) + "\")")
	case KindString:
		b.WriteString(strconv.Quote(v.S))
	case KindObjectID:
		b.WriteString("ObjectId(\"" + hex.EncodeToString(v.ID[:]) + "\")")
	case KindBool:
		b.WriteString(strconv.FormatBool(v.I != 0))
	case KindDate:
		b.WriteString("Date(" + strconv.FormatInt(v.I, 10) + ")")
	case KindTimestamp:
		fmt.Fprintf(b, "Timestamp(%d, %d)", uint64(v.I)>>32, uint32(v.I))
	case KindBinary:
		fmt.Fprintf(b, "BinData(%d, %q)", v.Sub, hex.EncodeToString(v.B))
	case KindObject:
		b.WriteString("{")
		for i, f := range v.Doc {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(f.Name + ": ")
			f.Value.format(b)
		}
		b.WriteString("}")
	case KindArray:
		b.WriteString("[")
		for i := range v.Arr {
			if i > 0 {
				b.WriteString(", ")
			}
			v.Arr[i].format(b)
		}
		b.WriteString("]")
	default:
		b.WriteString(v.Kind.String())
	}
}

func decimalRat(v *Value) *big.Rat {
	r := new(big.Rat).SetInt64(v.I)
	if v.Scale == 0 {
		return r
	}
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs32(v.Scale))), nil)
	if v.Scale > 0 {
		return r.Quo(r, new(big.Rat).SetInt(p))
	}
	return r.Mul(r, new(big.Rat).SetInt(p))
}

func abs32(x int32) int64 {
	if x < 0 {
		return -int64(x)
	}
	return int64(x)
}

// Compare orders two values as BSON does with the simple collation (woCompare): first
// by canonical type (MinKey < null < numbers < strings < objects < arrays < binData <
// ObjectId < bool < date < timestamp < MaxKey), then by value; numbers compare by
// numeric value across int, long, double and decimal, NaN below every other number.
func Compare(a, b *Value) int {
	if a.Kind == b.Kind {
		// The usual case in a shard key's values, without the type bracket.
		switch a.Kind {
		case KindString:
			return strings.Compare(a.S, b.S)
		case KindInt32, KindInt64, KindDate:
			return cmp.Compare(a.I, b.I)
		}
	}
	ca, cb := a.Kind.canonical(), b.Kind.canonical()
	if ca != cb {
		return cmp.Compare(ca, cb)
	}
	switch a.Kind {
	case KindMinKey, KindMaxKey, KindNull, KindUndefined:
		return 0
	case KindInt32, KindInt64, KindDouble, KindDecimal:
		return compareNumbers(a, b)
	case KindString:
		return strings.Compare(a.S, b.S)
	case KindObject:
		for i := 0; i < len(a.Doc) && i < len(b.Doc); i++ {
			fa, fb := &a.Doc[i], &b.Doc[i]
			if c := cmp.Compare(fa.Value.Kind.canonical(), fb.Value.Kind.canonical()); c != 0 {
				return c
			}
			if c := strings.Compare(fa.Name, fb.Name); c != 0 {
				return c
			}
			if c := Compare(&fa.Value, &fb.Value); c != 0 {
				return c
			}
		}
		return cmp.Compare(len(a.Doc), len(b.Doc))
	case KindArray:
		// Arrays compare as documents whose field names are "0", "1", ...
		for i := 0; i < len(a.Arr) && i < len(b.Arr); i++ {
			if c := cmp.Compare(a.Arr[i].Kind.canonical(), b.Arr[i].Kind.canonical()); c != 0 {
				return c
			}
			if c := Compare(&a.Arr[i], &b.Arr[i]); c != 0 {
				return c
			}
		}
		return cmp.Compare(len(a.Arr), len(b.Arr))
	case KindBinary:
		if c := cmp.Compare(len(a.B), len(b.B)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Sub, b.Sub); c != 0 {
			return c
		}
		return strings.Compare(string(a.B), string(b.B))
	case KindObjectID:
		return strings.Compare(string(a.ID[:]), string(b.ID[:]))
	case KindBool, KindDate:
		return cmp.Compare(a.I, b.I)
	case KindTimestamp:
		return cmp.Compare(uint64(a.I), uint64(b.I))
	}
	return 0
}

func compareNumbers(a, b *Value) int {
	if a.Kind == KindDecimal || b.Kind == KindDecimal {
		// A NaN or infinite double sits outside every (finite) decimal.
		if c, ok := specialDouble(a); ok {
			return c
		}
		if c, ok := specialDouble(b); ok {
			return -c
		}
		return numRat(a).Cmp(numRat(b))
	}
	ad, bd := a.Kind == KindDouble, b.Kind == KindDouble
	switch {
	case !ad && !bd:
		return cmp.Compare(a.I, b.I)
	case ad && bd:
		return compareDoubles(a.F, b.F)
	case ad:
		return -compareLongToDouble(b.I, a.F)
	default:
		return compareLongToDouble(a.I, b.F)
	}
}

// specialDouble orders a NaN or infinite double against any finite number.
func specialDouble(v *Value) (int, bool) {
	if v.Kind != KindDouble {
		return 0, false
	}
	switch {
	case math.IsNaN(v.F), math.IsInf(v.F, -1):
		return -1, true
	case math.IsInf(v.F, 1):
		return 1, true
	}
	return 0, false
}

func numRat(v *Value) *big.Rat {
	switch v.Kind {
	case KindDecimal:
		return decimalRat(v)
	case KindDouble:
		return new(big.Rat).SetFloat64(v.F)
	}
	return new(big.Rat).SetInt64(v.I)
}

// compareDoubles: NaN is below every number and equal to NaN.
func compareDoubles(l, r float64) int {
	switch {
	case l < r:
		return -1
	case l > r:
		return 1
	case l == r:
		return 0
	case math.IsNaN(l):
		if math.IsNaN(r) {
			return 0
		}
		return -1
	}
	return 1
}

// compareLongToDouble follows MongoDB's exact long/double comparison.
func compareLongToDouble(l int64, d float64) int {
	if math.IsNaN(d) {
		return 1
	}
	const precise = 1 << 53
	if l <= precise && l >= -precise {
		return compareDoubles(float64(l), d)
	}
	const bound = 9223372036854775808.0 // 2^63
	if d >= bound {
		return -1
	}
	if d < -bound {
		return 1
	}
	return cmp.Compare(l, int64(d))
}

// CompareKeys orders shard key tuples field by field.
func CompareKeys(a, b []Value) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := Compare(&a[i], &b[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}
