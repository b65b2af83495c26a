package design_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/shardbench/shardbench/internal/design"
	placement "github.com/shardbench/shardbench/internal/placement/cassandra"
	mongo "github.com/shardbench/shardbench/internal/placement/mongo"
	"github.com/shardbench/shardbench/workloads"
)

// The serialised partition keys are the placement package's: a composite key built by its
// KeyBuilder from the same typed values gives the same bytes (and so the same token).
func TestKeysMatchPlacementKeyBuilder(t *testing.T) {
	m := model(t, mixScenario(t, "  orders.place: 1\n  sessions.create: 1\n  views.append: 1\n"))
	for _, file := range []string{"seed000.yaml", "seed001-cassandra.yaml", "seed004.yaml", "seed002.yaml"} {
		d := mustLoad(t, filepath.Join(designsDir, file))
		p, err := design.Compile(d, m)
		if err != nil {
			t.Fatal(err)
		}
		s := stream(m)
		var op workloads.Op
		checked := 0
		for i := 0; i < 300 && s.Next(&op); i++ {
			for _, a := range p.Accesses(&op, nil) {
				if a.Step.Database != design.Cassandra {
					continue
				}
				got := a.AppendKey(nil, &op)
				vals, _ := a.ShardKey(&op, nil, nil)
				var kb placement.KeyBuilder
				kb.Reset(len(vals))
				for _, v := range vals {
					switch v.Type {
					case workloads.TUUID:
						kb.UUID(v.ID)
					case workloads.TText:
						kb.Text(string(v.Bytes))
					case workloads.TInt:
						kb.Int(int32(v.Int))
					case workloads.TDate:
						kb.Date(int32(v.Int))
					default:
						t.Fatalf("%s: key type %s not covered by the test", a.Step.Target, v.Type)
					}
				}
				if kb.Err() != nil || !bytes.Equal(got, kb.Bytes()) {
					t.Fatalf("%s %s: key %x, KeyBuilder %x (%v)", file, a.Step.Target, got, kb.Bytes(), kb.Err())
				}
				checked++
			}
		}
		if checked == 0 {
			t.Errorf("%s: no Cassandra key checked", file)
		}
	}
}

// Keys come without allocating once the buffer has grown.
func TestAppendKeyDoesNotAllocate(t *testing.T) {
	eachDesignPlan(t, 2, func(f string, p *design.Compiled, s *workloads.Stream) {
		var op workloads.Op
		acc := make([]design.Access, 0, 64)
		key := make([]byte, 0, 512)
		for i := 0; i < 200 && s.Next(&op); i++ {
			acc = p.Accesses(&op, acc[:0])
			for j := range acc {
				if acc[j].Step.Op == "carts.merge" {
					continue // steps on the guest cart copy the operation
				}
				n := testing.AllocsPerRun(5, func() {
					acc = p.Accesses(&op, acc[:0])
					key = acc[j].AppendKey(key[:0], &op)
				})
				if n != 0 {
					t.Fatalf("%s %s: %v allocations", filepath.Base(f), acc[j].Step.Op, n)
				}
			}
		}
	})
}

// eachDesignPlan compiles every design file for a model of all operations (seeded) and
// calls f with the plan and a fresh stream of that model.
func eachDesignPlan(t *testing.T, seed int64, f func(file string, p *design.Compiled, s *workloads.Stream)) {
	t.Helper()
	m := model(t, allOpsScenario(t, seed))
	for _, file := range designFiles(t) {
		p, err := design.Compile(mustLoad(t, file), m)
		if err != nil {
			t.Fatal(err)
		}
		f(file, p, stream(m))
	}
}

// Shard key values convert to the placement package's BSON values and hash as mongod does
// (a hashed shard key's value for the owner key).
func TestMongoShardKeyValues(t *testing.T) {
	m := model(t, mixScenario(t, "  carts.read: 1\n  orders.place: 1\n"))
	p, err := design.Compile(mustLoad(t, filepath.Join(designsDir, "seed001-mongo.yaml")), m)
	if err != nil {
		t.Fatal(err)
	}
	s := stream(m)
	var op workloads.Op
	var vals []workloads.Value
	var buf []byte
	for i := 0; i < 50 && s.Next(&op); i++ {
		for _, a := range p.Accesses(&op, nil) {
			vals, buf = a.ShardKey(&op, vals[:0], buf)
			if len(vals) != a.Step.KeyFields {
				t.Fatalf("%s: %d values for %d key fields", a.Step.Op, len(vals), a.Step.KeyFields)
			}
			for k := range vals {
				mv := design.MongoValue(&vals[k])
				switch a.Step.KeyColumns[k] {
				case "owner_key", "user_id":
					if mv.Kind != mongo.KindString || mv.S != string(vals[k].Bytes) {
						t.Fatalf("%s: %v", a.Step.KeyColumns[k], mv)
					}
					if a.Step.Hashed[k] && mongo.Hash(&mv) != mongo.HashString(mv.S) {
						t.Fatal("hash of a string value")
					}
				case "created_at":
					if mv.Kind != mongo.KindDate || mv.I != workloads.NanosToMillis(op.Time) {
						t.Fatalf("created_at %v for op time %d", mv, op.Time)
					}
				}
			}
		}
	}
}

// KeyValues gives what AppendKey and ShardKey give apart, for every step of every design,
// including the steps that act on the guest cart's view of an operation.
func TestKeyValuesEqualsAppendKeyAndShardKey(t *testing.T) {
	eachDesignPlan(t, 3, func(f string, p *design.Compiled, s *workloads.Stream) {
		var op workloads.Op
		var key []byte
		var vals []workloads.Value
		checked := 0
		for i := 0; i < 2000 && s.Next(&op); i++ {
			for _, a := range p.Accesses(&op, nil) {
				wantKey := a.AppendKey(nil, &op)
				wantVals, _ := a.ShardKey(&op, nil, nil)
				key, vals = a.KeyValues(key[:0], vals[:0], &op)
				if !bytes.Equal(key, wantKey) {
					t.Fatalf("%s %s: KeyValues key %x, AppendKey %x", filepath.Base(f), a.Step.Op, key, wantKey)
				}
				if len(vals) != len(wantVals) {
					t.Fatalf("%s %s: %d values, ShardKey %d", filepath.Base(f), a.Step.Op, len(vals), len(wantVals))
				}
				for k := range vals {
					g, w := vals[k], wantVals[k]
					if g.Type != w.Type || g.Null != w.Null || g.Int != w.Int || g.Float != w.Float || g.ID != w.ID || !bytes.Equal(g.Bytes, w.Bytes) {
						t.Fatalf("%s %s value %d: KeyValues %+v, ShardKey %+v", filepath.Base(f), a.Step.Op, k, g, w)
					}
				}
				checked++
			}
		}
		if checked == 0 {
			t.Errorf("%s: no access checked", filepath.Base(f))
		}
	})
}
