package results

import (
	"bytes"
	"math/rand/v2"
	"sync"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/shardbench/shardbench/internal/metrics"
)

// A summary's embedded histogram, made with a reused compressor, is the library's
// encoding byte for byte: for latency-like spreads, the range's ends, single values,
// huge counts, an empty histogram, a decoded one and one of another geometry (left to
// the library); again and again
// from one encoder, and from several goroutines at once.
func TestEncodeHistogramIsTheLibrarys(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var cases []*hdr.Histogram
	add := func(values ...int64) *hdr.Histogram {
		h := metrics.NewHistogram()
		for _, v := range values {
			if err := h.RecordValue(v); err != nil {
				t.Fatal(err)
			}
		}
		cases = append(cases, h)
		return h
	}
	add()
	add(1234567)
	add(metrics.Lowest, metrics.Highest)
	for _, spread := range []float64{1e5, 1e7, 1e9} {
		var v []int64
		for i := 0; i < 20_000; i++ {
			v = append(v, metrics.Clamp(int64(rng.ExpFloat64()*spread)))
		}
		add(v...)
	}
	heavy := add()
	if err := heavy.RecordValues(250_000, 1<<40); err != nil {
		t.Fatal(err)
	}
	enc, err := cases[4].Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := hdr.Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	cases = append(cases, decoded)
	other := hdr.New(1, 10_000_000, 2)
	for i := 0; i < 1000; i++ {
		_ = other.RecordValue(int64(rng.IntN(10_000_000)))
	}
	wider := hdr.New(metrics.Lowest, 2*metrics.Highest, metrics.SigFigs) // the same buckets, another header
	for i := 0; i < 1000; i++ {
		_ = wider.RecordValue(int64(rng.IntN(10_000_000)))
	}
	cases = append(cases, other, wider)

	for i, h := range cases {
		// Every harness histogram takes the reused compressor; the others, the library.
		if _, ok := harnessLayout(h, h.Export()); ok != (h != other && h != wider) {
			t.Fatalf("case %d: encoded by the reused compressor %v", i, ok)
		}
	}
	check := func(t *testing.T) {
		for i, h := range cases {
			want, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
			if err != nil {
				t.Fatal(err)
			}
			got, err := encodeHistogram(h)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("case %d (%d values, max %d): encoded\n%s\nthe library\n%s", i, h.TotalCount(), h.Max(), got, want)
			}
		}
	}
	for i := 0; i < 3; i++ {
		check(t)
	}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); check(t) }()
	}
	wg.Wait()
}

// BenchmarkEncodeHistogram: a cumulative histogram of 100,000 latency-like values
// encoded for a summary, with the reused compressor and by the library.
func BenchmarkEncodeHistogram(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	h := metrics.NewHistogram()
	for i := 0; i < 100_000; i++ {
		_ = h.RecordValue(metrics.Clamp(int64(rng.ExpFloat64() * 2e6)))
	}
	b.Run("reused", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := encodeHistogram(h); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("library", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := h.Encode(hdr.V2CompressedEncodingCookieBase); err != nil {
				b.Fatal(err)
			}
		}
	})
}
