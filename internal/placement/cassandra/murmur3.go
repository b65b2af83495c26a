package cassandra

import (
	"encoding/binary"
	"math"
	"math/bits"
	"strconv"
)

// Token is a Murmur3Partitioner token.
type Token int64

// MinToken is Murmur3Partitioner.MINIMUM: the token of the empty key and of no other key
// (ranges are start-exclusive, so (MinToken, x] selects everything up to x).
const MinToken Token = math.MinInt64

// MaxToken is the largest token.
const MaxToken Token = math.MaxInt64

// String is the token in decimal, as cqlsh and system.peers print it.
func (t Token) String() string { return strconv.FormatInt(int64(t), 10) }

// ParseToken parses a decimal token as system.local / system.peers_v2 return them.
func ParseToken(s string) (Token, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	return Token(v), err
}

const (
	c1 = 0x87c37b91114253d5
	c2 = 0x4cf5ad432745937f
)

// TokenOf is the Murmur3Partitioner token of a serialised partition key (see
// [KeyBuilder]): Murmur3Partitioner.getToken, exactly.
func TokenOf(key []byte) Token {
	if len(key) == 0 {
		return MinToken
	}
	h := Hash3x64_128H1(key)
	if h == math.MinInt64 {
		return MaxToken
	}
	return Token(h)
}

// Hash3x64_128H1 is the first half (h1) of Cassandra's MurmurHash.hash3_x64_128(key, 0),
// as a signed long. It differs from reference MurmurHash3 x64_128 for inputs whose
// length is not a multiple of 16 and whose tail holds a byte >= 0x80: Cassandra reads
// the tail with ByteBuffer.get, a signed byte, and sign-extends it before shifting.
func Hash3x64_128H1(data []byte) int64 {
	var h1, h2 uint64
	n := len(data)
	p := data
	for len(p) >= 16 {
		k1 := binary.LittleEndian.Uint64(p)
		k2 := binary.LittleEndian.Uint64(p[8:])
		p = p[16:]

		k1 *= c1
		k1 = bits.RotateLeft64(k1, 31)
		k1 *= c2
		h1 ^= k1
		h1 = bits.RotateLeft64(h1, 27)
		h1 += h2
		h1 = h1*5 + 0x52dce729

		k2 *= c2
		k2 = bits.RotateLeft64(k2, 33)
		k2 *= c1
		h2 ^= k2
		h2 = bits.RotateLeft64(h2, 31)
		h2 += h1
		h2 = h2*5 + 0x38495ab5
	}
	if r := len(p); r > 0 {
		// The tail as two little-endian words, zero-padded.
		var w1, w2 uint64
		if n >= 16 {
			// Read the last 16 bytes and shift the tail down (no copy).
			lo := binary.LittleEndian.Uint64(data[n-16:])
			hi := binary.LittleEndian.Uint64(data[n-8:])
			sh := uint(16-r) * 8 // 8..120
			if sh >= 64 {
				w1 = hi >> (sh - 64)
			} else {
				w1 = lo>>sh | hi<<(64-sh)
				w2 = hi >> sh
			}
		} else {
			var buf [16]byte
			copy(buf[:], p)
			w1 = binary.LittleEndian.Uint64(buf[:])
			w2 = binary.LittleEndian.Uint64(buf[8:])
		}
		// Java's sign extension: byte i >= 0x80 also sets every bit above it.
		k1 := w1 ^ signFill(w1)
		k2 := w2 ^ signFill(w2)
		if r > 8 {
			k2 *= c2
			k2 = bits.RotateLeft64(k2, 33)
			k2 *= c1
			h2 ^= k2
		}
		k1 *= c1
		k1 = bits.RotateLeft64(k1, 31)
		k1 *= c2
		h1 ^= k1
	}
	h1 ^= uint64(n)
	h2 ^= uint64(n)
	h1 += h2
	h2 += h1
	h1 = fmix64(h1)
	h2 = fmix64(h2)
	h1 += h2
	return int64(h1)
}

// signFill is the XOR, over the bytes i of w with the top bit set, of ^0 << (8i+8): what
// sign-extending each byte before shifting it into place adds to the plain word.
func signFill(w uint64) uint64 {
	x := (w & 0x8080808080808080) << 1 // bit 8i+8 for each such byte (byte 7's drops out)
	x *= 0xff                          // fill each marked byte
	x ^= x << 8                        // prefix XOR over bytes
	x ^= x << 16
	x ^= x << 32
	return x
}

func fmix64(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}
