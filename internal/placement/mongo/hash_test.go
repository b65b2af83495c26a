package mongo

import (
	"math"
	"testing"
)

func oid(t *testing.T, s string) Value {
	t.Helper()
	v, err := ParseObjectID(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Vectors from MongoDB's own source and documentation:
//   - H: mongodb/mongo src/mongo/db/hasher_test.cpp ("hard-coded checks to ensure the hash
//     function is consistent across platforms and server versions"), each hashing
//     BSON("check" << value).firstElement() with seed 0;
//   - E: mongodb/mongo src/mongo/db/pipeline/expression_to_hashed_index_key_test.cpp
//     ($toHashedIndexKey, the same function);
//   - D: the $toHashedIndexKey manual page (docs/manual/reference/operator/aggregation/
//     toHashedIndexKey): "string to hash" -> Long("763543691661428748").
func TestHashVectors(t *testing.T) {
	u := [16]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	cases := []struct {
		src  string
		v    Value
		want int64
	}{
		{"H", Int32(42), -944302157085130861},
		{"H", Double(42.123), -944302157085130861},
		{"H", Int64(42), -944302157085130861},
		{"H", Int32(0), 4854801880128277513},
		{"H", Double(0.456), 4854801880128277513},
		{"H", Int64(0), 4854801880128277513},
		{"H", Double(math.NaN()), 4854801880128277513}, // NaN is treated as zero
		{"H", Int32(1), 5902408780260971510},
		{"H", Double(1.987), 5902408780260971510},
		{"H", Int64(1), 5902408780260971510},
		{"H", Int32(-1), 1140205862565771219},
		{"H", Double(-1.789), 1140205862565771219},
		{"H", Int64(-1), 1140205862565771219},
		{"H", Int32(math.MinInt32), 6165898260261354870},
		{"H", Double(math.MinInt32), 6165898260261354870},
		{"H", Int64(math.MinInt32), 6165898260261354870},
		{"H", Int32(math.MaxInt32), 1143184177162245883},
		{"H", Double(math.MaxInt32), 1143184177162245883},
		{"H", Int64(math.MaxInt32), 1143184177162245883},
		{"H", Double(math.MaxFloat64), 921523596458303250},
		{"H", Int64(math.MaxInt64), 921523596458303250},
		{"H", Double(-math.MaxFloat64), 4532067210535695462},
		{"H", Int64(math.MinInt64), 4532067210535695462},
		{"H", MinKey(), 7961148599568647290},
		{"H", MaxKey(), 5504842513779440750},
		{"H", Undefined(), 40158834000849533},
		{"H", Null(), 2338878944348059895},
		{"H", String("abc"), 8478485326885698097},
		{"H", String(""), 2049396243249673340},
		{"H", Doc(Field{"a", String("abc")}, Field{"b", Int64(123)}), 4771603801758380216},
		{"H", Doc(), 7980500913326740417},
		{"H", Array(String("bar"), String("baz"), String("qux")), -2938911267422831539},
		{"H", Array(), 8849948234993459283},
		{"H", Binary(0, []byte{0, 1, 2, 3, 4, 6}), 7252465090394235301},
		{"H", Binary(128, []byte{0, 1, 2, 3, 4, 6}), 5736670452907618262},
		{"H", UUID(&u), 6084661258071355978},
		{"H", oid(t, "010203040506070809101112"), -5588663249627035708},
		{"H", oid(t, "000000000000000000000000"), -4293118519463489418},
		{"H", Bool(true), 6405873908747105701},
		{"H", Bool(false), 6289544573401934092},
		{"H", Date(0x5566778811223344), 4476222765095560467},
		{"H", Date(0), -1178696894582842035},
		{"E", String("hashThisStringLiteral"), -5776344739422278694},
		{"E", Int32(123), -6548868637522515075},
		{"E", Timestamp(0, 0), -7867208682377458672},
		{"E", oid(t, "47cc67093475061e3d95369d"), 1576265281381834298},
		{"E", Int32(16), 2598032665634823220}, // {$pow: [2, 4]}
		{"D", String("string to hash"), 763543691661428748},
	}
	for _, c := range cases {
		if got := Hash(&c.v); got != c.want {
			t.Errorf("%s: Hash(%v) = %d, want %d", c.src, c.v, got, c.want)
		}
	}
	if HashString("abc") != 8478485326885698097 || HashStringBytes([]byte("abc")) != 8478485326885698097 || HashInt64(42) != -944302157085130861 {
		t.Error("HashString / HashInt64 disagree with Hash")
	}
}

// Behaviour required by hasher_test.cpp's relational tests and safeNumberLongForHash.
func TestHashNumbers(t *testing.T) {
	h := func(v Value) int64 { return Hash(&v) }
	// Recursive squashing of ints and doubles inside documents and arrays.
	a := Doc(Field{"a", Int32(3)}, Field{"b", Array(Double(3.1), Doc(Field{"c", Int32(3)}))})
	b := Doc(Field{"a", Double(3.1)}, Field{"b", Array(Int32(3), Doc(Field{"c", Double(3.0)}))})
	if h(a) != h(b) {
		t.Error("RecursiveSquashingIntsAndDoubles")
	}
	// Arrays and subdocuments with the same content differ.
	if h(Doc(Field{"0", Int32(0)}, Field{"1", Int32(1)})) == h(Array(Int32(0), Int32(1))) {
		t.Error("ArrayAndSubobjectHashesDiffer")
	}
	if h(Doc(Field{"a", Doc()}, Field{"b", Int32(1)})) == h(Doc(Field{"a", Doc(Field{"b", Int32(1)})})) {
		t.Error("SubDocumentGroupingHashesDiffer")
	}
	if h(Int32(3)) == h(String("3")) {
		t.Error("IntAndStringHashesDiffer")
	}
	// VeryLargeAndSmallDoubles.
	if h(Double(float64(math.MaxInt64)*float64(math.MaxInt64))) != h(Int64(math.MaxInt64)) {
		t.Error("huge double must hash as LLONG_MAX")
	}
	if h(Double(math.Inf(-1))) != h(Int64(math.MinInt64)) {
		t.Error("-Inf must hash as LLONG_MIN")
	}
	// 2^63 exactly keeps the old overflow to LLONG_MIN (safeNumberLongForHash).
	if h(Double(9223372036854775808.0)) != h(Int64(math.MinInt64)) {
		t.Error("2^63 must hash as LLONG_MIN")
	}
	// Decimals: Decimal128::toLong rounds half to even; clamps beyond int64.
	for _, c := range []struct {
		d    Value
		want int64
	}{
		{Decimal(425, 1), 42}, {Decimal(435, 1), 44}, {Decimal(-425, 1), -42}, {Decimal(-4251, 2), -43},
		{Decimal(42, 0), 42}, {Decimal(42, -1), 420},
		{Decimal(math.MaxInt64, -2), math.MaxInt64}, {Decimal(math.MinInt64, -1), math.MinInt64},
	} {
		if got := numberForHash(&c.d); got != c.want {
			t.Errorf("decimal %v -> %d, want %d", c.d, got, c.want)
		}
	}
	if h(Decimal(4212, 2)) != h(Int32(42)) {
		t.Error("decimal 42.12 must hash as 42")
	}
}

func TestCompare(t *testing.T) {
	ordered := []Value{
		MinKey(), Undefined(), Null(),
		Double(math.NaN()), Double(math.Inf(-1)), Int64(math.MinInt64), Int32(-1), Decimal(-5, 1),
		Int32(0), Double(0.5), Int64(1), Decimal(15, 1), Double(2), Int64(1 << 60), Double(math.Inf(1)),
		String(""), String("a"), String("ab"), String("b"),
		Doc(), Doc(Field{"a", Int32(1)}), Doc(Field{"a", Int32(2)}), Doc(Field{"b", Int32(0)}),
		Array(), Array(Int32(1)),
		Binary(0, []byte{9}), Binary(4, []byte{1}), Binary(0, []byte{1, 2}),
		oid(t, "000000000000000000000000"), oid(t, "010203040506070809101112"),
		Bool(false), Bool(true),
		Date(-1), Date(0),
		Timestamp(0, 5), Timestamp(1, 0),
		MaxKey(),
	}
	for i := range ordered {
		for j := range ordered {
			got := Compare(&ordered[i], &ordered[j])
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got != want {
				t.Errorf("Compare(%v, %v) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
	// Numbers compare by value across types; large longs vs doubles exactly.
	eq := [][2]Value{{Int32(3), Double(3)}, {Int64(3), Decimal(30, 1)}, {Double(math.NaN()), Double(math.NaN())}}
	for _, p := range eq {
		if Compare(&p[0], &p[1]) != 0 {
			t.Errorf("%v != %v", p[0], p[1])
		}
	}
	big1, big2 := Int64(1<<60+1), Double(1<<60)
	if Compare(&big1, &big2) != 1 || Compare(&big2, &big1) != -1 {
		t.Error("2^60+1 vs 2^60 double")
	}
}
