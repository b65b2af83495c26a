package reports

import (
	"fmt"
	"math"
	"strings"
)

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
