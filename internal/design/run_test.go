package design_test

import (
	"testing"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/workloads"
)

// Every shipped design compiles against every operation, and every access of a few
// thousand operations yields keys, bind values or commands without panicking.
func TestEveryDesignServesTheStream(t *testing.T) {
	m := model(t, allOpsScenario(t, 3))
	for _, f := range designFiles(t) {
		t.Run(f, func(t *testing.T) {
			d := mustLoad(t, f)
			p, err := design.Compile(d, m)
			if err != nil {
				t.Fatal(err)
			}
			s := stream(m)
			var op workloads.Op
			var acc []design.Access
			var key []byte
			var args []any
			served := 0
			for i := 0; i < 5000 && s.Next(&op); i++ {
				acc = p.Accesses(&op, acc[:0])
				if ok, _ := p.Served(int(op.Type)); ok {
					served++
				}
				for j := range acc {
					a := &acc[j]
					key = a.AppendKey(key[:0], &op)
					if a.Step.Kind != design.Scan && len(key) == 0 && a.Step.Database == design.Cassandra {
						t.Fatalf("%s step %d: empty key", a.Step.Op, a.Step.Index)
					}
					if a.Rows < 0 || a.Bytes < 0 || a.Parts < 1 {
						t.Fatalf("%s: rows %d bytes %d parts %d", a.Step.Op, a.Rows, a.Bytes, a.Parts)
					}
					switch a.Step.Database {
					case design.Cassandra:
						args = a.Bind(&op, args[:0])
						if n := countMarks(a.Step.CQL); n != len(args) {
							t.Fatalf("%s: %d bind markers, %d values: %s", a.Step.Op, n, len(args), a.Step.CQL)
						}
					case design.MongoDB:
						if c := a.Mongo(&op); c == nil || c.Collection != a.Step.Target {
							t.Fatalf("%s: no command", a.Step.Op)
						}
					}
				}
			}
			if served == 0 {
				t.Fatal("the design served no operation")
			}
		})
	}
}

func countMarks(cql string) int {
	n := 0
	inStr := false
	for _, c := range cql {
		switch {
		case c == '\'':
			inStr = !inStr
		case c == '?' && !inStr:
			n++
		}
	}
	return n
}
