package plan

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/schedule"
)

// TestVariantsMatchVariant: generating the stream once for all variants gives every
// variant exactly the result of running it on its own stream.
func TestVariantsMatchVariant(t *testing.T) {
	sc, err := scenario.ReadFile("../../scenarios/black-friday.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.Apply(scenario.Overrides{Duration: 2 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	prep, err := design.Prepare(sc)
	if err != nil {
		t.Fatal(err)
	}
	sch := schedule.New(sc)
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
