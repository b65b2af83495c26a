package mongo

import (
	"fmt"
	"slices"
	"testing"
)

// TestPrefixRouterMatchesRoute: for every key prefix of compound ranged and hashed
// patterns, PrefixRouter targets the same shards, and counts the same chunks, as Route
// with equality conditions.
func TestPrefixRouterMatchesRoute(t *testing.T) {
	shards := []string{"s1", "s2", "s3"}
	var tables []*ChunkTable
	for _, pat := range []string{`{a: 1, b: 1}`, `{a: 1, b: 1, c: 1}`, `{a: 1, b: "hashed"}`, `{a: "hashed", b: 1}`} {
		p := mustPattern(t, pat)
		var data []SizedKey
		for i := range 3000 {
			vals := []Value{String(fmt.Sprintf("z%d", i%7*i%13)), Int64(int64(i)), Int32(int32(i % 5))}
			data = append(data, SizedKey{Key: p.Key(nil, vals[:len(p)]), Bytes: 100})
		}
		tb, err := SplitByData(p, shards, data, DataModel{ChunkSize: 12_000})
		if err != nil {
			t.Fatal(err)
		}
		if len(tb.Chunks) < 10 {
			t.Fatalf("%s: only %d chunks", pat, len(tb.Chunks))
		}
		tables = append(tables, tb)
	}
	var r PrefixRouter
	seen := map[Targeting]int{}
	for _, tb := range tables {
		p := tb.Pattern
		for i := range 200 {
			vals := []Value{String(fmt.Sprintf("z%d", i%9*i%13)), Int64(int64(i * 17)), Int32(int32(i % 5))}
			for n := 1; n < len(p); n++ {
				var conds []Cond
				var prefix []Value
				for f := range n {
					conds = append(conds, Eq(p[f].Name, vals[f]))
					if p[f].Hashed {
						prefix = append(prefix, Int64(Hash(&vals[f])))
					} else {
						prefix = append(prefix, vals[f])
					}
				}
				want := tb.Route(conds)
				got, shardsGot, chunks := r.Route(tb, prefix, nil)
				seen[got]++
				if got != want.Targeting || !slices.Equal(shardsGot, want.Shards) || chunks != want.Chunks {
					t.Errorf("%s prefix %v: got %v %v in %d chunks, Route says %v %v in %d", p, prefix, got, shardsGot, chunks, want.Targeting, want.Shards, want.Chunks)
				}
				if chunks > 1 {
					seen[-1]++ // a prefix over several chunks
				}
			}
		}
	}
	if seen[TargetOne] == 0 || seen[TargetSome] == 0 || seen[-1] == 0 {
		t.Errorf("both targetings, and prefixes over several chunks, should occur: %v", seen)
	}
}
