// Package yamlx decodes YAML strictly into Go structs and reports every problem at once,
// each naming file:line:column and the field path (e.g. "load.phases[2].rate").
//
// It exists because scenario and design files are written by hand, and a user fixing a
// file wants the whole list of mistakes in one pass, pointing at the right line, rather
// than the first error only (yaml.v3's strict mode stops at the first unknown field).
package yamlx

import (
	"fmt"
	"sort"
	"strings"
)

// Pos is a position in a source file. Line and Col are 1-based; zero means unknown.
type Pos struct {
	File string
	Line int
	Col  int
}

func (p Pos) String() string {
	switch {
	case p.Line == 0:
		return p.File
	case p.Col == 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	default:
		return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
	}
}

// Error is one problem in an input file.
type Error struct {
	Pos  Pos
	Path string // field path, e.g. "load.phases[2].rate"; empty for syntax errors
	Msg  string
}

func (e Error) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("%s: %s", e.Pos, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", e.Pos, e.Path, e.Msg)
}

// Errors collects problems; the zero value is ready to use.
type Errors []Error

// Add records a problem.
func (es *Errors) Add(pos Pos, path, format string, args ...any) {
	*es = append(*es, Error{Pos: pos, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// AddAt records a problem with a field of the mapping at loc.
func (es *Errors) AddAt(loc Loc, field, format string, args ...any) {
	pos, path := loc.At(field)
	es.Add(pos, path, format, args...)
}

// Append adds all of other's problems.
func (es *Errors) Append(other error) {
	if other == nil {
		return
	}
	var list Errors
	if asErrors(other, &list) {
		*es = append(*es, list...)
		return
	}
	*es = append(*es, Error{Msg: other.Error()})
}

func (es Errors) Len() int { return len(es) }

// maxShown is how many problems Error lists: a file with more is most likely not a file
// of its kind at all, and a page of its field names helps no one.
const maxShown = 50

func (es Errors) Error() string {
	n := min(len(es), maxShown)
	lines := make([]string, n, n+1)
	for i, e := range es[:n] {
		lines[i] = e.Error()
	}
	if len(es) > n {
		lines = append(lines, fmt.Sprintf("... and %d more problems", len(es)-n))
	}
	return strings.Join(lines, "\n")
}

// Err returns nil when there are no problems, else the problems sorted by file and line.
func (es Errors) Err() error {
	if len(es) == 0 {
		return nil
	}
	out := append(Errors(nil), es...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Pos, out[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	return out
}

func asErrors(err error, out *Errors) bool {
	switch e := err.(type) {
	case Errors:
		*out = e
		return true
	case Error:
		*out = Errors{e}
		return true
	case *Error:
		*out = Errors{*e}
		return true
	}
	return false
}

// Loc records where a mapping was found. The decoder fills every struct field of type Loc
// with the position and path of the mapping that struct was decoded from, so validation
// code written later can point at the exact line of a field.
type Loc struct {
	Pos  Pos
	Path string
	keys map[string]Pos // position of each key's value in this mapping
}

// NewLoc makes a Loc for code that builds values without decoding a file.
func NewLoc(pos Pos, path string) Loc { return Loc{Pos: pos, Path: path} }

// At returns the position of field's value (or of the mapping when the field was not in the
// file) and the field's path.
func (l Loc) At(field string) (Pos, string) {
	path := JoinPath(l.Path, field)
	if p, ok := l.keys[field]; ok {
		return p, path
	}
	return l.Pos, path
}

// Has reports whether field was written in the file (as opposed to left to its default).
func (l Loc) Has(field string) bool {
	_, ok := l.keys[field]
	return ok
}

// JoinPath joins a parent path and a field name or index ("[3]").
func JoinPath(parent, field string) string {
	switch {
	case parent == "":
		return field
	case field == "":
		return parent
	case strings.HasPrefix(field, "["):
		return parent + field
	default:
		return parent + "." + field
	}
}
