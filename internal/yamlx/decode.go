package yamlx

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/shardbench/shardbench/internal/textdist"
)

// maxNodes bounds the work of one decode: Parse has already refused a document that
// expands to more than MaxNodes, so this only guards Raw sections built by hand.
const maxNodes = MaxNodes

// Unmarshaler is implemented by types that decode themselves from a node. Problems are
// reported with d.Errorf so decoding continues and every problem is collected.
type Unmarshaler interface {
	UnmarshalYAMLX(d *Decoder, n *yaml.Node, path string)
}

// Raw keeps a section undecoded, with its file and path, so the package that owns the
// section can decode it strictly later with correct positions.
type Raw struct {
	Node *yaml.Node
	File string
	Path string
}

// IsZero reports whether the section was absent.
func (r Raw) IsZero() bool { return r.Node == nil }

// Pos is where the section starts.
func (r Raw) Pos() Pos {
	if r.Node == nil {
		return Pos{File: r.File}
	}
	return Pos{File: r.File, Line: r.Node.Line, Col: r.Node.Column}
}

// Decode decodes the section strictly into v.
func (r Raw) Decode(v any) error {
	if r.Node == nil {
		return nil
	}
	d := &Decoder{file: r.File}
	d.decode(r.Node, r.Path, reflect.ValueOf(v).Elem())
	return d.errs.Err()
}

// Decoder walks a node tree into Go values, collecting errors.
type Decoder struct {
	file  string
	errs  Errors
	nodes int
}

// File is the name of the file being decoded.
func (d *Decoder) File() string { return d.file }

// PosOf returns the position of a node.
func (d *Decoder) PosOf(n *yaml.Node) Pos { return Pos{File: d.file, Line: n.Line, Col: n.Column} }

// Errorf records a problem at node n.
func (d *Decoder) Errorf(n *yaml.Node, path, format string, args ...any) {
	d.errs.Add(d.PosOf(n), path, format, args...)
}

// Decode decodes n into v (a pointer), for Unmarshaler implementations that hold nested values.
func (d *Decoder) Decode(n *yaml.Node, path string, v any) {
	d.decode(n, path, reflect.ValueOf(v).Elem())
}

// Unmarshal decodes one YAML document strictly into v (a pointer to a struct). The error,
// when not nil, is an Errors listing every problem found.
func Unmarshal(file string, data []byte, v any) error {
	root, err := Parse(file, data)
	if err != nil {
		return err
	}
	d := &Decoder{file: file}
	rv := reflect.ValueOf(v).Elem()
	if rv.Kind() == reflect.Struct && root.Kind != yaml.MappingNode {
		// Most likely not a file of this kind at all: say so, without its contents.
		d.Errorf(root, "", "the top level is %s, not a mapping of fields: not a file of this kind", kindName(root))
		return d.errs.Err()
	}
	d.decode(root, "", rv)
	return d.errs.Err()
}

var lineInMsg = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// Parse parses exactly one YAML document and returns its root node (never a document
// node). It refuses, with file:line:column, what is not YAML text (binary content, NUL,
// control characters, invalid UTF-8), a document over MaxNodes with its aliases expanded
// or nested over MaxDepth, and control characters in values.
func Parse(file string, data []byte) (*yaml.Node, error) {
	if err := checkText(file, data); err != nil {
		return nil, err
	}
	root, err := parseOne(file, data)
	if err != nil {
		return nil, err
	}
	if err := checkTree(file, root); err != nil {
		return nil, err
	}
	return root, nil
}

func parseOne(file string, data []byte) (*yaml.Node, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, errEOF) || err.Error() == "EOF" {
			return nil, Errors{{Pos: Pos{File: file, Line: 1}, Msg: "empty document"}}
		}
		return nil, syntaxError(file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, Errors{{Pos: Pos{File: file, Line: extra.Line, Col: extra.Column}, Msg: "only one YAML document is allowed per file"}}
	}
	if doc.Kind == yaml.DocumentNode {
		if len(doc.Content) == 0 {
			return nil, Errors{{Pos: Pos{File: file, Line: 1}, Msg: "empty document"}}
		}
		return doc.Content[0], nil
	}
	return &doc, nil
}

var errEOF = errors.New("EOF")

// syntaxError gives a yaml.v3 parse error its file and line. yaml.v3 leaves the line out
// of messages about the first line (its marks count from 0 and it omits line 0).
func syntaxError(file string, err error) error {
	msg, line := strings.TrimPrefix(err.Error(), "yaml: "), 1
	if m := lineInMsg.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	if strings.HasPrefix(msg, "exceeded max depth") {
		return Errors{{Pos: Pos{File: file, Line: line}, Msg: fmt.Sprintf("nested more than %d levels deep", MaxDepth)}}
	}
	return Errors{{Pos: Pos{File: file, Line: line}, Msg: "YAML syntax: " + msg}}
}

var (
	locType      = reflect.TypeOf(Loc{})
	rawType      = reflect.TypeOf(Raw{})
	nodeType     = reflect.TypeOf(yaml.Node{})
	durationType = reflect.TypeOf(time.Duration(0))
	timeType     = reflect.TypeOf(time.Time{})
	unmarshalerT = reflect.TypeOf((*Unmarshaler)(nil)).Elem()
)

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return "null"
		case "!!bool":
			return "a boolean"
		case "!!int":
			return "an integer"
		case "!!float":
			return "a number"
		}
		return QuoteValue(n.Value)
	}
	return "a node"
}

func (d *Decoder) decode(n *yaml.Node, path string, v reflect.Value) {
	d.nodes++
	if d.nodes > maxNodes {
		if d.nodes == maxNodes+1 {
			d.Errorf(n, path, "document too large or too deeply aliased (over %d nodes)", maxNodes)
		}
		return
	}
	for n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			d.Errorf(n, path, "unknown alias")
			return
		}
		n = n.Alias
	}
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return
		}
		n = n.Content[0]
	}

	if v.CanAddr() && v.Addr().Type().Implements(unmarshalerT) {
		v.Addr().Interface().(Unmarshaler).UnmarshalYAMLX(d, n, path)
		return
	}

	switch v.Type() {
	case rawType:
		v.Set(reflect.ValueOf(Raw{Node: n, File: d.file, Path: path}))
		return
	case nodeType:
		v.Set(reflect.ValueOf(*n))
		return
	case durationType:
		d.decodeDuration(n, path, v)
		return
	case timeType:
		d.decodeTime(n, path, v)
		return
	}

	switch v.Kind() {
	case reflect.Pointer:
		if isNull(n) {
			v.Set(reflect.Zero(v.Type()))
			return
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		d.decode(n, path, v.Elem())
	case reflect.Struct:
		d.decodeStruct(n, path, v)
	case reflect.Map:
		d.decodeMap(n, path, v)
	case reflect.Slice:
		d.decodeSlice(n, path, v)
	case reflect.Interface:
		if v.NumMethod() != 0 {
			d.Errorf(n, path, "cannot decode into %s", v.Type())
			return
		}
		var out any
		if err := n.Decode(&out); err != nil {
			d.Errorf(n, path, "%v", strings.TrimPrefix(err.Error(), "yaml: "))
			return
		}
		if out != nil {
			v.Set(reflect.ValueOf(out))
		}
	default:
		d.decodeScalar(n, path, v)
	}
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

func (d *Decoder) decodeDuration(n *yaml.Node, path string, v reflect.Value) {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		d.Errorf(n, path, "expected a duration such as 30s or 5m, got %s", kindName(n))
		return
	}
	dur, err := ParseDuration(n.Value)
	if err != nil {
		d.Errorf(n, path, "%v", err)
		return
	}
	v.SetInt(int64(dur))
}

// ParseDuration accepts Go durations ("1m30s", "250ms") plus days ("7d", "1.5d"). A bare
// number is rejected: a duration without its unit is almost always a mistake.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "0" {
		return 0, nil
	}
	if strings.HasSuffix(s, "d") {
		days, err := strconv.ParseFloat(strings.TrimSuffix(s, "d"), 64)
		if err != nil || days < 0 || math.IsInf(days, 0) || days > 100000 {
			return 0, fmt.Errorf("invalid duration %s (use e.g. 30s, 5m, 2h, 7d)", QuoteValue(s))
		}
		return time.Duration(days * float64(24*time.Hour)), nil
	}
	dur, err := time.ParseDuration(s)
	if err != nil {
		if _, numErr := strconv.ParseFloat(s, 64); numErr == nil {
			return 0, fmt.Errorf("duration %q needs a unit (e.g. %ss)", s, s)
		}
		return 0, fmt.Errorf("invalid duration %s (use e.g. 30s, 5m, 2h, 7d)", QuoteValue(s))
	}
	return dur, nil
}

func (d *Decoder) decodeTime(n *yaml.Node, path string, v reflect.Value) {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		d.Errorf(n, path, "expected a time such as 2025-11-28T00:00:00+03:00, got %s", kindName(n))
		return
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, n.Value); err == nil {
			v.Set(reflect.ValueOf(t))
			return
		}
	}
	d.Errorf(n, path, "invalid time %s (use RFC 3339, e.g. 2025-11-28T00:00:00+03:00)", QuoteValue(n.Value))
}

func (d *Decoder) decodeScalar(n *yaml.Node, path string, v reflect.Value) {
	if n.Kind != yaml.ScalarNode {
		d.Errorf(n, path, "expected %s, got %s", scalarKindName(v.Kind()), kindName(n))
		return
	}
	tag := n.ShortTag()
	switch v.Kind() {
	case reflect.String:
		switch tag {
		case "!!str", "!!int", "!!float":
			v.SetString(n.Value)
		default:
			d.Errorf(n, path, "expected a string, got %s (quote it if you mean the text)", kindName(n))
		}
	case reflect.Bool:
		if tag != "!!bool" {
			d.Errorf(n, path, "expected true or false, got %s", kindName(n))
			return
		}
		b, _ := strconv.ParseBool(n.Value)
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, err := parseInt(n)
		if err != nil {
			d.Errorf(n, path, "%v", err)
			return
		}
		if v.OverflowInt(i) {
			d.Errorf(n, path, "%d is out of range", i)
			return
		}
		v.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		i, err := parseInt(n)
		if err != nil {
			d.Errorf(n, path, "%v", err)
			return
		}
		if i < 0 || v.OverflowUint(uint64(i)) {
			d.Errorf(n, path, "%d is out of range", i)
			return
		}
		v.SetUint(uint64(i))
	case reflect.Float32, reflect.Float64:
		if tag != "!!int" && tag != "!!float" {
			d.Errorf(n, path, "expected a number, got %s", kindName(n))
			return
		}
		f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			d.Errorf(n, path, "expected a finite number, got %s", QuoteValue(n.Value))
			return
		}
		v.SetFloat(f)
	default:
		d.Errorf(n, path, "cannot decode into %s", v.Type())
	}
}

func scalarKindName(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Float32, reflect.Float64:
		return "a number"
	default:
		return "an integer"
	}
}

// parseInt accepts integers, including 1_000_000 and integral floats such as 1e7.
func parseInt(n *yaml.Node) (int64, error) {
	s := strings.ReplaceAll(n.Value, "_", "")
	switch n.ShortTag() {
	case "!!int":
		i, err := strconv.ParseInt(s, 0, 64)
		if err != nil {
			return 0, fmt.Errorf("integer %s is out of range", QuoteValue(n.Value))
		}
		return i, nil
	case "!!float":
		f, err := strconv.ParseFloat(s, 64)
		if err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<62 {
			return int64(f), nil
		}
		return 0, fmt.Errorf("expected an integer, got %s", QuoteValue(n.Value))
	}
	return 0, fmt.Errorf("expected an integer, got %s", kindName(n))
}

type fieldInfo struct {
	name  string
	index []int
}

type structInfo struct {
	fields  map[string]fieldInfo
	names   []string // in declaration order, for suggestions
	locs    [][]int  // indexes of Loc fields
	inlineM []int    // index of an inline map catching unknown keys, if any
}

var structCache sync.Map // reflect.Type -> *structInfo

func getStructInfo(t reflect.Type) *structInfo {
	if si, ok := structCache.Load(t); ok {
		return si.(*structInfo)
	}
	si := &structInfo{fields: map[string]fieldInfo{}}
	collectFields(t, nil, si)
	structCache.Store(t, si)
	return si
}

func collectFields(t reflect.Type, prefix []int, si *structInfo) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		index := append(append([]int(nil), prefix...), i)
		if f.Type == locType {
			si.locs = append(si.locs, index)
			continue
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(opts, "inline") {
			switch f.Type.Kind() {
			case reflect.Struct:
				collectFields(f.Type, index, si)
			case reflect.Map:
				si.inlineM = index
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		si.fields[name] = fieldInfo{name: name, index: index}
		si.names = append(si.names, name)
	}
}

// pairs returns a mapping's key/value pairs with merge keys ("<<") expanded; explicit keys
// come after merged ones so they override them.
func (d *Decoder) pairs(n *yaml.Node, path string, depth int) [][2]*yaml.Node {
	var merged, own [][2]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Value == "<<" && k.ShortTag() == "!!merge" {
			if depth > 16 {
				d.Errorf(k, path, "merge keys nested too deeply")
				continue
			}
			for val.Kind == yaml.AliasNode && val.Alias != nil {
				val = val.Alias
			}
			switch val.Kind {
			case yaml.MappingNode:
				merged = append(merged, d.pairs(val, path, depth+1)...)
			case yaml.SequenceNode:
				for _, m := range val.Content {
					for m.Kind == yaml.AliasNode && m.Alias != nil {
						m = m.Alias
					}
					if m.Kind != yaml.MappingNode {
						d.Errorf(m, path, "merge key (<<) needs mappings")
						continue
					}
					merged = append(merged, d.pairs(m, path, depth+1)...)
				}
			default:
				d.Errorf(val, path, "merge key (<<) needs a mapping")
			}
			continue
		}
		own = append(own, [2]*yaml.Node{k, val})
	}
	return append(merged, own...)
}

func (d *Decoder) decodeStruct(n *yaml.Node, path string, v reflect.Value) {
	si := getStructInfo(v.Type())
	if isNull(n) || n.Kind != yaml.MappingNode {
		if !isNull(n) {
			d.Errorf(n, path, "expected a mapping, got %s", kindName(n))
		}
		// Validation still points at this section and names its fields.
		locateAbsent(v, d.PosOf(n), path)
		return
	}
	loc := Loc{Pos: d.PosOf(n), Path: path, keys: map[string]Pos{}}
	pairs := d.pairs(n, path, 0)
	nMerged := len(pairs) - countOwn(n)
	if path == "" && foreign(pairs, si) {
		d.errs = append(d.errs, foreignError(d.file, n, si))
		return
	}
	own := map[string]int{} // explicit key -> line of its first occurrence
	for i, kv := range pairs {
		k, val := kv[0], kv[1]
		if k.Kind != yaml.ScalarNode {
			d.Errorf(k, path, "mapping keys must be plain names")
			continue
		}
		key := k.Value
		fpath := JoinPath(path, key)
		if i >= nMerged {
			if line, dup := own[key]; dup {
				d.Errorf(k, fpath, "duplicate key (first at line %d)", line)
				continue
			}
			own[key] = k.Line
		}
		fi, ok := si.fields[key]
		if !ok {
			if si.inlineM != nil {
				m := v.FieldByIndex(si.inlineM)
				if m.IsNil() {
					m.Set(reflect.MakeMap(m.Type()))
				}
				elem := reflect.New(m.Type().Elem()).Elem()
				d.decode(val, fpath, elem)
				m.SetMapIndex(reflect.ValueOf(key).Convert(m.Type().Key()), elem)
				loc.keys[key] = d.PosOf(val)
				continue
			}
			d.Errorf(k, JoinPath(path, shortKey(key)), "unknown field%s", suggest(key, si.names))
			continue
		}
		loc.keys[key] = d.PosOf(val)
		d.decode(val, fpath, fieldByIndexAlloc(v, fi.index))
	}
	for _, idx := range si.locs {
		v.FieldByIndex(idx).Set(reflect.ValueOf(loc))
	}
	// Sections left out of the file get their parent's position and their own path, so
	// a check on a default ("bots.count") names its field and a line.
	for name, fi := range si.fields {
		if _, ok := loc.keys[name]; !ok {
			if f, ok := fieldIfAllocated(v, fi.index); ok {
				locateAbsent(f, loc.Pos, JoinPath(path, name))
			}
		}
	}
}

// locateAbsent sets the Loc of a struct not decoded from the file (and of the structs it
// holds by value) to pos and path, unless already set.
func locateAbsent(v reflect.Value, pos Pos, path string) {
	if v.Kind() != reflect.Struct || v.Type() == timeType || v.Type() == rawType || v.Type() == nodeType {
		return
	}
	si := getStructInfo(v.Type())
	if len(si.locs) == 0 {
		return
	}
	for _, idx := range si.locs {
		f := v.FieldByIndex(idx)
		if f.Interface().(Loc).Pos.File == "" {
			f.Set(reflect.ValueOf(Loc{Pos: pos, Path: path}))
		}
	}
	for name, fi := range si.fields {
		if f, ok := fieldIfAllocated(v, fi.index); ok {
			locateAbsent(f, pos, JoinPath(path, name))
		}
	}
}

// fieldIfAllocated is v.FieldByIndex without allocating embedded pointers.
func fieldIfAllocated(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

func countOwn(n *yaml.Node) int {
	c := 0
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if !(k.Kind == yaml.ScalarNode && k.Value == "<<" && k.ShortTag() == "!!merge") {
			c++
		}
	}
	return c
}

func fieldByIndexAlloc(v reflect.Value, index []int) reflect.Value {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v
}

func (d *Decoder) decodeMap(n *yaml.Node, path string, v reflect.Value) {
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.Errorf(n, path, "expected a mapping, got %s", kindName(n))
		return
	}
	if v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	pairs := d.pairs(n, path, 0)
	nMerged := len(pairs) - countOwn(n)
	own := map[string]int{}
	for i, kv := range pairs {
		k, val := kv[0], kv[1]
		if k.Kind != yaml.ScalarNode {
			d.Errorf(k, path, "mapping keys must be plain names")
			continue
		}
		fpath := JoinPath(path, k.Value)
		if i >= nMerged {
			if line, dup := own[k.Value]; dup {
				d.Errorf(k, fpath, "duplicate key (first at line %d)", line)
				continue
			}
			own[k.Value] = k.Line
		}
		key := reflect.New(v.Type().Key()).Elem()
		d.decode(k, fpath, key)
		elem := reflect.New(v.Type().Elem()).Elem()
		d.decode(val, fpath, elem)
		v.SetMapIndex(key, elem)
	}
}

func (d *Decoder) decodeSlice(n *yaml.Node, path string, v reflect.Value) {
	if isNull(n) {
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.Errorf(n, path, "expected a list, got %s", kindName(n))
		return
	}
	out := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		d.decode(item, fmt.Sprintf("%s[%d]", path, i), out.Index(i))
	}
	v.Set(out)
}

// suggest returns ` (did you mean "x"?)` for the closest known name, or "".
func suggest(key string, names []string) string {
	if best, ok := textdist.Closest(strings.ToLower(key), names); ok {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	if len(names) > 0 && len(names) <= 12 {
		return fmt.Sprintf(" (known fields: %s)", strings.Join(names, ", "))
	}
	return ""
}
