package design_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/scenario"
)

const tinyDesign = `name: tiny
params:
  buckets: 4
cassandra:
  keyspace: k
  replication: {class: SimpleStrategy, replication_factor: 1}
  tables:
    sessions: {entity: sessions, columns: {session_id: uuid}, partition_key: [session_id]}
operations:
  sessions.read: [{read: sessions}]
`

func writeDesign(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// An alias bomb in a design's params is refused when the file is parsed, at the alias,
// before any parameter is copied or written out (design.deepCopy, flowYAML).
func TestLoadRefusesAliasBombInParams(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: bomb\nparams:\n  l0: &l0 [x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 9; i++ {
		fmt.Fprintf(&b, "  l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 9), ", "))
	}
	p := writeDesign(t, "bomb.yaml", b.String())
	_, err := design.Load(p)
	want := p + ":9:12: alias *l5 expands to over 100000 nodes"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("err = %v\nwant %s...", err, want)
	}
}

// Each ${name} copies its parameter's value: many references to a large value are
// bounded like aliases.
func TestLoadBoundsSubstitutions(t *testing.T) {
	big := "[" + strings.TrimSuffix(strings.Repeat("x, ", 3000), ", ") + "]"
	var refs strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&refs, "  - ${big}\n")
	}
	text := strings.Replace(tinyDesign, "params:\n", "params:\n  big: "+big+"\n", 1) + "notes:\n" + refs.String()
	p := writeDesign(t, "subst.yaml", text)
	_, err := design.Load(p)
	if err == nil || !strings.Contains(err.Error(), "substituting ${big} here takes the design past 100000 nodes, the limit for one design") {
		t.Fatalf("err = %v", err)
	}
	if strings.Count(err.Error(), "substituting") != 1 {
		t.Errorf("the limit is reported once, at the reference that crosses it:\n%v", err)
	}
}

// A design that is not a regular file is refused without reading it (and a FIFO without
// blocking); a foreign file is named, its contents are not echoed.
func TestLoadRefusesNonFilesAndForeignFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	passwd := writeDesign(t, "passwd", "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n")
	shadow := writeDesign(t, "shadow", "root:*:20228:0:99999:7:::\ndaemon:*:20228:0:99999:7:::\nbin:*:20228:0:99999:7:::\n")
	for path, want := range map[string]string{
		"/dev/zero":    "/dev/zero: not a regular file (a character device); a YAML input file must be one",
		"/dev/urandom": "/dev/urandom: not a regular file (a character device); a YAML input file must be one",
		fifo:           fifo + ": not a regular file (a named pipe); a YAML input file must be one",
		passwd:         passwd + ":1:1: a design file is a mapping",
		shadow:         shadow + ":1:1: none of its 3 top-level keys is a field of this kind of file",
	} {
		done := make(chan error, 1)
		go func() { _, err := design.Load(path); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "root") {
				t.Errorf("%s:\n got %v\nwant %s", path, err, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: Load blocked", path)
		}
	}
	// The same through a base file.
	derived := writeDesign(t, "derived.yaml", "name: d\nbase: "+shadow+"\n")
	// base is joined to the derived file's directory: point at the shadow file relatively.
	rel, _ := filepath.Rel(filepath.Dir(derived), shadow)
	os.WriteFile(derived, []byte("name: d\nbase: "+rel+"\n"), 0o644)
	_, err := design.Load(derived)
	if err == nil || strings.Contains(err.Error(), "root") || !strings.Contains(err.Error(), "none of its 3 top-level keys") {
		t.Errorf("base: err = %v", err)
	}
}

// A sweep is counted before its combinations are built.
func TestExpandCountsSweepsFirst(t *testing.T) {
	p := writeDesign(t, "tiny.yaml", tinyDesign)
	values := "[" + strings.TrimSuffix(strings.Repeat("1, ", 100), ", ") + "]"
	src := fmt.Sprintf(`name: s
load: {phases: [{type: constant, rate: 1, duration: 1s}]}
mix: {sessions.read: 1}
designs:
  - design: %s
    sweep: {a: %s, b: %s, c: %s, d: %s, e: %s, f: %s}
`, p, values, values, values, values, values, values)
	sc, err := scenario.Parse("s.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	_, err = design.Expand(sc)
	if err == nil || !strings.Contains(err.Error(), "s.yaml:6:12: designs[0].sweep: more than 1000 combinations: at most 1000") {
		t.Fatalf("err = %v", err)
	}
}
