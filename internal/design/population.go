package design

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/shardbench/shardbench/internal/yamlx"
	"github.com/shardbench/shardbench/workloads"
)

// PopulationSpec says which of its entity's pre-sale records a table or collection holds
// when the run starts: all of them (the default), none (a table the run fills, such as
// abandoned carts, or one another job maintains), or the Top most popular of each record
// set (a cache of popular products: Top per category).
type PopulationSpec struct {
	Loc  yamlx.Loc
	None bool  `yaml:"-"`
	Top  int64 `yaml:"top,omitempty"`
}

type populationFields PopulationSpec

// UnmarshalYAMLX accepts all, none, or {top: N}.
func (p *PopulationSpec) UnmarshalYAMLX(d *yamlx.Decoder, n *yaml.Node, path string) {
	p.Loc = yamlx.NewLoc(d.PosOf(n), path)
	if n.Kind == yaml.ScalarNode {
		switch n.Value {
		case "all":
		case "none":
			p.None = true
		default:
			d.Errorf(n, path, "must be all, none or {top: N}, got %q", n.Value)
		}
		return
	}
	d.Decode(n, path, (*populationFields)(p))
	if p.Top < 1 {
		d.Errorf(n, path, "top must be at least 1")
	}
}

// MarshalYAML writes the spec as it is read.
func (p PopulationSpec) MarshalYAML() (any, error) {
	switch {
	case p.None:
		return "none", nil
	case p.Top > 0:
		return map[string]int64{"top": p.Top}, nil
	}
	return "all", nil
}

// Loader writes whole pre-sale records of its entity into one table or collection: the
// design's insert of a record (every field of the entity known), for each row a record
// stands for there. The load step of the real backends executes Step; the simulator and
// plan size partitions and split chunks from its accesses.
type Loader struct {
	Target    string
	Namespace string
	Entity    string
	Database  Database
	// Step is the insert of one row: Statement INSERT (Step.CQL, Access.Bind) or insertOne
	// (Access.Mongo). It is not one of the plan's steps (Step.ID is beyond them), and its
	// Op is "population".
	Step *Step
	// Sets are the entity's record sets; Top > 0 keeps the first Top of each (a cache).
	Sets []workloads.RecordSet
	Top  int64
	// Expands names the expansions a record goes through here ("zone": a row per geo
	// zone), in order.
	Expands []string

	expand []workloads.Expansion
	keys   []func(*workloads.Op) ([16]byte, bool) // false: the record lacks that key field (null)
	sig    string
}

// Loaders lists a loader for every table and collection the plan's steps reach that holds
// pre-sale records (its entity has a population, and its population is not none), in the
// order the plan's steps first reach them.
func (p *Compiled) Loaders() ([]*Loader, error) {
	var out []*Loader
	seen := map[string]bool{}
	next := p.steps
	for ty := range p.Model.Ops {
		for _, s := range p.byType[ty] {
			if seen[s.Target] {
				continue
			}
			seen[s.Target] = true
			l, err := p.Design.loader(s.Target, p.Model, next)
			if err != nil {
				return nil, err
			}
			if l != nil {
				out = append(out, l)
				next++
			}
		}
	}
	return out, nil
}

// loader compiles target's loader, nil when it holds no pre-sale records.
func (d *Design) loader(target string, m *workloads.Model, id int) (*Loader, error) {
	var meta *workloads.Meta
	var spec *PopulationSpec
	var keyFields []*workloads.Field
	var def any
	if t := d.findTable(target); t != nil {
		meta, spec, def = t.meta, t.t.Population, t.t
		for _, c := range append(append([]*column(nil), t.pk...), t.ck...) {
			if c.field != nil && (c.kind == srcField || c.kind == srcBucket || c.kind == srcTimeBucket) {
				keyFields = append(keyFields, c.field)
			}
		}
	} else if co := d.findColl(target); co != nil {
		meta, spec, def = co.meta, co.c.Population, co.c
		for _, name := range append([]string{"_id"}, co.shardKey...) {
			if f := co.byName[name]; f != nil && f.kind == srcField && f.field != nil {
				keyFields = append(keyFields, f.field)
			}
		}
	} else {
		return nil, fmt.Errorf("design %s: no table or collection %q", d.Name, target)
	}
	if meta == nil || spec != nil && spec.None {
		return nil, nil
	}
	sets := m.Population(meta.Entity)
	if len(sets) == 0 {
		return nil, nil
	}
	ctx := &opCtx{name: "population", meta: meta, spec: &workloads.OpSpec{Name: "population", Action: workloads.Insert}, om: &OpMapping{}, path: "population"}
	var errs yamlx.Errors
	s := d.compileStep(ctx, &StepSpec{Insert: target}, 0, m, &errs)
	if err := errs.Err(); err != nil || s == nil {
		return nil, fmt.Errorf("design %s: %s cannot hold whole %s records: %v", d.Name, target, meta.Entity, err)
	}
	s.ID = id
	l := &Loader{Target: target, Namespace: s.Namespace, Entity: meta.Entity, Database: s.Database, Step: s, Sets: sets}
	if spec != nil {
		l.Top = spec.Top
	}
	// The expansions this target's key varies along.
	for _, e := range m.Expansions(meta.Entity) {
		for _, f := range keyFields {
			if strings.Contains(" "+strings.Join(e.Fields, " ")+" ", " "+f.Name+" ") {
				l.expand = append(l.expand, e)
				l.Expands = append(l.Expands, e.Name)
				break
			}
		}
	}
	// Only identities are ever null (a guest has no user_id); their accessors need no
	// buffer, so Rows is safe for concurrent use.
	for _, f := range keyFields {
		if f.UUID != nil {
			l.keys = append(l.keys, f.UUID(m))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %v ", meta.Entity, target, l.Expands)
	canonical(&b, reflect.ValueOf(def))
	sum := sha256.Sum256([]byte(b.String()))
	l.sig = hex.EncodeToString(sum[:])
	return l, nil
}

// Signature identifies what the loader writes: the entity, the target's definition and
// its expansions. Loaders with equal signatures (a table several variants define alike)
// write the same rows with the same keys and sizes.
func (l *Loader) Signature() string { return l.sig }

// Count is the candidates of set i the loader takes: Top of them for a cache.
func (l *Loader) Count(i int) int64 {
	n := l.Sets[i].Count
	if l.Top > 0 {
		n = min(n, l.Top)
	}
	return n
}

// Rows calls f with every row record op stands for in the target, each with the insert's
// access (Rows 1, Bytes the row's size): one row, or one per element of the expansions
// the target is keyed along. A record lacking a key field of the target (a guest's
// user_id, a product's reader session) is not written there, as the operations that
// create records skip such tables. f must not keep a or row. Safe for concurrent use.
func (l *Loader) Rows(op *workloads.Op, f func(a *Access, row *workloads.Op)) {
	if len(l.expand) == 0 {
		l.rows(0, op, nil, f)
		return
	}
	// One row per expansion level, reused for its elements: f sees each row only while
	// it is called, and a row allocated apart for every element (a product's five
	// zones, a cart's items) made most of the population's garbage.
	l.rows(0, op, make([]workloads.Op, len(l.expand)), f)
}

func (l *Loader) rows(i int, op *workloads.Op, buf []workloads.Op, f func(a *Access, row *workloads.Op)) {
	if i == len(l.expand) {
		for _, key := range l.keys {
			if _, ok := key(op); !ok {
				return
			}
		}
		a := Access{Step: l.Step, Part: 0, Parts: 1}
		a.Rows, a.Bytes = l.Step.c.size(op, 1)
		f(&a, op)
		return
	}
	e := &l.expand[i]
	n := e.Count(op)
	row := &buf[i]
	for k := 0; k < n; k++ {
		*row = *op
		e.Apply(row, k)
		l.rows(i+1, row, buf, f)
	}
}

// colSize is a column's typical size in model m (a field's size may follow a knob).
func colSize(c *column, m *workloads.Model) int32 {
	if c.kind == srcField && c.field != nil && c.field.Sized != nil {
		return c.field.SizeIn(m)
	}
	return c.size
}

// docSize is a document field's typical size in model m, with BSON's framing: a type
// byte, the field's name and its NUL.
func docSize(f *docField, m *workloads.Model) int32 {
	size := f.size
	if f.kind == srcField && f.field != nil && f.field.Sized != nil {
		size = f.field.SizeIn(m)
	}
	return size + int32(len(f.name)) + 2
}
