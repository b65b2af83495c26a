package design

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/shardbench/shardbench/workloads"
)

// mode is how a step gives one column's value.
type mode uint8

const (
	// modeNone: the step cannot give the column's value.
	modeNone mode = iota
	// modeEq: one value, with equality.
	modeEq
	// modeFanHash: a read visits every bucket of a hash-bucket column.
	modeFanHash
	// modeFanTime: a read visits every time bucket its period spans.
	modeFanTime
	// modeRange: a clustering column restricted to the operation's range.
	modeRange
)

// colUse is how a step uses one column of its table.
type colUse struct {
	col    *column
	mode   mode
	over   *yaml.Node // a constant from the step's values: or match:
	stride int32      // fan-out: the column's bucket changes every stride partitions
}

// cqlBuilder compiles one step on a Cassandra table. build runs its phases in order; each
// records what the later ones need. A phase that finds the table cannot serve the
// operation reports why and ends the build.
type cqlBuilder struct {
	stepBuild
	table *table

	known      map[string]bool    // fields the operation knows with equality
	rangeField string             // the field a read restricts to the operation's period
	uses       map[string]*colUse // by column name

	scan      bool      // the read visits every partition (ALLOW FILTERING)
	hashFans  []*colUse // bucket columns a read fans out over
	timeFan   *colUse   // the time-bucket column a read fans out over
	hashParts int32     // partitions the hash buckets multiply to

	qualified string   // the statement's quoted keyspace.table
	where     []string // the statement's conditions, in marker order
	binds     []bindFn // their values
	singleRow bool     // a read returns one row per partition
}

// build runs the phases; false when the table cannot serve the operation (reported).
func (b *cqlBuilder) build() bool {
	b.start()
	b.columnUses()
	if !b.partitionKey() {
		return false
	}
	b.consistency()
	b.keyFuncs()
	b.partsFunc()
	if !b.statement() {
		return false
	}
	b.sizeFunc()
	b.step.c.binds = b.binds
	return true
}

// start records the step's target and checks the options that do not apply to it.
func (b *cqlBuilder) start() {
	s, t, spec := b.step, b.table, b.spec
	s.Database, s.Namespace = Cassandra, b.d.Cassandra.Keyspace
	for _, c := range t.pk {
		s.KeyColumns = append(s.KeyColumns, c.name)
	}
	if spec.ReadPreference != nil || spec.WriteConcern != nil || spec.ReadConcern != "" || len(spec.Filter) > 0 {
		b.errAt("read_preference", "read_preference, write_concern, read_concern and filter apply to MongoDB steps; %s is a Cassandra table", t.name)
	}
	if spec.Mode != "" && spec.Mode != "append" && spec.Mode != "rewrite" {
		b.errAt("mode", "must be append or rewrite, got %q", spec.Mode)
	}
	b.known = available(b.op.spec, b.op.meta, s.Verb)
	if s.Verb == "read" {
		b.rangeField = b.op.spec.Range
	}
	b.qualified = quoteIdent(b.d.Cassandra.Keyspace) + "." + quoteIdent(t.name)
}

// columnUses decides how the step gives each column: the constants of its values: and
// match:, else what the operation knows.
func (b *cqlBuilder) columnUses() {
	t := b.table
	b.uses = map[string]*colUse{}
	for _, e := range b.spec.Values {
		col, ok := t.byName[e.Key]
		if !ok {
			b.errs.Add(e.Pos, "values."+e.Key, "unknown column of %s (columns: %s)", t.name, strings.Join(t.t.Column.Keys(), ", "))
			continue
		}
		node := e.Value
		b.uses[e.Key] = &colUse{col: col, mode: modeEq, over: &node}
	}
	for _, e := range b.spec.Match {
		col, ok := t.byName[e.Key]
		switch {
		case !ok:
			b.errs.Add(e.Pos, "match."+e.Key, "unknown column of %s (columns: %s)", t.name, strings.Join(t.t.Column.Keys(), ", "))
			continue
		case !col.pk && !col.ck:
			b.errs.Add(e.Pos, "match."+e.Key, "%s is not a key column of %s: match gives key values (use values: for written columns)", e.Key, t.name)
			continue
		}
		node := e.Value
		b.uses[e.Key] = &colUse{col: col, mode: modeEq, over: &node}
	}
	for _, col := range t.cols {
		if _, ok := b.uses[col.name]; !ok {
			b.uses[col.name] = &colUse{col: col, mode: b.derivedMode(col)}
		}
	}
}

// derivedMode is how the step gives a column the step's constants leave to the operation.
func (b *cqlBuilder) derivedMode(col *column) mode {
	read := b.step.Verb == "read"
	knows := col.field != nil && b.known[col.field.Name]
	ranged := col.field != nil && b.rangeField != "" && col.field.Name == b.rangeField
	switch col.kind {
	case srcConst:
		return modeEq
	case srcField:
		switch {
		case knows:
			return modeEq
		case ranged:
			return modeRange
		}
	case srcBucket:
		switch {
		case knows:
			return modeEq
		case read:
			return modeFanHash
		}
	case srcTimeBucket:
		switch {
		case knows:
			return modeEq
		case read && ranged:
			return modeFanTime
		}
	case srcUDT:
		for _, uf := range col.typ.UDT.Fields {
			if !b.known[uf.Name] {
				return modeNone
			}
		}
		return modeEq
	}
	return modeNone
}

// needs says what a column the step cannot give holds, for errors. A column without its
// logical field (an unknown one, reported at the column) is named alone.
func (b *cqlBuilder) needs(use *colUse) string {
	c := use.col
	if c.field == nil {
		return "column " + c.name
	}
	switch c.kind {
	case srcBucket, srcTimeBucket:
		return fmt.Sprintf("column %s derives from %s", c.name, c.field.Name)
	case srcField:
		return fmt.Sprintf("column %s holds %s", c.name, c.field.Name)
	}
	return "column " + c.name
}

// knows lists what the operation knows, for errors.
func (b *cqlBuilder) knows() string {
	spec := b.op.spec
	if spec.Action == workloads.Insert {
		return "every field"
	}
	list := append([]string(nil), spec.Binds...)
	if b.step.Verb != "read" {
		list = append(list, spec.Sets...)
	}
	if b.rangeField != "" {
		list = append(list, b.rangeField+" (a range)")
	}
	if len(list) == 0 {
		return "no field with equality"
	}
	return strings.Join(list, ", ")
}

// cannotServe reports that the table cannot serve the operation: what a key column needs
// against what the operation knows.
func (b *cqlBuilder) cannotServe(what string, use *colUse, hint string) {
	name := b.op.name
	b.errAt(b.step.Verb, "%s cannot serve %s: %s %s, but %s knows %s%s", b.table.name, name, what, b.needs(use), name, b.knows(), hint)
}

// partitionKey decides which partitions the step reaches: one, the buckets a read fans
// out over (hash buckets, then the time buckets of its period), or every partition (scan).
func (b *cqlBuilder) partitionKey() bool {
	t, spec, verb := b.table, b.spec, b.step.Verb
	for _, c := range t.pk {
		use := b.uses[c.name]
		switch use.mode {
		case modeEq:
		case modeFanHash:
			b.hashFans = append(b.hashFans, use)
		case modeFanTime:
			if b.timeFan != nil {
				b.errAt(verb, "%s: two time-bucket columns cannot both fan out", t.name)
			}
			b.timeFan = use
		default:
			if verb == "read" && spec.Scan {
				b.scan = true
				continue
			}
			hint := ""
			if verb == "read" {
				hint = "; scan: true reads every partition (ALLOW FILTERING)"
			}
			b.cannotServe("partition key", use, hint)
			return false
		}
	}
	if spec.Scan && !b.scan && verb != "read" {
		b.errAt("scan", "only reads scan")
	}
	if !b.scan && len(b.hashFans) > 0 && b.timeFan == nil && len(b.hashFans) == len(t.pk) {
		// Every partition key column is a bucket the operation cannot compute: reading
		// all buckets would read the whole table.
		b.cannotServe("partition key", b.uses[t.pk[0].name], "; reading every bucket reads the whole table (scan: true says so)")
		return false
	}
	if b.scan {
		b.hashFans, b.timeFan = nil, nil
	}
	stride := int32(1)
	for _, use := range b.hashFans {
		use.stride = stride
		stride *= int32(max(1, use.col.bucket.Count))
	}
	if b.timeFan != nil {
		b.timeFan.stride = stride
	}
	b.hashParts = stride
	return true
}

// fansOut reports whether a read reaches several partitions chosen by their buckets.
func (b *cqlBuilder) fansOut() bool { return len(b.hashFans) > 0 || b.timeFan != nil }

// consistency sets the step's consistency levels (the step's, else the table's, else the
// keyspace's default, else QUORUM), its TTL and its time bucket unit.
func (b *cqlBuilder) consistency() {
	s, spec, t, cass := b.step, b.spec, b.table, b.d.Cassandra
	read := s.Verb == "read"
	pick := func(cd ConsistencyDefault) string {
		if read {
			return cd.Read
		}
		return cd.Write
	}
	s.Consistency = firstNonEmpty(spec.Consistency, pick(t.t.Consistency), pick(cass.Consistency), "QUORUM")
	if err := clValid(s.Consistency, !read, cass); err != nil {
		b.errAt("consistency", "%v", err)
	}
	if spec.LWT {
		if read {
			b.errAt("lwt", "a read is not a lightweight transaction (use consistency: SERIAL for a serial read)")
		}
		s.Serial = firstNonEmpty(spec.Serial, t.t.Consistency.Serial, cass.Consistency.Serial, "SERIAL")
		if cl, ok := consistencyLevels[s.Serial]; !ok || !cl.serial {
			b.errAt("serial_consistency", "must be SERIAL or LOCAL_SERIAL, got %q", s.Serial)
		}
	} else if spec.Serial != "" {
		b.errAt("serial_consistency", "applies to LWT writes only (lwt: true)")
	}
	s.TTL = t.t.TTL
	if spec.TTL != 0 {
		if read || s.Verb == "delete" {
			b.errAt("ttl", "applies to writes")
		}
		s.TTL = spec.TTL
	}
	for _, c := range t.pk {
		if c.kind == srcTimeBucket {
			s.TimeBucket = c.tb.unit
		}
	}
}

// keyFuncs compiles the partition key's values and its serialisation (none for a scan).
func (b *cqlBuilder) keyFuncs() {
	m, c, pk := b.model, b.step.c, b.table.pk
	if m == nil {
		return
	}
	if b.scan {
		c.appendKey = func(dst []byte, _ *workloads.Op, _ int32) []byte { return dst }
		return
	}
	keyVals := make([]valueFn, len(pk))
	direct := make([]keyAppender, len(pk))
	for i, col := range pk {
		keyVals[i] = b.d.columnValue(b.uses[col.name], m)
		direct[i] = directKeyPart(b.uses[col.name], m)
	}
	c.keyVals = keyVals
	c.appendKey = partitionKeyAppender(pk, keyVals, direct)
}

// partsFunc compiles the step's fan-out: the hash buckets times the time buckets of the
// operation's period (at most 10,000 of them).
func (b *cqlBuilder) partsFunc() {
	c := b.step.c
	if !b.fansOut() {
		return // one partition
	}
	hashParts := b.hashParts
	var lo workloads.Getter
	var tb *timeBucket
	if b.timeFan != nil && b.model != nil {
		lo = b.timeFan.col.field.Get(b.model)
		tb = b.timeFan.col.tb
	}
	c.parts = func(op *workloads.Op) int32 {
		n := hashParts
		if lo != nil {
			v := lo(op, nil)
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

// addEq adds an equality condition on a column.
func (b *cqlBuilder) addEq(use *colUse) {
	b.where = append(b.where, quoteIdent(use.col.name)+" = ?")
	if b.model != nil {
		b.binds = append(b.binds, cqlBind(use.col.typ, b.d.columnValue(use, b.model)))
	}
}

// addRange restricts a column to the operation's range: [lo, hi) for times, [lo, hi]
// otherwise.
func (b *cqlBuilder) addRange(col *column) {
	name := quoteIdent(col.name)
	if col.field.Type == workloads.TTimestamp || col.field.Type == workloads.TDate {
		b.where = append(b.where, name+" >= ?", name+" < ?")
	} else {
		b.where = append(b.where, name+" >= ?", name+" <= ?")
	}
	if b.model == nil {
		return
	}
	lo, hi := rangeValues(col.field, b.model)
	conv := cqlConv(col.field.Type, col.typ)
	bind := func(f valueFn) bindFn {
		return func(op *workloads.Op, p int32) any {
			v := f(op, p, nil)
			if conv != nil {
				v = conv(v)
			}
			return cqlGo(col.typ, &v)
		}
	}
	b.binds = append(b.binds, bind(lo), bind(hi))
}

// statement builds the CQL statement, its kind and its binds.
func (b *cqlBuilder) statement() bool {
	switch b.step.Verb {
	case "read":
		b.selectStatement()
	case "delete":
		b.deleteStatement()
	default:
		return b.writeStatement()
	}
	return true
}

// selectStatement reads the partition (or every one, for a scan) with the clustering
// prefix the operation knows, and its range on the next clustering column.
func (b *cqlBuilder) selectStatement() {
	s, t, spec := b.step, b.table, b.spec
	s.Statement = "SELECT"
	s.Kind = Read
	if b.fansOut() {
		s.Kind = MultiRead
	}
	b.singleRow = true
	if b.scan {
		s.Kind = Scan
		b.singleRow = false
		for _, col := range t.cols {
			use := b.uses[col.name]
			if use.mode == modeEq && col.kind == srcField && !col.items && !col.typ.isCollection() {
				b.addEq(use)
			}
		}
		if b.rangeField != "" {
			if col := t.columnOfField(b.rangeField); col != nil {
				b.addRange(col)
			}
		}
	} else {
		for _, col := range t.pk {
			b.addEq(b.uses[col.name])
		}
		for _, col := range t.ck {
			use := b.uses[col.name]
			if use.mode == modeEq {
				b.addEq(use)
				continue
			}
			b.singleRow = false
			if use.mode == modeRange {
				b.addRange(col)
			}
			break
		}
	}
	stmt := "SELECT * FROM " + b.qualified
	if len(b.where) > 0 {
		stmt += " WHERE " + strings.Join(b.where, " AND ")
	}
	switch {
	case spec.Limit > 0:
		stmt += " LIMIT " + strconv.Itoa(spec.Limit)
	case b.op.spec.Action == workloads.List:
		stmt += " LIMIT ?"
		b.binds = append(b.binds, func(op *workloads.Op, _ int32) any { return int32(op.Qty) })
	}
	if b.scan {
		stmt += " ALLOW FILTERING"
	}
	s.CQL = stmt
	s.SingleRow = b.singleRow
	s.LimitQty = spec.Limit <= 0 && b.op.spec.Action == workloads.List
}

// deleteStatement deletes the row (or the clustering prefix) the operation knows.
func (b *cqlBuilder) deleteStatement() {
	s, t := b.step, b.table
	s.Statement = "DELETE"
	s.Kind = Write
	for _, col := range t.pk {
		b.addEq(b.uses[col.name])
	}
	for _, col := range t.ck {
		use := b.uses[col.name]
		if use.mode != modeEq {
			break
		}
		b.addEq(use)
	}
	s.CQL = "DELETE FROM " + b.qualified + " WHERE " + strings.Join(b.where, " AND ")
	if b.spec.LWT {
		s.CQL += " IF EXISTS"
	}
}

// writeStatement writes the row of the primary key the operation knows: an INSERT of
// every column it can give when it creates the row, else an UPDATE of what it changes.
func (b *cqlBuilder) writeStatement() bool {
	s, t, spec := b.step, b.table, b.spec
	for _, col := range append(append([]*column(nil), t.pk...), t.ck...) {
		if use := b.uses[col.name]; use.mode != modeEq {
			b.cannotServe("primary key", use, "")
			return false
		}
	}
	action := b.op.spec.Action
	rowPerItem := t.keyHolds(b.op.meta.ItemKey) && t.itemsColumn() == nil
	if action == workloads.ItemRemove && rowPerItem {
		b.errAt("write", "%s keeps one row per item: removing an item is a delete step (delete: %s)", t.name, t.name)
		return false
	}
	s.Kind = Write
	if spec.LWT {
		s.Kind = LWT
	}
	using := ""
	if spec.TTL != 0 {
		using = " USING TTL " + strconv.FormatInt(int64(spec.TTL.Seconds()), 10)
	}
	if s.Verb == "insert" || action == workloads.Insert || action == workloads.ItemAdd && rowPerItem {
		b.insertStatement(using)
		return true
	}
	return b.updateStatement(using)
}

func (b *cqlBuilder) insertStatement(using string) {
	s := b.step
	s.Statement = "INSERT"
	var names, marks []string
	for _, col := range b.table.cols {
		use := b.uses[col.name]
		if use.mode != modeEq {
			continue
		}
		names = append(names, quoteIdent(col.name))
		marks = append(marks, "?")
		if b.model != nil {
			b.binds = append(b.binds, b.d.columnBind(use, b.model))
		}
	}
	s.CQL = "INSERT INTO " + b.qualified + " (" + strings.Join(names, ", ") + ") VALUES (" + strings.Join(marks, ", ") + ")"
	if b.spec.LWT {
		s.CQL += " IF NOT EXISTS"
	}
	s.CQL += using
}

// cqlUpdate collects an UPDATE's assignments and its LWT conditions, each with its binds.
type cqlUpdate struct {
	sets      map[string]bool // the fields the step changes
	assign    []string
	setBinds  []bindFn
	cond      []string
	condBinds []bindFn
}

func (up *cqlUpdate) set(expr string, binds ...bindFn) {
	up.assign = append(up.assign, expr)
	up.setBinds = append(up.setBinds, binds...)
}

func (b *cqlBuilder) updateStatement(using string) bool {
	s, t, spec := b.step, b.table, b.spec
	s.Statement = "UPDATE"
	up := &cqlUpdate{sets: setsOf(b.op, spec, b.errs)}
	for _, col := range t.cols {
		if !b.assignColumn(up, col) {
			return false
		}
	}
	if b.op.spec.Action == workloads.Decrement && len(up.cond) == 0 && spec.LWT {
		up.cond = append(up.cond, "EXISTS")
	}
	if len(up.assign) == 0 {
		name := b.op.name
		b.errAt(s.Verb, "%s writes nothing to %s: none of its columns holds a field %s changes (%s)", name, t.name, name, strings.Join(b.op.spec.Sets, ", "))
		return false
	}
	for _, col := range t.pk {
		b.addEq(b.uses[col.name])
	}
	for _, col := range t.ck {
		b.addEq(b.uses[col.name])
	}
	s.CQL = "UPDATE " + b.qualified + using + " SET " + strings.Join(up.assign, ", ") + " WHERE " + strings.Join(b.where, " AND ")
	if spec.LWT {
		if len(up.cond) == 0 {
			up.cond = []string{"EXISTS"}
		}
		s.CQL += " IF " + strings.Join(up.cond, " AND ")
	}
	b.binds = append(append(up.setBinds, b.binds...), up.condBinds...)
	return true
}

// assignColumn adds what an UPDATE sets in one column: the item list of an item
// operation, the decremented counter, a constant, or a field the operation changes.
func (b *cqlBuilder) assignColumn(up *cqlUpdate, col *column) bool {
	t, m, lwt, action := b.table, b.model, b.spec.LWT, b.op.spec.Action
	use := b.uses[col.name]
	holds := func(name string) bool { return col.kind == srcField && col.field != nil && col.field.Name == name }
	if col.pk || col.ck {
		if use.over == nil && col.kind == srcField && col.field != nil && up.sets[col.field.Name] && action == workloads.Update {
			b.errAt("write", "%s changes %s, which is key column %s of %s: a key cannot be updated; delete the old row and insert the new one (two steps, with values: for the old key)",
				b.op.name, col.field.Name, col.name, t.name)
			return false
		}
		return true
	}
	name := quoteIdent(col.name)
	decrement, counter := action == workloads.Decrement, ""
	if decrement {
		counter = b.op.spec.Sets[0]
	}
	switch {
	case col.items && (action.IsItem() || action == workloads.Update && up.sets[col.field.Name]):
		appendMode := action == workloads.ItemAdd && b.spec.Mode != "rewrite"
		expr := name + " = ?"
		if appendMode {
			expr = name + " = " + name + " + ?"
		}
		up.set(expr)
		if m != nil {
			up.setBinds = append(up.setBinds, b.d.itemsBind(col, b.op.meta, m, appendMode))
		}
	case decrement && holds(counter):
		up.set(name + " = ?")
		if m != nil {
			g := fieldValue(col.field, m)
			up.setBinds = append(up.setBinds, func(op *workloads.Op, p int32) any {
				v := g(op, p, nil)
				return int32(v.Int - int64(op.Qty))
			})
		}
		if lwt {
			up.cond = append(up.cond, name+" = ?")
			if m != nil {
				up.condBinds = append(up.condBinds, cqlBind(col.typ, b.d.columnValue(use, m)))
			}
		}
	case decrement && col.kind == srcField && holdsPerKey(col.field, counter, workloads.TIntMap) && t.columnOfField(counter) == nil:
		// A map from key (the zone) to counter: the operation's entry changes.
		up.set(name + "[?] = ?")
		if m != nil {
			zone := fieldValue(b.op.meta.Field(col.field.PerKey.Key), m)
			stock := fieldValue(b.op.meta.Field(counter), m)
			up.setBinds = append(up.setBinds, textBind(zone), func(op *workloads.Op, p int32) any {
				v := stock(op, p, nil)
				return int32(v.Int - int64(op.Qty))
			})
			if lwt {
				up.condBinds = append(up.condBinds, textBind(zone), func(op *workloads.Op, p int32) any {
					v := stock(op, p, nil)
					return int32(v.Int)
				})
			}
		}
		if lwt {
			up.cond = append(up.cond, name+"[?] = ?")
		}
	case use.over != nil,
		col.kind == srcField && col.field != nil && up.sets[col.field.Name] && use.mode == modeEq && !col.items,
		col.kind == srcUDT && use.mode == modeEq && b.setsAll(up, col):
		up.set(name + " = ?")
		if m != nil {
			up.setBinds = append(up.setBinds, b.d.columnBind(use, m))
		}
	}
	return true
}

// setsAll reports whether the step changes every field of a UDT column.
func (b *cqlBuilder) setsAll(up *cqlUpdate, col *column) bool {
	for _, uf := range col.typ.UDT.Fields {
		if !up.sets[uf.Name] {
			return false
		}
	}
	return true
}

// sizeFunc compiles the rows and bytes of a request: a write's row (one appended item,
// or the whole list), a delete's tombstone, or the rows a read returns per partition.
func (b *cqlBuilder) sizeFunc() {
	s, c, t, spec := b.step, b.step.c, b.table, b.spec
	action := b.op.spec.Action
	itemsCol := t.itemsColumn()
	fixed, perItem := t.rowSize(b.model)
	switch {
	case s.Kind.IsWrite() && s.Verb != "delete":
		appendMode := action == workloads.ItemAdd && spec.Mode != "rewrite" && itemsCol != nil
		switch {
		case appendMode:
			c.constSize(1, fixed+perItem)
			return
		case perItem == 0:
			c.constSize(1, fixed)
			return
		}
		c.size = func(op *workloads.Op, _ int32) (int32, int32) {
			n := op.Items
			if appendMode {
				n = 1
			}
			return 1, fixed + perItem*n
		}
	case s.Verb == "delete":
		c.constSize(1, fixed/4)
	default:
		limit := int32(spec.Limit)
		list := action == workloads.List
		hasItems := itemsCol != nil
		get := action == workloads.Get
		singleRow := b.singleRow
		if singleRow && !(hasItems && get) { // one row, its size not the operation's
			if hasItems {
				c.constSize(1, fixed+perItem*2)
			} else {
				c.constSize(1, fixed)
			}
			return
		}
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

// itemsColumn is the (last) column holding the entity's item list, or nil.
func (t *table) itemsColumn() *column {
	var items *column
	for _, col := range t.cols {
		if col.items {
			items = col
		}
	}
	return items
}

// keyHolds reports whether a column of the primary key holds a logical field (false for
// ""). A table whose key holds the entity's ItemKey keeps a row per item.
func (t *table) keyHolds(field string) bool {
	for _, col := range t.cols {
		if (col.pk || col.ck) && col.kind == srcField && col.field != nil && col.field.Name == field && field != "" {
			return true
		}
	}
	return false
}

// rowSize is the typical size of a row in model m (nil: the fields' defaults): its fixed
// part, and the size of each item of its item list.
func (t *table) rowSize(m *workloads.Model) (fixed, perItem int32) {
	for _, col := range t.cols {
		if col.items {
			perItem = col.field.SizeIn(m)
		} else {
			fixed += colSize(col, m)
		}
	}
	return fixed, perItem
}
