package yamlx

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Text that is not YAML is refused at the line and column of its first bad byte.
func TestParseRefusesNonText(t *testing.T) {
	for name, c := range map[string]struct{ src, want string }{
		"nul":     {"name: a\nload:\n  arrival: uni\x00form\n", "f.yaml:3:15: NUL byte: this is not a text file"},
		"utf8":    {"name: a\ndescription: caf\xe9\n", "f.yaml:2:17: invalid UTF-8 (byte 0xe9): a YAML file is UTF-8 text"},
		"control": {"name: a\x1b[31m\n", "f.yaml:1:8: control character U+001B: a YAML file is printable text"},
		"binary":  {"\x7fELF\x02\x01\x01\x00", "f.yaml:1:1: control character U+007F: a YAML file is printable text"},
		"c1":      {"a: b\nc: \u009b31m\n", "f.yaml:2:4: control character U+009B: a YAML file is printable text"},
	} {
		_, err := Parse("f.yaml", []byte(c.src))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: err = %v, want %s", name, err, c.want)
		}
	}
	for _, ok := range []string{"\uFEFFname: a\n", "name: a\r\nb: c\r\n", "name: \"tab\there\"\n", "name: Москва\n"} {
		if _, err := Parse("f.yaml", []byte(ok)); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

// Escapes in double-quoted values must not carry terminal control sequences into names.
func TestParseRefusesControlCharactersInValues(t *testing.T) {
	_, err := Parse("f.yaml", []byte("a: 1\nname: \"x\\e[2Jy\"\nnote: \"line\\nbreak\\tand tab\"\n"))
	want := "f.yaml:2:7: control character U+001B in a value: terminal escape sequences are refused"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
	if _, err := Parse("f.yaml", []byte("note: \"line\\nbreak\\tand tab\"\n")); err != nil {
		t.Fatalf("newline and tab escapes are text: %v", err)
	}
}

func bomb(levels int) string {
	var b strings.Builder
	b.WriteString("params:\n  l0: &l0 [x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < levels; i++ {
		fmt.Fprintf(&b, "  l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 9), ", "))
	}
	return b.String()
}

func TestParseBoundsAliasExpansion(t *testing.T) {
	// 9^9 nodes expanded from 10 lines: refused at the first alias over the limit alone.
	_, err := Parse("bomb.yaml", []byte(bomb(9)))
	want := "bomb.yaml:8:12: alias *l5 expands to over 100000 nodes; the document has more than 100000 nodes with its aliases expanded, the limit for one file"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	// 9^5 = 59049 expanded nodes: within the limit.
	if _, err := Parse("ok.yaml", []byte(bomb(5))); err != nil {
		t.Fatalf("5 levels: %v", err)
	}
	// A file of plain nodes over the limit, without aliases.
	big := "l: [" + strings.Repeat("1, ", MaxNodes) + "1]\n"
	if _, err := Parse("big.yaml", []byte(big)); err == nil || !strings.Contains(err.Error(), "big.yaml:1:1: the document has more than 100000 nodes") {
		t.Fatalf("err = %v", err)
	}
}

func TestParseBoundsDepth(t *testing.T) {
	for name, src := range map[string]string{
		"lists":    "a: " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "\n",
		"mappings": "a: " + strings.Repeat("{b: ", 150) + "1" + strings.Repeat("}", 150) + "\n",
		"block":    blockNest(150),
	} {
		_, err := Parse("deep.yaml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), "nested more than 100 levels deep") || !strings.HasPrefix(err.Error(), "deep.yaml:") {
			t.Errorf("%s: err = %v", name, err)
			continue
		}
		var es Errors
		if e, ok := err.(Errors); ok {
			es = e
		}
		if len(es) != 1 || es[0].Pos.Line == 0 {
			t.Errorf("%s: no line in %v", name, err)
		}
	}
	if _, err := Parse("ok.yaml", []byte(blockNest(90))); err != nil {
		t.Fatalf("90 levels: %v", err)
	}
}

func blockNest(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%sk%d:\n", strings.Repeat(" ", i), i)
	}
	fmt.Fprintf(&b, "%sleaf: 1\n", strings.Repeat(" ", n))
	return b.String()
}

// A file that is not a mapping (a password file, a binary read as text) is named as not
// a file of this kind; its contents are not echoed.
func TestUnmarshalForeignFile(t *testing.T) {
	passwd := "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
	var d doc
	err := Unmarshal("/etc/passwd", []byte(passwd), &d)
	if err == nil || strings.Contains(err.Error(), "root") || strings.Contains(err.Error(), "nologin") {
		t.Fatalf("err = %v", err)
	}
	want := "/etc/passwd:1:1: the top level is a text of 79 characters, not a mapping of fields: not a file of this kind"
	if err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
}

func TestQuoteValue(t *testing.T) {
	for in, want := range map[string]string{
		"fast":                  "\"fast\"",
		"x\ty":                  "\"x\\ty\"",
		strings.Repeat("a", 41): "a text of 41 characters",
		"a\nb":                  "a multi-line text of 3 characters",
	} {
		if got := QuoteValue(in); got != want {
			t.Errorf("QuoteValue(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestReadFileBounded(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.yaml")
	if err := os.Symlink("/dev/zero", p); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(p)
	if err == nil || err.Error() != p+": not a regular file (a character device); a YAML input file must be one" {
		t.Fatalf("err = %v", err)
	}
}

func TestErrorsListAtMostFifty(t *testing.T) {
	var es Errors
	for i := 0; i < 60; i++ {
		es.Add(Pos{File: "f.yaml", Line: i + 1}, "x", "bad")
	}
	lines := strings.Split(es.Error(), "\n")
	if len(lines) != 51 || lines[50] != "... and 10 more problems" || lines[49] != "f.yaml:50: x: bad" {
		t.Fatalf("%d lines, last %q", len(lines), lines[len(lines)-1])
	}
}

func TestCountNodes(t *testing.T) {
	root, err := parseOne("b.yaml", []byte(bomb(4)))
	if err != nil {
		t.Fatal(err)
	}
	// params mapping: key + value per level; l3 expands to 1+9*(1+9*(1+9*10)) nodes.
	l3 := root.Content[1].Content[7]
	if got := CountNodes(l3, 1<<30); got != 1+9*(1+(1+9*(1+(1+9*(1+10))))) {
		t.Errorf("CountNodes(l3) = %d", got)
	}
	for _, limit := range []int{0, 1, 5, 100} {
		if got := CountNodes(l3, limit); got != limit+1 {
			t.Errorf("CountNodes(l3, %d) = %d, want %d", limit, got, limit+1)
		}
	}
}

// A mapping none of whose keys is a field (a shadow file: each line ends with ':') is not
// echoed key by key.
func TestUnmarshalForeignMapping(t *testing.T) {
	shadow := "root:*:20228:0:99999:7:::\ndaemon:*:20228:0:99999:7:::\nbin:*:20228:0:99999:7:::\n"
	var d doc
	err := Unmarshal("/etc/shadow", []byte(shadow), &d)
	want := "/etc/shadow:1:1: none of its 3 top-level keys is a field of this kind of file (name, seed, count, on, phases, tags, ptr, later, start): not a file of this kind"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	long := strings.Repeat("k", 100)
	err = Unmarshal("f.yaml", []byte("name: x\n"+long+": 1\n"), &d)
	if err == nil || err.Error() != "f.yaml:2:1: "+strings.Repeat("k", 37)+"...: unknown field (known fields: name, seed, count, on, phases, tags, ptr, later, start)" {
		t.Fatalf("err = %v", err)
	}
}
