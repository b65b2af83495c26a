package design

import (
	"math"
	"testing"
)

func uuidOf(t *testing.T, s string) [16]byte {
	t.Helper()
	var u [16]byte
	j := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '-' {
			continue
		}
		var v byte
		for _, c := range []byte{s[i], s[i+1]} {
			v <<= 4
			switch {
			case c >= '0' && c <= '9':
				v |= c - '0'
			case c >= 'a' && c <= 'f':
				v |= c - 'a' + 10
			}
		}
		u[j] = v
		j++
		i++
	}
	return u
}

// Values computed with OpenJDK 17: UUID.fromString(s).hashCode() and
// Math.abs(h) % 100 — including the Integer.MIN_VALUE case, whose bucket is negative.
func TestJavaUUIDHashCode(t *testing.T) {
	for _, c := range []struct {
		uuid   string
		hash   int32
		bucket int32
	}{
		{"123e4567-e89b-12d3-a456-426614174000", 1256478162, 62},
		{"6d1ae98d-86ab-4546-9f13-0bd6cfa66d9f", -1157313918, 18},
		{"00000000-0000-0000-8000-000000000000", math.MinInt32, -48},
		{"ffffffff-ffff-ffff-ffff-ffffffffffff", 0, 0},
		{"7fffffff-0000-0000-0000-000000000000", 2147483647, 47},
	} {
		h := javaUUIDHashCode(uuidOf(t, c.uuid))
		if h != c.hash || javaAbsMod(h, 100) != c.bucket {
			t.Errorf("%s: hashCode %d bucket %d, want %d and %d", c.uuid, h, javaAbsMod(h, 100), c.hash, c.bucket)
		}
	}
}

// Values from OpenJDK 17: s.hashCode() over UTF-16 code units (a surrogate pair included).
func TestJavaStringHashCode(t *testing.T) {
	for _, c := range []struct {
		s string
		h int32
	}{
		{"u:6d1ae98d-86ab-4546-9f13-0bd6cfa66d9f", 2000169615},
		{"Москва", 1089556153},
		{"electronics", 964001143},
		{"😀x", 54959989},
	} {
		if h := javaStringHashCode([]byte(c.s)); h != c.h {
			t.Errorf("%q: %d, want %d", c.s, h, c.h)
		}
	}
}

// The Murmur3 used for hash buckets is Cassandra's: token(1) for an int key is the
// well-known -4069959284402364209.
func TestMurmur3MatchesCassandra(t *testing.T) {
	if got := int64(murmur3H1([]byte{0, 0, 0, 1})); got != -4069959284402364209 {
		t.Fatalf("murmur3(int 1) = %d", got)
	}
}

func TestTimeBucketFormat(t *testing.T) {
	tb := &timeBucket{unit: "month", format: "YYYY-MM", offMs: 3 * msHour}
	// 2025-11-30T21:30Z is 2025-12-01 00:30 in Moscow.
	ms := int64(1764538200000)
	v := timeBucketValue(tb, bucketIndex("month", ms+tb.offMs), &cqlType{Name: "text"}, nil)
	if string(v.Bytes) != "2025-12" {
		t.Fatalf("got %q", v.Bytes)
	}
	day := &timeBucket{unit: "day", format: "YYYY-MM-DD"}
	v = timeBucketValue(day, bucketIndex("day", ms), &cqlType{Name: "int"}, nil)
	if v.Int != 20251130 {
		t.Fatalf("int day bucket %d", v.Int)
	}
	v = timeBucketValue(day, bucketIndex("day", ms), &cqlType{Name: "date"}, nil)
	var dst []byte
	dst = appendCQL(dst, &cqlType{Name: "date"}, &v)
	// Cassandra's date: days since epoch + 2^31, big-endian.
	if want := uint32(v.Int + 1<<31); dst[0] != byte(want>>24) || dst[3] != byte(want) || v.Int != 20422 {
		t.Fatalf("date %d serialised as %x", v.Int, dst)
	}
}

func TestVarint(t *testing.T) {
	for _, c := range []struct {
		x    int64
		want string
	}{{0, "00"}, {1, "01"}, {127, "7f"}, {128, "0080"}, {-1, "ff"}, {-128, "80"}, {-129, "ff7f"}, {8999000, "00895058"}} {
		got := appendVarint(nil, c.x)
		if h := hexOf(got); h != c.want {
			t.Errorf("%d: %s, want %s", c.x, h, c.want)
		}
	}
}

func hexOf(b []byte) string {
	const d = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, x := range b {
		out = append(out, d[x>>4], d[x&15])
	}
	return string(out)
}

func TestQuoteIdent(t *testing.T) {
	for in, want := range map[string]string{"bucket": "bucket", "token": `"token"`, "DC1": `"DC1"`, "limit": `"limit"`, "order_id": "order_id"} {
		if got := quoteIdent(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}
