package mongo

import (
	"crypto/md5"
	"encoding/binary"
	"math"
	"math/big"
)

// Hash is the hashed-index / hashed-shard-key value of v: BSONElementHasher::hash64(v, 0)
// (src/mongo/db/hasher.cpp), what convertShardKeyToHashed and $toHashedIndexKey return.
// MD5 over the little-endian int32 seed (0), the little-endian int32 canonical type of
// v, and its value bytes; numbers of every type as the little-endian int64 of
// safeNumberLongForHash; strings as BSON stores them (int32 length including the
// terminator, bytes, 0x00); embedded documents and arrays element by element (canonical
// type, field name with its terminator, value) ending with an EOO (int32 0); the result
// is the first 8 digest bytes read as a little-endian int64. A missing field hashes as
// null.
func Hash(v *Value) int64 {
	var stack [128]byte
	buf := binary.LittleEndian.AppendUint32(stack[:0], 0) // HashSeed 0
	buf = binary.LittleEndian.AppendUint32(buf, uint32(v.Kind.canonical()))
	buf = appendHashValue(buf, v)
	d := md5.Sum(buf)
	return int64(binary.LittleEndian.Uint64(d[:8]))
}

// HashString is Hash(String(s)) without building a Value.
func HashString(s string) int64 {
	var stack [128]byte
	buf := binary.LittleEndian.AppendUint64(stack[:0], 15<<32) // seed 0, canonical 15
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(s)+1))
	buf = append(buf, s...)
	buf = append(buf, 0)
	d := md5.Sum(buf)
	return int64(binary.LittleEndian.Uint64(d[:8]))
}

// HashStringBytes is HashString for a UTF-8 string held in a byte slice.
func HashStringBytes(s []byte) int64 {
	var stack [128]byte
	buf := binary.LittleEndian.AppendUint64(stack[:0], 15<<32)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(s)+1))
	buf = append(buf, s...)
	buf = append(buf, 0)
	d := md5.Sum(buf)
	return int64(binary.LittleEndian.Uint64(d[:8]))
}

// HashInt64 is Hash of any number whose safeNumberLongForHash is v (int, long, or a
// double/decimal that truncates to v).
func HashInt64(v int64) int64 {
	var buf [16]byte
	binary.LittleEndian.PutUint32(buf[4:], 10)
	binary.LittleEndian.PutUint64(buf[8:], uint64(v))
	d := md5.Sum(buf[:])
	return int64(binary.LittleEndian.Uint64(d[:8]))
}

func appendHashValue(buf []byte, v *Value) []byte {
	switch v.Kind {
	case KindInt32, KindInt64, KindDouble, KindDecimal:
		return binary.LittleEndian.AppendUint64(buf, uint64(numberForHash(v)))
	case KindString:
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(v.S)+1))
		buf = append(buf, v.S...)
		return append(buf, 0)
	case KindObject:
		for i := range v.Doc {
			f := &v.Doc[i]
			buf = binary.LittleEndian.AppendUint32(buf, uint32(f.Value.Kind.canonical()))
			buf = append(buf, f.Name...)
			buf = append(buf, 0)
			buf = appendHashValue(buf, &f.Value)
		}
		return binary.LittleEndian.AppendUint32(buf, 0) // EOO
	case KindArray:
		var name [20]byte
		for i := range v.Arr {
			buf = binary.LittleEndian.AppendUint32(buf, uint32(v.Arr[i].Kind.canonical()))
			buf = append(buf, appendUint(name[:0], uint64(i))...)
			buf = append(buf, 0)
			buf = appendHashValue(buf, &v.Arr[i])
		}
		return binary.LittleEndian.AppendUint32(buf, 0)
	case KindBinary:
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(v.B)))
		buf = append(buf, v.Sub)
		return append(buf, v.B...)
	case KindObjectID:
		return append(buf, v.ID[:]...)
	case KindBool:
		return append(buf, byte(v.I&1))
	case KindDate, KindTimestamp:
		return binary.LittleEndian.AppendUint64(buf, uint64(v.I))
	}
	return buf // MinKey, MaxKey, null, undefined: no value bytes
}

func appendUint(dst []byte, x uint64) []byte {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + x%10)
		x /= 10
		if x == 0 {
			break
		}
	}
	return append(dst, b[i:]...)
}

const twoTo63 = 9223372036854775808.0

// numberForHash is BSONElement::safeNumberLongForHash: doubles truncate toward zero, NaN
// is 0, values at or beyond the int64 range clamp — except a double of exactly 2^63,
// which older servers' overflowing cast turned into -2^63 and which is kept for hash
// compatibility. Decimals round half to even (Decimal128::toLong) and clamp.
func numberForHash(v *Value) int64 {
	switch v.Kind {
	case KindDouble:
		d := v.F
		switch {
		case math.IsNaN(d):
			return 0
		case d == twoTo63:
			return math.MinInt64
		case !(d < twoTo63):
			return math.MaxInt64
		case d < -twoTo63:
			return math.MinInt64
		}
		return int64(d)
	case KindDecimal:
		if v.Scale == 0 {
			return v.I
		}
		r := decimalRat(v)
		maxR := new(big.Rat).SetInt64(math.MaxInt64)
		minR := new(big.Rat).SetInt64(math.MinInt64)
		if r.Cmp(maxR) > 0 {
			return math.MaxInt64
		}
		if r.Cmp(minR) < 0 {
			return math.MinInt64
		}
		return roundHalfEven(r)
	}
	return v.I
}

func roundHalfEven(r *big.Rat) int64 {
	num, den := r.Num(), r.Denom()
	q, m := new(big.Int).QuoRem(num, den, new(big.Int)) // truncated
	twice := new(big.Int).Mul(new(big.Int).Abs(m), big.NewInt(2))
	switch twice.Cmp(den) {
	case 1:
		q.Add(q, big.NewInt(int64(num.Sign())))
	case 0:
		if q.Bit(0) == 1 {
			q.Add(q, big.NewInt(int64(num.Sign())))
		}
	}
	return q.Int64()
}
