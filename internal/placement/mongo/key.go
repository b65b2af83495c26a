package mongo

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// KeyField is one field of a shard key pattern: ascending range (1) or "hashed".
type KeyField struct {
	Name   string
	Hashed bool
}

// KeyPattern is a shard key pattern, e.g. {category: 1, _id: "hashed"}.
type KeyPattern []KeyField

// ParseKeyPattern reads "{category: 1, _id: \"hashed\"}" (quotes and braces optional,
// "category:1,_id:hashed" works too). At most one field may be hashed; range fields
// must be ascending (shard keys do not allow -1).
func ParseKeyPattern(s string) (KeyPattern, error) {
	t := strings.TrimSpace(s)
	t = strings.TrimPrefix(t, "{")
	t = strings.TrimSuffix(t, "}")
	var p KeyPattern
	for _, part := range strings.Split(t, ",") {
		name, val, ok := strings.Cut(part, ":")
		name = strings.Trim(strings.TrimSpace(name), `"'`)
		val = strings.Trim(strings.TrimSpace(val), `"'`)
		if !ok || name == "" {
			return nil, fmt.Errorf("mongo: shard key %q: %q is not field: 1 or field: \"hashed\"", s, strings.TrimSpace(part))
		}
		switch val {
		case "1", "1.0":
			p = append(p, KeyField{Name: name})
		case "hashed":
			p = append(p, KeyField{Name: name, Hashed: true})
		default:
			return nil, fmt.Errorf("mongo: shard key %q: field %s: %q (want 1 or \"hashed\")", s, name, val)
		}
	}
	return p, p.Validate()
}

// Validate checks the pattern: fields present, unique, at most one hashed.
func (p KeyPattern) Validate() error {
	if len(p) == 0 {
		return errors.New("mongo: empty shard key")
	}
	hashed := 0
	seen := map[string]bool{}
	for _, f := range p {
		if f.Name == "" || seen[f.Name] {
			return fmt.Errorf("mongo: shard key field %q empty or repeated", f.Name)
		}
		seen[f.Name] = true
		if f.Hashed {
			hashed++
		}
	}
	if hashed > 1 {
		return errors.New("mongo: a shard key may have at most one hashed field")
	}
	return nil
}

// String is the pattern in shell syntax.
func (p KeyPattern) String() string {
	var b strings.Builder
	b.WriteString("{")
	for i, f := range p {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(f.Name + ": ")
		if f.Hashed {
			b.WriteString(`"hashed"`)
		} else {
			b.WriteString("1")
		}
	}
	b.WriteString("}")
	return b.String()
}

// HashedField is the index of the hashed field, or -1.
func (p KeyPattern) HashedField() int {
	for i, f := range p {
		if f.Hashed {
			return i
		}
	}
	return -1
}

// HashedPrefix reports a pattern whose first field is hashed (pre-splittable on an
// empty collection without zones).
func (p KeyPattern) HashedPrefix() bool { return len(p) > 0 && p[0].Hashed }

// Index is the position of a field, or -1.
func (p KeyPattern) Index(name string) int {
	for i, f := range p {
		if f.Name == name {
			return i
		}
	}
	return -1
}

// Key turns a document's shard key field values (in pattern order; a missing field is
// Null()) into the shard key as chunks are keyed: the hashed field replaced by
// NumberLong(Hash(value)). It appends to dst and returns it. (mongod rejects arrays in
// shard key fields; Key does not check.)
func (p KeyPattern) Key(dst []Value, fields []Value) []Value {
	for i := range p {
		if p[i].Hashed {
			dst = append(dst, Int64(Hash(&fields[i])))
		} else {
			dst = append(dst, fields[i])
		}
	}
	return dst
}

// globalMin and globalMax are the {f: MinKey, ...} and {f: MaxKey, ...} bounds.
func (p KeyPattern) globalMin() []Value {
	k := make([]Value, len(p))
	for i := range k {
		k[i] = MinKey()
	}
	return k
}

func (p KeyPattern) globalMax() []Value {
	k := make([]Value, len(p))
	for i := range k {
		k[i] = MaxKey()
	}
	return k
}

// FormatKey renders a shard key tuple as a document, e.g. {category: "books", _id: MinKey}.
func (p KeyPattern) FormatKey(k []Value) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range k {
		if i > 0 {
			b.WriteString(", ")
		}
		name := strconv.Itoa(i)
		if i < len(p) {
			name = p[i].Name
		}
		b.WriteString(name + ": ")
		k[i].format(&b)
	}
	b.WriteString("}")
	return b.String()
}
