package design

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/shardbench/shardbench/internal/yamlx"
)

// TargetSignature is a digest of everything in the design that decides how the plan's
// steps on one table or collection key, size and route their accesses: the keyspace or
// database settings, the target's definition, and every operation mapping with a step on
// it (whole, with its steps on other targets). Where a design file wrote a value, its
// name, its comments and its base file do not count. Two plans compiled from one model
// whose targets have equal signatures access them alike, operation for operation, so a
// sweep whose variants differ in one collection need place the others once ("" when the
// design has no such target).
func (p *Compiled) TargetSignature(target string) string {
	t := p.sigText(target)
	if t == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(t))
	return hex.EncodeToString(sum[:])
}

// Signature is a digest of the whole design the plan runs, with the variant's parameter
// values: two plans with equal signatures send the same statements for the same stream.
// Where the file was read from, its positions and comments do not count.
func (p *Compiled) Signature() string {
	var b strings.Builder
	canonical(&b, reflect.ValueOf(p.Design.File))
	canonical(&b, reflect.ValueOf(p.Design.Params))
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

func (p *Compiled) sigText(target string) string {
	d := p.Design
	var b strings.Builder
	switch {
	case d.Cassandra != nil && hasEntry(d.Cassandra.Tables, target):
		spec := *d.Cassandra
		spec.Tables = only(spec.Tables, target)
		fmt.Fprint(&b, "cassandra:")
		canonical(&b, reflect.ValueOf(spec))
	case d.MongoDB != nil && hasEntry(d.MongoDB.Collections, target):
		spec := *d.MongoDB
		spec.Collections = only(spec.Collections, target)
		fmt.Fprint(&b, "mongodb:")
		canonical(&b, reflect.ValueOf(spec))
	default:
		return ""
	}
	for _, e := range d.Operations {
		if slices.ContainsFunc(e.Value.Steps, func(s StepSpec) bool {
			return s.Read == target || s.Write == target || s.Insert == target || s.Delete == target
		}) {
			fmt.Fprintf(&b, "\nop %q:", e.Key)
			canonical(&b, reflect.ValueOf(e.Value))
		}
	}
	return b.String()
}

func hasEntry[T any](o Ordered[T], key string) bool {
	_, ok := o.Get(key)
	return ok
}

func only[T any](o Ordered[T], key string) Ordered[T] {
	for _, e := range o {
		if e.Key == key {
			return Ordered[T]{e}
		}
	}
	return nil
}

var (
	locType  = reflect.TypeFor[yamlx.Loc]()
	posType  = reflect.TypeFor[yamlx.Pos]()
	rawType  = reflect.TypeFor[yamlx.Raw]()
	nodeType = reflect.TypeFor[yaml.Node]()
)

// canonical writes v's content: every exported field by name, in declaration order,
// except source positions (yamlx.Loc, yamlx.Pos, a node's line and column, a raw
// value's file) and comments, which say where a value was written, not what it is.
func canonical(b *strings.Builder, v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			b.WriteString("nil")
			return
		}
		canonical(b, v.Elem())
		return
	}
	switch v.Type() {
	case locType, posType:
		return
	case rawType:
		canonical(b, v.FieldByName("Node"))
		return
	case nodeType:
		n := v.Interface().(yaml.Node)
		fmt.Fprintf(b, "(%d %q %q %q [", n.Kind, n.ShortTag(), n.Value, n.Anchor)
		for _, c := range n.Content {
			canonical(b, reflect.ValueOf(c))
			b.WriteByte(' ')
		}
		b.WriteString("])")
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		b.WriteByte('{')
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() || f.Type == locType || f.Type == posType {
				continue
			}
			b.WriteString(f.Name)
			b.WriteByte(':')
			canonical(b, v.Field(i))
			b.WriteByte(' ')
		}
		b.WriteByte('}')
	case reflect.Slice, reflect.Array:
		b.WriteByte('[')
		for i := range v.Len() {
			canonical(b, v.Index(i))
			b.WriteByte(' ')
		}
		b.WriteByte(']')
	case reflect.Map:
		keys := v.MapKeys()
		slices.SortFunc(keys, func(x, y reflect.Value) int { return strings.Compare(fmt.Sprint(x), fmt.Sprint(y)) })
		b.WriteByte('<')
		for _, k := range keys {
			fmt.Fprintf(b, "%#v=", k.Interface())
			canonical(b, v.MapIndex(k))
			b.WriteByte(' ')
		}
		b.WriteByte('>')
	default:
		fmt.Fprintf(b, "%#v", v.Interface())
	}
}
