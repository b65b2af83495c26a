// Package units writes numbers as people read them, one formatter per unit: durations in
// milliseconds or seconds, counts and rates, percentages, sizes in binary units. Every
// text shardbench writes for a reader (reports, verdicts, capacity diagnoses, limit
// errors) uses these, so one figure reads the same everywhere. NaN prints as "—".
package units

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Ms prints milliseconds with a unit and sensible precision: 850µs, 4.20ms, 37.5ms,
// 1.25s.
func Ms(ms float64) string {
	switch {
	case math.IsNaN(ms):
		return "—"
	case ms == 0:
		return "0"
	case ms < 0:
		return "-" + Ms(-ms)
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

// Count prints a count or a rate compactly: 950, 12.3k, 1.25M.
func Count(v float64) string {
	switch {
	case math.IsNaN(v):
		return "—"
	case v < 0:
		return "-" + Count(-v)
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

// Pct prints a fraction as a percentage: 0.1234 → 12.3%, 0.000012 → 0.0012%.
func Pct(f float64) string {
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

// Bytes prints a size in binary units: 512 B, 1.5 KiB, 120 MiB.
func Bytes(b float64) string {
	if math.IsNaN(b) {
		return "—"
	}
	if b < 0 {
		return "-" + Bytes(-b)
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

// Seconds prints a duration given in seconds: 45s, 10m00s, 1h02m.
func Seconds(s float64) string {
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
