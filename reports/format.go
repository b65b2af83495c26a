package reports

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// FormatMs prints milliseconds with a unit and sensible precision: 850µs, 4.20ms, 37.5ms,
// 1.25s.
func FormatMs(ms float64) string {
	switch {
	case math.IsNaN(ms):
		return "—"
	case ms == 0:
		return "0"
	case ms < 0:
		return "-" + FormatMs(-ms)
	case ms < 1:
		return fmt.Sprintf("%.0fµs", ms*1000)
	case ms < 10:
		return fmt.Sprintf("%.2fms", ms)
	case ms < 1000:
		return fmt.Sprintf("%.1fms", ms)
	default:
		return fmt.Sprintf("%.2fs", ms/1000)
	}
}

// FormatCount prints a count or a rate compactly: 950, 12.3k, 1.25M.
func FormatCount(v float64) string {
	switch {
	case math.IsNaN(v):
		return "—"
	case v < 0:
		return "-" + FormatCount(-v)
	case v >= 1e9:
		return fmt.Sprintf("%.2fG", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e5:
		return fmt.Sprintf("%.0fk", v/1e3)
	case v >= 1e4:
		return fmt.Sprintf("%.1fk", v/1e3)
	case v >= 1e3:
		return fmt.Sprintf("%.2fk", v/1e3)
	case v == math.Trunc(v):
		return fmt.Sprintf("%.0f", v)
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.1f", v)
	}
}

// FormatPct prints a fraction as a percentage: 0.1234 → 12.3%, 0.000012 → 0.0012%.
func FormatPct(f float64) string {
	switch {
	case math.IsNaN(f):
		return "—"
	case f == 0:
		return "0%"
	}
	// Three significant digits: 70.0%, 8.00%, 0.123%; 100% and above without decimals.
	p := f * 100
	digits := 2 - int(math.Floor(math.Log10(math.Abs(p))))
	digits = max(0, min(digits, 6))
	return strconv.FormatFloat(p, 'f', digits, 64) + "%"
}

// FormatBytes prints a size in binary units: 512 B, 1.5 KiB, 120 MiB.
func FormatBytes(b float64) string {
	if math.IsNaN(b) {
		return "—"
	}
	if b < 0 {
		return "-" + FormatBytes(-b)
	}
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	switch {
	case i == 0:
		return fmt.Sprintf("%.0f B", b)
	case b >= 100:
		return fmt.Sprintf("%.0f %s", b, units[i])
	default:
		return fmt.Sprintf("%.3g %s", b, units[i])
	}
}

// FormatRatio prints a dimensionless ratio such as max/mean: 1.85×.
func FormatRatio(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.2f×", v)
}

// FormatFloat prints a plain number with three significant digits.
func FormatFloat(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.3g", v)
}

// FormatDeviation prints a signed relative deviation: +42%, -8.0%.
func FormatDeviation(d float64) string {
	if math.IsNaN(d) {
		return "—"
	}
	if math.Abs(d) < 0.0005 {
		return "0%"
	}
	if math.Abs(d) >= 0.1 {
		return fmt.Sprintf("%+.0f%%", d*100)
	}
	return fmt.Sprintf("%+.1f%%", d*100)
}

// FormatChange prints how b differs from a: a percentage for moderate changes (+8.0%,
// -35%), a factor beyond 2× (×3.2, ÷1800), where percentages stop meaning much.
func FormatChange(a, b float64) string {
	switch {
	case math.IsNaN(a) || math.IsNaN(b):
		return "—"
	case a == b:
		return "0%"
	case a == 0:
		return "new"
	}
	r := b / a
	switch {
	case r >= 2:
		return "×" + FormatFloat(r)
	case r > 0 && r <= 0.5:
		return "÷" + FormatFloat(1/r)
	}
	return FormatDeviation((b - a) / math.Abs(a))
}

// FormatSeconds prints a duration given in seconds: 45s, 10m00s, 1h02m.
func FormatSeconds(s float64) string {
	if math.IsNaN(s) || s < 0 {
		return "—"
	}
	if s == 0 {
		return "0s"
	}
	if s < 60 {
		if s == math.Trunc(s) {
			return fmt.Sprintf("%.0fs", s)
		}
		return fmt.Sprintf("%.1fs", s)
	}
	d := time.Duration(s * float64(time.Second)).Round(time.Second)
	h, m, sec := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	if h > 0 {
		return fmt.Sprintf("%dh%02dm", h, m)
	}
	return fmt.Sprintf("%dm%02ds", m, sec)
}

// Truncate shortens s to at most n runes, ending with an ellipsis when it cut.
func Truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if n <= 1 {
		return "…"
	}
	return string(r[:n-1]) + "…"
}

// slug turns a name into an HTML id / file name part.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.TrimRight(b.String(), "-")
	if out == "" {
		out = "x"
	}
	return out
}
