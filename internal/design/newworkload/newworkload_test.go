// Package newworkload_test maps workloads the design package has never heard of: it
// registers two of its own (and none of the shipped ones), so a design can serve them
// only through what workloads.Meta says — an operation's views, the item list and its
// item key, a counter held per key.
package newworkload_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/workloads"
)

// giver is the view of a hand-over that acts on the giver's list (Op.Aux is the giver).
func giver(op *workloads.Op) workloads.Op {
	v := *op
	v.User = op.Aux
	return v
}

var wishlists = &workloads.Meta{
	Name: "wishlists", Entity: "wishlists", Description: "gift lists",
	Ops: []workloads.OpSpec{
		{Name: "add", Action: workloads.ItemAdd, Binds: []string{"owner_id"}, Sets: []string{"gift_id", "items"}},
		{Name: "remove", Action: workloads.ItemRemove, Binds: []string{"owner_id", "gift_id"}, Sets: []string{"items"}},
		{Name: "read", Action: workloads.Get, Binds: []string{"owner_id"}},
		{Name: "hand_over", Action: workloads.Update, Binds: []string{"owner_id"}, Sets: []string{"items"},
			Views: []workloads.View{{Name: "giver", Doc: "the list handed over", Of: giver}}},
	},
	Fields: []workloads.Field{
		workloads.IDField("owner_id", workloads.KindUser, "the list's owner", func(op *workloads.Op) int64 { return op.User }),
		workloads.ProductID("gift_id"),
		{Name: "items", Type: workloads.TItems, Size: 40, Composite: func(m *workloads.Model) func(*workloads.Op) any {
			return func(op *workloads.Op) any { // the whole list: this gift and the one before
				prev := *op
				prev.Product--
				return []workloads.Item{gift(m, &prev), gift(m, op)}
			}
		}},
	},
	Item: func(m *workloads.Model) func(*workloads.Op) workloads.Item {
		return func(op *workloads.Op) workloads.Item { return gift(m, op) }
	},
	ItemKey: "gift_id",
}

func gift(m *workloads.Model, op *workloads.Op) workloads.Item {
	return workloads.Item{ProductID: m.UUID(workloads.KindProduct, op.Product), Name: "gift", Quantity: op.Qty}
}

var pantry = &workloads.Meta{
	Name: "pantry", Entity: "shelves", Description: "jars on shelves, per room",
	Ops: []workloads.OpSpec{
		{Name: "take", Action: workloads.Decrement, Binds: []string{"shelf_id", "room"}, Sets: []string{"jars"}},
	},
	Fields: []workloads.Field{
		workloads.ProductID("shelf_id"),
		workloads.ConstText("room", "the room", 8, func(m *workloads.Model, op *workloads.Op) string { return m.Zones[op.Zone] }),
		workloads.IntField("jars", "jars on the shelf in the room", func(*workloads.Op) int64 { return 40 }),
		{Name: "jars_by_room", Type: workloads.TIntMap, Size: 12, PerKey: &workloads.PerKey{Value: "jars", Key: "room"}},
		{Name: "jar_docs", Type: workloads.TDocs, Size: 20, PerKey: &workloads.PerKey{Value: "jars", Key: "room", DocKey: "r", DocValue: "n"}},
	},
}

func init() {
	workloads.Register(wishlists)
	workloads.Register(pantry)
}

// compile parses a design (its operations section given) and binds it to a model of the
// two workloads.
func compile(t *testing.T, schema, ops string) (*design.Compiled, *workloads.Model, error) {
	t.Helper()
	sc, err := scenario.Parse("s.yaml", []byte(`name: s
load:
  phases:
    - {type: constant, rate: 100, duration: 10s}
mix: {wishlists.add: 1, wishlists.remove: 1, wishlists.read: 1, wishlists.hand_over: 1, pantry.take: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	m, err := workloads.New(sc)
	if err != nil {
		t.Fatal(err)
	}
	d, err := design.Parse("d.yaml", []byte("name: d\n"+schema+"operations:\n"+ops))
	if err != nil {
		return nil, m, err
	}
	p, err := design.Compile(d, m)
	return p, m, err
}

func opOf(t *testing.T, m *workloads.Model, name string) workloads.Op {
	for i, info := range m.Ops {
		if info.Name == name {
			return workloads.Op{Type: uint16(i), User: 5, Aux: 9, Session: -1, Product: 77, Order: -1, Qty: 3, Zone: 1,
				Category: workloads.NoCategory, Sub: workloads.NoSub}
		}
	}
	t.Fatalf("no operation %s", name)
	return workloads.Op{}
}

const cassandra = `cassandra:
  keyspace: ks
  replication: {class: SimpleStrategy, replication_factor: 1}
  types:
    gift: {product_id: uuid, quantity: int, name: text}
  tables:
    lists:
      entity: wishlists
      columns:
        owner_id: uuid
        items: list<frozen<gift>>
      partition_key: [owner_id]
    gifts:
      entity: wishlists
      columns:
        owner_id: uuid
        gift_id: uuid
      partition_key: [owner_id]
      clustering: [gift_id]
    shelves:
      entity: shelves
      columns:
        shelf_id: uuid
        jars_by_room: map<text, int>
      partition_key: [shelf_id]
`

const notServed = `not_served:
  wishlists.add: "-"
  wishlists.remove: "-"
  wishlists.read: "-"
  wishlists.hand_over: "-"
  pantry.take: "-"
`

// served is notServed less the operations the design maps.
func served(ops string) string {
	var b strings.Builder
	b.WriteString(ops)
	b.WriteString("not_served:\n")
	for _, line := range strings.Split(notServed, "\n")[1:] {
		name, _, _ := strings.Cut(strings.TrimSpace(line), ":")
		if name != "" && !strings.Contains(ops, "  "+name+":") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// The step with view: giver acts on the giver's list, the other on the receiver's.
func TestViewOfAnOperation(t *testing.T) {
	p, m, err := compile(t, cassandra, served(`  wishlists.hand_over:
    - {read: lists, view: giver}
    - {write: lists}
`))
	if err != nil {
		t.Fatal(err)
	}
	op := opOf(t, m, "wishlists.hand_over")
	acc := p.Accesses(&op, nil)
	if len(acc) != 2 {
		t.Fatalf("%d accesses, want 2", len(acc))
	}
	for i, owner := range []int64{9, 5} {
		u := m.UUID(workloads.KindUser, owner)
		if key := acc[i].AppendKey(nil, &op); string(key) != string(u[:]) {
			t.Errorf("step %d: key %x, want owner %d's %x", i, key, owner, u)
		}
		if args := acc[i].Bind(&op, nil); !reflect.DeepEqual(args[len(args)-1], u) {
			t.Errorf("step %d: binds %v, want owner %d last", i, args, owner)
		}
	}

	for _, c := range []struct{ view, want string }{
		{"giver", "view: giver applies to wishlists.hand_over (the list handed over)"},
		{"taker", `must be giver, got "taker"`},
	} {
		_, _, err := compile(t, cassandra, served("  wishlists.read:\n    - {read: lists, view: "+c.view+"}\n"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("view %s on wishlists.read: error %v, want %q", c.view, err, c.want)
		}
	}
}

// A table keyed by the workload's ItemKey keeps a row per item: adding one inserts a
// row, removing one is a delete step; a table holding the item list appends the item
// Meta.Item gives.
func TestItemListAndItemKey(t *testing.T) {
	p, m, err := compile(t, cassandra, served(`  wishlists.add:
    - {write: gifts}
    - {write: lists}
`))
	if err != nil {
		t.Fatal(err)
	}
	steps := p.Steps(int(opOf(t, m, "wishlists.add").Type))
	wantCQL := []string{`INSERT INTO ks.gifts (owner_id, gift_id) VALUES (?, ?)`, `UPDATE ks.lists SET items = items + ? WHERE owner_id = ?`}
	for i, s := range steps {
		if s.CQL != wantCQL[i] {
			t.Errorf("step %d: %s\nwant %s", i, s.CQL, wantCQL[i])
		}
	}
	op := opOf(t, m, "wishlists.add")
	acc := p.Accesses(&op, nil)
	items := acc[1].Bind(&op, nil)[0]
	want := []map[string]any{{"product_id": m.UUID(workloads.KindProduct, 77), "quantity": int32(3), "name": "gift"}}
	if !reflect.DeepEqual(items, want) {
		t.Errorf("appended items %#v, want %#v", items, want)
	}

	_, _, err = compile(t, cassandra, served("  wishlists.remove:\n    - {write: gifts}\n"))
	if err == nil || !strings.Contains(err.Error(), "gifts keeps one row per item: removing an item is a delete step") {
		t.Errorf("removing from a row-per-item table: %v", err)
	}
}

const mongo = `mongodb:
  database: db
  collections:
    lists:
      entity: wishlists
      fields:
        _id: {type: binData, field: owner_id}
        items: {type: array, item_fields: {product_id: binData, qty: int, name: string}}
    shelves:
      entity: shelves
      fields:
        _id: {type: binData, field: shelf_id}
        jar_docs: array
    bare:
      entity: shelves
      fields:
        _id: {type: binData, field: shelf_id}
`

// A decrement lowers the operation's counter (Sets[0]) where the design keeps it per key:
// the map entry of the operation's room, or the document of its room.
func TestCounterPerKey(t *testing.T) {
	p, m, err := compile(t, cassandra, served("  pantry.take:\n    - {write: shelves, lwt: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	op := opOf(t, m, "pantry.take")
	acc := p.Accesses(&op, nil)
	if want := "UPDATE ks.shelves SET jars_by_room[?] = ? WHERE shelf_id = ? IF jars_by_room[?] = ?"; acc[0].Step.CQL != want {
		t.Errorf("CQL %s\nwant %s", acc[0].Step.CQL, want)
	}
	room := m.Zones[1]
	want := []any{room, int32(37), m.UUID(workloads.KindProduct, 77), room, int32(40)}
	if args := acc[0].Bind(&op, nil); !reflect.DeepEqual(args, want) {
		t.Errorf("binds %v, want %v", args, want)
	}

	p, _, err = compile(t, mongo, served("  pantry.take:\n    - {write: shelves}\n  wishlists.add:\n    - {write: lists}\n"))
	if err != nil {
		t.Fatal(err)
	}
	acc = p.Accesses(&op, nil)
	cmd := acc[0].Mongo(&op)
	got := fmt.Sprint(cmd.Filter, cmd.Update)
	if want := fmt.Sprintf("[{_id %v} {jar_docs [{$elemMatch [{r %s} {n [{$gte 3}]}]}]}] [{$inc [{jar_docs.$.n -3}]}]", m.UUID(workloads.KindProduct, 77), room); got != want {
		t.Errorf("command %s\nwant    %s", got, want)
	}
	add := opOf(t, m, "wishlists.add")
	acc = p.Accesses(&add, nil)
	cmd = acc[0].Mongo(&add)
	if want := fmt.Sprintf("[{$push [{items [{product_id %v} {qty 3} {name gift}]}]}] true", m.UUID(workloads.KindProduct, 77)); fmt.Sprint(cmd.Update, cmd.Upsert) != want {
		t.Errorf("item add %v %v\nwant %s", cmd.Update, cmd.Upsert, want)
	}

	_, _, err = compile(t, mongo, served("  pantry.take:\n    - {write: bare}\n"))
	if err == nil || !strings.Contains(err.Error(), "bare has no field holding jars (or jar_docs) for pantry.take") {
		t.Errorf("a collection without the counter: %v", err)
	}
}
