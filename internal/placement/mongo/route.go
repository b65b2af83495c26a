package mongo

import (
	"cmp"
	"math"
	"slices"
)

// Op is a query predicate on one field.
type Op int

const (
	OpEq    Op = iota // {f: v}
	OpIn              // {f: {$in: [...]}}
	OpRange           // {f: {$gt/$gte: lo, $lt/$lte: hi}}
)

// Cond is one predicate of a query on a field.
type Cond struct {
	Field  string
	Op     Op
	Values []Value // OpEq: one value; OpIn: the list
	Lo, Hi *Value  // OpRange: bounds; nil is unbounded on that side
}

// Eq is {field: v}.
func Eq(field string, v Value) Cond { return Cond{Field: field, Op: OpEq, Values: []Value{v}} }

// In is {field: {$in: vs}}.
func In(field string, vs ...Value) Cond { return Cond{Field: field, Op: OpIn, Values: vs} }

// Range is a range on field; nil leaves that side open. Open or closed ends target the
// same chunks (mongos builds closed bounds), so Range does not distinguish $gt from $gte.
func Range(field string, lo, hi *Value) Cond { return Cond{Field: field, Op: OpRange, Lo: lo, Hi: hi} }

// Targeting classifies a routed query.
type Targeting int

const (
	TargetOne  Targeting = iota // one shard
	TargetSome                  // several shards, chosen by shard key bounds
	TargetAll                   // broadcast: no bound on the shard key's first field
)

func (t Targeting) String() string {
	return [...]string{"targeted", "multi-shard", "broadcast"}[t]
}

// Route is where mongos sends a query.
type Route struct {
	Targeting Targeting
	Shards    []int // indexes into ChunkTable.Shards, ascending
	Chunks    int   // chunks whose range the query's bounds overlap
	// Point: every shard key field had one equality value, so the query names one
	// shard key (one chunk).
	Point bool
}

type interval struct{ lo, hi Value }

func fullInterval() interval { return interval{MinKey(), MaxKey()} }

// bracket returns the smallest and largest values of v's type, as the query planner
// bounds a one-sided range ($lt: 5 is [-Infinity, 5)).
func bracket(v *Value) (lo, hi Value) {
	switch v.Kind {
	case KindInt32, KindInt64, KindDouble, KindDecimal:
		return Double(math.Inf(-1)), Double(math.Inf(1))
	case KindString:
		return String(""), Doc() // strings end where objects begin
	case KindDate:
		return Date(math.MinInt64), Date(math.MaxInt64)
	case KindObjectID:
		var hi [12]byte
		for i := range hi {
			hi[i] = 0xff
		}
		return ObjectID([12]byte{}), ObjectID(hi)
	case KindBool:
		return Bool(false), Bool(true)
	case KindTimestamp:
		return Timestamp(0, 0), Timestamp(math.MaxUint32, math.MaxUint32)
	}
	return MinKey(), MaxKey()
}

// fieldIntervals is the planner's OrderedIntervalList for one shard key field: sorted,
// disjoint closed intervals; nil means the predicates can match nothing.
func fieldIntervals(f KeyField, conds []Cond) []interval {
	var eq *Cond
	var ranges []*Cond
	for i := range conds {
		switch conds[i].Op {
		case OpEq, OpIn:
			if eq == nil {
				eq = &conds[i]
			}
		case OpRange:
			ranges = append(ranges, &conds[i])
		}
	}
	if eq != nil {
		pts := make([]Value, 0, len(eq.Values))
		for i := range eq.Values {
			if f.Hashed {
				pts = append(pts, Int64(Hash(&eq.Values[i])))
			} else {
				pts = append(pts, eq.Values[i])
			}
		}
		slices.SortFunc(pts, func(a, b Value) int { return Compare(&a, &b) })
		pts = slices.CompactFunc(pts, func(a, b Value) bool { return Compare(&a, &b) == 0 })
		out := make([]interval, len(pts))
		for i, v := range pts {
			out[i] = interval{v, v}
		}
		return out
	}
	if len(ranges) == 0 || f.Hashed {
		// A range on a hashed field says nothing about the hashes.
		return []interval{fullInterval()}
	}
	iv := fullInterval()
	for i, r := range ranges {
		lo, hi := MinKey(), MaxKey()
		switch {
		case r.Lo != nil && r.Hi != nil:
			lo, hi = *r.Lo, *r.Hi
		case r.Lo != nil:
			lo = *r.Lo
			_, hi = bracket(r.Lo)
		case r.Hi != nil:
			hi = *r.Hi
			lo, _ = bracket(r.Hi)
		}
		if i == 0 {
			iv = interval{lo, hi}
			continue
		}
		if Compare(&lo, &iv.lo) > 0 {
			iv.lo = lo
		}
		if Compare(&hi, &iv.hi) < 0 {
			iv.hi = hi
		}
	}
	if Compare(&iv.lo, &iv.hi) > 0 {
		return nil
	}
	return []interval{iv}
}

// Route decides where mongos sends a query with these predicates (the fields a query
// supplies; fields outside the shard key are ignored), as ChunkManager::getShardIdsForQuery
// does: per shard key field the planner's bounds (equality and $in on a hashed field
// become points on the hashed values; a range on a hashed field covers everything), then
// flattenBounds — point fields extend the key prefix, the first non-point field opens
// one range per interval, every later field spans [first interval start, last interval
// end] — and every chunk overlapping a resulting closed range. With no bound on the
// first field the query is broadcast: every chunk overlaps, every shard that owns one
// is asked.
func (t *ChunkTable) Route(conds []Cond) Route {
	p := t.Pattern
	fields := make([][]interval, len(p))
	for i, f := range p {
		var mine []Cond
		for _, c := range conds {
			if c.Field == f.Name {
				mine = append(mine, c)
			}
		}
		fields[i] = fieldIntervals(f, mine)
		if fields[i] == nil || len(fields[i]) == 0 {
			// Nothing can match: mongos still targets one shard (SERVER-4914).
			return Route{Targeting: TargetOne, Shards: []int{t.Chunks[0].Shard}}
		}
	}
	// flattenBounds.
	type bound struct{ min, max []Value }
	bounds := []bound{{nil, nil}}
	equalityOnly := true
	for i := range p {
		ivs := fields[i]
		if equalityOnly {
			if len(ivs) == 1 && Compare(&ivs[0].lo, &ivs[0].hi) == 0 {
				for b := range bounds {
					bounds[b].min = append(bounds[b].min, ivs[0].lo)
					bounds[b].max = append(bounds[b].max, ivs[0].hi)
				}
				continue
			}
			equalityOnly = false
			next := make([]bound, 0, len(bounds)*len(ivs))
			for _, b := range bounds {
				for _, iv := range ivs {
					next = append(next, bound{
						append(slices.Clone(b.min), iv.lo),
						append(slices.Clone(b.max), iv.hi),
					})
				}
			}
			bounds = next
			continue
		}
		for b := range bounds {
			bounds[b].min = append(bounds[b].min, ivs[0].lo)
			bounds[b].max = append(bounds[b].max, ivs[len(ivs)-1].hi)
		}
	}
	r := Route{Point: equalityOnly}
	if f0 := fields[0]; len(f0) == 1 && f0[0].lo.Kind == KindMinKey && f0[0].hi.Kind == KindMaxKey {
		r.Targeting = TargetAll // no bound on the shard key's first field
	}
	shards := make([]bool, len(t.Shards))
	var spans [][2]int
	for _, b := range bounds {
		if allKind(b.min, KindMinKey) && allKind(b.max, KindMaxKey) {
			r.Targeting = TargetAll
			spans = append(spans, [2]int{0, len(t.Chunks) - 1})
			continue
		}
		spans = append(spans, [2]int{t.Find(b.min), t.Find(b.max)})
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return cmp.Compare(a[0], b[0]) })
	end := -1
	for _, s := range spans {
		for c := max(s[0], end+1); c <= s[1]; c++ {
			shards[t.Chunks[c].Shard] = true
			r.Chunks++
		}
		end = max(end, s[1])
	}
	for i, ok := range shards {
		if ok {
			r.Shards = append(r.Shards, i)
		}
	}
	if r.Targeting != TargetAll {
		if len(r.Shards) == 1 {
			r.Targeting = TargetOne
		} else {
			r.Targeting = TargetSome
		}
	}
	return r
}

func allKind(k []Value, kind Kind) bool {
	for i := range k {
		if k[i].Kind != kind {
			return false
		}
	}
	return true
}

// PrefixRouter routes the commonest multi-shard request shape without allocating: one
// equality value on each of the shard key's leading fields and nothing on the others (a
// request that supplies part of a compound shard key). For that shape Route's
// flattenBounds yields the single range [prefix..., MinKey...] to [prefix..., MaxKey...],
// so the shards are the owners of the chunks between the two bounds' chunks. Keep one
// PrefixRouter per goroutine: it reuses its buffers.
type PrefixRouter struct {
	min, max []Value
	owned    []bool
}

// Route appends to dst the shards (ascending) of the chunks a request with this key
// prefix reaches and returns the targeting and how many chunks it reaches, exactly as
// [ChunkTable.Route] with one equality condition per prefix field. prefix is in
// chunk-key form, as [KeyPattern.Key] builds it (a hashed field already
// NumberLong(Hash(value))), and must be shorter than the pattern and not empty: callers
// route a whole key with [ChunkTable.Find] and a request without a prefix to every shard.
func (r *PrefixRouter) Route(t *ChunkTable, prefix []Value, dst []int) (Targeting, []int, int) {
	r.min = append(r.min[:0], prefix...)
	r.max = append(r.max[:0], prefix...)
	for range len(t.Pattern) - len(prefix) {
		r.min = append(r.min, MinKey())
		r.max = append(r.max, MaxKey())
	}
	lo, hi := t.Find(r.min), t.Find(r.max)
	if cap(r.owned) < len(t.Shards) {
		r.owned = make([]bool, len(t.Shards))
	}
	owned := r.owned[:len(t.Shards)]
	clear(owned)
	for c := lo; c <= hi; c++ {
		owned[t.Chunks[c].Shard] = true
	}
	n := 0
	for i, ok := range owned {
		if ok {
			dst = append(dst, i)
			n++
		}
	}
	if n == 1 {
		return TargetOne, dst, hi - lo + 1
	}
	return TargetSome, dst, hi - lo + 1
}
