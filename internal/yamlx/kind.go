package yamlx

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// How errors name what they found without echoing a file: a file of another kind is
// named as such, values and keys are shown only when short.

// QuoteValue quotes a value from a file for an error message: short single-line text as
// itself (quoted, control characters escaped), anything longer by its size only, so an
// error never echoes a whole foreign file.
func QuoteValue(s string) string {
	const maxShown = 40
	switch {
	case strings.ContainsAny(s, "\n\r"):
		return fmt.Sprintf("a multi-line text of %d characters", utf8.RuneCountInString(s))
	case len(s) > maxShown:
		return fmt.Sprintf("a text of %d characters", utf8.RuneCountInString(s))
	}
	return strconv.Quote(s)
}

// foreign reports a top-level mapping of several keys none of which is a field: most
// likely another kind of file (a password file reads as a mapping of its lines), whose
// keys are not echoed one error each.
func foreign(pairs [][2]*yaml.Node, si *structInfo) bool {
	if len(pairs) < 3 || si.inlineM != nil {
		return false
	}
	for _, kv := range pairs {
		if _, ok := si.fields[kv[0].Value]; ok {
			return false
		}
	}
	return true
}

func foreignError(file string, n *yaml.Node, si *structInfo) Error {
	return Error{Pos: Pos{File: file, Line: n.Line, Col: n.Column},
		Msg: fmt.Sprintf("none of its %d top-level keys is a field of this kind of file (%s): not a file of this kind", len(n.Content)/2, strings.Join(si.names, ", "))}
}

// CheckKind reports, as Unmarshal would, a top-level mapping that is most likely not a
// file of v's kind (v a pointer to the struct the file decodes into): for files whose
// node tree is changed before it is decoded (a design's base).
func CheckKind(file string, root *yaml.Node, v any) error {
	si := getStructInfo(reflect.TypeOf(v).Elem())
	if root.Kind != yaml.MappingNode {
		return nil
	}
	d := &Decoder{file: file}
	if foreign(d.pairs(root, "", 0), si) {
		return Errors{foreignError(file, root, si)}
	}
	return nil
}

// shortKey is a key as an error shows it: at most 40 characters.
func shortKey(k string) string {
	if utf8.RuneCountInString(k) <= 40 {
		return k
	}
	return string([]rune(k)[:37]) + "..."
}
