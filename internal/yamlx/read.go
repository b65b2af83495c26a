package yamlx

import (
	"fmt"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/shardbench/shardbench/internal/inputfile"
)

// Limits on one YAML document, checked by Parse before anything is decoded. A real file is
// far inside them: the shipped scenarios and designs have at most a few thousand nodes
// and nest at most 12 deep (a $jsonSchema validator).
const (
	// MaxNodes bounds the nodes of a document with every alias expanded, as decoding walks
	// it: a "billion laughs" file of nested aliases is an error, not an endless expansion.
	// It also bounds a design's parameter substitutions (package design).
	MaxNodes = 100_000
	// MaxDepth bounds how deeply mappings and lists nest.
	MaxDepth = 100
)

// ReadFile reads a YAML input file (scenario, design, calibration, gate rules) through
// the bounded reader: a regular file of at most inputfile.YAML.Max bytes.
func ReadFile(path string) ([]byte, error) {
	return inputfile.ReadFile(path, inputfile.YAML)
}

// checkText refuses what is not YAML text, at the line and column of its first bad byte:
// binary content, NUL and other control characters, invalid UTF-8. yaml.v3 reports these
// without a line.
func checkText(file string, data []byte) error {
	line, col := 1, 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		msg := ""
		switch {
		case r == utf8.RuneError && size <= 1:
			msg = fmt.Sprintf("invalid UTF-8 (byte 0x%02x): a YAML file is UTF-8 text", data[i])
		case r == 0:
			msg = "NUL byte: this is not a text file"
		case r == '\n':
			line, col = line+1, 1
			i += size
			continue
		case r == '\uFEFF' && i == 0: // a byte order mark
		case isControl(r) && r != '\t' && r != '\r':
			msg = fmt.Sprintf("control character %U: a YAML file is printable text", r)
		}
		if msg != "" {
			return Errors{{Pos: Pos{File: file, Line: line, Col: col}, Msg: msg}}
		}
		i += size
		col++
	}
	return nil
}

// isControl reports C0 and C1 control characters and DEL: what a terminal may read as
// the start of an escape sequence.
func isControl(r rune) bool {
	return r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f
}

// checkTree enforces MaxNodes and MaxDepth on a parsed document (with aliases counted as
// what they expand to) and refuses control characters in keys and values, which YAML's
// escapes ("\e[31m") could otherwise carry into names printed on a terminal.
func checkTree(file string, root *yaml.Node) error {
	m := measurer{memo: map[*yaml.Node]measure{}}
	total := m.measure(root)
	var errs Errors
	if total.nodes > MaxNodes {
		n := m.biggestAlias(root)
		if n == nil {
			n = root
		}
		what := "the document has"
		if n.Kind == yaml.AliasNode {
			what = fmt.Sprintf("alias *%s expands to %s nodes; the document has", n.Value, countText(m.memo[n].nodes))
		}
		errs.Add(Pos{File: file, Line: n.Line, Col: n.Column}, "",
			"%s more than %d nodes with its aliases expanded, the limit for one file", what, MaxNodes)
	}
	if total.depth > MaxDepth {
		n := m.deepest(root, MaxDepth+1)
		errs.Add(Pos{File: file, Line: n.Line, Col: n.Column}, "", "nested more than %d levels deep", MaxDepth)
	}
	if len(errs) > 0 {
		return errs
	}
	return checkControls(file, root, map[*yaml.Node]bool{})
}

func countText(n int) string {
	if n > MaxNodes {
		return fmt.Sprintf("over %d", MaxNodes)
	}
	return fmt.Sprint(n)
}

// CountNodes counts n's nodes with aliases expanded, as decoding walks them, stopping at
// limit+1.
func CountNodes(n *yaml.Node, limit int) int {
	if n == nil {
		return 0
	}
	if limit < 1 {
		return 1 // this node alone is over
	}
	c := 1
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		c += CountNodes(n.Alias, limit-c)
	}
	for _, ch := range n.Content {
		if c > limit {
			break
		}
		c += CountNodes(ch, limit-c)
	}
	return min(c, limit+1)
}

type measure struct{ nodes, depth int }

// measurer computes each node's expanded size and depth once (aliases share their
// anchor's figures), saturating above the limits so a bomb never overflows a count.
type measurer struct {
	memo     map[*yaml.Node]measure
	visiting map[*yaml.Node]bool
}

func (m *measurer) measure(n *yaml.Node) measure {
	if r, ok := m.memo[n]; ok {
		return r
	}
	if m.visiting == nil {
		m.visiting = map[*yaml.Node]bool{}
	}
	if m.visiting[n] { // an alias inside its own anchor (yaml.v3 refuses these; be safe)
		return measure{MaxNodes + 1, MaxDepth + 1}
	}
	m.visiting[n] = true
	r := measure{nodes: 1}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		a := m.measure(n.Alias)
		r = measure{nodes: min(1+a.nodes, MaxNodes+1), depth: a.depth}
	}
	for _, c := range n.Content {
		cm := m.measure(c)
		r.nodes = min(r.nodes+cm.nodes, MaxNodes+1)
		r.depth = max(r.depth, min(cm.depth+1, MaxDepth+1))
	}
	delete(m.visiting, n)
	m.memo[n] = r
	return r
}

// biggestAlias is the alias with the largest expansion (the first in the file among
// those over the limit), to point at.
func (m *measurer) biggestAlias(root *yaml.Node) *yaml.Node {
	var best *yaml.Node
	seen := map[*yaml.Node]bool{}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if seen[n] {
			return
		}
		seen[n] = true
		if n.Kind == yaml.AliasNode && (best == nil || m.memo[n].nodes > m.memo[best].nodes) {
			best = n
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(root)
	return best
}

// deepest follows the deepest branch down to the node at depth want (root = 0), or to
// the alias that leads there.
func (m *measurer) deepest(n *yaml.Node, want int) *yaml.Node {
	for d := 0; d < want; d++ {
		if n.Kind == yaml.AliasNode {
			return n
		}
		var next *yaml.Node
		for _, c := range n.Content {
			if next == nil || m.memo[c].depth > m.memo[next].depth {
				next = c
			}
		}
		if next == nil {
			return n
		}
		n = next
	}
	return n
}

func checkControls(file string, root *yaml.Node, seen map[*yaml.Node]bool) error {
	var errs Errors
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if seen[n] || len(errs) >= 20 {
			return
		}
		seen[n] = true
		if n.Kind == yaml.ScalarNode {
			for _, r := range n.Value {
				if isControl(r) && r != '\t' && r != '\n' {
					errs.Add(Pos{File: file, Line: n.Line, Col: n.Column}, "",
						"control character %U in a value: terminal escape sequences are refused", r)
					break
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(root)
	if len(errs) > 0 {
		return errs
	}
	return nil
}
