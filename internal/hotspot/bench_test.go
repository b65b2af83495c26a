package hotspot

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

func zipfKeys(n int) [][]byte {
	rng := rand.New(rand.NewPCG(1, 1))
	z := rand.NewZipf(rng, 1.1, 1, 10_000_000)
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = binary.BigEndian.AppendUint64(make([]byte, 0, 16), z.Uint64())
	}
	return keys
}

// BenchmarkTopKAdd: one operation on a Zipf(1.1) partition key over 10M partitions,
// k = 1000, fingerprint precomputed (the caller usually has the token or hash).
func BenchmarkTopKAdd(b *testing.B) {
	keys := zipfKeys(1 << 16)
	fps := make([]uint64, len(keys))
	for i, k := range keys {
		fps[i] = Fingerprint(k)
	}
	tk := NewTopK(1000)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		j := i & (len(keys) - 1)
		tk.Add(fps[j], keys[j], i&3 == 0, 1, 200)
	}
}

// BenchmarkTopKAddKey: the same with the fingerprint computed from the key bytes.
func BenchmarkTopKAddKey(b *testing.B) {
	keys := zipfKeys(1 << 16)
	tk := NewTopK(1000)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		tk.AddKey(keys[i&(len(keys)-1)], i&3 == 0, 1, 200)
	}
}

// BenchmarkDistinctAdd: distinct counting past the exact phase.
func BenchmarkDistinctAdd(b *testing.B) {
	d := NewDistinct()
	for i := uint64(0); i < ExactLimit+1; i++ {
		d.Add(mix(i))
	}
	b.ReportAllocs()
	for i := uint64(0); b.Loop(); i++ {
		d.Add(mix(i))
	}
}

// BenchmarkTopKAddMany: one operation each on 64 summaries of k = 512 (a run's tables
// across its variants), fed in turns of 64 operations as a simulator feeds its tables.
// Keys are Zipf(1.0) over 10M partitions, where about nine in ten operations admit a
// partition (evicting another): the churn of a session or view table on Black Friday.
// The summaries together outgrow the CPU's caches, as they do in a run.
func BenchmarkTopKAddMany(b *testing.B) {
	const tables, turn = 64, 64
	rng := rand.New(rand.NewPCG(2, 2))
	z := rand.NewZipf(rng, 1.0001, 1, 10_000_000)
	vals := make([]uint64, 1<<20)
	fps := make([]uint64, len(vals))
	var key [8]byte
	for i := range vals {
		vals[i] = z.Uint64()
		binary.BigEndian.PutUint64(key[:], vals[i])
		fps[i] = Fingerprint(key[:])
	}
	tks := make([]*TopK, tables)
	for i := range tks {
		tks[i] = NewTopK(512)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		j := i & (len(vals) - 1)
		binary.BigEndian.PutUint64(key[:], vals[j])
		tks[(i/turn)%tables].AddAt(fps[j], key[:], i&3 == 0, 1, 200, int64(i))
	}
}
