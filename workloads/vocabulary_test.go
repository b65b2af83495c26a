package workloads_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/shardbench/shardbench/workloads"
)

var update = flag.Bool("update", false, "rewrite VOCABULARY.md")

// vocabulary renders the operations, logical fields and knobs of every workload.
func vocabulary() []byte {
	var b bytes.Buffer
	b.WriteString("# Logical operations and fields\n\n")
	b.WriteString("Generated from the workload registry by `go test ./workloads -run TestVocabulary -update`;\n")
	b.WriteString("a test fails when it is out of date. Design files map these field names to columns and\n")
	b.WriteString("document fields; scenarios name these operations in their mix and these knobs under\n")
	b.WriteString("`population.extra`.\n")
	for _, m := range workloads.Registered() {
		fmt.Fprintf(&b, "\n## %s (entity `%s`)\n\n%s.\n\n", m.Name, m.Entity, m.Description)
		b.WriteString("| operation | action | knows (equality) | changes | range | what |\n|---|---|---|---|---|---|\n")
		for _, o := range m.Ops {
			knows := strings.Join(o.Binds, ", ")
			if o.Action == workloads.Insert {
				knows = "every field"
			}
			fmt.Fprintf(&b, "| `%s.%s` | %s | %s | %s | %s | %s |\n", m.Name, o.Name, o.Action, knows, strings.Join(o.Sets, ", "), o.Range, o.Doc)
		}
		for _, o := range m.Ops {
			for _, v := range o.Views {
				fmt.Fprintf(&b, "\n`%s.%s` offers the view `%s` (a design step's `view:`): %s.\n", m.Name, o.Name, v.Name, v.Doc)
			}
		}
		if m.ItemKey != "" {
			fmt.Fprintf(&b, "\nThe items of a record's item list are told apart by `%s`: a table keyed by it keeps a row per item.\n", m.ItemKey)
		}
		b.WriteString("\n| field | type | value |\n|---|---|---|\n")
		for _, f := range m.Fields {
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", f.Name, f.Type, strings.ReplaceAll(f.Doc, "|", "\\|"))
		}
		if len(m.Knobs) > 0 {
			b.WriteString("\n| knob (`population.extra`) | default | range | what |\n|---|---|---|---|\n")
			for _, k := range m.Knobs {
				fmt.Fprintf(&b, "| `%s.%s` | %g | %g..%g | %s |\n", m.Name, k.Name, k.Default, k.Min, k.Max, k.Doc)
			}
		}
	}
	return b.Bytes()
}

func TestVocabularyDocIsCurrent(t *testing.T) {
	want := vocabulary()
	if *update {
		if err := os.WriteFile("VOCABULARY.md", want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("VOCABULARY.md")
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("VOCABULARY.md is out of date: go test ./workloads -run TestVocabulary -update (%v)", err)
	}
}
