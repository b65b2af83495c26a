package main

import (
	"io"
	"os"

	"golang.org/x/term"
)

// IO is where commands read and write; tests substitute buffers.
type IO struct {
	In     io.Reader
	Out    io.Writer // results and reports for the user
	ErrOut io.Writer // progress, warnings and errors
	// ErrTTY is true when ErrOut is a terminal: progress then redraws one line.
	ErrTTY bool
}

func newSystemIO() *IO {
	return &IO{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr, ErrTTY: term.IsTerminal(int(os.Stderr.Fd()))}
}
