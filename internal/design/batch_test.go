package design_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/shardbench/shardbench/internal/design"
)

const batchDesign = `name: b
source: test
description: test
cassandra:
  keyspace: ks
  replication: {class: SimpleStrategy, replication_factor: 3}
  consistency: {read: ONE, write: QUORUM}
  tables:
    user_sessions:
      entity: sessions
      columns: {session_id: uuid, user_id: uuid, created_at: timestamp}
      partition_key: [session_id]
    sessions_by_user:
      entity: sessions
      columns: {user_id: uuid, created_at: timestamp, session_id: uuid}
      partition_key: [user_id]
      clustering: [created_at desc]
operations:
  sessions.create:
    batch: logged
    steps:
      - insert: user_sessions
      - insert: sessions_by_user
  sessions.read: [{read: user_sessions}]
`

// A write that also updates an index table can travel in one logged batch.
func TestLoggedBatch(t *testing.T) {
	d, err := design.Parse("b.yaml", []byte(batchDesign))
	if err != nil {
		t.Fatal(err)
	}
	steps := d.StaticSteps("sessions.create")
	if len(steps) != 2 {
		t.Fatalf("%d steps", len(steps))
	}
	for _, s := range steps {
		if s.Batch != design.LoggedBatch || s.BatchGroup != 1 || s.Consistency != "QUORUM" {
			t.Errorf("%s: batch %v group %d CL %s", s.Target, s.Batch, s.BatchGroup, s.Consistency)
		}
	}
	if r := d.StaticSteps("sessions.read")[0]; r.Batch != design.NoBatch || r.Consistency != "ONE" {
		t.Errorf("read: %+v", r)
	}
	_, err = design.Parse("b.yaml", []byte(strings.Replace(batchDesign, "batch: logged", "batch: atomic", 1)))
	if err == nil || !strings.Contains(err.Error(), "b.yaml:20:") || !strings.Contains(err.Error(), "must be logged or unlogged") {
		t.Fatalf("got %v", err)
	}
}

const presplitDesign = `name: p
source: test
description: test
mongodb:
  database: shop
  collections:
    orders:
      entity: orders
      fields: {_id: {type: objectId, field: order_oid}, user_id: string, created_at: date}
      shard_key: {user_id: hashed}
      presplit: {chunks: 16}
    products:
      entity: products
      fields: {_id: {type: string, field: product_sku}, category: string}
      shard_key: {category: 1}
      presplit:
        points: [{category: books}, {category: electronics}]
operations:
  orders.place: [{insert: orders}]
  catalog.product_read: [{read: products, filter: [_id]}]
`

func TestPresplitCommands(t *testing.T) {
	d, err := design.Parse("p.yaml", []byte(presplitDesign))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := design.WriteSchema(&b, d); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		`sh.shardCollection("shop.orders", {user_id: "hashed"}, false, {numInitialChunks: 16});`,
		`sh.splitAt("shop.products", {`,
		`category: "electronics"`,
		`sh.enableSharding("shop");`,
	} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("missing %q in\n%s", w, b.String())
		}
	}
	bad := strings.Replace(presplitDesign, "presplit: {chunks: 16}", "presplit: {chunks: 16}\n      unique: true", 1)
	bad = strings.Replace(bad, "points: [{category: books}, {category: electronics}]", "points: [{brand: Apple}]", 1)
	_, err = design.Parse("p.yaml", []byte(bad))
	if err == nil || !strings.Contains(err.Error(), "a hashed shard key cannot be unique") || !strings.Contains(err.Error(), `"brand" is not a shard key field`) {
		t.Fatalf("got %v", err)
	}
}

// Compile needs every operation of the mix mapped or declared not served.
func TestCompileCoversTheMix(t *testing.T) {
	d, err := design.Parse("b.yaml", []byte(batchDesign))
	if err != nil {
		t.Fatal(err)
	}
	m := model(t, mixScenario(t, "  sessions.create: 1\n  sessions.touch: 1\n"))
	_, err = design.Compile(d, m)
	if err == nil || !strings.Contains(err.Error(), "b.yaml:1:1: operations: design b does not say how it serves sessions.touch") {
		t.Fatalf("got %v", err)
	}
	d, err = design.Parse("b.yaml", []byte(batchDesign+"not_served:\n  sessions.touch: \"sessions are not touched in this design\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := design.Compile(d, m)
	if err != nil {
		t.Fatal(err)
	}
	if ok, why := p.Served(m.OpIndex("sessions.touch")); ok || why != "sessions are not touched in this design" {
		t.Fatalf("served %v %q", ok, why)
	}
	if ok, _ := p.Served(m.OpIndex("sessions.create")); !ok {
		t.Fatal("sessions.create is served")
	}
}
