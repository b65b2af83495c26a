package cassandra

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net/netip"
	"time"
)

// The Append* functions append one value as the native protocol serialises its CQL type
// (and as Cassandra stores it in a partition key). They never allocate when dst has room.

// AppendUUID appends a uuid or timeuuid: its 16 bytes.
func AppendUUID(dst []byte, u [16]byte) []byte { return append(dst, u[:]...) }

// AppendText appends text, varchar or ascii: the UTF-8 bytes, no length, no terminator.
func AppendText(dst []byte, s string) []byte { return append(dst, s...) }

// AppendBlob appends a blob: its bytes.
func AppendBlob(dst []byte, b []byte) []byte { return append(dst, b...) }

// AppendInt appends an int: 4 bytes big-endian two's complement.
func AppendInt(dst []byte, v int32) []byte { return binary.BigEndian.AppendUint32(dst, uint32(v)) }

// AppendBigInt appends a bigint (or counter): 8 bytes big-endian.
func AppendBigInt(dst []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(v))
}

// AppendSmallInt appends a smallint: 2 bytes big-endian.
func AppendSmallInt(dst []byte, v int16) []byte {
	return binary.BigEndian.AppendUint16(dst, uint16(v))
}

// AppendTinyInt appends a tinyint: 1 byte.
func AppendTinyInt(dst []byte, v int8) []byte { return append(dst, byte(v)) }

// AppendBoolean appends a boolean: 1 byte, 0x01 or 0x00.
func AppendBoolean(dst []byte, v bool) []byte {
	if v {
		return append(dst, 1)
	}
	return append(dst, 0)
}

// AppendDate appends a date given as days since 1970-01-01 (negative before): an
// unsigned 32-bit day number with the epoch at 2^31 (SimpleDateSerializer).
func AppendDate(dst []byte, days int32) []byte {
	return binary.BigEndian.AppendUint32(dst, uint32(int64(days)+1<<31))
}

// AppendTimestamp appends a timestamp given as milliseconds since the Unix epoch: 8 bytes
// big-endian.
func AppendTimestamp(dst []byte, ms int64) []byte { return AppendBigInt(dst, ms) }

// AppendTime appends a time (of day) given as nanoseconds since midnight: 8 bytes.
func AppendTime(dst []byte, nanos int64) []byte { return AppendBigInt(dst, nanos) }

// AppendDouble appends a double: IEEE 754 binary64 big-endian.
func AppendDouble(dst []byte, v float64) []byte {
	return binary.BigEndian.AppendUint64(dst, math.Float64bits(v))
}

// AppendFloat appends a float: IEEE 754 binary32 big-endian.
func AppendFloat(dst []byte, v float32) []byte {
	return binary.BigEndian.AppendUint32(dst, math.Float32bits(v))
}

// AppendInet appends an inet: 4 bytes for IPv4 (and IPv4-mapped IPv6, which Java's
// InetAddress turns into an Inet4Address), 16 for IPv6.
func AppendInet(dst []byte, a netip.Addr) []byte {
	a = a.Unmap()
	if a.Is4() {
		b := a.As4()
		return append(dst, b[:]...)
	}
	b := a.As16()
	return append(dst, b[:]...)
}

// AppendVarint appends a varint: the minimal big-endian two's complement bytes, as Java's
// BigInteger.toByteArray (zero is one 0x00 byte).
func AppendVarint(dst []byte, x int64) []byte {
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], uint64(x))
	i := 0
	for i < 7 && (buf[i] == 0 && buf[i+1]&0x80 == 0 || buf[i] == 0xff && buf[i+1]&0x80 != 0) {
		i++
	}
	return append(dst, buf[i:]...)
}

// AppendVarintBig appends an arbitrary-precision varint (BigInteger.toByteArray).
func AppendVarintBig(dst []byte, x *big.Int) []byte {
	if x.IsInt64() {
		return AppendVarint(dst, x.Int64())
	}
	if x.Sign() > 0 {
		b := x.Bytes()
		if b[0]&0x80 != 0 {
			dst = append(dst, 0)
		}
		return append(dst, b...)
	}
	// Negative: x + 2^(8n) over the fewest n bytes whose top bit is set.
	n := new(big.Int).Not(x).BitLen()/8 + 1
	b := new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), uint(n*8)), x).Bytes()
	return append(dst, b...)
}

// AppendDecimal appends a decimal unscaled × 10^-scale: 4-byte big-endian scale, then the
// unscaled value as a varint.
func AppendDecimal(dst []byte, unscaled int64, scale int32) []byte {
	dst = AppendInt(dst, scale)
	return AppendVarint(dst, unscaled)
}

// DaysSinceEpoch converts a time to the day number [AppendDate] takes (UTC calendar day).
func DaysSinceEpoch(t time.Time) int32 {
	s := t.Unix()
	d := s / 86400
	if s%86400 < 0 {
		d--
	}
	return int32(d)
}

// MaxComponentLen is the largest component of a composite partition key (an unsigned
// 16-bit length).
const MaxComponentLen = 0xffff

// ErrComponentTooLong reports a composite key component over [MaxComponentLen] bytes.
var ErrComponentTooLong = errors.New("cassandra: partition key component longer than 65535 bytes")

// KeyBuilder serialises one partition key into a reused buffer: with one column, the
// column's bytes; with several, CompositeType framing per component (2-byte big-endian
// length, the bytes, one 0x00 end-of-component byte). Call Reset with the number of
// partition key columns, add each column in partition-key order, then take Bytes or
// Token. A KeyBuilder does not allocate once its buffer has grown to the largest key.
type KeyBuilder struct {
	buf   []byte
	cols  int
	start int
	err   error
}

// Reset starts a new key of the given number of partition key columns.
func (b *KeyBuilder) Reset(columns int) {
	b.buf, b.cols, b.err = b.buf[:0], columns, nil
}

// Bytes is the serialised key (valid until the next Reset).
func (b *KeyBuilder) Bytes() []byte { return b.buf }

// Token is the key's token.
func (b *KeyBuilder) Token() Token { return TokenOf(b.buf) }

// Err reports a component that was too long for the composite framing.
func (b *KeyBuilder) Err() error { return b.err }

func (b *KeyBuilder) begin() {
	if b.cols > 1 {
		b.start = len(b.buf)
		b.buf = append(b.buf, 0, 0)
	}
}

func (b *KeyBuilder) end() {
	if b.cols > 1 {
		n := len(b.buf) - b.start - 2
		if n > MaxComponentLen {
			b.tooLong(n)
		}
		b.buf[b.start], b.buf[b.start+1] = byte(n>>8), byte(n)
		b.buf = append(b.buf, 0)
	}
}

//go:noinline
func (b *KeyBuilder) tooLong(n int) {
	if b.err == nil {
		b.err = fmt.Errorf("%w (%d bytes)", ErrComponentTooLong, n)
	}
}

// Raw adds a component already serialised by one of the Append functions.
func (b *KeyBuilder) Raw(v []byte) { b.begin(); b.buf = append(b.buf, v...); b.end() }

// UUID adds a uuid or timeuuid column.
func (b *KeyBuilder) UUID(u [16]byte) { b.begin(); b.buf = append(b.buf, u[:]...); b.end() }

// Text adds a text, varchar or ascii column.
func (b *KeyBuilder) Text(s string) { b.begin(); b.buf = append(b.buf, s...); b.end() }

// Blob adds a blob column.
func (b *KeyBuilder) Blob(v []byte) { b.Raw(v) }

// Int adds an int column.
func (b *KeyBuilder) Int(v int32) { b.begin(); b.buf = AppendInt(b.buf, v); b.end() }

// BigInt adds a bigint column.
func (b *KeyBuilder) BigInt(v int64) { b.begin(); b.buf = AppendBigInt(b.buf, v); b.end() }

// SmallInt adds a smallint column.
func (b *KeyBuilder) SmallInt(v int16) { b.begin(); b.buf = AppendSmallInt(b.buf, v); b.end() }

// TinyInt adds a tinyint column.
func (b *KeyBuilder) TinyInt(v int8) { b.begin(); b.buf = AppendTinyInt(b.buf, v); b.end() }

// Boolean adds a boolean column.
func (b *KeyBuilder) Boolean(v bool) { b.begin(); b.buf = AppendBoolean(b.buf, v); b.end() }

// Date adds a date column (days since 1970-01-01).
func (b *KeyBuilder) Date(days int32) { b.begin(); b.buf = AppendDate(b.buf, days); b.end() }

// Timestamp adds a timestamp column (milliseconds since the epoch).
func (b *KeyBuilder) Timestamp(ms int64) { b.begin(); b.buf = AppendTimestamp(b.buf, ms); b.end() }

// Time adds a time column (nanoseconds since midnight).
func (b *KeyBuilder) Time(nanos int64) { b.begin(); b.buf = AppendTime(b.buf, nanos); b.end() }

// Double adds a double column.
func (b *KeyBuilder) Double(v float64) { b.begin(); b.buf = AppendDouble(b.buf, v); b.end() }

// Float adds a float column.
func (b *KeyBuilder) Float(v float32) { b.begin(); b.buf = AppendFloat(b.buf, v); b.end() }

// Inet adds an inet column.
func (b *KeyBuilder) Inet(a netip.Addr) { b.begin(); b.buf = AppendInet(b.buf, a); b.end() }

// Varint adds a varint column.
func (b *KeyBuilder) Varint(v int64) { b.begin(); b.buf = AppendVarint(b.buf, v); b.end() }

// Decimal adds a decimal column (unscaled × 10^-scale).
func (b *KeyBuilder) Decimal(unscaled int64, scale int32) {
	b.begin()
	b.buf = AppendDecimal(b.buf, unscaled, scale)
	b.end()
}
