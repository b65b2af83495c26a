package mongo

import (
	"encoding/binary"
	"strconv"
	"testing"
)

var sinkHash int64

// BenchmarkHashString: a hashed string shard key ("u:<user_id>", seed 001's carts).
func BenchmarkHashString(b *testing.B) {
	buf := append(make([]byte, 0, 32), "u:"...)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		k := strconv.AppendInt(buf[:2], int64(i), 10)
		sinkHash = HashStringBytes(k)
	}
}

// BenchmarkHashObjectID: a hashed ObjectId _id.
func BenchmarkHashObjectID(b *testing.B) {
	var id [12]byte
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		binary.BigEndian.PutUint64(id[4:], uint64(i))
		v := ObjectID(id)
		sinkHash = Hash(&v)
	}
}

// BenchmarkHashAndFind: hashed long key and its chunk on a 4-shard pre-7.2 table.
func BenchmarkHashAndFind(b *testing.B) {
	tb, err := PresplitHashed(KeyPattern{{Name: "_id", Hashed: true}}, []string{"a", "b", "c", "d"}, Presplit{Rule: SplitPre72})
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		v := Int64(int64(i))
		n += tb.FindHashed(Hash(&v))
	}
	sinkHash = int64(n)
}
