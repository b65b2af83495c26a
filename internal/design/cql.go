package design

import (
	"fmt"
	"strings"
)

// cqlType is a parsed CQL type.
type cqlType struct {
	Name   string // native name, "list", "set", "map", "tuple", "frozen" is folded into Frozen, or a UDT name
	Args   []*cqlType
	Frozen bool
	UDT    *udtInfo // when Name names a user-defined type
}

type udtInfo struct {
	Name   string
	Fields []udtField
}

type udtField struct {
	Name string
	Type *cqlType
}

var nativeTypes = map[string]bool{
	"ascii": true, "bigint": true, "blob": true, "boolean": true, "counter": true, "date": true,
	"decimal": true, "double": true, "duration": true, "float": true, "inet": true, "int": true,
	"smallint": true, "text": true, "time": true, "timestamp": true, "timeuuid": true,
	"tinyint": true, "uuid": true, "varchar": true, "varint": true,
}

func (t *cqlType) String() string {
	var s string
	switch {
	case len(t.Args) > 0:
		parts := make([]string, len(t.Args))
		for i, a := range t.Args {
			parts[i] = a.String()
		}
		s = t.Name + "<" + strings.Join(parts, ", ") + ">"
	default:
		s = t.Name
	}
	if t.Frozen {
		return "frozen<" + s + ">"
	}
	return s
}

func (t *cqlType) isCollection() bool { return t.Name == "list" || t.Name == "set" || t.Name == "map" }

// isText reports text-like types.
func (t *cqlType) isText() bool { return t.Name == "text" || t.Name == "varchar" || t.Name == "ascii" }

// parseCQLType parses a type such as "list<frozen<order_item>>" against the design's UDTs.
func parseCQLType(s string, udts map[string]*udtInfo) (*cqlType, error) {
	p := &typeParser{s: strings.ToLower(strings.TrimSpace(s)), udts: udts}
	t, err := p.parse()
	if err != nil {
		return nil, err
	}
	p.skip()
	if p.i != len(p.s) {
		return nil, fmt.Errorf("unexpected %q in type %q", p.s[p.i:], s)
	}
	return t, nil
}

type typeParser struct {
	s    string
	i    int
	udts map[string]*udtInfo
}

func (p *typeParser) skip() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *typeParser) ident() string {
	p.skip()
	start := p.i
	for p.i < len(p.s) && (p.s[p.i] == '_' || p.s[p.i] >= 'a' && p.s[p.i] <= 'z' || p.s[p.i] >= '0' && p.s[p.i] <= '9') {
		p.i++
	}
	return p.s[start:p.i]
}

func (p *typeParser) expect(c byte) error {
	p.skip()
	if p.i >= len(p.s) || p.s[p.i] != c {
		return fmt.Errorf("expected %q in type %q", c, p.s)
	}
	p.i++
	return nil
}

func (p *typeParser) args(n int) ([]*cqlType, error) {
	if err := p.expect('<'); err != nil {
		return nil, err
	}
	var out []*cqlType
	for {
		t, err := p.parse()
		if err != nil {
			return nil, err
		}
		out = append(out, t)
		p.skip()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		break
	}
	if err := p.expect('>'); err != nil {
		return nil, err
	}
	if n > 0 && len(out) != n {
		return nil, fmt.Errorf("type %q needs %d type arguments", p.s, n)
	}
	return out, nil
}

func (p *typeParser) parse() (*cqlType, error) {
	name := p.ident()
	switch {
	case name == "":
		return nil, fmt.Errorf("missing type name in %q", p.s)
	case name == "frozen":
		args, err := p.args(1)
		if err != nil {
			return nil, err
		}
		t := args[0]
		if nativeTypes[t.Name] {
			return nil, fmt.Errorf("frozen<%s>: only collections, tuples and user types can be frozen", t.Name)
		}
		t.Frozen = true
		return t, nil
	case name == "list" || name == "set":
		args, err := p.args(1)
		if err != nil {
			return nil, err
		}
		if args[0].needsFrozen() {
			return nil, fmt.Errorf("%s<%s>: a collection or user type inside a collection must be frozen", name, args[0])
		}
		return &cqlType{Name: name, Args: args}, nil
	case name == "map":
		args, err := p.args(2)
		if err != nil {
			return nil, err
		}
		for _, a := range args {
			if a.needsFrozen() {
				return nil, fmt.Errorf("map<...%s...>: nested collections and user types must be frozen", a)
			}
		}
		return &cqlType{Name: name, Args: args}, nil
	case name == "tuple":
		args, err := p.args(0)
		if err != nil {
			return nil, err
		}
		return &cqlType{Name: name, Args: args}, nil
	case nativeTypes[name]:
		return &cqlType{Name: name}, nil
	}
	if u, ok := p.udts[name]; ok {
		return &cqlType{Name: name, UDT: u}, nil
	}
	return nil, fmt.Errorf("unknown type %q (native types, list/set/map/tuple/frozen, or a type under cassandra.types)", name)
}

func (t *cqlType) needsFrozen() bool {
	return (t.isCollection() || t.UDT != nil) && !t.Frozen
}

// Cassandra 5.0 reserved keywords: identifiers that must be double-quoted.
var reserved = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`add allow alter and apply asc authorize batch begin by columnfamily create
		default delete desc describe drop entries execute from full grant if in index infinity insert into
		is keyspace limit materialized mbean mbeans modify nan norecursive not null of on or order primary
		rename replace revoke schema select set table to token truncate unlogged unset update use using
		view where with between`) {
		reserved[w] = true
	}
}

// quoteIdent returns an identifier as CQL needs it.
func quoteIdent(s string) string {
	plain := s != ""
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			plain = false
		}
	}
	if plain && !reserved[s] {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// validIdent reports whether s can name a CQL object without quotes.
func validIdent(s string) bool {
	if s == "" || len(s) > 48 {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// cqlString quotes a string literal.
func cqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// Consistency levels and what they are valid for.
var consistencyLevels = map[string]struct{ read, write, serial bool }{
	"ANY":          {false, true, false},
	"ONE":          {true, true, false},
	"TWO":          {true, true, false},
	"THREE":        {true, true, false},
	"QUORUM":       {true, true, false},
	"ALL":          {true, true, false},
	"LOCAL_QUORUM": {true, true, false},
	"EACH_QUORUM":  {true, true, false},
	"LOCAL_ONE":    {true, true, false},
	"SERIAL":       {true, false, true},
	"LOCAL_SERIAL": {true, false, true},
}
