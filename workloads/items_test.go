package workloads_test

import (
	"strings"
	"testing"

	"github.com/shardbench/shardbench/workloads"
)

// Every name a design may give an item attribute reads that attribute of an item, with
// the attribute's type.
func TestItemAttributes(t *testing.T) {
	it := workloads.Item{ProductID: [16]byte{1, 2}, SKU: "PROD-1", Name: "Phone", Category: "electronics", Quantity: 3, Price: 9990,
		AddedAt: 1700000000000, ImageURL: "https://x/1.jpg"}
	want := map[string]string{
		"product_id": "01020000-0000-0000-0000-000000000000", "product_sku": "PROD-1", "sku": "PROD-1", "name": "Phone",
		"product_name": "Phone", "category": "electronics", "quantity": "3", "qty": "3", "price": "99.90",
		"added_at": workloads.FormatMillis(1700000000000), "image_url": "https://x/1.jpg", "product_image_url": "https://x/1.jpg",
	}
	if len(want) != len(workloads.ItemAttrNames) {
		t.Fatalf("%d names, want %d", len(workloads.ItemAttrNames), len(want))
	}
	for _, name := range workloads.ItemAttrNames {
		a := workloads.ItemAttrOf(name)
		v := it.Attr(a)
		if a == 0 || v.Type != a.Type() || v.String() != want[name] {
			t.Errorf("%s: attribute %d, value %s of type %s; want %s", name, a, v.String(), a.Type(), want[name])
		}
	}
	if a := workloads.ItemAttrOf("colour"); a != 0 {
		t.Errorf("colour is attribute %d", a)
	}
	if v := it.Attr(0); !v.Null {
		t.Errorf("attribute 0 reads %s", v.String())
	}
}

// Register refuses a workload whose declarations a design could not use.
func TestRegisterChecksWhatDesignsUse(t *testing.T) {
	id := workloads.ProductID("thing_id")
	count := workloads.IntField("count", "a counter", func(*workloads.Op) int64 { return 1 })
	item := func(*workloads.Model) func(*workloads.Op) workloads.Item { return nil }
	cases := []struct {
		name string
		meta workloads.Meta
		want string
	}{
		{"item operation without Item", workloads.Meta{Ops: []workloads.OpSpec{{Name: "add", Action: workloads.ItemAdd}},
			Fields: []workloads.Field{id}, ItemKey: "thing_id"}, "gives no Item function or ItemKey field"},
		{"item operation without an ItemKey field", workloads.Meta{Ops: []workloads.OpSpec{{Name: "add", Action: workloads.ItemRemove}},
			Fields: []workloads.Field{id}, Item: item, ItemKey: "nosuch"}, "gives no Item function or ItemKey field"},
		{"view without a function", workloads.Meta{Ops: []workloads.OpSpec{{Name: "get", Action: workloads.Get,
			Views: []workloads.View{{Name: "other"}}}}}, "has a view without a name or a function"},
		{"decrement without a counter", workloads.Meta{Ops: []workloads.OpSpec{{Name: "take", Action: workloads.Decrement}}},
			"names no counter"},
		{"per-key field of unknown fields", workloads.Meta{Fields: []workloads.Field{count,
			{Name: "count_by_zone", Type: workloads.TIntMap, PerKey: &workloads.PerKey{Value: "count", Key: "zone"}}}},
			"holds count per zone, which are not both fields"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := c.meta
			m.Name = "registertest" + string(rune('a'+i))
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.Contains(s, c.want) {
					t.Fatalf("Register: %v, want a panic saying %q", r, c.want)
				}
			}()
			workloads.Register(&m)
		})
	}
}
