package results

import "testing"

// A projection is over its limit by bytes or rows, unless it is a chunk the balancer
// splits: then growing past the chunk size is what chunks do.
func TestSizeProjectionOver(t *testing.T) {
	cases := []struct {
		p    SizeProjection
		over bool
	}{
		{SizeProjection{ProjectedBytes: 99, LimitBytes: 100}, false},
		{SizeProjection{ProjectedBytes: 101, LimitBytes: 100}, true},
		{SizeProjection{ProjectedRows: 101, LimitRows: 100, LimitBytes: 100}, true},
		{SizeProjection{Exceeds: true}, true},
		{SizeProjection{ProjectedBytes: 10_000, LimitBytes: 100, Unit: "chunk", Splittable: true}, false},
		{SizeProjection{ProjectedBytes: 10_000, LimitBytes: 100, Unit: "chunk"}, true}, // jumbo
	}
	for i, c := range cases {
		if got := c.p.Over(); got != c.over {
			t.Errorf("case %d %+v: over %v, want %v", i, c.p, got, c.over)
		}
	}
}
