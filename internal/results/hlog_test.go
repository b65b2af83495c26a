package results

import (
	"bytes"
	"math/rand/v2"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/shardbench/shardbench/internal/metrics"
)

// The reusing encoder writes exactly the lines HdrHistogram's own log writer writes for a
// dense histogram holding the same values: empty, one value, the range's ends, long zero
// runs, large counts, and latency-like spreads.
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
		dense, packed := metrics.NewHistogram(), metrics.NewIntervalHistogram()
		for _, v := range values {
			if err := dense.RecordValue(v); err != nil {
				t.Fatal(err)
			}
			if err := packed.RecordValue(v); err != nil {
				t.Fatal(err)
			}
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
				if err := enc.writeLine(&got, tag, 61_000, 62_000, packed); err != nil {
					t.Fatal(err)
				}
				if got.String() != want.String() {
					t.Fatalf("%s tag %q: encoder wrote\n%s\nthe library writes\n%s", name, tag, got.String(), want.String())
				}
			}
		}
	}
}

// BenchmarkIntervalEncode: one interval histogram of 4,000 latency-like values encoded
// as a log line, by the reusing encoder and by the library's writer (dense histogram).
func BenchmarkIntervalEncode(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	dense, packed := metrics.NewHistogram(), metrics.NewIntervalHistogram()
	for i := 0; i < 4000; i++ {
		v := metrics.Clamp(int64(200_000 + rng.ExpFloat64()*300_000))
		_ = dense.RecordValue(v)
		_ = packed.RecordValue(v)
	}
	var buf bytes.Buffer
	b.Run("reusing", func(b *testing.B) {
		enc := newIntervalEncoder()
		for i := 0; i < b.N; i++ {
			buf.Reset()
			_ = enc.writeLine(&buf, "service", 0, 1000, packed)
		}
	})
	b.Run("library", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			buf.Reset()
			_ = hdr.NewHistogramLogWriter(&buf).OutputIntervalHistogram(dense)
		}
	})
}
