package inputfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

var small = Kind{Name: "a test file", Max: 16}

func write(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadFileRegular(t *testing.T) {
	p := write(t, "a.yaml", "0123456789abcdef") // exactly the limit
	b, err := ReadFile(p, small)
	if err != nil || string(b) != "0123456789abcdef" {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
}

func TestReadFileTooLarge(t *testing.T) {
	p := write(t, "a.yaml", "0123456789abcdefX")
	_, err := ReadFile(p, small)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	for _, want := range []string{p + ": 17 B is over the 16 B limit for a test file"} {
		if err.Error() != want {
			t.Errorf("err = %q, want %q", err, want)
		}
	}
}

// A file whose size is not known in advance (as those of /proc) is cut at the limit.
func TestReadFileGrowsPastLimit(t *testing.T) {
	_, err := ReadFile("/proc/self/maps", Kind{Name: "maps", Max: 64})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	if !strings.Contains(err.Error(), "more than 64 B is over the 64 B limit for maps") {
		t.Errorf("err = %v", err)
	}
}

func TestRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "summary.json")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, kind string }{
		{"/dev/zero", "a character device"},
		{link, "a character device"},
		{fifo, "a named pipe"},
		{dir, "a directory"},
	} {
		done := make(chan error, 1)
		go func() { _, err := ReadFile(c.path, small); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, ErrNotRegular) {
				t.Errorf("%s: err = %v, want ErrNotRegular", c.path, err)
				continue
			}
			want := c.path + ": not a regular file (" + c.kind + "); a test file must be one"
			if err.Error() != want {
				t.Errorf("err = %q, want %q", err, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: ReadFile blocked", c.path)
		}
	}
}

func TestMissingFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "nope.yaml")
	_, err := ReadFile(p, small)
	if !errors.Is(err, fs.ErrNotExist) || err.Error() != p+": no such file" {
		t.Fatalf("err = %v", err)
	}
}

func TestLines(t *testing.T) {
	type line struct {
		text     string
		n        int
		complete bool
	}
	collect := func(p string, k Kind) ([]line, error) {
		var got []line
		err := Lines(p, k, func(b []byte, n int, complete bool) error {
			got = append(got, line{string(b), n, complete})
			return nil
		})
		return got, err
	}
	big := Kind{Name: "lines", Max: 1 << 30}
	got, err := collect(write(t, "ts", "a\nbb\n\nccc"), big)
	if err != nil {
		t.Fatal(err)
	}
	want := []line{{"a", 1, true}, {"bb", 2, true}, {"", 3, true}, {"ccc", 4, false}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d = %v, want %v", i, got[i], want[i])
		}
	}

	long := strings.Repeat("x", MaxLine+1)
	_, err = collect(write(t, "long", "ok\n"+long+"\n"), big)
	if err == nil || !strings.Contains(err.Error(), "line 2 is longer than 1 MiB") {
		t.Fatalf("long line: err = %v", err)
	}
	// A line just under the limit, longer than the reader's buffer, is read whole.
	okLong := strings.Repeat("y", MaxLine-1)
	got, err = collect(write(t, "oklong", okLong+"\nz\n"), big)
	if err != nil || len(got) != 2 || got[0].text != okLong || got[1].text != "z" {
		t.Fatalf("got %d lines, err %v", len(got), err)
	}
	if _, err := collect(write(t, "big", "0123456789\n0123456789\n"), small); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over the limit: err = %v", err)
	}
}
