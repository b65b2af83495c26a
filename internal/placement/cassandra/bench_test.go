package cassandra

import (
	"encoding/binary"
	"testing"
)

var sinkToken Token

// BenchmarkTokenUUID: serialise a uuid partition key and compute its token.
func BenchmarkTokenUUID(b *testing.B) {
	var kb KeyBuilder
	var u [16]byte
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		binary.BigEndian.PutUint64(u[8:], uint64(i))
		kb.Reset(1)
		kb.UUID(u)
		sinkToken = kb.Token()
	}
}

// BenchmarkTokenComposite: ((customer_id uuid, time_bucket text 'YYYY-MM')), as seed 000's
// order_history.
func BenchmarkTokenComposite(b *testing.B) {
	var kb KeyBuilder
	var u [16]byte
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		binary.BigEndian.PutUint64(u[8:], uint64(i))
		kb.Reset(2)
		kb.UUID(u)
		kb.Text("2025-11")
		sinkToken = kb.Token()
	}
}

// BenchmarkTokenAndReplicas: token plus replica lookup on a 6-node, 3-rack ring with
// 16 vnodes each (96 tokens), NetworkTopologyStrategy RF 3.
func BenchmarkTokenAndReplicas(b *testing.B) {
	r, err := BuildRing(RingSpec{DCs: []DCSpec{{Name: "dc1", Nodes: 6, Racks: 3}}, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	p, err := r.Place(NTS(map[string]int{"dc1": 3}))
	if err != nil {
		b.Fatal(err)
	}
	var kb KeyBuilder
	var u [16]byte
	n := 0
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		binary.BigEndian.PutUint64(u[8:], uint64(i))
		kb.Reset(1)
		kb.UUID(u)
		n += len(p.Replicas(kb.Token()))
	}
	if n == 0 {
		b.Fatal("no replicas")
	}
}
