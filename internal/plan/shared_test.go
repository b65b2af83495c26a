package plan

import (
	"context"
	"reflect"
	"testing"
)

// TestVariantsMatchVariant: generating the stream once for all variants gives every
// variant exactly the result of running it on its own stream.
func TestVariantsMatchVariant(t *testing.T) {
	prep, sch := prepare(t, "../../scenarios/black-friday.yaml")
	newStream := func() Stream { return prep.Model.NewStream(sch) }
	const limit = 30_000 // not a multiple of the batch size
	var names []string
	var want []any
	for i, v := range prep.Variants {
		names = append(names, v.Name)
		hv, n, err := Variant(context.Background(), v.Name, prep.Plans[i], &Cluster{Seed: 1}, newStream, limit)
		if err != nil || n != limit {
			t.Fatalf("%s: %d operations, %v", v.Name, n, err)
		}
		want = append(want, hv)
	}
	got, n, err := Variants(context.Background(), names, prep.Plans, &Cluster{Seed: 1}, newStream, limit)
	if err != nil || n != limit {
		t.Fatalf("%d operations, %v", n, err)
	}
	for i := range got {
		if !reflect.DeepEqual(any(got[i]), want[i]) {
			t.Errorf("variant %s differs from its own run", names[i])
		}
	}
}
