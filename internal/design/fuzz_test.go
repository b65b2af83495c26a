package design_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/inputfile"
	"github.com/shardbench/shardbench/internal/yamlx"
)

// FuzzLoad loads a design file and its base (base: base.yaml) from arbitrary bytes. Every
// outcome is a design or an error naming its file and line; none panics, hangs or
// expands without bound (the alias and substitution limits).
func FuzzLoad(f *testing.F) {
	for _, name := range []string{"seed000.yaml", "seed001-mongo.yaml"} {
		b, err := os.ReadFile(filepath.Join(designsDir, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, []byte(nil))
	}
	seed001, _ := os.ReadFile(filepath.Join(designsDir, "seed001-mongo.yaml"))
	f.Add([]byte("name: derived\nbase: base.yaml\nset: {orders.shard_key: {_id: hashed}}\n"), seed001)
	f.Add([]byte(tinyDesign), []byte(nil))
	f.Add([]byte("name: b\nparams:\n  a: &a [x, x, x]\n  b: &b [*a, *a, *a]\nnotes: [${b}, ${b}]\n"), []byte(nil))
	f.Add([]byte("name: d\nbase: base.yaml\n"), []byte("name: d2\nbase: base.yaml\n"))
	f.Fuzz(func(t *testing.T, data, base []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "design.yaml")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if base != nil {
			if err := os.WriteFile(filepath.Join(dir, "base.yaml"), base, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		start := time.Now()
		d, err := design.Load(path)
		if el := time.Since(start); el > 30*time.Second { // a hang, not a slow machine
			t.Fatalf("Load took %s", el)
		}
		if err != nil {
			var es yamlx.Errors
			var fe *inputfile.Error
			switch {
			case errors.As(err, &es):
				for _, e := range es {
					if e.Pos.File == "" || e.Pos.Line < 1 {
						t.Fatalf("an error without file and line: %q", e.Error())
					}
				}
			case errors.As(err, &fe):
			default:
				t.Fatalf("an error of type %T: %v", err, err)
			}
			return
		}
		if err := design.WriteSchema(io.Discard, d); err != nil {
			t.Fatalf("a loaded design must write its schema: %v", err)
		}
	})
}
