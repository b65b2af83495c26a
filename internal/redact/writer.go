package redact

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Controls returns s with every control character but newline and tab written as an
// escape (\x1b, \u009b): a name read from a file or a server cannot move the cursor,
// clear the screen or retitle the terminal it is printed on.
func Controls(s string) string {
	if !hasControl(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isControl(r) {
			b.WriteString(escapeRune(r))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func hasControl(s string) bool {
	for _, r := range s {
		if isControl(r) {
			return true
		}
	}
	return false
}

// isControl reports the C0 and C1 controls and DEL, except newline and tab.
func isControl(r rune) bool {
	return (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f)
}

func escapeRune(r rune) string {
	if r < 0x80 {
		return fmt.Sprintf("\\x%02x", r)
	}
	return fmt.Sprintf("\\u%04x", r)
}

// Writer escapes control characters and scrubs secrets in everything written through it:
// what stands between the commands and the terminal. Each Write is treated as whole text
// (commands print whole lines); a UTF-8 sequence cut between two writes is held back
// until its end arrives.
type Writer struct {
	w       io.Writer
	r       *Redactor
	pending []byte
}

// NewWriter wraps w; r may be nil (controls are escaped, nothing is scrubbed).
func NewWriter(w io.Writer, r *Redactor) *Writer { return &Writer{w: w, r: r} }

// Write writes p, escaped and scrubbed. It reports len(p) written on success.
func (w *Writer) Write(p []byte) (int, error) {
	buf := append(w.pending, p...)
	w.pending = nil
	// Hold back an incomplete UTF-8 sequence at the end.
	if n := incompleteTail(buf); n > 0 {
		w.pending = append([]byte(nil), buf[len(buf)-n:]...)
		buf = buf[:len(buf)-n]
	}
	s := w.r.Text(Controls(strings.ToValidUTF8(string(buf), "\uFFFD")))
	if _, err := io.WriteString(w.w, s); err != nil {
		return 0, err
	}
	return len(p), nil
}

// incompleteTail is the length of a UTF-8 sequence begun but not finished at the end of b.
func incompleteTail(b []byte) int {
	for n := 1; n <= 3 && n <= len(b); n++ {
		c := b[len(b)-n]
		if c < 0x80 {
			return 0
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-n:]) {
				return n
			}
			return 0
		}
	}
	return 0
}
