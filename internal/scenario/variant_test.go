package scenario

import "testing"

// set and sweep values keep their YAML shape, file order and positions for the design
// package (a shard key's fields are ordered).
func TestVariantSpecKeepsParameterNodes(t *testing.T) {
	text := `name: v
load: {phases: [{type: constant, rate: 1, duration: 1s}]}
mix: {a.b: 1}
designs:
  - design: d.yaml
    set:
      orders.shard_key: {user_id: hashed, created_at: 1}
      buckets: 10
    sweep:
      z.last: [1, 2]
      a.first: [{x: 1}, {y: 2}, {z: 3}]
`
	sc, err := Parse("v.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	v := sc.Designs[0]
	if len(v.SetParams) != 2 || v.SetParams[0].Name != "orders.shard_key" || v.SetParams[1].Name != "buckets" {
		t.Fatalf("set params %+v", v.SetParams)
	}
	key := v.SetParams[0].Node
	if key.Content[0].Value != "user_id" || key.Content[2].Value != "created_at" {
		t.Fatalf("shard key order lost: %+v", key.Content)
	}
	if v.SetParams[1].Pos.Line != 8 || v.SetParams[1].Pos.File != "v.yaml" {
		t.Fatalf("position %+v", v.SetParams[1].Pos)
	}
	if len(v.SweepParams) != 2 || v.SweepParams[0].Name != "z.last" || len(v.SweepParams[1].Values) != 3 {
		t.Fatalf("sweep params %+v", v.SweepParams)
	}
	if v.Set["buckets"] != 10 || len(v.Sweep["a.first"]) != 3 {
		t.Fatalf("the generic maps must still be filled: %+v %+v", v.Set, v.Sweep)
	}
}
