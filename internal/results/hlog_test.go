package results

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	kzlib "github.com/klauspost/compress/zlib"

	"github.com/shardbench/shardbench/internal/metrics"
)

// The reusing encoder writes lines HdrHistogram's own log writer and reader agree with,
// for a dense histogram holding the same values: empty, one value, the range's ends, long
// zero runs, large counts, and latency-like spreads. The compressed bytes differ (Huffman
// only against best compression), so the line's fields are compared as text up to the
// histogram, the histogram as what the library decodes from it, and the bytes compressed
// as those the library compresses.
func TestIntervalEncoderMatchesTheLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := map[string][]int64{
		"empty":   nil,
		"one":     {1234567},
		"ends":    {metrics.Lowest, metrics.Highest, metrics.Lowest},
		"bucket0": {1000, 1500, 2000, 511 * 1000},
	}
	for _, spread := range []float64{1e5, 1e7, 1e9} {
		var v []int64
		for i := 0; i < 5000; i++ {
			v = append(v, metrics.Clamp(int64(rng.ExpFloat64()*spread)))
		}
		cases["exp"+string(rune('0'+len(cases)))] = v
	}
	var heavy []int64
	for i := 0; i < 300_000; i++ { // one bucket past 2^14 and 2^21: multi-byte counts
		heavy = append(heavy, 250_000)
	}
	cases["heavy"] = heavy

	enc := newIntervalEncoder()
	for name, values := range cases {
		dense, paged := metrics.NewHistogram(), new(metrics.PagedHistogram)
		for _, v := range values {
			if err := dense.RecordValue(v); err != nil {
				t.Fatal(err)
			}
			paged.RecordValue(v)
		}
		libEncoded, err := dense.Encode(hdr.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		for _, tag := range []string{"", "service"} {
			var want, got bytes.Buffer
			dense.SetTag(tag)
			dense.SetStartTimeMs(61_000)
			dense.SetEndTimeMs(62_000)
			if err := hdr.NewHistogramLogWriter(&want).OutputIntervalHistogram(dense); err != nil {
				t.Fatal(err)
			}
			// Twice: the reused zlib writer and buffers must not carry state over.
			for i := 0; i < 2; i++ {
				got.Reset()
				if err := enc.writeLine(&got, tag, 61_000, 62_000, paged); err != nil {
					t.Fatal(err)
				}
				if a, b := enc.inner, uncompressed(t, libEncoded); !bytes.Equal(a, b) {
					t.Fatalf("%s tag %q: encoded %d bytes before compression, the library %d", name, tag, len(a), len(b))
				}
				gotFields, gotHist := splitLogLine(t, got.String())
				wantFields, _ := splitLogLine(t, want.String())
				if gotFields != wantFields {
					t.Fatalf("%s tag %q: encoder wrote fields %q, the library %q", name, tag, gotFields, wantFields)
				}
				decoded, err := hdr.Decode([]byte(gotHist))
				if err != nil {
					t.Fatalf("%s tag %q: the library cannot decode the line: %v", name, tag, err)
				}
				if !sameCounts(decoded, dense) {
					t.Fatalf("%s tag %q: decoded histogram differs: count %d max %d, want count %d max %d",
						name, tag, decoded.TotalCount(), decoded.Max(), dense.TotalCount(), dense.Max())
				}
				// The library's log reader reads the line back too.
				r := hdr.NewHistogramLogReader(bytes.NewReader(got.Bytes()))
				back, err := r.NextIntervalHistogram()
				if err != nil || back == nil || back.TotalCount() != dense.TotalCount() || back.Tag() != tag {
					t.Fatalf("%s tag %q: log reader: %v, %v", name, tag, back, err)
				}
			}
		}
	}
}

// uncompressed is the V2 encoding inside a compressed one (base64, cookie and length,
// zlib).
func uncompressed(t *testing.T, encoded []byte) []byte {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(string(encoded))
	if err != nil || len(raw) < 8 {
		t.Fatalf("not a compressed histogram: %v", err)
	}
	zr, err := zlib.NewReader(bytes.NewReader(raw[8:]))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// splitLogLine splits an interval log line into its text fields (tag, start, length, max)
// and its base64 histogram.
func splitLogLine(t *testing.T, line string) (fields, hist string) {
	t.Helper()
	line = strings.TrimSuffix(line, "\n")
	i := strings.LastIndexByte(line, ',')
	if i < 0 {
		t.Fatalf("not a log line: %q", line)
	}
	return line[:i], line[i+1:]
}

// sameCounts reports whether two histograms hold the same count in every bucket.
func sameCounts(a, b *hdr.Histogram) bool {
	if a.TotalCount() != b.TotalCount() || a.Max() != b.Max() || a.Min() != b.Min() {
		return false
	}
	ba, bb := a.Distribution(), b.Distribution()
	if len(ba) != len(bb) {
		return false
	}
	for i := range ba {
		if ba[i] != bb[i] {
			return false
		}
	}
	return true
}

// BenchmarkIntervalEncode: one interval histogram of 4,000 latency-like values encoded
// as a log line, by the reusing encoder and by the library's writer (dense histogram).
func BenchmarkIntervalEncode(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	dense, paged := metrics.NewHistogram(), new(metrics.PagedHistogram)
	for i := 0; i < 4000; i++ {
		v := metrics.Clamp(int64(200_000 + rng.ExpFloat64()*300_000))
		_ = dense.RecordValue(v)
		paged.RecordValue(v)
	}
	var buf bytes.Buffer
	b.Run("reusing", func(b *testing.B) {
		enc := newIntervalEncoder()
		for i := 0; i < b.N; i++ {
			buf.Reset()
			_ = enc.writeLine(&buf, "service", 0, 1000, paged)
		}
	})
	b.Run("library", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			buf.Reset()
			_ = hdr.NewHistogramLogWriter(&buf).OutputIntervalHistogram(dense)
		}
	})
}

// A histogram whose encoding is shorter than storedBelow is written as a stored block,
// and those bytes are exactly what the zlib writer (Huffman only) makes of it: small
// histograms of every shape Black Friday's have (empty, a lag histogram of zeros, a few
// buckets with counts of one to several bytes) come out as before.
func TestSmallHistogramsStoredAsTheWriterStoresThem(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	enc := newIntervalEncoder()
	var zbuf bytes.Buffer
	zw, _ := kzlib.NewWriterLevel(&zbuf, kzlib.HuffmanOnly)
	small := 0
	for i := 0; i < 20_000; i++ {
		h := new(metrics.PagedHistogram)
		for k := rng.IntN(12); k > 0; k-- {
			v := metrics.Clamp(int64(rng.ExpFloat64() * []float64{1e3, 1e5, 1e6, 1e8}[rng.IntN(4)]))
			n := 1 + rng.IntN([]int{2, 100, 1000}[rng.IntN(3)])
			if rng.IntN(50) == 0 {
				n = 20_000 // a three-byte count
			}
			for ; n > 0; n-- {
				h.RecordValue(v)
			}
		}
		if i%3 == 0 { // a quiet operation's second: a few latency-like values
			h = new(metrics.PagedHistogram)
			for n := 1 + rng.IntN(60); n > 0; n-- {
				h.RecordValue(int64(200_000 + rng.ExpFloat64()*300_000))
			}
		}
		if i%7 == 0 { // an on-time interval's lag histogram: only zeros
			h = new(metrics.PagedHistogram)
			for n := 1 + rng.IntN(3000); n > 0; n-- {
				h.RecordValue(0)
			}
		}
		if _, err := enc.encode(h); err != nil {
			t.Fatal(err)
		}
		if len(enc.inner) >= storedBelow {
			continue
		}
		small++
		zbuf.Reset()
		zw.Reset(&zbuf)
		zw.Write(enc.inner)
		zw.Close()
		if got := enc.outer[8:]; !bytes.Equal(got, zbuf.Bytes()) {
			t.Fatalf("%d-byte histogram: stored as %x, the writer makes %x", len(enc.inner), got, zbuf.Bytes())
		}
		if n := binary.BigEndian.Uint32(enc.outer[4:]); int(n) != len(enc.outer)-8 {
			t.Fatalf("compressed length field %d, want %d", n, len(enc.outer)-8)
		}
	}
	if small < 10_000 {
		t.Fatalf("only %d of the histograms were small: the test does not test the stored path", small)
	}
}

// A line's start, length and max, printed from integers, are the digits the library's
// float formatting prints: over whole seconds and milliseconds up to days, lengths from a
// millisecond to hours, and maxima over the whole trackable range (nanoseconds).
func TestAppendMicrosMatchesFloatFormatting(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	check := func(what string, got []byte, want float64) {
		t.Helper()
		if w := strconv.AppendFloat(nil, want, 'f', 6, 64); string(got) != string(w) {
			t.Fatalf("%s: %s, the library prints %s", what, got, w)
		}
	}
	ms := []int64{0, 1, 999, 1000, 1001, 59_999, 61_000, 3_600_000, 86_400_000, 7 * 86_400_000}
	for i := 0; i < 200_000; i++ {
		ms = append(ms, rng.Int64N(10*86_400_000))
	}
	for i, start := range ms {
		end := start + []int64{1, 250, 1000, 1001, 3_600_000, rng.Int64N(86_400_000)}[i%6]
		check("start", appendMicros(nil, start*1000), float64(start)/1000.0)
		check("length", appendMicros(nil, (end-start)*1000), float64(end)/1000.0-float64(start)/1000.0)
	}
	ns := []int64{0, 1, metrics.Lowest, metrics.Highest, 999_999, 1_000_000, 1_000_001}
	for i := 0; i < 200_000; i++ {
		ns = append(ns, rng.Int64N(metrics.Highest+1))
	}
	for _, v := range ns {
		check("max", appendMicros(nil, v), float64(v)/hdr.MsToNsRatio)
	}
	check("negative", appendMicros(nil, -1500), -0.0015)
}
