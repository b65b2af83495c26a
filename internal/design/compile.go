package design

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	placement "github.com/shardbench/shardbench/internal/placement/cassandra"
	"github.com/shardbench/shardbench/internal/yamlx"
	"github.com/shardbench/shardbench/workloads"
	"github.com/shardbench/shardbench/workloads/carts"
)

// compiled holds a step's functions. With a nil model only the static parts exist.
type compiled struct {
	when      func(*workloads.Op) bool
	view      func(*workloads.Op) workloads.Op
	parts     func(*workloads.Op) int32
	size      func(*workloads.Op, int32) (int32, int32)
	appendKey func(dst []byte, op *workloads.Op, part int32) []byte
	// keyValues (MongoDB steps) is appendKey that also appends the values it encodes.
	keyValues func(dst []byte, vals []workloads.Value, op *workloads.Op, part int32) ([]byte, []workloads.Value)
	keyVals   []valueFn
	binds     []bindFn
	mongo     func(*workloads.Op) *Command
}

// applyView makes every function of a step that acts on another view of the operation
// (the guest cart of a merge) derive that view first. Only such steps copy the operation.
func (c *compiled) applyView() {
	view := c.view
	if view == nil {
		return
	}
	if f := c.parts; f != nil {
		c.parts = func(op *workloads.Op) int32 { v := view(op); return f(&v) }
	}
	if f := c.size; f != nil {
		c.size = func(op *workloads.Op, p int32) (int32, int32) { v := view(op); return f(&v, p) }
	}
	if f := c.appendKey; f != nil {
		c.appendKey = func(dst []byte, op *workloads.Op, p int32) []byte { v := view(op); return f(dst, &v, p) }
	}
	if f := c.keyValues; f != nil {
		c.keyValues = func(dst []byte, vals []workloads.Value, op *workloads.Op, p int32) ([]byte, []workloads.Value) {
			v := view(op)
			return f(dst, vals, &v, p)
		}
	}
	for i, f := range c.keyVals {
		c.keyVals[i] = func(op *workloads.Op, p int32, buf []byte) workloads.Value { v := view(op); return f(&v, p, buf) }
	}
	for i, f := range c.binds {
		c.binds[i] = func(op *workloads.Op, p int32) any { v := view(op); return f(&v, p) }
	}
	if f := c.mongo; f != nil {
		c.mongo = func(op *workloads.Op) *Command { v := view(op); return f(&v) }
	}
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

type opCtx struct {
	name string
	meta *workloads.Meta
	spec *workloads.OpSpec
	om   *OpMapping
	path string
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
			s.c.applyView()
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

// availability: which logical fields a step can use with equality.
func available(spec *workloads.OpSpec, meta *workloads.Meta, verb string) map[string]bool {
	av := map[string]bool{}
	if spec.Action == workloads.Insert || verb == "insert" {
		// An insert creates the record: the application holds all of it.
		for _, f := range meta.Fields {
			av[f.Name] = true
		}
		return av
	}
	for _, f := range spec.Binds {
		av[f] = true
	}
	if verb != "read" {
		for _, f := range spec.Sets {
			av[f] = true
		}
	}
	return av
}

func (d *Design) compileStep(ctx *opCtx, ss *StepSpec, index int, m *workloads.Model, errs *yamlx.Errors) *Step {
	verb, target, n := "", "", 0
	for _, v := range []struct{ verb, target string }{{"read", ss.Read}, {"write", ss.Write}, {"insert", ss.Insert}, {"delete", ss.Delete}} {
		if v.target != "" {
			verb, target = v.verb, v.target
			n++
		}
	}
	if n != 1 {
		errs.AddAt(ss.Loc, "read", "a step names its target with exactly one of read, write, insert, delete")
		return nil
	}
	s := &Step{Op: ctx.name, Index: index, Verb: verb, Target: target, Entity: ctx.meta.Entity, Note: ss.Note, c: &compiled{}}
	if verb != "read" && ctx.spec.Action.Kind() == workloads.Read {
		errs.AddAt(ss.Loc, verb, "%s reads; it cannot %s", ctx.name, verb)
		return nil
	}
	switch ss.When {
	case "":
	case "user":
		s.c.when = func(op *workloads.Op) bool { return op.User >= 0 }
	case "guest":
		s.c.when = func(op *workloads.Op) bool { return op.User < 0 }
	case "category":
		s.c.when = func(op *workloads.Op) bool { return op.Category != workloads.NoCategory }
	case "global":
		s.c.when = func(op *workloads.Op) bool { return op.Category == workloads.NoCategory }
	default:
		errs.AddAt(ss.Loc, "when", "must be user, guest, category or global, got %q", ss.When)
	}
	switch ss.View {
	case "":
	case "guest":
		if ctx.name != "carts.merge" {
			errs.AddAt(ss.Loc, "view", "view: guest applies to carts.merge (the guest cart merged into the user's)")
		}
		s.c.view = carts.Guest
	default:
		errs.AddAt(ss.Loc, "view", "must be guest, got %q", ss.View)
	}
	if ss.Limit < 0 {
		errs.AddAt(ss.Loc, "limit", "must not be negative")
	}
	s.Limit = ss.Limit
	if t := d.findTable(target); t != nil {
		if t.meta == nil {
			errs.AddAt(ss.Loc, verb, "table %s has no entity: the workload does not read or write it", target)
			return nil
		}
		if t.meta != ctx.meta {
			errs.AddAt(ss.Loc, verb, "table %s holds %s, but %s acts on %s", target, t.meta.Entity, ctx.name, ctx.meta.Entity)
			return nil
		}
		if !d.cassandraStep(ctx, ss, s, t, m, errs) {
			return nil
		}
		return s
	}
	if c := d.findColl(target); c != nil {
		if c.meta != ctx.meta {
			errs.AddAt(ss.Loc, verb, "collection %s holds %s, but %s acts on %s", target, c.meta.Entity, ctx.name, ctx.meta.Entity)
			return nil
		}
		if !d.mongoStep(ctx, ss, s, c, m, errs) {
			return nil
		}
		return s
	}
	errs.AddAt(ss.Loc, verb, "unknown table or collection %q (known: %s)", target, d.targets())
	return nil
}

// ---------------------------------------------------------------- Cassandra

type mode uint8

const (
	modeNone mode = iota
	modeEq
	modeFanHash
	modeFanTime
	modeRange
)

type colUse struct {
	col    *column
	mode   mode
	over   *yaml.Node // a constant from the step's values
	stride int32      // fan-out stride
}

func (d *Design) cassandraStep(ctx *opCtx, ss *StepSpec, s *Step, t *table, m *workloads.Model, errs *yamlx.Errors) bool {
	cs := d.Cassandra
	s.Database, s.Namespace = Cassandra, cs.Keyspace
	for _, c := range t.pk {
		s.KeyColumns = append(s.KeyColumns, c.name)
	}
	if ss.ReadPreference != nil || ss.WriteConcern != nil || ss.ReadConcern != "" || len(ss.Filter) > 0 {
		errs.AddAt(ss.Loc, "read_preference", "read_preference, write_concern, read_concern and filter apply to MongoDB steps; %s is a Cassandra table", t.name)
	}
	if ss.Mode != "" && ss.Mode != "append" && ss.Mode != "rewrite" {
		errs.AddAt(ss.Loc, "mode", "must be append or rewrite, got %q", ss.Mode)
	}
	av := available(ctx.spec, ctx.meta, s.Verb)
	rangeField := ""
	if s.Verb == "read" {
		rangeField = ctx.spec.Range
	}
	uses := map[string]*colUse{}
	for _, e := range ss.Values {
		col, ok := t.byName[e.Key]
		if !ok {
			errs.Add(e.Pos, "values."+e.Key, "unknown column of %s (columns: %s)", t.name, strings.Join(t.t.Column.Keys(), ", "))
			continue
		}
		node := e.Value
		uses[e.Key] = &colUse{col: col, mode: modeEq, over: &node}
	}
	for _, e := range ss.Match {
		col, ok := t.byName[e.Key]
		switch {
		case !ok:
			errs.Add(e.Pos, "match."+e.Key, "unknown column of %s (columns: %s)", t.name, strings.Join(t.t.Column.Keys(), ", "))
			continue
		case !col.pk && !col.ck:
			errs.Add(e.Pos, "match."+e.Key, "%s is not a key column of %s: match gives key values (use values: for written columns)", e.Key, t.name)
			continue
		}
		node := e.Value
		uses[e.Key] = &colUse{col: col, mode: modeEq, over: &node}
	}
	for _, col := range t.cols {
		if _, ok := uses[col.name]; ok {
			continue
		}
		u := &colUse{col: col}
		switch col.kind {
		case srcConst:
			u.mode = modeEq
		case srcField:
			switch {
			case col.field != nil && av[col.field.Name]:
				u.mode = modeEq
			case col.field != nil && col.field.Name == rangeField && rangeField != "":
				u.mode = modeRange
			}
		case srcBucket:
			switch {
			case col.field != nil && av[col.field.Name]:
				u.mode = modeEq
			case s.Verb == "read":
				u.mode = modeFanHash
			}
		case srcTimeBucket:
			switch {
			case col.field != nil && av[col.field.Name]:
				u.mode = modeEq
			case s.Verb == "read" && col.field != nil && col.field.Name == rangeField && rangeField != "":
				u.mode = modeFanTime
			}
		case srcUDT:
			u.mode = modeEq
			for _, uf := range col.typ.UDT.Fields {
				if !av[uf.Name] {
					u.mode = modeNone
				}
			}
		}
		uses[col.name] = u
	}
	needs := func(u *colUse) string {
		c := u.col
		switch c.kind {
		case srcBucket, srcTimeBucket:
			return fmt.Sprintf("column %s derives from %s", c.name, c.field.Name)
		case srcField:
			return fmt.Sprintf("column %s holds %s", c.name, c.field.Name)
		}
		return "column " + c.name
	}
	knows := func() string {
		if ctx.spec.Action == workloads.Insert {
			return "every field"
		}
		list := append([]string(nil), ctx.spec.Binds...)
		if s.Verb != "read" {
			list = append(list, ctx.spec.Sets...)
		}
		if rangeField != "" {
			list = append(list, rangeField+" (a range)")
		}
		if len(list) == 0 {
			return "no field with equality"
		}
		return strings.Join(list, ", ")
	}

	// Partition key.
	scan := false
	var hashFans []*colUse
	var timeFan *colUse
	for _, c := range t.pk {
		u := uses[c.name]
		switch u.mode {
		case modeEq:
		case modeFanHash:
			hashFans = append(hashFans, u)
		case modeFanTime:
			if timeFan != nil {
				errs.AddAt(ss.Loc, s.Verb, "%s: two time-bucket columns cannot both fan out", t.name)
			}
			timeFan = u
		default:
			if s.Verb == "read" && ss.Scan {
				scan = true
				continue
			}
			hint := ""
			if s.Verb == "read" {
				hint = "; scan: true reads every partition (ALLOW FILTERING)"
			}
			errs.AddAt(ss.Loc, s.Verb, "%s cannot serve %s: partition key %s, but %s knows %s%s", t.name, ctx.name, needs(u), ctx.name, knows(), hint)
			return false
		}
	}
	if ss.Scan && !scan {
		if s.Verb != "read" {
			errs.AddAt(ss.Loc, "scan", "only reads scan")
		}
	}
	if !scan && len(hashFans) > 0 && timeFan == nil && len(hashFans) == len(t.pk) {
		// Every partition key column is a bucket the operation cannot compute: reading
		// all buckets would read the whole table.
		errs.AddAt(ss.Loc, s.Verb, "%s cannot serve %s: partition key %s, but %s knows %s; reading every bucket reads the whole table (scan: true says so)", t.name, ctx.name, needs(uses[t.pk[0].name]), ctx.name, knows())
		return false
	}
	if scan {
		hashFans, timeFan = nil, nil
	}
	stride := int32(1)
	for _, u := range hashFans {
		u.stride = stride
		stride *= int32(max(1, u.col.bucket.Count))
	}
	if timeFan != nil {
		timeFan.stride = stride
	}
	hashParts := stride

	// Consistency.
	def := func(read bool) string {
		pick := func(cd ConsistencyDefault) string {
			if read {
				return cd.Read
			}
			return cd.Write
		}
		if ss.Consistency != "" {
			return ss.Consistency
		}
		if v := pick(t.t.Consistency); v != "" {
			return v
		}
		if v := pick(cs.Consistency); v != "" {
			return v
		}
		return "QUORUM"
	}
	s.Consistency = def(s.Verb == "read")
	if err := clValid(s.Consistency, s.Verb != "read", cs); err != nil {
		errs.AddAt(ss.Loc, "consistency", "%v", err)
	}
	if ss.LWT {
		if s.Verb == "read" {
			errs.AddAt(ss.Loc, "lwt", "a read is not a lightweight transaction (use consistency: SERIAL for a serial read)")
		}
		s.Serial = firstNonEmpty(ss.Serial, t.t.Consistency.Serial, cs.Consistency.Serial, "SERIAL")
		if cl, ok := consistencyLevels[s.Serial]; !ok || !cl.serial {
			errs.AddAt(ss.Loc, "serial_consistency", "must be SERIAL or LOCAL_SERIAL, got %q", s.Serial)
		}
	} else if ss.Serial != "" {
		errs.AddAt(ss.Loc, "serial_consistency", "applies to LWT writes only (lwt: true)")
	}
	s.TTL = t.t.TTL
	if ss.TTL != 0 {
		if s.Verb == "read" || s.Verb == "delete" {
			errs.AddAt(ss.Loc, "ttl", "applies to writes")
		}
		s.TTL = ss.TTL
	}
	for _, c := range t.pk {
		if c.kind == srcTimeBucket {
			s.TimeBucket = c.tb.unit
		}
	}
	ks := quoteIdent(cs.Keyspace) + "." + quoteIdent(t.name)
	c := s.c

	// Key and key values.
	keyVals := make([]valueFn, len(t.pk))
	if m != nil {
		for i, col := range t.pk {
			keyVals[i] = d.columnValue(uses[col.name], m)
		}
		c.keyVals = keyVals
		// A copy: applyView wraps c.keyVals in place and wraps appendKey itself, so
		// appendKey must call the unwrapped functions (else the view applies twice).
		direct := make([]keyPart, len(t.pk))
		for i, col := range t.pk {
			direct[i] = directKeyPart(uses[col.name], m)
		}
		c.appendKey = keyAppender(t.pk, slices.Clone(keyVals), direct)
		if scan {
			c.keyVals = nil
			c.appendKey = func(dst []byte, _ *workloads.Op, _ int32) []byte { return dst }
		}
	}

	// Parts.
	c.parts = func(*workloads.Op) int32 { return 1 }
	if len(hashFans) > 0 || timeFan != nil {
		var lo valueFn
		var tb *timeBucket
		if timeFan != nil && m != nil {
			lo = fieldValue(timeFan.col.field, m)
			tb = timeFan.col.tb
		}
		c.parts = func(op *workloads.Op) int32 {
			n := hashParts
			if lo != nil {
				v := lo(op, 0, nil)
				from := bucketIndex(tb.unit, valueMillis(&v)+tb.offMs)
				to := from
				if op.Until != 0 {
					to = bucketIndex(tb.unit, workloads.FloorDiv(op.Until, 1e6)-1+tb.offMs)
				}
				k := int32(min(max(to-from+1, 1), 10000))
				n *= k
			}
			return n
		}
	}

	// Statement.
	var where []string
	var binds []bindFn
	addEq := func(u *colUse) {
		where = append(where, quoteIdent(u.col.name)+" = ?")
		if m != nil {
			binds = append(binds, cqlBind(u.col.typ, d.columnValue(u, m)))
		}
	}
	rowPerItem := false
	var itemsCol *column
	for _, col := range t.cols {
		if col.items {
			itemsCol = col
		}
		if (col.pk || col.ck) && col.kind == srcField && col.field != nil && col.field.Name == "product_id" {
			rowPerItem = true
		}
	}
	action := ctx.spec.Action
	fixed, perItem := int32(0), int32(0)
	for _, col := range t.cols {
		if col.items {
			perItem = col.field.SizeIn(m)
		} else {
			fixed += colSize(col, m)
		}
	}
	singleRow := true
	switch s.Verb {
	case "read":
		s.Statement = "SELECT"
		s.Kind = Read
		if len(hashFans) > 0 || timeFan != nil {
			s.Kind = MultiRead
		}
		if scan {
			s.Kind = Scan
			for _, col := range t.cols {
				u := uses[col.name]
				if u.mode == modeEq && col.kind == srcField && !col.items && col.kind != srcUDT && !col.typ.isCollection() {
					addEq(u)
				}
			}
		} else {
			for _, col := range t.pk {
				addEq(uses[col.name])
			}
		}
		rangeUsed := false
		for i, col := range t.ck {
			u := uses[col.name]
			if scan {
				break
			}
			if u.mode == modeEq {
				addEq(u)
				continue
			}
			singleRow = false
			if u.mode == modeRange {
				d.addRange(u, ctx, &where, &binds, m)
				rangeUsed = true
			}
			_ = i
			break
		}
		if scan && rangeField != "" {
			if col := t.columnOfField(rangeField); col != nil {
				d.addRange(&colUse{col: col, mode: modeRange}, ctx, &where, &binds, m)
				rangeUsed = true
			}
		}
		if scan {
			singleRow = false
		}
		_ = rangeUsed
		stmt := "SELECT * FROM " + ks
		if len(where) > 0 {
			stmt += " WHERE " + strings.Join(where, " AND ")
		}
		switch {
		case ss.Limit > 0:
			stmt += " LIMIT " + strconv.Itoa(ss.Limit)
		case action == workloads.List:
			stmt += " LIMIT ?"
			binds = append(binds, func(op *workloads.Op, _ int32) any { return int32(op.Qty) })
		}
		if scan {
			stmt += " ALLOW FILTERING"
		}
		s.CQL = stmt
	case "delete":
		s.Statement = "DELETE"
		s.Kind = Write
		for _, col := range t.pk {
			addEq(uses[col.name])
		}
		for _, col := range t.ck {
			u := uses[col.name]
			if u.mode != modeEq {
				break
			}
			addEq(u)
		}
		s.CQL = "DELETE FROM " + ks + " WHERE " + strings.Join(where, " AND ")
		if ss.LWT {
			s.CQL += " IF EXISTS"
		}
	default:
		for _, col := range append(append([]*column(nil), t.pk...), t.ck...) {
			if u := uses[col.name]; u.mode != modeEq {
				errs.AddAt(ss.Loc, s.Verb, "%s cannot serve %s: primary key %s, but %s knows %s", t.name, ctx.name, needs(u), ctx.name, knows())
				return false
			}
		}
		insert := s.Verb == "insert" || action == workloads.Insert || action == workloads.ItemAdd && rowPerItem && itemsCol == nil
		if action == workloads.ItemRemove && rowPerItem && itemsCol == nil {
			errs.AddAt(ss.Loc, "write", "%s keeps one row per item: removing an item is a delete step (delete: %s)", t.name, t.name)
			return false
		}
		s.Kind = Write
		if ss.LWT {
			s.Kind = LWT
		}
		using := ""
		if ss.TTL != 0 {
			using = " USING TTL " + strconv.FormatInt(int64(ss.TTL.Seconds()), 10)
		}
		if insert {
			s.Statement = "INSERT"
			var names, marks []string
			for _, col := range t.cols {
				u := uses[col.name]
				if u.mode != modeEq {
					continue
				}
				names = append(names, quoteIdent(col.name))
				marks = append(marks, "?")
				if m != nil {
					binds = append(binds, d.columnBind(u, m))
				}
			}
			s.CQL = "INSERT INTO " + ks + " (" + strings.Join(names, ", ") + ") VALUES (" + strings.Join(marks, ", ") + ")"
			if ss.LWT {
				s.CQL += " IF NOT EXISTS"
			}
			s.CQL += using
			break
		}
		s.Statement = "UPDATE"
		sets := setsOf(ctx, ss, errs)
		var assign []string
		var setBinds []bindFn
		var cond []string
		var condBinds []bindFn
		decStock := action == workloads.Decrement
		for _, col := range t.cols {
			if col.pk || col.ck {
				if u := uses[col.name]; u.over == nil && col.kind == srcField && col.field != nil && sets[col.field.Name] && action == workloads.Update {
					errs.AddAt(ss.Loc, "write", "%s changes %s, which is key column %s of %s: a key cannot be updated; delete the old row and insert the new one (two steps, with values: for the old key)", ctx.name, col.field.Name, col.name, t.name)
					return false
				}
				continue
			}
			u := uses[col.name]
			switch {
			case col.items && (action == workloads.ItemAdd || action == workloads.ItemSet || action == workloads.ItemRemove || action == workloads.Update && sets["items"]):
				appendMode := action == workloads.ItemAdd && ss.Mode != "rewrite"
				if appendMode {
					assign = append(assign, quoteIdent(col.name)+" = "+quoteIdent(col.name)+" + ?")
				} else {
					assign = append(assign, quoteIdent(col.name)+" = ?")
				}
				if m != nil {
					setBinds = append(setBinds, d.itemsBind(col, ctx.meta, m, appendMode))
				}
			case decStock && col.kind == srcField && col.field != nil && col.field.Name == "stock":
				assign = append(assign, quoteIdent(col.name)+" = ?")
				if m != nil {
					g := fieldValue(col.field, m)
					setBinds = append(setBinds, func(op *workloads.Op, p int32) any {
						v := g(op, p, nil)
						return int32(v.Int - int64(op.Qty))
					})
				}
				if ss.LWT {
					cond = append(cond, quoteIdent(col.name)+" = ?")
					if m != nil {
						condBinds = append(condBinds, cqlBind(col.typ, d.columnValue(u, m)))
					}
				}
			case decStock && col.kind == srcField && col.field != nil && col.field.Name == "stock_by_geo" && t.columnOfField("stock") == nil:
				assign = append(assign, quoteIdent(col.name)+"[?] = ?")
				if m != nil {
					zone := fieldValue(ctx.meta.Field("geo_zone"), m)
					stock := fieldValue(ctx.meta.Field("stock"), m)
					setBinds = append(setBinds, textBind(zone), func(op *workloads.Op, p int32) any {
						v := stock(op, p, nil)
						return int32(v.Int - int64(op.Qty))
					})
					if ss.LWT {
						condBinds = append(condBinds, textBind(zone), func(op *workloads.Op, p int32) any {
							v := stock(op, p, nil)
							return int32(v.Int)
						})
					}
				}
				if ss.LWT {
					cond = append(cond, quoteIdent(col.name)+"[?] = ?")
				}
			case u.over != nil:
				assign = append(assign, quoteIdent(col.name)+" = ?")
				if m != nil {
					setBinds = append(setBinds, d.columnBind(u, m))
				}
			case col.kind == srcField && col.field != nil && sets[col.field.Name] && u.mode == modeEq && !col.items:
				assign = append(assign, quoteIdent(col.name)+" = ?")
				if m != nil {
					setBinds = append(setBinds, d.columnBind(u, m))
				}
			case col.kind == srcUDT && u.mode == modeEq:
				allSet := true
				for _, uf := range col.typ.UDT.Fields {
					allSet = allSet && sets[uf.Name]
				}
				if allSet {
					assign = append(assign, quoteIdent(col.name)+" = ?")
					if m != nil {
						setBinds = append(setBinds, d.columnBind(u, m))
					}
				}
			}
		}
		if decStock && len(cond) == 0 && ss.LWT {
			cond = append(cond, "EXISTS")
		}
		if len(assign) == 0 {
			errs.AddAt(ss.Loc, s.Verb, "%s writes nothing to %s: none of its columns holds a field %s changes (%s)", ctx.name, t.name, ctx.name, strings.Join(ctx.spec.Sets, ", "))
			return false
		}
		for _, col := range t.pk {
			addEq(uses[col.name])
		}
		for _, col := range t.ck {
			addEq(uses[col.name])
		}
		s.CQL = "UPDATE " + ks + using + " SET " + strings.Join(assign, ", ") + " WHERE " + strings.Join(where, " AND ")
		if ss.LWT {
			if len(cond) == 0 {
				cond = []string{"EXISTS"}
			}
			s.CQL += " IF " + strings.Join(cond, " AND ")
		}
		binds = append(append(setBinds, binds...), condBinds...)
	}
	if s.Kind.IsWrite() && s.Verb != "delete" {
		appendMode := action == workloads.ItemAdd && ss.Mode != "rewrite" && itemsCol != nil
		c.size = func(op *workloads.Op, _ int32) (int32, int32) {
			n := op.Items
			if appendMode {
				n = 1
			}
			return 1, fixed + perItem*n
		}
	} else if s.Verb == "delete" {
		c.size = func(*workloads.Op, int32) (int32, int32) { return 1, fixed / 4 }
	} else {
		limit := int32(ss.Limit)
		list := action == workloads.List
		hasItems := itemsCol != nil
		get := action == workloads.Get
		c.size = func(op *workloads.Op, parts int32) (int32, int32) {
			rows := int32(1)
			// A Get of a table holding the item list reads one row (one cart); of a
			// row-per-item table, one row per item (Op.Items).
			if !singleRow && !(hasItems && get) {
				rows = op.Items
				if list && op.Qty > 0 && rows > op.Qty {
					rows = op.Qty
				}
				if limit > 0 && rows > limit {
					rows = limit
				}
				if parts > 1 {
					rows = (rows + parts - 1) / parts
				}
			}
			row := fixed
			switch {
			case hasItems && get:
				row += perItem * op.Items
			case hasItems:
				row += perItem * 2 // rows of a list hold about two items each
			}
			return rows, rows * row
		}
	}
	c.binds = binds
	return true
}

// setsOf is the set of fields a write step changes: the operation's Sets, or the step's
// sets: restriction of them.
func setsOf(ctx *opCtx, ss *StepSpec, errs *yamlx.Errors) map[string]bool {
	sets := map[string]bool{}
	for _, f := range ctx.spec.Sets {
		sets[f] = true
	}
	if ss.Sets == nil {
		return sets
	}
	only := map[string]bool{}
	for _, f := range ss.Sets {
		if !sets[f] {
			errs.AddAt(ss.Loc, "sets", "%s does not change %q (it changes %s)", ctx.name, f, strings.Join(ctx.spec.Sets, ", "))
			continue
		}
		only[f] = true
	}
	return only
}

func firstNonEmpty(list ...string) string {
	for _, s := range list {
		if s != "" {
			return s
		}
	}
	return ""
}

// columnOfField returns the first regular column holding a logical field.
func (t *table) columnOfField(name string) *column {
	for _, c := range t.cols {
		if c.kind == srcField && c.field != nil && c.field.Name == name {
			return c
		}
	}
	return nil
}

// addRange restricts a column to the operation's range.
func (d *Design) addRange(u *colUse, ctx *opCtx, where *[]string, binds *[]bindFn, m *workloads.Model) {
	col := u.col
	isTime := col.field.Type == workloads.TTimestamp || col.field.Type == workloads.TDate
	if isTime {
		*where = append(*where, quoteIdent(col.name)+" >= ?", quoteIdent(col.name)+" < ?")
	} else {
		*where = append(*where, quoteIdent(col.name)+" >= ?", quoteIdent(col.name)+" <= ?")
	}
	if m == nil {
		return
	}
	lo, hi := d.rangeValues(col.field, ctx, m)
	conv := cqlConv(col.field.Type, col.typ)
	mk := func(f valueFn) bindFn {
		return func(op *workloads.Op, p int32) any {
			v := f(op, p, nil)
			if conv != nil {
				v = conv(v)
			}
			return cqlGo(col.typ, &v)
		}
	}
	*binds = append(*binds, mk(lo), mk(hi))
}

// rangeValues gives the bounds of an operation's range over a field: [Ref, Until) for
// time fields, [Price, Aux] for prices.
func (d *Design) rangeValues(f *workloads.Field, ctx *opCtx, m *workloads.Model) (valueFn, valueFn) {
	lo := fieldValue(f, m)
	var hi valueFn
	switch f.Type {
	case workloads.TTimestamp:
		hi = func(op *workloads.Op, _ int32, buf []byte) workloads.Value {
			var v workloads.Value

			v.Type, v.Null, v.Int = workloads.TTimestamp, false, workloads.FloorDiv(op.Until, 1e6)

			return v
		}
	case workloads.TDate:
		hi = func(op *workloads.Op, _ int32, buf []byte) workloads.Value {
			var v workloads.Value

			v.Type, v.Null, v.Int = workloads.TDate, false, workloads.FloorDiv(op.Until, 86_400_000_000_000)

			return v
		}
	default:
		hi = func(op *workloads.Op, _ int32, buf []byte) workloads.Value {
			var v workloads.Value

			v.Type, v.Null, v.Int = f.Type, false, op.Aux

			return v
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

func textBind(f valueFn) bindFn {
	return func(op *workloads.Op, p int32) any {
		v := f(op, p, nil)
		return string(v.Bytes)
	}
}

// columnValue compiles a scalar column's value for a use.
func (d *Design) columnValue(u *colUse, m *workloads.Model) valueFn {
	col := u.col
	if u.over != nil || col.kind == srcConst {
		node := u.over
		if node == nil {
			node = col.cnode
		}
		return constValue(node.Value, col.typ)
	}
	switch col.kind {
	case srcField:
		get := fieldValue(col.field, m)
		conv := cqlConv(col.field.Type, col.typ)
		if conv == nil {
			return get
		}
		return func(op *workloads.Op, p int32, buf []byte) workloads.Value {
			return conv(withBuf(get(op, p, buf), buf))
		}
	case srcBucket:
		b := col.bucket
		n := int64(max(1, b.Count))
		text := col.typ.isText()
		out := func(buf []byte, x int64) workloads.Value {
			if text {
				return workloads.Value{Type: workloads.TText, Bytes: strconv.AppendInt(buf[:0], x, 10)}
			}
			return workloads.Value{Type: workloads.TInt, Int: x}
		}
		if u.mode == modeFanHash {
			stride := int64(u.stride)
			return func(_ *workloads.Op, p int32, buf []byte) workloads.Value {
				return out(buf, int64(p)/stride%n)
			}
		}
		get := fieldValue(col.field, m)
		ftype := col.field.Type
		return func(op *workloads.Op, p int32, buf []byte) workloads.Value {
			v := get(op, p, buf)
			return out(buf, bucketOf(b.Hash, ftype, &v, n))
		}
	case srcTimeBucket:
		tb := col.tb
		get := fieldValue(col.field, m)
		stride := int32(0)
		if u.mode == modeFanTime {
			stride = u.stride
		}
		return func(op *workloads.Op, p int32, buf []byte) workloads.Value {
			v := get(op, p, buf)
			idx := bucketIndex(tb.unit, valueMillis(&v)+tb.offMs)
			if stride > 0 {
				idx += int64(p / stride)
			}
			return timeBucketValue(tb, idx, col.typ, buf)
		}
	}
	return func(*workloads.Op, int32, []byte) workloads.Value { return workloads.Value{Null: true} }
}

// bucketOf hashes a field value into [0, n) as the bucket's hash says.
func bucketOf(hash string, ftype workloads.Type, v *workloads.Value, n int64) int64 {
	switch hash {
	case "java_uuid_hashcode":
		return int64(javaAbsMod(javaUUIDHashCode(v.ID), int32(n)))
	case "java_string_hashcode":
		var buf [40]byte
		b := v.Bytes
		if ftype == workloads.TUUID {
			b = workloads.AppendUUID(buf[:0], v.ID)
		}
		return int64(javaAbsMod(javaStringHashCode(b), int32(n)))
	}
	var buf [40]byte
	var b []byte
	switch v.Type {
	case workloads.TUUID:
		b = append(buf[:0], v.ID[:]...)
	case workloads.TText, workloads.TInet:
		b = v.Bytes
	default:
		b = appendVarint(buf[:0], v.Int)
	}
	if hash == "fnv1a" {
		return int64(fnv1a32(b) % uint32(n))
	}
	return int64(murmur3H1(b) % uint64(n))
}

// constValue parses a constant for a CQL type once.
func constValue(s string, t *cqlType) valueFn {
	var c workloads.Value
	c.Null = false
	switch t.Name {
	case "int", "bigint", "smallint", "tinyint", "varint", "counter":
		c.Type = workloads.TInt
		c.Int, _ = strconv.ParseInt(s, 10, 64)
	case "boolean":
		c.Type = workloads.TBool
		if s == "true" {
			c.Int = 1
		}
	case "double", "float":
		c.Type = workloads.TFloat
		c.Float, _ = strconv.ParseFloat(s, 64)
	default:
		c.Type = workloads.TText
		c.Bytes = []byte(s)
	}
	return func(_ *workloads.Op, _ int32, buf []byte) workloads.Value {
		v := c
		v.Bytes = append(buf[:0], c.Bytes...)
		return v
	}
}

func cqlBind(t *cqlType, f valueFn) bindFn {
	return func(op *workloads.Op, p int32) any {
		v := f(op, p, nil)
		return cqlGo(t, &v)
	}
}

// columnBind compiles a column's bind value, composite types included.
func (d *Design) columnBind(u *colUse, m *workloads.Model) bindFn {
	col := u.col
	if u.over == nil {
		switch {
		case col.kind == srcUDT:
			return d.udtBind(col, m)
		case col.kind == srcField && !col.field.Type.Scalar():
			return d.compositeBind(col, m)
		}
	}
	return cqlBind(col.typ, d.columnValue(u, m))
}

func (d *Design) udtBind(col *column, m *workloads.Model) bindFn {
	meta := entityMeta(d.entityOfColumn(col))
	type part struct {
		name string
		get  valueFn
		conv func(workloads.Value) workloads.Value
		typ  *cqlType
	}
	var parts []part
	for _, uf := range col.typ.UDT.Fields {
		f := meta.Field(uf.Name)
		parts = append(parts, part{uf.Name, fieldValue(f, m), cqlConv(f.Type, uf.Type), uf.Type})
	}
	return func(op *workloads.Op, p int32) any {
		out := make(map[string]any, len(parts))
		for _, x := range parts {
			v := x.get(op, p, nil)
			if x.conv != nil {
				v = x.conv(v)
			}
			out[x.name] = cqlGo(x.typ, &v)
		}
		return out
	}
}

func (d *Design) entityOfColumn(col *column) string {
	for _, t := range d.tables {
		for _, c := range t.cols {
			if c == col {
				return t.meta.Entity
			}
		}
	}
	return ""
}

// compositeBind converts a composite field (items, maps, objects) for a CQL column.
func (d *Design) compositeBind(col *column, m *workloads.Model) bindFn {
	get := col.field.Composite(m)
	switch col.field.Type {
	case workloads.TItems:
		conv := itemsToCQL(col.typ)
		return func(op *workloads.Op, _ int32) any { return conv(get(op)) }
	case workloads.TObject:
		return func(op *workloads.Op, _ int32) any { return docLine(get(op).(workloads.Doc)) }
	case workloads.TTextMap:
		if col.typ.isText() {
			return func(op *workloads.Op, _ int32) any { return jsonObject(get(op).(map[string]string)) }
		}
	}
	return func(op *workloads.Op, _ int32) any { return get(op) }
}

// itemsToCQL converts []workloads.Item to a list of UDT maps.
func itemsToCQL(t *cqlType) func(any) any {
	udt := t.Args[0].UDT
	return func(x any) any {
		items := x.([]workloads.Item)
		out := make([]map[string]any, len(items))
		for i := range items {
			row := make(map[string]any, len(udt.Fields))
			for _, f := range udt.Fields {
				attr := itemAttr(f.Name)
				v := itemAttrValue(&items[i], attr)
				if conv := cqlConv(itemAttrType(attr), f.Type); conv != nil {
					v = conv(v)
				}
				row[f.Name] = cqlGo(f.Type, &v)
			}
			out[i] = row
		}
		return out
	}
}

// opItem builds the item an item operation adds or changes from the operation's fields.
func opItem(meta *workloads.Meta, m *workloads.Model) func(op *workloads.Op) workloads.Item {
	get := func(name string) valueFn {
		if f := meta.Field(name); f != nil && f.Get != nil {
			return fieldValue(f, m)
		}
		return nil
	}
	pid, name, sku, cat, img := get("product_id"), get("product_name"), get("product_sku"), get("category"), get("product_image_url")
	return func(op *workloads.Op) workloads.Item {
		it := workloads.Item{Quantity: op.Qty, Price: op.Price, AddedAt: workloads.FloorDiv(op.Ref, 1e6)}
		if pid != nil {
			it.ProductID = pid(op, 0, nil).ID
		}
		text := func(f valueFn) string {
			if f == nil {
				return ""
			}
			return string(f(op, 0, nil).Bytes)
		}
		it.Name, it.SKU, it.Category, it.ImageURL = text(name), text(sku), text(cat), text(img)
		return it
	}
}

// itemsBind binds an items column: the one item an item operation adds (append mode) or
// the whole list.
func (d *Design) itemsBind(col *column, meta *workloads.Meta, m *workloads.Model, appendMode bool) bindFn {
	conv := itemsToCQL(col.typ)
	if appendMode {
		one := opItem(meta, m)
		return func(op *workloads.Op, _ int32) any { return conv([]workloads.Item{one(op)}) }
	}
	all := col.field.Composite(m)
	return func(op *workloads.Op, _ int32) any { return conv(all(op)) }
}

// keyAppender serialises a partition key: one column as its value, several as the
// composite encoding (2-byte length, value, 0 for each).
func keyAppender(cols []*column, vals []valueFn, direct []keyPart) func([]byte, *workloads.Op, int32) []byte {
	if len(cols) == 1 {
		t, f := cols[0].typ, vals[0]
		if d := direct[0]; d != nil {
			return d
		}
		return func(dst []byte, op *workloads.Op, part int32) []byte {
			// The value's text is appended right where it belongs in dst (buf is dst's
			// spare capacity), so appendCQL copies it onto itself.
			v := f(op, part, dst[len(dst):])
			return appendCQL(dst, t, &v)
		}
	}
	return func(dst []byte, op *workloads.Op, part int32) []byte {
		for i, c := range cols {
			at := len(dst)
			dst = append(dst, 0, 0)
			if d := direct[i]; d != nil {
				dst = d(dst, op, part)
			} else {
				v := vals[i](op, part, dst[len(dst):])
				dst = appendCQL(dst, c.typ, &v)
			}
			n := len(dst) - at - 2
			dst[at], dst[at+1] = byte(n>>8), byte(n)
			dst = append(dst, 0)
		}
		return dst
	}
}

// keyPart appends one partition key column's serialised value (part: the access's
// partition of a multi-partition step); a single-column key is its own appender.
type keyPart = func(dst []byte, op *workloads.Op, part int32) []byte

// directKeyPart is the appender of a key column that holds a UUID identity as it is
// (uuid or timeuuid) or as text, straight from the field's UUID accessor: what
// columnValue and appendCQL give, without the Value between them. Most partition keys
// are such columns, and each access serialises one. nil for any other column.
func directKeyPart(u *colUse, m *workloads.Model) keyPart {
	col := u.col
	if u.over != nil || col.kind != srcField || col.field.UUID == nil || col.field.Type != workloads.TUUID {
		return nil
	}
	uuid := col.field.UUID(m)
	switch {
	case col.typ.Name == "uuid" || col.typ.Name == "timeuuid":
		return func(dst []byte, op *workloads.Op, _ int32) []byte {
			if u, ok := uuid(op); ok {
				return placement.AppendUUID(dst, u)
			}
			return dst
		}
	case col.typ.isText():
		return func(dst []byte, op *workloads.Op, _ int32) []byte {
			if u, ok := uuid(op); ok {
				return workloads.AppendUUID(dst, u)
			}
			return dst
		}
	}
	return nil
}

func docLine(doc workloads.Doc) string {
	var b strings.Builder
	for i, e := range doc {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, e.Value)
	}
	return b.String()
}

func jsonObject(m map[string]string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range sortedKeys(m) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(k))
		b.WriteByte(':')
		b.WriteString(strconv.Quote(m[k]))
	}
	b.WriteByte('}')
	return b.String()
}
