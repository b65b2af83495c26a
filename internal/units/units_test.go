package units

import (
	"math"
	"testing"
)

func TestFormatters(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Ms(0.25), "250µs"}, {Ms(4.2), "4.20ms"}, {Ms(37.54), "37.5ms"}, {Ms(1250), "1.25s"}, {Ms(0), "0"}, {Ms(math.NaN()), "—"},
		{Pct(0.7), "70.0%"}, {Pct(0.08), "8.00%"}, {Pct(0.00123), "0.123%"}, {Pct(1), "100%"}, {Pct(0), "0%"},
		{Bytes(300), "300 B"}, {Bytes(4 << 20), "4 MiB"}, {Bytes(100 * 1024 * 1024), "100 MiB"}, {Bytes(1 << 30), "1 GiB"},
		{Bytes(3 << 29), "1.5 GiB"}, {Bytes(1288490188), "1.2 GiB"}, {Bytes(12.5e9), "11.6 GiB"}, {Bytes(-2048), "-2 KiB"},
		{Count(12345), "12.3k"}, {Count(100000), "100k"}, {Count(950), "950"}, {Count(1500), "1.50k"}, {Count(2.5e6), "2.50M"},
		{Count(12.5), "12.5"}, {Count(math.NaN()), "—"},
		{Seconds(80), "1m20s"}, {Seconds(0), "0s"}, {Seconds(45), "45s"}, {Seconds(397), "6m37s"}, {Seconds(3720), "1h02m"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
