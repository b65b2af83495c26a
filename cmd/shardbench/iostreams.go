package main

import (
	"io"
	"os"

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
	return &IO{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr, ErrTTY: term.IsTerminal(int(os.Stderr.Fd()))}
}
