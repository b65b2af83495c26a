package design_test

import (
	"path/filepath"
	"testing"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/workloads"
)

// prepared returns n operations of one type and the plan's step for a target.
func prepared(b *testing.B, file, mix, target string, n int) ([]workloads.Op, *design.Compiled, []design.Access) {
	b.Helper()
	m := model(b, mixScenarioB(b, mix))
	d := mustLoad(b, filepath.Join(designsDir, file))
	p, err := design.Compile(d, m)
	if err != nil {
		b.Fatal(err)
	}
	s := stream(m)
	ops := make([]workloads.Op, n)
	accs := make([]design.Access, n)
	for i := range ops {
		s.Next(&ops[i])
		for _, a := range p.Accesses(&ops[i], nil) {
			if a.Step.Target == target {
				accs[i] = a
			}
		}
		if accs[i].Step == nil {
			b.Fatalf("no access to %s", target)
		}
	}
	return ops, p, accs
}

// BenchmarkAppendKeyComposite serialises seed 000's order_history partition key
// ((customer_id uuid, time_bucket text 'YYYY-MM')): the zero-allocation path `plan` and
// hot-partition analysis use. Target: >= 10M keys/s.
func BenchmarkAppendKeyComposite(b *testing.B) {
	ops, _, accs := prepared(b, "seed000.yaml", "  orders.place: 1\n", "order_history", 4096)
	key := make([]byte, 0, 128)
	var total int64
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := i & 4095
		key = accs[j].AppendKey(key[:0], &ops[j])
		total += int64(len(key))
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "keys/s")
	b.ReportMetric(float64(total)/b.Elapsed().Seconds()/1e6, "MB/s")
}

// BenchmarkAppendKeyBucket serialises seed 000's user_sessions key: a bucket computed as
// Math.abs(UUID.hashCode()) % 100 of a UUID derived from the session id.
func BenchmarkAppendKeyBucket(b *testing.B) {
	ops, _, accs := prepared(b, "seed000.yaml", "  sessions.create: 1\n", "user_sessions", 4096)
	key := make([]byte, 0, 128)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := i & 4095
		key = accs[j].AppendKey(key[:0], &ops[j])
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "keys/s")
}

// BenchmarkAppendKeyText serialises seed 001's carts key owner_key "u:<uuid>" (text).
func BenchmarkAppendKeyText(b *testing.B) {
	ops, _, accs := prepared(b, "seed001-cassandra.yaml", "  carts.add_item: 1\n", "carts", 4096)
	key := make([]byte, 0, 128)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := i & 4095
		key = accs[j].AppendKey(key[:0], &ops[j])
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "keys/s")
}

// compiledAllOps compiles the design in file for the full mix and generates 8,192 of its
// operations.
func compiledAllOps(b *testing.B, file string) (*design.Compiled, []workloads.Op) {
	m := model(b, allOpsScenario(b, 1))
	p, err := design.Compile(mustLoad(b, filepath.Join(designsDir, file)), m)
	if err != nil {
		b.Fatal(err)
	}
	s := stream(m)
	ops := make([]workloads.Op, 8192)
	for i := range ops {
		s.Next(&ops[i])
	}
	return p, ops
}

// BenchmarkPlanAll maps every operation of the full mix to its accesses and keys, as
// `plan` does: operations per second through one design.
func BenchmarkPlanAll(b *testing.B) {
	for _, file := range []string{"seed000.yaml", "seed001-mongo.yaml"} {
		b.Run(file, func(b *testing.B) {
			p, ops := compiledAllOps(b, file)
			acc := make([]design.Access, 0, 64)
			key := make([]byte, 0, 256)
			keys := 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				op := &ops[i&8191]
				acc = p.Accesses(op, acc[:0])
				for j := range acc {
					key = acc[j].AppendKey(key[:0], op)
					keys++
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
			b.ReportMetric(float64(keys)/b.Elapsed().Seconds(), "keys/s")
		})
	}
}

// BenchmarkAccesses maps every operation of the full mix to its accesses, as the simulator
// does for every operation of every variant: operations per second through one design.
func BenchmarkAccesses(b *testing.B) {
	for _, file := range []string{"seed000.yaml", "seed001-mongo.yaml", "seed002.yaml", "seed003.yaml", "seed004.yaml"} {
		b.Run(file, func(b *testing.B) {
			p, ops := compiledAllOps(b, file)
			acc := make([]design.Access, 0, 64)
			n := 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				acc = p.Accesses(&ops[i&8191], acc[:0])
				n += len(acc)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
			b.ReportMetric(float64(n)/float64(b.N), "accesses/op")
		})
	}
}
