package cassandra

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/big"
	"math/bits"
	"net/netip"
	"strings"
	"testing"
)

// gocql's vectors: apache/cassandra-gocql-driver, internal/murmur/murmur_test.go
// (TestMurmur3H1ForCassandra). They are the raw h1 of CassandraMurmur3H1, i.e. before
// the MIN_VALUE normalisation; the tail bytes >= 0xc8 exercise the sign extension.
func TestHashGocqlVectors(t *testing.T) {
	prefix2 := "prefix\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\xc8\xc9"
	vectors := map[string]int64{
		"prefix\x00":                                                           -5156414768376541762,
		"prefix\x00\x01":                                                       3700033067394128583,
		"prefix\x00\x01\x02":                                                   -3973852022020331202,
		"prefix\x00\x01\x02\x03":                                               3038655072509758878,
		"prefix\x00\x01\x02\x03\x04":                                           -5681686890369564299,
		"prefix\x00\x01\x02\x03\x04\x05":                                       8960422816272944721,
		"prefix\x00\x01\x02\x03\x04\x05\x06":                                   -1104872167714568090,
		"prefix\x00\x01\x02\x03\x04\x05\x06\x07":                               -9199676315897541990,
		"prefix\x00\x01\x02\x03\x04\x05\x06\x07\x08":                           4847624695450664884,
		"prefix\x00\x01\x02\x03\x04\x05\x06\x07\x08\t":                         -2737291859101550625,
		"prefix\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n":                       -1154133289533387924,
		"prefix\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b":                   5781349077088505981,
		"prefix\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c":               -681021187788781932,
		"prefix\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r":             -3787130296809111096,
		"prefix\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e":         -3115393326357146996,
		"prefix\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f":     -2684252762052835206,
		"prefix\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\xc8": -278181328349571586,

		prefix2:                                                              -5319761130493488577,
		prefix2 + "\xca":                                                     -4593148434938707926,
		prefix2 + "\xca\xcb":                                                 -575713103357290760,
		prefix2 + "\xca\xcb\xcc":                                             4290743753678124926,
		prefix2 + "\xca\xcb\xcc\xcd":                                         9164754117279683406,
		prefix2 + "\xca\xcb\xcc\xcd\xce":                                     -107668053986278786,
		prefix2 + "\xca\xcb\xcc\xcd\xce\xcf":                                 64887291506465003,
		prefix2 + "\xca\xcb\xcc\xcd\xce\xcf\xd0":                             6241282934480161521,
		prefix2 + "\xca\xcb\xcc\xcd\xce\xcf\xd0\xd1":                         5150183507841894143,
		prefix2 + "\xca\xcb\xcc\xcd\xce\xcf\xd0\xd1\xd2":                     5645797256444299552,
		prefix2 + "\xca\xcb\xcc\xcd\xce\xcf\xd0\xd1\xd2\xd3":                 -908235285856554578,
		prefix2 + "\xca\xcb\xcc\xcd\xce\xcf\xd0\xd1\xd2\xd3\xd4":             -1785405279637408062,
		prefix2 + "\xca\xcb\xcc\xcd\xce\xcf\xd0\xd1\xd2\xd3\xd4\xd5":         5343233714768265848,
		prefix2 + "\xca\xcb\xcc\xcd\xce\xcf\xd0\xd1\xd2\xd3\xd4\xd5\xd6":     4936964276934412722,
		prefix2 + "\xca\xcb\xcc\xcd\xce\xcf\xd0\xd1\xd2\xd3\xd4\xd5\xd6\xd7": 2294903531026336836,

		"\x00\x10C'R\x9f\xb6E\xdd\x00\xb8\x83\xec9\xaeD\x8b\xb8\x00\x00\x04\x00\x06jk\x00": -9223371632693506265,
	}
	for s, want := range vectors {
		if got := Hash3x64_128H1([]byte(s)); got != want {
			t.Errorf("Hash3x64_128H1(%q) = %d, want %d", s, got, want)
		}
	}
}

// Tokens from the DataStax drivers' Murmur3 tests, whose comment says "inputs and result
// values from Cassandra": datastax/csharp-driver src/Cassandra.Tests/TokenTests.cs
// (Murmur_Hash_Test) and datastax/ruby-driver spec/cassandra/murmur3_spec.rb (which adds
// the string keys); the same table is in datastax/nodejs-driver's token tests.
func TestTokenDriverVectors(t *testing.T) {
	b := func(v ...byte) string { return string(v) }
	vectors := []struct {
		key  string
		want Token
	}{
		{b(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16), -5563837382979743776},
		{b(2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17), -1513403162740402161},
		{b(3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18), -495360443712684655},
		{b(4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19), 1734091135765407943},
		{b(5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20), -3199412112042527988},
		{b(6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21), -6316563938475080831},
		{b(7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22), 8228893370679682632},
		{strings.Repeat("\x00", 16), 5457549051747178710},
		{strings.Repeat("\xff", 16), -2824192546314762522},
		{strings.Repeat("\xfe", 16), -833317529301936754},
		{"\x00\x01\x02\x03" + strings.Repeat("\xff", 12), 6463632673159404390},
		{strings.Repeat("\xfe", 17), -1672437813826982685},
		{"\xfe\xfe\xfe\xfe", 4566408979886474012},
		{"\x00\x00\x00\x00", -3485513579396041028},
		{"\x00\x01\x7f\x7f", 6573459401642635627},
		{"\x00\xff\xff\xff", 123573637386978882},
		{"\xff\x01\x02\x03", -2839127690952877842},
		{"\xe2\xe7", -8582699461035929883},
		{"\xe2\xe7\xe2\xe7\xe2\xe7\x01", 2222373981930033306},
		// ruby-driver only:
		{"123", -7468325962851647638},
		{strings.Repeat("\x00\xff\x10\xfa\x99", 10), 5837342703291459765},
		{strings.Repeat("\xfe", 8), -8927430733708461935},
		{strings.Repeat("\x10", 8), 1446172840243228796},
		{"9223372036854775807", 7162290910810015547},
	}
	for _, v := range vectors {
		if got := TokenOf([]byte(v.key)); got != v.want {
			t.Errorf("TokenOf(% x) = %d, want %d", v.key, got, v.want)
		}
	}
}

// Typed keys: pmcfadin/cqlite, cqlite-core/src/util/cassandra_murmur3.rs, whose comment
// says each pair "was produced by SELECT token(id), id FROM ..." on a running Cassandra
// 5.0. Here the key bytes are produced by this package's serialisers, so the test covers
// the CQL encodings too.
func TestTokenTypedKeys(t *testing.T) {
	var kb KeyBuilder
	text := map[string]Token{
		"a": -8839064797231613815, "ab": -7815133031266706642, "abc": -5434086359492102041,
		"abcd": -5153323217664422577, "abcde": 2321271983248423864, "abcdef": -1982280103179862187,
		"abcdefg": -6427428730009885543, "abcdefgh": -3708139591217214462, "hello": -3758069500696749310,
		"cassandra": 356242581507269238, "murmur3": 5322121941860471994,
		"test_key_12345": -3182120811138177122, "0123456789abcde": -6472281833689111727,
		"0123456789abcdef": 5467490433528156583,
		"this is a longer test key for murmur3 hashing": -7889617755374116647,
	}
	for s, want := range text {
		kb.Reset(1)
		kb.Text(s)
		if got := kb.Token(); got != want {
			t.Errorf("text %q: token %d, want %d", s, got, want)
		}
	}
	ints := map[int32]Token{
		0: -3485513579396041028, 1: -4069959284402364209, -1: 7297452126230313552,
		42: -7160136740246525330, 127: 4443639997907684431, 128: -9081975895656599623,
		255: -8423851636648339959, 256: 180151580513994396, 1000: 7935772098093053663,
		-1000: 5905661066942090405, math.MaxInt32: -765994672030311617, math.MinInt32: -420533958509279465,
	}
	for v, want := range ints {
		kb.Reset(1)
		kb.Int(v)
		if got := kb.Token(); got != want {
			t.Errorf("int %d: token %d, want %d", v, got, want)
		}
	}
	bigints := map[int64]Token{
		0: 2945182322382062539, 1: 6292367497774912474, -1: 7071048584287372947,
		math.MaxInt64: -1722304415079482439, math.MinInt64: 9204767954415360687,
	}
	for v, want := range bigints {
		kb.Reset(1)
		kb.BigInt(v)
		if got := kb.Token(); got != want {
			t.Errorf("bigint %d: token %d, want %d", v, got, want)
		}
	}
	uuids := map[string]Token{
		"00000000-0000-0000-0000-000000000000": 5457549051747178710,
		"ffffffff-ffff-ffff-ffff-ffffffffffff": -2824192546314762522,
		"550e8400-e29b-41d4-a716-446655440000": 4277286421682315655,
		"12345678-1234-1234-1234-123456789abc": -8497799532739775204,
		"11111111-1111-1111-1111-111111111111": 4360155383588533346,
		"22222222-2222-2222-2222-222222222222": 1213057064512856170,
		"33333333-3333-3333-3333-333333333333": 8780122315263850168,
	}
	for s, want := range uuids {
		kb.Reset(1)
		kb.UUID(parseUUID(t, s))
		if got := kb.Token(); got != want {
			t.Errorf("uuid %s: token %d, want %d", s, got, want)
		}
	}
	blobs := []struct {
		b    []byte
		want Token
	}{
		{[]byte{0x00}, 5048724184180415669},
		{[]byte{0x80}, -5284281814142962636},
		{[]byte{0xff}, -4442228696663692417},
		{[]byte{0xff, 0xfe}, -2002833339314343643},
		{[]byte{0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89}, -7623170703309721106},
		{[]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, 597835946752277653},
	}
	for _, v := range blobs {
		kb.Reset(1)
		kb.Blob(v.b)
		if got := kb.Token(); got != v.want {
			t.Errorf("blob % x: token %d, want %d", v.b, got, v.want)
		}
	}
	// Composite partition keys ((text, int)).
	composite := []struct {
		s    string
		i    int32
		want Token
	}{{"hello", 42, 7666157718303755816}, {"world", 99, -4641306270390207264}}
	for _, v := range composite {
		kb.Reset(2)
		kb.Text(v.s)
		kb.Int(v.i)
		if got := kb.Token(); got != v.want {
			t.Errorf("(%q, %d): token %d, want %d", v.s, v.i, got, v.want)
		}
	}
}

func parseUUID(t *testing.T, s string) [16]byte {
	t.Helper()
	var u [16]byte
	h := strings.ReplaceAll(s, "-", "")
	if len(h) != 32 {
		t.Fatalf("bad uuid %q", s)
	}
	for i := 0; i < 16; i++ {
		var v byte
		for _, c := range h[2*i : 2*i+2] {
			v <<= 4
			switch {
			case c >= '0' && c <= '9':
				v |= byte(c - '0')
			case c >= 'a' && c <= 'f':
				v |= byte(c-'a') + 10
			default:
				t.Fatalf("bad uuid %q", s)
			}
		}
		u[i] = v
	}
	return u
}

// Murmur3Partitioner.getToken: the empty key is MINIMUM; a hash of Long.MIN_VALUE is
// normalised to Long.MAX_VALUE. A key hashing to MIN_VALUE is built by inverting
// MurmurHash3 (as Cassandra's LongToken.keyForToken does via inv_hash3_x64_128).
func TestTokenNormalisation(t *testing.T) {
	if got := TokenOf(nil); got != MinToken {
		t.Fatalf("empty key: %d, want MinToken", got)
	}
	key := keyForH1(math.MinInt64)
	if h := Hash3x64_128H1(key); h != math.MinInt64 {
		t.Fatalf("inverted key hashes to %d, want MinInt64", h)
	}
	if got := TokenOf(key); got != MaxToken {
		t.Fatalf("token of a key hashing to MIN_VALUE = %d, want MaxToken", got)
	}
	for _, h := range []int64{-1, 0, 1, math.MaxInt64, math.MinInt64 + 1} {
		if got := TokenOf(keyForH1(h)); got != Token(h) {
			t.Errorf("keyForH1(%d) token %d", h, got)
		}
	}
}

// keyForH1 returns a 16-byte key whose h1 is h: one block, inverted step by step (as
// Cassandra's MurmurHash.inv_hash3_x64_128 does for LongToken.keyForToken).
func keyForH1(h int64) []byte {
	inv := func(a uint64) uint64 { // inverse of odd a mod 2^64 (Newton)
		x := a
		for i := 0; i < 6; i++ {
			x *= 2 - a*x
		}
		return x
	}
	invFmix := func(k uint64) uint64 {
		k ^= k >> 33 // x ^= x>>33 is its own inverse (33 > 32)
		k *= inv(0xc4ceb9fe1a85ec53)
		k ^= k >> 33
		k *= inv(0xff51afd7ed558ccd)
		k ^= k >> 33
		return k
	}
	rotr := func(x uint64, r int) uint64 { return bits.RotateLeft64(x, -r) }
	// Output h1 = fmix(A+B) + fmix(A+2B), with A, B the states after the length xor.
	// Choose A+2B = 0 (fmix(0) = 0), so A+B = invFmix(h).
	x := invFmix(uint64(h))
	b := -x
	a := 2 * x
	h1, h2 := a^16, b^16
	// Undo the block from h1 = h2 = 0.
	kk1 := rotr((h1-0x52dce729)*inv(5), 27)
	kk2 := rotr((h2-0x38495ab5)*inv(5)-h1, 31)
	k1 := rotr(kk1*inv(c2), 31) * inv(c1)
	k2 := rotr(kk2*inv(c1), 33) * inv(c2)
	out := make([]byte, 16)
	binary.LittleEndian.PutUint64(out, k1)
	binary.LittleEndian.PutUint64(out[8:], k2)
	return out
}

func TestSerialisers(t *testing.T) {
	cases := []struct {
		name string
		got  []byte
		want []byte
	}{
		{"int -2", AppendInt(nil, -2), []byte{0xff, 0xff, 0xff, 0xfe}},
		{"smallint 258", AppendSmallInt(nil, 258), []byte{1, 2}},
		{"tinyint -1", AppendTinyInt(nil, -1), []byte{0xff}},
		{"boolean", AppendBoolean(AppendBoolean(nil, true), false), []byte{1, 0}},
		// SimpleDateSerializer: 1970-01-01 is 2^31.
		{"date epoch", AppendDate(nil, 0), []byte{0x80, 0, 0, 0}},
		{"date -1", AppendDate(nil, -1), []byte{0x7f, 0xff, 0xff, 0xff}},
		{"date min", AppendDate(nil, math.MinInt32), []byte{0, 0, 0, 0}},
		{"timestamp", AppendTimestamp(nil, 1), []byte{0, 0, 0, 0, 0, 0, 0, 1}},
		{"double 1", AppendDouble(nil, 1), []byte{0x3f, 0xf0, 0, 0, 0, 0, 0, 0}},
		{"float 1", AppendFloat(nil, 1), []byte{0x3f, 0x80, 0, 0}},
		{"inet4", AppendInet(nil, netip.MustParseAddr("10.0.0.1")), []byte{10, 0, 0, 1}},
		{"inet4in6", AppendInet(nil, netip.MustParseAddr("::ffff:10.0.0.1")), []byte{10, 0, 0, 1}},
		{"inet6", AppendInet(nil, netip.MustParseAddr("::1")), append(make([]byte, 15), 1)},
		// BigInteger.toByteArray.
		{"varint 0", AppendVarint(nil, 0), []byte{0}},
		{"varint 127", AppendVarint(nil, 127), []byte{0x7f}},
		{"varint 128", AppendVarint(nil, 128), []byte{0, 0x80}},
		{"varint -1", AppendVarint(nil, -1), []byte{0xff}},
		{"varint -128", AppendVarint(nil, -128), []byte{0x80}},
		{"varint -129", AppendVarint(nil, -129), []byte{0xff, 0x7f}},
		{"varint min", AppendVarint(nil, math.MinInt64), []byte{0x80, 0, 0, 0, 0, 0, 0, 0}},
		{"decimal 12.34", AppendDecimal(nil, 1234, 2), []byte{0, 0, 0, 2, 0x04, 0xd2}},
	}
	for _, c := range cases {
		if !bytes.Equal(c.got, c.want) {
			t.Errorf("%s: % x, want % x", c.name, c.got, c.want)
		}
	}
	// Big varints agree with the int64 path, and beyond it with two's complement.
	for _, v := range []int64{0, 1, -1, 127, 128, -128, -129, 255, 256, -256, -257, math.MaxInt64, math.MinInt64} {
		if a, b := AppendVarint(nil, v), AppendVarintBig(nil, big.NewInt(v)); !bytes.Equal(a, b) {
			t.Errorf("varint %d: % x vs big % x", v, a, b)
		}
	}
	two64 := new(big.Int).Lsh(big.NewInt(1), 64)
	if got := AppendVarintBig(nil, two64); !bytes.Equal(got, []byte{1, 0, 0, 0, 0, 0, 0, 0, 0}) {
		t.Errorf("2^64: % x", got)
	}
	if got := AppendVarintBig(nil, new(big.Int).Neg(two64)); !bytes.Equal(got, []byte{0xff, 0, 0, 0, 0, 0, 0, 0, 0}) {
		t.Errorf("-2^64: % x", got)
	}
	if got := AppendVarintBig(nil, new(big.Int).Sub(new(big.Int).Neg(two64), big.NewInt(1))); !bytes.Equal(got, []byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}) {
		t.Errorf("-2^64-1: % x", got)
	}
}

func TestCompositeFraming(t *testing.T) {
	var kb KeyBuilder
	kb.Reset(2)
	kb.Text("ab")
	kb.Date(0)
	want := []byte{0, 2, 'a', 'b', 0, 0, 4, 0x80, 0, 0, 0, 0}
	if !bytes.Equal(kb.Bytes(), want) {
		t.Fatalf("composite % x, want % x", kb.Bytes(), want)
	}
	kb.Reset(1)
	kb.Text("ab")
	if !bytes.Equal(kb.Bytes(), []byte("ab")) {
		t.Fatalf("single % x", kb.Bytes())
	}
	kb.Reset(2)
	kb.Blob(make([]byte, MaxComponentLen+1))
	if kb.Err() == nil {
		t.Fatal("over-long component accepted")
	}
}

func TestTokenParse(t *testing.T) {
	for _, s := range []string{"-9223372036854775808", "0", "9223372036854775807", "-42"} {
		tk, err := ParseToken(s)
		if err != nil || tk.String() != s {
			t.Errorf("ParseToken(%s) = %v, %v", s, tk, err)
		}
	}
	if _, err := ParseToken("9223372036854775808"); err == nil {
		t.Error("out of range token parsed")
	}
}

// refH1 is a byte-at-a-time transcription of MurmurHash.hash3_x64_128's tail switch (Java
// sign-extends each tail byte), used to check the word-at-a-time tail on every length.
func refH1(data []byte) int64 {
	var h1, h2 uint64
	n := len(data)
	nb := n / 16
	for i := 0; i < nb; i++ {
		k1 := binary.LittleEndian.Uint64(data[i*16:])
		k2 := binary.LittleEndian.Uint64(data[i*16+8:])
		k1 *= c1
		k1 = bits.RotateLeft64(k1, 31)
		k1 *= c2
		h1 ^= k1
		h1 = bits.RotateLeft64(h1, 27)
		h1 += h2
		h1 = h1*5 + 0x52dce729
		k2 *= c2
		k2 = bits.RotateLeft64(k2, 33)
		k2 *= c1
		h2 ^= k2
		h2 = bits.RotateLeft64(h2, 31)
		h2 += h1
		h2 = h2*5 + 0x38495ab5
	}
	tail := data[nb*16:]
	var k1, k2 uint64
	sx := func(b byte) uint64 { return uint64(int64(int8(b))) }
	for i := len(tail) - 1; i >= 0; i-- {
		if i >= 8 {
			k2 ^= sx(tail[i]) << (8 * uint(i-8))
		} else {
			k1 ^= sx(tail[i]) << (8 * uint(i))
		}
	}
	if len(tail) > 8 {
		k2 *= c2
		k2 = bits.RotateLeft64(k2, 33)
		k2 *= c1
		h2 ^= k2
	}
	if len(tail) > 0 {
		k1 *= c1
		k1 = bits.RotateLeft64(k1, 31)
		k1 *= c2
		h1 ^= k1
	}
	h1 ^= uint64(n)
	h2 ^= uint64(n)
	h1 += h2
	h2 += h1
	h1 = fmix64(h1)
	h2 = fmix64(h2)
	return int64(h1 + h2)
}

func TestHashTailAllLengths(t *testing.T) {
	x := uint64(0x9e3779b97f4a7c15)
	next := func() byte { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return byte(x) }
	for n := 0; n <= 64; n++ {
		for trial := 0; trial < 200; trial++ {
			d := make([]byte, n)
			for i := range d {
				d[i] = next()
				if trial%3 == 0 {
					d[i] |= 0x80 // all sign bits
				}
			}
			if got, want := Hash3x64_128H1(d), refH1(d); got != want {
				t.Fatalf("len %d % x: %d, reference %d", n, d, got, want)
			}
		}
	}
}
