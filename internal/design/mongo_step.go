package design

import (
	"strings"

	"github.com/shardbench/shardbench/workloads"
)

// mongoBuilder compiles one step on a MongoDB collection. build runs its phases in order;
// each records what the later ones need. A phase that finds the collection cannot serve
// the operation reports why and ends the build.
type mongoBuilder struct {
	stepBuild
	coll *collection

	known   map[string]bool   // fields the operation knows with equality
	overs   map[string]string // constants of the step's values:, by document field
	matches map[string]string // constants of the step's match:, by document field
	read    bool
	insert  bool // the step inserts a whole document

	filter    []*docField     // equality conditions, in order
	rangeF    *docField       // the field a read restricts to the operation's period
	eqs       map[string]bool // document fields the request gives with equality
	keyFields int             // leading shard key fields among them

	itemsF    *docField       // the entity's item list
	stockF    *docField       // the counter a decrement lowers
	stocksF   *docField       // or its per-zone documents
	sets      map[string]bool // fields the step changes
	setFields []*docField     // document fields an update sets
}

// build runs the phases; false when the collection cannot serve the operation (reported).
func (b *mongoBuilder) build() bool {
	b.start()
	b.concerns()
	if !b.filterFields() {
		return false
	}
	b.matchFields()
	b.rangeField()
	if !b.targeting() {
		return false
	}
	b.statement()
	if !b.updateFields() {
		return false
	}
	b.sizeFunc()
	if b.model == nil {
		return true
	}
	b.keyFuncs()
	b.commandFunc()
	return true
}

// start records the step's target, checks the options that do not apply to it and reads
// the constants of its values:.
func (b *mongoBuilder) start() {
	s, co, spec := b.step, b.coll, b.spec
	s.Database, s.Namespace = MongoDB, b.d.MongoDB.Database
	s.KeyColumns, s.Hashed = co.shardKey, co.hashed
	if spec.Consistency != "" || spec.Serial != "" || spec.LWT || spec.Scan || spec.TTL != 0 || spec.Mode != "" {
		b.errAt("consistency", "consistency, serial_consistency, lwt, scan, ttl and mode apply to Cassandra steps; %s is a MongoDB collection", co.name)
	}
	b.known = available(b.op.spec, b.op.meta, s.Verb)
	b.overs = map[string]string{}
	for _, e := range spec.Values {
		if _, ok := co.byName[e.Key]; !ok {
			b.errs.Add(e.Pos, "values."+e.Key, "unknown document field of %s", co.name)
			continue
		}
		b.overs[e.Key] = scalarString(&e.Value)
	}
	b.read = s.Verb == "read"
	b.insert = s.Verb == "insert" || b.op.spec.Action == workloads.Insert
}

// has reports whether the step can give a document field's value: a constant, or a field
// the operation knows.
func (b *mongoBuilder) has(f *docField) bool {
	if _, ok := b.overs[f.name]; ok {
		return true
	}
	return f.kind == srcConst || f.field != nil && b.known[f.field.Name]
}

// concerns sets a read's read preference and read concern, a write's write concern: the
// step's, else the collection's, else the database's, else primary, local and majority.
func (b *mongoBuilder) concerns() {
	s, spec, c, mg := b.step, b.spec, b.coll.c, b.d.MongoDB
	if b.read {
		if spec.WriteConcern != nil {
			b.errAt("write_concern", "applies to writes")
		}
		s.ReadPref = ReadPref{Mode: "primary"}
		for _, p := range []*ReadPref{spec.ReadPreference, c.ReadPreference, mg.ReadPreference} {
			if p != nil {
				s.ReadPref = *p
				break
			}
		}
		checkReadPref(b.errs, spec.ReadPreference)
		s.ReadConcern = firstNonEmpty(spec.ReadConcern, c.ReadConcern, mg.ReadConcern, "local")
		checkReadConcern(b.errs, spec.Loc, spec.ReadConcern)
		return
	}
	if spec.ReadPreference != nil {
		b.errAt("read_preference", "applies to reads: writes always go to the primary")
	}
	s.WriteConcern = WriteConcern{W: "majority"}
	for _, w := range []*WriteConcern{spec.WriteConcern, c.WriteConcern, mg.WriteConcern} {
		if w != nil {
			s.WriteConcern = *w
			break
		}
	}
	checkWriteConcern(b.errs, spec.WriteConcern)
}

// filterFields chooses the equality conditions of a request other than an insert: the
// step's filter:, else for a listing every scalar field the operation knows, else _id and
// the shard key fields it knows.
func (b *mongoBuilder) filterFields() bool {
	if b.insert {
		return true
	}
	co, opSpec := b.coll, b.op.spec
	switch {
	case b.spec.Filter != nil:
		for _, name := range b.spec.Filter {
			f, ok := co.byName[name]
			if !ok {
				b.errAt("filter", "unknown document field %q of %s", name, co.name)
				continue
			}
			if !b.has(f) && !(f.field != nil && f.field.Name == opSpec.Range) {
				what := "it" // a field without its logical field: reported at the field
				if f.field != nil {
					what = f.field.Name
				}
				b.errAt("filter", "%s does not know %s (field %q); it knows %s", b.op.name, what, name, strings.Join(opSpec.Binds, ", "))
				continue
			}
			b.filter = append(b.filter, f)
		}
	case opSpec.Action == workloads.List && b.read:
		for _, f := range co.fields {
			if f.field != nil && b.known[f.field.Name] && f.field.Type.Scalar() {
				b.filter = append(b.filter, f)
			}
		}
	default:
		if id := co.byName["_id"]; id != nil && b.has(id) {
			b.filter = append(b.filter, id)
		}
		for _, k := range co.shardKey {
			f := co.byName[k]
			if f != nil && b.has(f) && f.name != "_id" {
				b.filter = append(b.filter, f)
			}
		}
		if len(b.filter) == 0 {
			b.errAt(b.step.Verb, "%s cannot identify a document of %s: it knows neither _id nor a shard key field (it knows %s); give filter:",
				b.op.name, co.name, strings.Join(opSpec.Binds, ", "))
			return false
		}
	}
	return true
}

// matchFields reads the constants of the step's match:, which join the filter.
func (b *mongoBuilder) matchFields() {
	co := b.coll
	b.matches = map[string]string{}
	for _, e := range b.spec.Match {
		f, ok := co.byName[e.Key]
		if !ok {
			b.errs.Add(e.Pos, "match."+e.Key, "unknown document field of %s", co.name)
			continue
		}
		b.matches[e.Key] = scalarString(&e.Value)
		found := false
		for _, x := range b.filter {
			found = found || x == f
		}
		if !found && !b.insert {
			b.filter = append(b.filter, f)
		}
	}
}

// rangeField takes a read's range field out of its equality conditions.
func (b *mongoBuilder) rangeField() {
	if !b.read || b.op.spec.Range == "" {
		return
	}
	b.rangeF = b.coll.byLogical[b.op.spec.Range]
	for i, f := range b.filter {
		if f == b.rangeF {
			b.filter = append(b.filter[:i], b.filter[i+1:]...)
			break
		}
	}
}

// targeting decides the request's kind from the leading shard key fields it gives with
// equality: all of them (or a hashed one) target one chunk range, a prefix or a range on
// the next field several, none every shard.
func (b *mongoBuilder) targeting() bool {
	s, co := b.step, b.coll
	b.eqs = map[string]bool{}
	for _, f := range b.filter {
		b.eqs[f.name] = true
	}
	if b.insert {
		for _, k := range co.shardKey {
			f := co.byName[k]
			if f == nil || !b.has(f) {
				b.errAt(s.Verb, "a document of %s must hold its whole shard key, but %s does not know %s", co.name, b.op.name, k)
				return false
			}
			b.eqs[k] = true
		}
	}
	for _, k := range co.shardKey {
		if !b.eqs[k] {
			break
		}
		b.keyFields++
	}
	s.KeyFields = b.keyFields
	for _, f := range b.filter {
		s.Filter = append(s.Filter, f.name)
	}
	if b.rangeF != nil {
		s.Filter = append(s.Filter, b.rangeF.name)
	}
	n := b.keyFields
	rangeOnKey := b.rangeF != nil && n < len(co.shardKey) && co.shardKey[n] == b.rangeF.name && !co.hashed[n]
	targeted := len(co.shardKey) == 0 || n == len(co.shardKey) || n > 0 && hashedWithin(co.hashed, n)
	switch {
	case b.read && targeted:
		s.Kind = Read
	case b.read && (n > 0 || rangeOnKey):
		s.Kind = MultiRead
	case b.read:
		s.Kind = Scan
	case b.insert || targeted:
		s.Kind = Write
	default:
		s.Kind = BroadcastWrite
	}
	return true
}

// statement names the request.
func (b *mongoBuilder) statement() {
	s := b.step
	switch {
	case b.read && b.op.spec.Action == workloads.List:
		s.Statement = "find"
	case b.read:
		s.Statement = "findOne"
	case s.Verb == "delete":
		s.Statement = "deleteOne"
	case b.insert:
		s.Statement = "insertOne"
	default:
		s.Statement = "updateOne"
	}
	// As command sets the limit.
	s.Limited = b.read && (s.Statement == "findOne" || b.op.spec.Action == workloads.List || b.spec.Limit > 0)
}

// updateFields finds the item list and the stock fields the request changes, and the
// fields an updateOne sets.
func (b *mongoBuilder) updateFields() bool {
	s, co, action := b.step, b.coll, b.op.spec.Action
	var counter string
	if action == workloads.Decrement {
		counter = b.op.spec.Sets[0]
		b.stockF = co.byLogical[counter]
	}
	for _, f := range co.fields {
		switch {
		case f.field != nil && f.field.Type == workloads.TItems:
			b.itemsF = f
		case action == workloads.Decrement && holdsPerKey(f.field, counter, workloads.TDocs):
			b.stocksF = f
		}
	}
	if action == workloads.Decrement && b.stockF == nil && b.stocksF == nil {
		b.errAt(s.Verb, "%s has no field holding %s for %s", co.name, perKeyNames(b.op.meta, counter), b.op.name)
		return false
	}
	b.sets = setsOf(b.op, b.spec, b.errs)
	if s.Statement != "updateOne" {
		return true
	}
	for _, f := range co.fields {
		if _, ok := b.overs[f.name]; ok && !b.eqs[f.name] {
			b.setFields = append(b.setFields, f)
			continue
		}
		if f.field == nil || !b.sets[f.field.Name] || f == b.itemsF || f == b.stockF || f == b.stocksF || f.name == "_id" {
			continue
		}
		if !f.field.Type.Scalar() && f.field.Type != workloads.TItems && f.field.Type != workloads.TDocs {
			continue
		}
		for _, k := range co.shardKey {
			if k == f.name {
				b.errAt(s.Verb, "%s changes %s, which is shard key field %s of %s", b.op.name, f.field.Name, k, co.name)
			}
		}
		b.setFields = append(b.setFields, f)
	}
	itemOp := action == workloads.ItemAdd || action == workloads.ItemSet || action == workloads.ItemRemove
	if itemOp && b.itemsF == nil && len(b.setFields) == 0 {
		b.errAt(s.Verb, "%s has no items array for %s", co.name, b.op.name)
		return false
	}
	if !itemOp && action != workloads.Decrement && len(b.setFields) == 0 {
		b.errAt(s.Verb, "%s writes nothing to %s: no document field holds a field it changes (%s)", b.op.name, co.name, strings.Join(b.op.spec.Sets, ", "))
		return false
	}
	return true
}

// sizeFunc compiles the documents and bytes of a request: a listing's page, one document
// (with its items), or a write's document, pushed item or change.
func (b *mongoBuilder) sizeFunc() {
	c := b.step.c
	fixed, perItem := int32(16), int32(0)
	for _, f := range b.coll.fields {
		if f == b.itemsF {
			perItem = f.field.SizeIn(b.model)
			fixed += docSize(f, b.model) - f.size // the array's own name and type
		} else {
			fixed += docSize(f, b.model)
		}
	}
	hasItems := b.itemsF != nil
	switch {
	case b.read && b.step.Statement == "find":
		limit := int32(b.spec.Limit)
		c.size = func(op *workloads.Op, _ int32) (int32, int32) {
			rows := op.Items
			if op.Qty > 0 && rows > op.Qty {
				rows = op.Qty
			}
			if limit > 0 && rows > limit {
				rows = limit
			}
			row := fixed
			if hasItems {
				row += perItem * 2
			}
			return rows, rows * row
		}
	case b.read && !hasItems:
		c.constSize(1, fixed)
	case b.read:
		c.size = func(op *workloads.Op, _ int32) (int32, int32) { return 1, fixed + perItem*op.Items }
	case b.insert && perItem == 0:
		c.constSize(1, fixed)
	case b.insert: // the document with its items
		c.size = func(op *workloads.Op, _ int32) (int32, int32) { return 1, fixed + perItem*op.Items }
	case b.op.spec.Action == workloads.ItemAdd: // $push of one item
		c.constSize(1, perItem+32)
	default: // an update's $set
		c.constSize(1, 64)
	}
}

// value compiles a scalar document field's value: a constant, or its field converted to
// the field's BSON type.
func (b *mongoBuilder) value(f *docField) valueFn {
	if o, ok := b.overs[f.name]; ok {
		return bsonConst(o, f.bson)
	}
	if f.kind == srcConst {
		return bsonConst(f.cnode.Value, f.bson)
	}
	conv := bsonConv(f.field.Type, f.bson)
	if conv == nil {
		return fieldValue(f.field, b.model)
	}
	get := f.field.Get(b.model) // not fieldValue's wrapper: one call less per key
	return func(op *workloads.Op, _ int32, buf []byte) workloads.Value {
		return conv(withBuf(get(op, buf), buf))
	}
}

// docValue is one document field's driver-neutral value for an operation.
type docValue struct {
	name string
	get  func(op *workloads.Op) any
}

// goValue compiles a document field's driver-neutral value, composite fields included.
func (b *mongoBuilder) goValue(f *docField) docValue {
	if f.field != nil && !f.field.Type.Scalar() {
		if _, ok := b.overs[f.name]; !ok {
			return docValue{f.name, bsonComposite(f, b.model)}
		}
	}
	return docValue{f.name, goOf(b.value(f), f.bson)}
}

// goOf is a scalar value as the driver-neutral Go value of a BSON type.
func goOf(get valueFn, bson string) func(op *workloads.Op) any {
	return func(op *workloads.Op) any {
		v := get(op, 0, nil)
		return bsonGo(bson, &v)
	}
}

// keyFuncs compiles the shard key values the request gives and their canonical encoding.
func (b *mongoBuilder) keyFuncs() {
	c, co := b.step.c, b.coll
	for _, k := range co.shardKey[:b.keyFields] {
		c.keyVals = append(c.keyVals, b.value(co.byName[k]))
	}
	kv := c.keyVals
	c.appendKey = func(dst []byte, op *workloads.Op, part int32) []byte {
		for _, f := range kv {
			dst, _ = appendKeyValue(dst, f, op, part)
		}
		return dst
	}
	c.keyValues = func(dst []byte, vals []workloads.Value, op *workloads.Op, part int32) ([]byte, []workloads.Value) {
		for _, f := range kv {
			var v workloads.Value
			dst, v = appendKeyValue(dst, f, op, part)
			vals = append(vals, v)
		}
		return dst, vals
	}
}

// appendKeyValue appends value f's canonical encoding to dst and returns the value, whose
// text (if any) is the copy in dst.
func appendKeyValue(dst []byte, f valueFn, op *workloads.Op, part int32) ([]byte, workloads.Value) {
	// Reserve the canonical header (type, 4-byte length) and let text land after it.
	at := len(dst)
	dst = append(dst, 0, 0, 0, 0, 0)
	v := f(op, part, dst[len(dst):])
	if v.Type == workloads.TText || v.Type == workloads.TInet {
		n := len(v.Bytes)
		dst = append(dst, v.Bytes...)
		dst[at], dst[at+1], dst[at+2], dst[at+3], dst[at+4] = byte(v.Type), byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
		v.Bytes = dst[len(dst)-n:]
		return dst, v
	}
	v.Bytes = nil
	return appendCanonical(dst[:at], &v), v
}

// commandFunc compiles the request: its filter (equalities, then the range), limit, and
// the document an insert writes or what an update changes.
func (b *mongoBuilder) commandFunc() {
	s, co := b.step, b.coll
	proto := Command{Database: b.d.MongoDB.Database, Collection: co.name, Op: s.Statement, ReadPref: s.ReadPref, WriteConcern: s.WriteConcern, ReadConcern: s.ReadConcern}
	var filter, document, set []docValue
	for _, f := range b.filter {
		if mv, ok := b.matches[f.name]; ok {
			filter = append(filter, docValue{f.name, goOf(bsonConst(mv, f.bson), f.bson)})
			continue
		}
		filter = append(filter, b.goValue(f))
	}
	rangeCond := b.rangeCondition()
	switch s.Statement {
	case "insertOne":
		for _, f := range co.fields {
			if b.has(f) {
				document = append(document, b.goValue(f))
			}
		}
	case "updateOne":
		for _, f := range b.setFields {
			set = append(set, b.goValue(f))
		}
	}
	update := b.updateFunc()
	limit := int64(b.spec.Limit)
	list := b.op.spec.Action == workloads.List
	s.c.command = func(op *workloads.Op) *Command {
		cmd := proto
		for _, x := range filter {
			cmd.Filter = append(cmd.Filter, E{x.name, x.get(op)})
		}
		if rangeCond != nil {
			rangeCond(&cmd, op)
		}
		if list {
			cmd.Limit = int64(op.Qty)
		}
		if limit > 0 {
			cmd.Limit = limit
		}
		switch cmd.Op {
		case "insertOne":
			for _, x := range document {
				cmd.Document = append(cmd.Document, E{x.name, x.get(op)})
			}
		case "updateOne":
			var sets D
			for _, x := range set {
				sets = append(sets, E{x.name, x.get(op)})
			}
			if update != nil {
				sets = update(&cmd, sets, op)
			}
			if len(sets) > 0 {
				cmd.Update = append(cmd.Update, E{"$set", sets})
			}
		}
		return &cmd
	}
}

// rangeCondition compiles a read's range condition: [lo, hi) newest first for times,
// [lo, hi] otherwise. nil without a range.
func (b *mongoBuilder) rangeCondition() func(cmd *Command, op *workloads.Op) {
	f := b.rangeF
	if f == nil {
		return nil
	}
	lo, hi := rangeValues(f.field, b.model)
	conv := bsonConv(f.field.Type, f.bson)
	bound := func(g valueFn) func(*workloads.Op) any {
		return func(op *workloads.Op) any {
			v := g(op, 0, nil)
			if conv != nil {
				v = conv(v)
			}
			return bsonGo(f.bson, &v)
		}
	}
	rangeLo, rangeHi := bound(lo), bound(hi)
	isTime := f.field.Type == workloads.TTimestamp || f.field.Type == workloads.TDate
	hiOp := "$lt"
	if !isTime {
		hiOp = "$lte"
	}
	return func(cmd *Command, op *workloads.Op) {
		cmd.Filter = append(cmd.Filter, E{f.name, D{{"$gte", rangeLo(op)}, {hiOp, rangeHi(op)}}})
		if isTime {
			cmd.Sort = D{{f.name, int32(-1)}}
		}
	}
}

// updateFunc compiles what an updateOne changes besides the fields it sets, for the
// operation's action: the item it pushes, changes or pulls, the stock it decrements, or
// the item list it rewrites. It may add to the command's filter and update, and returns
// the $set fields. nil when there is nothing more.
func (b *mongoBuilder) updateFunc() func(cmd *Command, set D, op *workloads.Op) D {
	if b.step.Statement != "updateOne" {
		return nil
	}
	items, m := b.itemsF, b.model
	var itemDoc func(workloads.Item) D
	var oneItem func(*workloads.Op) workloads.Item
	itemKey, qtyKey := "", "quantity"
	if items != nil {
		itemDoc = itemToDoc(items.itemFields)
		if f := b.op.meta.Item; f != nil {
			oneItem = f(m)
		}
		for _, e := range items.itemFields {
			switch workloads.ItemAttrOf(e.Key) {
			case workloads.ItemProductID:
				itemKey = e.Key
			case workloads.ItemQuantity:
				qtyKey = e.Key
			}
		}
	}
	switch action := b.op.spec.Action; {
	case action == workloads.ItemAdd && items != nil:
		return func(cmd *Command, set D, op *workloads.Op) D {
			cmd.Update = append(cmd.Update, E{"$push", D{{items.name, itemDoc(oneItem(op))}}})
			cmd.Upsert = true
			return set
		}
	case action == workloads.ItemSet && items != nil:
		return func(cmd *Command, set D, op *workloads.Op) D {
			cmd.Filter = append(cmd.Filter, E{items.name + "." + itemKey, productIDValue(oneItem(op), items.itemFields, itemKey)})
			return append(set, E{items.name + ".$." + qtyKey, op.Qty})
		}
	case action == workloads.ItemRemove && items != nil:
		return func(cmd *Command, set D, op *workloads.Op) D {
			cmd.Update = append(cmd.Update, E{"$pull", D{{items.name, D{{itemKey, productIDValue(oneItem(op), items.itemFields, itemKey)}}}}})
			return set
		}
	case action == workloads.Decrement && b.stockF != nil:
		stock := b.stockF.name
		return func(cmd *Command, set D, op *workloads.Op) D {
			n := int32(op.Qty)
			cmd.Filter = append(cmd.Filter, E{stock, D{{"$gte", n}}})
			cmd.Update = append(cmd.Update, E{"$inc", D{{stock, -n}}})
			return set
		}
	case action == workloads.Decrement:
		// Documents of (key, counter): the one of the operation's key (zone) changes.
		stocks, per := b.stocksF.name, b.stocksF.field.PerKey
		zone := fieldValue(b.op.meta.Field(per.Key), m)
		return func(cmd *Command, set D, op *workloads.Op) D {
			n := int32(op.Qty)
			z := zone(op, 0, nil)
			cmd.Filter = append(cmd.Filter, E{stocks, D{{"$elemMatch", D{{per.DocKey, string(z.Bytes)}, {per.DocValue, D{{"$gte", n}}}}}}})
			cmd.Update = append(cmd.Update, E{"$inc", D{{stocks + ".$." + per.DocValue, -n}}})
			return set
		}
	case action == workloads.ItemAdd, action == workloads.ItemSet, action == workloads.ItemRemove:
		return nil
	case items != nil && b.sets[items.field.Name]:
		// A whole-list rewrite (merge).
		all := items.field.Composite(m)
		return func(_ *Command, set D, op *workloads.Op) D {
			list := all(op).([]workloads.Item)
			arr := make([]any, len(list))
			for i := range list {
				arr[i] = itemDoc(list[i])
			}
			return append(set, E{items.name, arr})
		}
	}
	return nil
}

// perKeyNames names a counter and the fields holding it per key as documents, for errors:
// "stock (or stocks)".
func perKeyNames(meta *workloads.Meta, counter string) string {
	var docs []string
	for i := range meta.Fields {
		if f := &meta.Fields[i]; holdsPerKey(f, counter, workloads.TDocs) {
			docs = append(docs, f.Name)
		}
	}
	if len(docs) == 0 {
		return counter
	}
	return counter + " (or " + strings.Join(docs, ", ") + ")"
}
