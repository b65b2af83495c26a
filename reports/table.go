package reports

import ()

// Tables of the page: cells, rows, headings (numeric columns right-aligned by their
// heading) and key-value tables.

type cell struct {
	Text, Class, Title string
	Swatch             bool
	Color              int
	Span               int    // columns the cell spans (0: one)
	Link               string // where the figure's evidence is (an anchor or a file)
}

type row struct {
	Cells  []cell
	Class  string
	Group  string // a group heading row instead of cells
	Swatch bool
	Color  int
}

type table struct {
	Caption string
	Class   string
	Head    []cell
	Rows    []row
}

// Cols is the column count (for group rows).
func (t *table) Cols() int { return len(t.Head) }

func heads(names ...string) []cell {
	out := make([]cell, len(names))
	for i, n := range names {
		out[i] = cell{Text: n}
		if i > 0 && isNumHead(n) {
			out[i].Class = "num"
		}
	}
	return out
}

// numHeads are the column headings whose cells are figures: right-aligned, tabular
// digits. One set for every table of the page, so a heading reads the same everywhere.
var numHeads = setOf("value", "threshold", "ops", "ops/s", "target/s", "achieved/s", "achieved", "p50", "p90", "p99", "p99.9", "p99.99", "max",
	"errors", "error rate", "late", "dropped", "scheduled", "completed", "serves", "share", "reads", "writes", "rows", "bytes",
	"bytes written", "rows written", "projected", "projected size", "projected rows", "deviation", "max/mean", "CV", "Gini",
	"start", "end", "duration", "expected ops", "count", "at", "service p50", "service p99", "service p99.9", "lag p99",
	"top 1%", "top 10%", "observed", "limit", "± bound", "partitions", "Δ", "change", "#")

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

func isNumHead(h string) bool { return numHeads[h] }

func kv(rows ...[2]string) *table {
	t := &table{Class: "kv"}
	for _, r := range rows {
		if r[1] == "" {
			continue
		}
		t.Rows = append(t.Rows, row{Cells: []cell{{Text: r[0]}, {Text: r[1], Class: "wrap"}}})
	}
	return t
}

func num(s string) cell { return cell{Text: s, Class: "num"} }
