package main

import (
	"errors"
	"io"
	"os"
	"sync"
	"syscall"

	"golang.org/x/term"

	"github.com/shardbench/shardbench/internal/redact"
)

// IO is where commands read and write; tests substitute buffers.
type IO struct {
	In     io.Reader
	Out    io.Writer // results and reports for the user
	ErrOut io.Writer // progress, warnings and errors
	// ErrTTY is true when ErrOut is a terminal: progress then redraws one line.
	ErrTTY bool
	// errRaw is ErrOut before escaping, for the progress line's own control sequence
	// (return and erase line); nil: ErrOut.
	errRaw io.Writer
	// gone is closed when a write to the process's standard output or error finds its
	// reader gone (a broken pipe: `| head`, a dead tee or ssh session); nil for buffers.
	// interruptContext stops a run on it as on SIGTERM, so what was measured is written.
	gone <-chan struct{}
}

// safe returns io with Out and ErrOut escaping control characters and scrubbing r's
// secrets.
func (io *IO) safe(r *redact.Redactor) *IO {
	c := *io
	c.errRaw = io.ErrOut
	c.Out = redact.NewWriter(io.Out, r)
	c.ErrOut = redact.NewWriter(io.ErrOut, r)
	return &c
}

// rawErr is where a terminal control sequence of the tool's own goes.
func (io *IO) rawErr() io.Writer {
	if io.errRaw != nil {
		return io.errRaw
	}
	return io.ErrOut
}

func newSystemIO() *IO {
	gone, once := make(chan struct{}), new(sync.Once)
	return &IO{In: os.Stdin, Out: pipeWriter{os.Stdout, once, gone}, ErrOut: pipeWriter{os.Stderr, once, gone},
		ErrTTY: term.IsTerminal(int(os.Stderr.Fd())), gone: gone}
}

// pipeWriter is a standard stream that says, by closing gone once, when its reader has
// gone away. The write fails with EPIPE only where SIGPIPE is ignored (interruptContext
// ignores it); elsewhere the signal ends the process, as it does any Unix filter.
type pipeWriter struct {
	w    io.Writer
	once *sync.Once
	gone chan struct{}
}

func (p pipeWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	if err != nil && errors.Is(err, syscall.EPIPE) {
		p.once.Do(func() { close(p.gone) })
	}
	return n, err
}
