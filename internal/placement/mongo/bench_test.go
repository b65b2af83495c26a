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

// BenchmarkFindRanged: the chunk of a date key on a range-sharded table of 425 chunks
// (seed 001's orders on {created_at: 1} at the default chunk size), by the first-field
// index Find uses ("index") and by comparing whole bounds ("bounds", Find without it).
func BenchmarkFindRanged(b *testing.B) {
	chunks := []Chunk{}
	lo := []Value{MinKey()}
	for i := range 424 {
		hi := []Value{Date(int64(i) * 60_000)}
		chunks = append(chunks, Chunk{Min: lo, Max: hi, Shard: i % 4})
		lo = hi
	}
	chunks = append(chunks, Chunk{Min: lo, Max: []Value{MaxKey()}})
	tb, err := NewChunkTable(KeyPattern{{Name: "created_at"}}, []string{"a", "b", "c", "d"}, chunks)
	if err != nil {
		b.Fatal(err)
	}
	plain := *tb
	plain.firstI = nil
	for _, c := range []struct {
		name string
		tb   *ChunkTable
	}{{"index", tb}, {"bounds", &plain}} {
		b.Run(c.name, func(b *testing.B) {
			n := 0
			key := []Value{Date(0)}
			for i := 0; b.Loop(); i++ {
				key[0].I = int64(i*7919) % (425 * 60_000)
				n += c.tb.Find(key)
			}
			sinkHash = int64(n)
		})
	}
}
