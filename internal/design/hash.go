package design

import (
	"encoding/binary"
	"math"
	"unicode/utf16"
	"unicode/utf8"

	placement "github.com/shardbench/shardbench/internal/placement/cassandra"
)

// javaUUIDHashCode is java.util.UUID.hashCode(): the folded xor of the two halves.
func javaUUIDHashCode(id [16]byte) int32 {
	msb := binary.BigEndian.Uint64(id[:8])
	lsb := binary.BigEndian.Uint64(id[8:])
	hilo := msb ^ lsb
	return int32(hilo>>32) ^ int32(hilo)
}

// javaStringHashCode is java.lang.String.hashCode() over UTF-16 code units.
func javaStringHashCode(b []byte) int32 {
	var h int32
	for len(b) > 0 {
		c := b[0]
		if c < utf8.RuneSelf {
			h = 31*h + int32(c)
			b = b[1:]
			continue
		}
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		if r >= 0x10000 {
			r1, r2 := utf16.EncodeRune(r)
			h = 31*h + int32(r1)
			h = 31*h + int32(r2)
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

// javaAbsMod is Math.abs(h) % n with Java's semantics: Math.abs(Integer.MIN_VALUE) is
// negative, and % keeps the dividend's sign, so that one hash gives a negative bucket —
// as seed 000's calculateBucket would.
func javaAbsMod(h int32, n int32) int32 {
	if h < 0 && h != math.MinInt32 {
		h = -h
	}
	return h % n
}

// fnv1a32 is 32-bit FNV-1a.
func fnv1a32(b []byte) uint32 {
	h := uint32(2166136261)
	for _, c := range b {
		h ^= uint32(c)
		h *= 16777619
	}
	return h
}

// murmur3H1 is h1 of Cassandra's MurmurHash3 x64_128 (seed 0): the token's hash, used
// here for hash buckets.
func murmur3H1(data []byte) uint64 { return uint64(placement.Hash3x64_128H1(data)) }
