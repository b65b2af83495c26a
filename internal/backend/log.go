package backend

import (
	"fmt"
	"io"
	"sync"

	"github.com/shardbench/shardbench/internal/redact"
)

// Log is what a real backend tells the user while it works and the notes its results
// keep (features a server could not apply), with every secret of its target scrubbed:
// the one logging and redaction path of the Cassandra and MongoDB backends.
type Log struct {
	w      io.Writer
	prefix string
	r      *redact.Redactor

	mu    sync.Mutex
	notes []string
}

// NewLog writes lines "<prefix>: message" to w (nil: nowhere), scrubbing the secrets r
// knows (nil: none).
func NewLog(w io.Writer, prefix string, r *redact.Redactor) *Log {
	if w == nil {
		w = io.Discard
	}
	return &Log{w: w, prefix: prefix, r: r}
}

// Logf tells the user something now.
func (l *Log) Logf(format string, args ...any) {
	fmt.Fprintf(l.w, "%s: %s\n", l.prefix, l.Redact(fmt.Sprintf(format, args...)))
}

// Note records something the results must show, and tells the user now.
func (l *Log) Note(format string, args ...any) {
	s := l.Redact(fmt.Sprintf(format, args...))
	l.mu.Lock()
	l.notes = append(l.notes, s)
	l.mu.Unlock()
	fmt.Fprintf(l.w, "%s: %s\n", l.prefix, s)
}

// Notes returns a copy of the notes recorded so far.
func (l *Log) Notes() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.notes...)
}

// Redact scrubs the target's secrets from text (a driver's error message) before it is
// printed or kept in the results.
func (l *Log) Redact(s string) string { return l.r.Text(s) }
