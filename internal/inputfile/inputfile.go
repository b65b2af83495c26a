// Package inputfile is the one way shardbench opens a file it did not just write: a
// scenario, a design and its base, a calibration or gate rules file, and every file of a
// results directory. The rules are the same for all of them:
//
//   - only regular files are read: a device (/dev/zero), a FIFO, a socket or a directory,
//     or a symbolic link to one, is refused without reading and without blocking (the
//     file is opened non-blocking and checked before the first read);
//   - each kind of file has a size limit, chosen from what a real scenario or result
//     needs and named in the error, so no input makes the tool read without end;
//   - errors name the file and what is wrong with it, never its contents.
//
// The limits are listed in docs/limits.md.
package inputfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/shardbench/shardbench/internal/units"
)

// Kind is a kind of input file and its size limit.
type Kind struct {
	// Name says what the file is, for errors ("a scenario or design file").
	Name string
	// Max is the largest size read, in bytes.
	Max int64
}

// The kinds of input and their limits. Each limit is far above what the largest real file
// of its kind needs (the figures are black-friday.yaml's: 14 design variants, 25
// operation types, 10 minutes) and low enough that a file at the limit still fits in
// memory several times over.
var (
	// YAML is a scenario, design (or base design), calibration or gate rules file. The
	// largest shipped one is 12 KB (seed001-mongo.yaml); a calibration of 14 variants
	// with 25 operation types each is about 70 KB.
	YAML = Kind{Name: "a YAML input file", Max: 4 << 20}
	// Summary is summary.json: about 5 KB per variant and operation type (three embedded
	// histograms), 1.7 MB for black-friday; 64 MiB holds a 1000-variant sweep of it.
	Summary = Kind{Name: "a results summary", Max: 64 << 20}
	// Report is hotspots.json, analysis.json or gate.json: 0.7 MB for black-friday.
	Report = Kind{Name: "a results report", Max: 64 << 20}
	// Server is server.json: per node and metric, one point per sampled second; 11 MB
	// for black-friday's 10 minutes of 14 variants (1.3 KB per variant-second).
	Server = Kind{Name: "a server-side figures file", Max: 512 << 20}
	// Timeseries is timeseries.jsonl: one line of about 360 bytes per variant-second.
	Timeseries = Kind{Name: "a time series", Max: 1 << 30}
	// HistogramLog is one operation type's .hlog: three lines per second of at most a
	// few KB each (0.7 MB for black-friday's busiest operation over 10 minutes).
	HistogramLog = Kind{Name: "a histogram log", Max: 1 << 30}
	// PasswordFile holds a database password on its first line.
	PasswordFile = Kind{Name: "a password file", Max: 64 << 10}
)

// MaxLine is the longest line read from a line-oriented file (timeseries.jsonl, .hlog):
// an interval histogram line of the harness's geometry is at most about 60 KB.
const MaxLine = 1 << 20

// Error is a file that cannot be read as an input of its kind. It wraps the underlying
// error, if any (errors.Is(err, fs.ErrNotExist) works).
type Error struct {
	Path    string
	Problem string // what is wrong, without the file's contents
	Err     error
}

func (e *Error) Error() string { return e.Path + ": " + e.Problem }
func (e *Error) Unwrap() error { return e.Err }

// ErrTooLarge is wrapped by the error of a file over its kind's limit.
var ErrTooLarge = errors.New("file over its size limit")

// ErrNotRegular is wrapped by the error of a device, FIFO, socket or directory.
var ErrNotRegular = errors.New("not a regular file")

// File is an open input file. Reads stop with an error naming the limit once more than
// the kind's limit has been read (a file that grows while it is read, or one of /proc
// whose size is not known in advance).
type File struct {
	f    *os.File
	kind Kind
	path string
	left int64
}

// Open opens path as an input of kind k: a regular file no larger than k.Max.
func Open(path string, k Kind) (*File, error) {
	f, err := openNonBlocking(path)
	if err != nil {
		return nil, pathError(path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, pathError(path, err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, &Error{Path: path, Problem: "not a regular file (" + modeName(st.Mode()) + "); " + k.Name + " must be one", Err: ErrNotRegular}
	}
	if st.Size() > k.Max {
		f.Close()
		return nil, tooLarge(path, k, st.Size())
	}
	return &File{f: f, kind: k, path: path, left: k.Max + 1}, nil
}

// Read reads up to len(p) bytes, failing once the file has given more than its limit.
func (f *File) Read(p []byte) (int, error) {
	if f.left <= 0 {
		return 0, tooLarge(f.path, f.kind, -1)
	}
	if int64(len(p)) > f.left {
		p = p[:f.left]
	}
	n, err := f.f.Read(p)
	f.left -= int64(n)
	if f.left <= 0 {
		return n - 1, tooLarge(f.path, f.kind, -1)
	}
	return n, err
}

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// Path is the path the file was opened as.
func (f *File) Path() string { return f.path }

// ReadFile reads a whole input file of kind k.
func ReadFile(path string, k Kind) ([]byte, error) {
	f, err := Open(path, k)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.f.Stat()
	if err != nil {
		return nil, pathError(path, err)
	}
	b := make([]byte, 0, min(st.Size(), k.Max)+1)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// Lines calls fn with each line of an input file of kind k (without its newline), and
// the line number from 1. A line longer than MaxLine is an error naming the line. The
// last line is passed with complete false when the file does not end with a newline (a
// write cut short), so the caller can tell a torn line from a bad one.
func Lines(path string, k Kind, fn func(line []byte, n int, complete bool) error) error {
	f, err := Open(path, k)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	var long []byte
	n := 0
	for {
		chunk, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long, chunk...)
			if len(long) > MaxLine {
				return &Error{Path: path, Problem: fmt.Sprintf("line %d is longer than %s", n+1, units.Bytes(float64(MaxLine)))}
			}
			continue
		}
		line := chunk
		if long != nil {
			line = append(long, chunk...)
			long = nil
		}
		if len(line) > 0 {
			n++
			complete := line[len(line)-1] == '\n'
			if complete {
				line = line[:len(line)-1]
			}
			if len(line) > MaxLine {
				return &Error{Path: path, Problem: fmt.Sprintf("line %d is longer than %s", n, units.Bytes(float64(MaxLine)))}
			}
			if ferr := fn(line, n, complete); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func tooLarge(path string, k Kind, size int64) error {
	what := "more than " + units.Bytes(float64(k.Max))
	if size >= 0 {
		what = units.Bytes(float64(size))
	}
	return &Error{Path: path, Problem: fmt.Sprintf("%s is over the %s limit for %s", what, units.Bytes(float64(k.Max)), k.Name), Err: ErrTooLarge}
}

// pathError turns an *fs.PathError into an Error naming path once.
func pathError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	msg := err.Error()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		msg = "no such file"
	case errors.Is(err, fs.ErrPermission):
		msg = "permission denied"
	}
	return &Error{Path: path, Problem: msg, Err: err}
}

func modeName(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "not a plain file: " + m.Type().String()
}
