package design

import (
	"fmt"
	"slices"
	"strings"

	"github.com/shardbench/shardbench/internal/yamlx"
	"github.com/shardbench/shardbench/workloads"
)

// stepFuncs are the compiled half of a Step: the functions a Compiled calls for each
// operation. A step compiled without a model (validation, inspection) has only when,
// view, parts and size.
type stepFuncs struct {
	// when says whether the step applies to an operation (the step's when:).
	when condition
	// view, if set, derives the view of the operation that every function below acts on
	// (the step's view:). Compiled.Accesses and the Access methods apply it, once per call.
	view opView
	// parts is the step's fan-out for an operation (nil: one partition); size its rows
	// and bytes, which sized says are the same for every operation (see constSize).
	parts partsFunc
	size  sizeFunc
	sized sizeConst
	// appendKey serialises the partition (shard) key; keyValues (MongoDB steps) does the
	// same and also appends the values it encodes, deriving each once; keyVals derive
	// the key's values one column (field) at a time.
	appendKey keyAppender
	keyValues keyValuesAppender
	keyVals   []valueFn
	// binds are a CQL statement's bind values in marker order; command a MongoDB request.
	binds   []bindFn
	command commandFunc
}

// sizeConst is the rows and bytes of a step whose size no operation changes (ok).
type sizeConst struct {
	ok          bool
	rows, bytes int32
}

// constSize makes the step's size rows and bytes for every operation: Accesses then
// takes them from its plan instead of calling size for every access of every variant
// (most steps read or write one row of a fixed size).
func (c *stepFuncs) constSize(rows, bytes int32) {
	c.size = func(*workloads.Op, int32) (int32, int32) { return rows, bytes }
	c.sized = sizeConst{ok: true, rows: rows, bytes: bytes}
}

// condition is a step's when: which operations it applies to. A value rather than a
// function: Compiled.Accesses tests it for every step of every operation.
type condition uint8

const (
	always condition = iota
	ifUser
	ifGuest
	ifCategory
	ifGlobal
)

// holds reports whether the condition applies to op.
func (c condition) holds(op *workloads.Op) bool {
	switch c {
	case ifUser:
		return op.User >= 0
	case ifGuest:
		return op.User < 0
	case ifCategory:
		return op.Category != workloads.NoCategory
	case ifGlobal:
		return op.Category == workloads.NoCategory
	}
	return true
}

// opView derives another view of an operation (a copy) for steps that act on it.
type opView func(op *workloads.Op) workloads.Op

// partsFunc is how many partitions a step's request reaches for an operation: the fan-out
// of a multi-partition read, 1 otherwise.
type partsFunc func(op *workloads.Op) int32

// sizeFunc estimates the rows and bytes one of a step's requests writes or reads, given
// how many partitions the operation's requests reach.
type sizeFunc func(op *workloads.Op, parts int32) (rows, bytes int32)

// keyAppender appends the serialised partition (shard) key of one partition (part) of a
// step's request to dst.
type keyAppender func(dst []byte, op *workloads.Op, part int32) []byte

// keyValuesAppender is a keyAppender that also appends the key's values to vals.
type keyValuesAppender func(dst []byte, vals []workloads.Value, op *workloads.Op, part int32) ([]byte, []workloads.Value)

// commandFunc builds a MongoDB step's request for an operation.
type commandFunc func(op *workloads.Op) *Command

// viewed is the operation the step's functions act on: op itself, or the step's view of
// it. Only steps with a view copy the operation.
func (f *stepFuncs) viewed(op *workloads.Op) *workloads.Op {
	if f.view == nil {
		return op
	}
	v := f.view(op)
	return &v
}

// resolve validates the design completely (schema and every operation) and keeps the
// static steps.
func (d *Design) resolve(_ *workloads.Model) yamlx.Errors {
	var errs yamlx.Errors
	d.resolveSchema(&errs)
	steps, e := d.compileAll(nil)
	d.static = steps
	return append(errs, e...)
}

// opCtx is the operation a step serves.
type opCtx struct {
	name string
	meta *workloads.Meta
	spec *workloads.OpSpec
	om   *OpMapping
	path string
}

// stepBuild is what a step builder (cqlBuilder, mongoBuilder) starts from.
type stepBuild struct {
	d     *Design
	op    *opCtx
	spec  *StepSpec        // the step as the design file gives it
	step  *Step            // the step being built
	model *workloads.Model // nil: validation and inspection only
	errs  *yamlx.Errors
}

// errAt reports an error at the step.
func (b *stepBuild) errAt(field, format string, args ...any) {
	b.errs.AddAt(b.spec.Loc, field, format, args...)
}

// compileAll compiles every mapped operation; m may be nil (validation only).
func (d *Design) compileAll(m *workloads.Model) (map[string][]*Step, yamlx.Errors) {
	var errs yamlx.Errors
	out := map[string][]*Step{}
	for i := range d.Operations {
		e := &d.Operations[i]
		path := "operations." + e.Key
		meta, _, spec := workloads.LookupOp(e.Key)
		if spec == nil {
			errs.Add(e.Pos, path, "unknown operation (known: %s)", strings.Join(workloads.OpNames(), ", "))
			continue
		}
		if _, ok := d.NotServed.Get(e.Key); ok {
			errs.Add(e.Pos, path, "is also listed under not_served")
		}
		om := &e.Value
		if len(om.Steps) == 0 {
			errs.Add(e.Pos, path, "needs at least one step")
			continue
		}
		batch := NoBatch
		switch om.Batch {
		case "":
		case "logged":
			batch = LoggedBatch
		case "unlogged":
			batch = UnloggedBatch
		default:
			errs.AddAt(om.Loc, "batch", "must be logged or unlogged, got %q", om.Batch)
		}
		ctx := &opCtx{name: e.Key, meta: meta, spec: spec, om: om, path: path}
		var steps []*Step
		writes := 0
		for j := range om.Steps {
			s := d.compileStep(ctx, &om.Steps[j], j, m, &errs)
			if s == nil {
				continue
			}
			if batch != NoBatch && s.Kind.IsWrite() {
				if s.Database != Cassandra {
					errs.AddAt(om.Steps[j].Loc, "", "batches are a Cassandra feature")
				}
				s.Batch, s.BatchGroup = batch, 1
				writes++
			}
			steps = append(steps, s)
		}
		if batch != NoBatch && writes < 2 {
			errs.AddAt(om.Loc, "batch", "a batch needs at least two write steps")
		}
		out[e.Key] = steps
	}
	for _, e := range d.NotServed {
		if _, _, spec := workloads.LookupOp(e.Key); spec == nil {
			errs.Add(e.Pos, "not_served."+e.Key, "unknown operation (known: %s)", strings.Join(workloads.OpNames(), ", "))
		}
		if strings.TrimSpace(e.Value) == "" {
			errs.Add(e.Pos, "not_served."+e.Key, "give the reason")
		}
	}
	return out, errs
}

func (d *Design) findTable(name string) *table {
	for _, t := range d.tables {
		if t.name == name {
			return t
		}
	}
	return nil
}

func (d *Design) findColl(name string) *collection {
	for _, c := range d.colls {
		if c.name == name {
			return c
		}
	}
	return nil
}

func (d *Design) targets() string {
	var names []string
	for _, t := range d.tables {
		names = append(names, t.name)
	}
	for _, c := range d.colls {
		names = append(names, c.name)
	}
	return strings.Join(names, ", ")
}

// available lists the logical fields a step of an operation knows with equality.
func available(spec *workloads.OpSpec, meta *workloads.Meta, verb string) map[string]bool {
	known := map[string]bool{}
	if spec.Action == workloads.Insert || verb == "insert" {
		// An insert creates the record: the application holds all of it.
		for _, f := range meta.Fields {
			known[f.Name] = true
		}
		return known
	}
	for _, f := range spec.Binds {
		known[f] = true
	}
	if verb != "read" {
		for _, f := range spec.Sets {
			known[f] = true
		}
	}
	return known
}

func (d *Design) compileStep(ctx *opCtx, spec *StepSpec, index int, m *workloads.Model, errs *yamlx.Errors) *Step {
	verb, target, n := "", "", 0
	for _, v := range []struct{ verb, target string }{{"read", spec.Read}, {"write", spec.Write}, {"insert", spec.Insert}, {"delete", spec.Delete}} {
		if v.target != "" {
			verb, target = v.verb, v.target
			n++
		}
	}
	if n != 1 {
		errs.AddAt(spec.Loc, "read", "a step names its target with exactly one of read, write, insert, delete")
		return nil
	}
	s := &Step{Op: ctx.name, Index: index, Verb: verb, Target: target, Entity: ctx.meta.Entity, Note: spec.Note, c: &stepFuncs{}}
	if verb != "read" && ctx.spec.Action.Kind() == workloads.Read {
		errs.AddAt(spec.Loc, verb, "%s reads; it cannot %s", ctx.name, verb)
		return nil
	}
	switch spec.When {
	case "":
	case "user":
		s.c.when = ifUser
	case "guest":
		s.c.when = ifGuest
	case "category":
		s.c.when = ifCategory
	case "global":
		s.c.when = ifGlobal
	default:
		errs.AddAt(spec.Loc, "when", "must be user, guest, category or global, got %q", spec.When)
	}
	if spec.View != "" {
		if v := ctx.spec.View(spec.View); v != nil {
			s.c.view = v.Of
		} else {
			errs.AddAt(spec.Loc, "view", "%s", viewError(spec.View))
		}
	}
	if spec.Limit < 0 {
		errs.AddAt(spec.Loc, "limit", "must not be negative")
	}
	s.Limit = spec.Limit
	if t := d.findTable(target); t != nil {
		if t.meta == nil {
			errs.AddAt(spec.Loc, verb, "table %s has no entity: the workload does not read or write it", target)
			return nil
		}
		if t.meta != ctx.meta {
			errs.AddAt(spec.Loc, verb, "table %s holds %s, but %s acts on %s", target, t.meta.Entity, ctx.name, ctx.meta.Entity)
			return nil
		}
		b := &cqlBuilder{stepBuild: stepBuild{d: d, op: ctx, spec: spec, step: s, model: m, errs: errs}, table: t}
		if !b.build() {
			return nil
		}
		return s
	}
	if c := d.findColl(target); c != nil {
		if c.meta != ctx.meta {
			errs.AddAt(spec.Loc, verb, "collection %s holds %s, but %s acts on %s", target, c.meta.Entity, ctx.name, ctx.meta.Entity)
			return nil
		}
		b := &mongoBuilder{stepBuild: stepBuild{d: d, op: ctx, spec: spec, step: s, model: m, errs: errs}, coll: c}
		if !b.build() {
			return nil
		}
		return s
	}
	errs.AddAt(spec.Loc, verb, "unknown table or collection %q (known: %s)", target, d.targets())
	return nil
}

// setsOf is the set of fields a write step changes: the operation's Sets, or the step's
// sets: restriction of them.
func setsOf(ctx *opCtx, spec *StepSpec, errs *yamlx.Errors) map[string]bool {
	sets := map[string]bool{}
	for _, f := range ctx.spec.Sets {
		sets[f] = true
	}
	if spec.Sets == nil {
		return sets
	}
	only := map[string]bool{}
	for _, f := range spec.Sets {
		if !sets[f] {
			errs.AddAt(spec.Loc, "sets", "%s does not change %q (it changes %s)", ctx.name, f, strings.Join(ctx.spec.Sets, ", "))
			continue
		}
		only[f] = true
	}
	return only
}

// firstNonEmpty is the first of list that is set: a step's setting, else its target's,
// else the database's default.
func firstNonEmpty(list ...string) string {
	for _, s := range list {
		if s != "" {
			return s
		}
	}
	return ""
}

// rangeValues gives the bounds of an operation's range over a field: [Ref, Until) for
// time fields, [the field's value, Aux] for others (a listing's price range).
func rangeValues(f *workloads.Field, m *workloads.Model) (valueFn, valueFn) {
	lo := fieldValue(f, m)
	var hi valueFn
	switch f.Type {
	case workloads.TTimestamp:
		hi = func(op *workloads.Op, _ int32, _ []byte) workloads.Value {
			return workloads.Value{Type: workloads.TTimestamp, Int: workloads.FloorDiv(op.Until, 1e6)}
		}
	case workloads.TDate:
		hi = func(op *workloads.Op, _ int32, _ []byte) workloads.Value {
			return workloads.Value{Type: workloads.TDate, Int: workloads.FloorDiv(op.Until, 86_400_000_000_000)}
		}
	default:
		typ := f.Type
		hi = func(op *workloads.Op, _ int32, _ []byte) workloads.Value {
			return workloads.Value{Type: typ, Int: op.Aux}
		}
	}
	return lo, hi
}

// fieldValue wraps a field getter.
func fieldValue(f *workloads.Field, m *workloads.Model) valueFn {
	g := f.Get(m)
	return func(op *workloads.Op, _ int32, buf []byte) workloads.Value { return g(op, buf) }
}

// withBuf gives a value the caller's buffer when its getter did not use it, so that a
// conversion to text appends there.
func withBuf(v workloads.Value, buf []byte) workloads.Value {
	if v.Bytes == nil {
		v.Bytes = buf[:0]
	}
	return v
}

// holdsPerKey reports whether a logical field holds another's value per key (PerKey), as
// a map (TIntMap) or documents (TDocs).
func holdsPerKey(f *workloads.Field, value string, typ workloads.Type) bool {
	return f != nil && f.Type == typ && f.PerKey != nil && f.PerKey.Value == value
}

// viewError says which operations offer the view a step names, or else which views there
// are.
func viewError(name string) string {
	var offers, names []string
	for _, m := range workloads.Registered() {
		for _, op := range m.Ops {
			for _, v := range op.Views {
				if v.Name == name {
					offers = append(offers, fmt.Sprintf("%s.%s (%s)", m.Name, op.Name, v.Doc))
				}
				if !slices.Contains(names, v.Name) {
					names = append(names, v.Name)
				}
			}
		}
	}
	if len(offers) > 0 {
		return fmt.Sprintf("view: %s applies to %s", name, strings.Join(offers, ", "))
	}
	if len(names) == 0 {
		return fmt.Sprintf("no operation has views, got %q", name)
	}
	slices.Sort(names)
	list := names[0]
	if n := len(names); n > 1 {
		list = strings.Join(names[:n-1], ", ") + " or " + names[n-1]
	}
	return fmt.Sprintf("must be %s, got %q", list, name)
}
