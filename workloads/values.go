package workloads

import (
	"fmt"
	"slices"
	"strconv"
)

// Type is the natural type of a logical field. Designs may store a field as another,
// compatible CQL or BSON type (a UUID as text, a timestamp as a date); the design layer
// converts.
type Type uint8

// Field types. Scalar values travel in a Value; Items, TextMap, IntMap, Object and Docs
// are composite and are built on demand (Field.Composite), for backends only.
const (
	TUUID      Type = iota + 1 // Value.ID
	TObjectID                  // Value.ID[:12]: 4-byte seconds, 5 random bytes, 3-byte counter
	TText                      // Value.Bytes (UTF-8)
	TInt                       // Value.Int, fits 32 bits
	TBigInt                    // Value.Int
	TTimestamp                 // Value.Int: unix milliseconds
	TDate                      // Value.Int: days since 1970-01-01
	TDecimal                   // Value.Int: minor units (scale 2: 8999000 is 89990.00)
	TFloat                     // Value.Float
	TBool                      // Value.Int: 0 or 1
	TInet                      // Value.Bytes: 4 bytes (IPv4)
	TItems                     // []Item
	TTextMap                   // map[string]string
	TIntMap                    // map[string]int32 (e.g. stock by geo zone)
	TObject                    // Doc (a nested document, e.g. an address)
	TDocs                      // []Doc (a list of nested documents, e.g. stock per zone)
)

var typeNames = [...]string{"", "uuid", "objectId", "text", "int", "bigint", "timestamp", "date", "decimal", "float", "boolean", "inet", "items",
	"map<text,text>", "map<text,int>", "object", "documents"}

func (t Type) String() string {
	if int(t) < len(typeNames) && t != 0 {
		return typeNames[t]
	}
	return "type(" + strconv.Itoa(int(t)) + ")"
}

// Scalar reports whether values of the type travel in a Value.
func (t Type) Scalar() bool { return t >= TUUID && t <= TInet }

// Value is one typed scalar value. Getters fill a caller-owned Value, reusing its Bytes,
// so deriving values allocates nothing once Bytes has grown.
type Value struct {
	Type  Type
	Null  bool
	Int   int64
	Float float64
	ID    [16]byte
	Bytes []byte
}

// Text makes a text value, appending s to buf[:0].
func Text(buf []byte, s string) Value {
	return Value{Type: TText, Bytes: append(buf[:0], s...)}
}

// String formats the value for people (errors, the key command, reports).
func (v *Value) String() string {
	if v.Null {
		return "null"
	}
	switch v.Type {
	case TUUID:
		return string(AppendUUID(nil, v.ID))
	case TObjectID:
		return fmt.Sprintf("%x", v.ID[:12])
	case TText:
		return string(v.Bytes)
	case TInet:
		if len(v.Bytes) == 4 {
			return fmt.Sprintf("%d.%d.%d.%d", v.Bytes[0], v.Bytes[1], v.Bytes[2], v.Bytes[3])
		}
		return fmt.Sprintf("%x", v.Bytes)
	case TTimestamp:
		return FormatMillis(v.Int)
	case TDate:
		y, m, d := CivilFromDays(v.Int)
		return fmt.Sprintf("%04d-%02d-%02d", y, m, d)
	case TDecimal:
		return FormatDecimal(v.Int)
	case TFloat:
		return strconv.FormatFloat(v.Float, 'g', -1, 64)
	case TBool:
		return strconv.FormatBool(v.Int != 0)
	}
	return strconv.FormatInt(v.Int, 10)
}

// Getter derives a field's value from an operation. Text and address bytes are appended
// to buf[:0] (the result's Bytes may share buf's array), so a getter allocates nothing when
// buf has room. It returns the value by value: a pointer handed to a function value would
// escape to the heap on every call.
type Getter func(op *Op, buf []byte) Value

// Field is one name of the logical vocabulary of an entity.
type Field struct {
	Name string
	Type Type
	Doc  string
	// Size is the typical stored size in bytes (for byte estimates); composite fields
	// give the size per element. Sized, when set, gives it for a model (a knob sizes it).
	Size  int32
	Sized func(m *Model) int32
	// Get builds the accessor for scalar fields.
	Get func(m *Model) Getter
	// UUID, for a UUID identity (IDField), builds an accessor of the UUID Get gives
	// (false: null) without the Value, for callers that only append its bytes or text
	// (Cassandra partition keys, on every access). nil for other fields.
	UUID func(m *Model) func(op *Op) ([16]byte, bool)
	// Composite builds the accessor for composite fields (Items, maps, objects). Its
	// result is for backends and may allocate.
	Composite func(m *Model) func(op *Op) any
	// PerKey, for a composite field that holds another field's value for each value of
	// a third (stock per geo zone), names them; nil for other fields.
	PerKey *PerKey
}

// PerKey says what a per-key field holds: the Value field for each value of the Key field,
// as a map from key to value (TIntMap) or as documents (TDocs) holding the key under
// DocKey and the value under DocValue. A decrement of the Value field changes the entry
// of the operation's Key.
type PerKey struct {
	Value, Key       string
	DocKey, DocValue string
}

// SizeIn is the field's typical size in model m (Size without a model).
func (f *Field) SizeIn(m *Model) int32 {
	if f.Sized != nil && m != nil {
		return f.Sized(m)
	}
	return f.Size
}

// Item is one element of a cart or an order.
type Item struct {
	ProductID [16]byte
	SKU       string
	Name      string
	Category  string
	Quantity  int32
	Price     int64 // minor units
	AddedAt   int64 // unix ms
	ImageURL  string
}

// Doc is an ordered nested document (field, value) used for composite values such as an
// address; values are Go values (string, int32, int64, time.Time for a time, ...).
type Doc []DocElem

// DocElem is one field of a Doc.
type DocElem struct {
	Key   string
	Value any
}

// AppendUUID appends the canonical text form (8-4-4-4-12, lower case) of id.
func AppendUUID(dst []byte, id [16]byte) []byte {
	const hexd = "0123456789abcdef"
	n := len(dst)
	dst = slices.Grow(dst, 36)[:n+36]
	out := dst[n : n+36]
	j := 0
	for i, b := range id {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out[j] = '-'
			j++
		}
		out[j], out[j+1] = hexd[b>>4], hexd[b&15]
		j += 2
	}
	return dst
}

// AppendHex appends b in lower-case hex.
func AppendHex(dst []byte, b []byte) []byte {
	const hexd = "0123456789abcdef"
	for _, x := range b {
		dst = append(dst, hexd[x>>4], hexd[x&15])
	}
	return dst
}

// FormatDecimal formats minor units with two decimals ("89990.00").
func FormatDecimal(minor int64) string {
	return string(AppendDecimal(nil, minor))
}

// AppendDecimal appends minor units with two decimals.
func AppendDecimal(dst []byte, minor int64) []byte {
	if minor < 0 {
		dst = append(dst, '-')
		minor = -minor
	}
	dst = strconv.AppendInt(dst, minor/100, 10)
	c := minor % 100
	return append(dst, '.', byte('0'+c/10), byte('0'+c%10))
}

// civilTable caches CivilFromDays for 1970-01-01 .. 2149-06-05 (year<<16 | month<<8 | day):
// time buckets convert dates on every key, and the division-heavy algorithm dominated.
var civilTable = func() []uint32 {
	t := make([]uint32, 1<<16)
	for z := range t {
		y, m, d := civilFromDays(int64(z))
		t[z] = uint32(y)<<16 | uint32(m)<<8 | uint32(d)
	}
	return t
}()

// CivilFromDays converts days since 1970-01-01 to a proleptic Gregorian date: a table
// lookup for 1970-2149, Howard Hinnant's algorithm otherwise. No allocation.
func CivilFromDays(z int64) (year int64, month, day int) {
	if uint64(z) < uint64(len(civilTable)) {
		c := civilTable[z]
		return int64(c >> 16), int(c >> 8 & 0xff), int(c & 0xff)
	}
	return civilFromDays(z)
}

func civilFromDays(z int64) (year int64, month, day int) {
	z += 719468
	era := z
	if era < 0 {
		era -= 146096
	}
	era /= 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := doy - (153*mp+2)/5 + 1
	m := mp + 3
	if mp >= 10 {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return y, int(m), int(d)
}

// monthTable holds the day number of the first of each month of 1970-2149.
var monthTable = func() []int32 {
	t := make([]int32, 180*12)
	for i := range t {
		t[i] = int32(daysFromCivil(1970+int64(i/12), i%12+1, 1))
	}
	return t
}()

// DaysFromCivil is the inverse of CivilFromDays.
func DaysFromCivil(y int64, m, d int) int64 {
	if i := (y-1970)*12 + int64(m-1); y >= 1970 && m >= 1 && m <= 12 && i < int64(len(monthTable)) {
		return int64(monthTable[i]) + int64(d-1)
	}
	return daysFromCivil(y, m, d)
}

func daysFromCivil(y int64, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400
	mm := int64(m)
	if m > 2 {
		mm -= 3
	} else {
		mm += 9
	}
	doy := (153*mm+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// NanosToMillis converts unix ns to unix ms, rounding down (a constant divisor: cheap).
func NanosToMillis(ns int64) int64 {
	if ns >= 0 {
		return ns / 1_000_000
	}
	return -((-ns + 999_999) / 1_000_000)
}

// FloorDiv divides rounding toward negative infinity.
func FloorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// FormatMillis formats unix milliseconds as RFC 3339 UTC with milliseconds.
func FormatMillis(ms int64) string {
	days := FloorDiv(ms, 86_400_000)
	rem := ms - days*86_400_000
	y, mo, d := CivilFromDays(days)
	return fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", y, mo, d, rem/3_600_000, rem/60_000%60, rem/1000%60, rem%1000)
}
