package design

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shardbench/shardbench/internal/yamlx"
	"github.com/shardbench/shardbench/workloads"
)

// D is an ordered document: the MongoDB backend turns it into bson.D. Values are
// driver-neutral: string, int32, int64, float64, bool, time.Time, Decimal, ObjectID,
// [16]byte (a UUID, binary subtype 4), []any, D, nil.
type D []E

// E is one element of a D.
type E struct {
	Key   string
	Value any
}

// Command is one MongoDB request.
type Command struct {
	Database   string
	Collection string
	// Op is insertOne, updateOne, deleteOne, findOne or find.
	Op       string
	Filter   D
	Update   D
	Document D
	Sort     D
	Limit    int64
	Upsert   bool
	// Read preference, write concern and read concern of the request.
	ReadPref     ReadPref
	WriteConcern WriteConcern
	ReadConcern  string
}

// docUse is a document field with its value function for one step.
type docUse struct {
	f    *docField
	eq   bool
	over string
	has  bool
}

func (d *Design) mongoStep(ctx *opCtx, ss *StepSpec, s *Step, co *collection, m *workloads.Model, errs *yamlx.Errors) bool {
	mg := d.MongoDB
	s.Database, s.Namespace = MongoDB, mg.Database
	s.KeyColumns, s.Hashed = co.shardKey, co.hashed
	if ss.Consistency != "" || ss.Serial != "" || ss.LWT || ss.Scan || ss.TTL != 0 || ss.Mode != "" {
		errs.AddAt(ss.Loc, "consistency", "consistency, serial_consistency, lwt, scan, ttl and mode apply to Cassandra steps; %s is a MongoDB collection", co.name)
	}
	av := available(ctx.spec, ctx.meta, s.Verb)
	overs := map[string]string{}
	for _, e := range ss.Values {
		if _, ok := co.byName[e.Key]; !ok {
			errs.Add(e.Pos, "values."+e.Key, "unknown document field of %s", co.name)
			continue
		}
		overs[e.Key] = scalarString(&e.Value)
	}
	has := func(f *docField) bool {
		if _, ok := overs[f.name]; ok {
			return true
		}
		return f.kind == srcConst || f.field != nil && av[f.field.Name]
	}
	action := ctx.spec.Action
	read := s.Verb == "read"
	// Defaults.
	if read {
		if ss.WriteConcern != nil {
			errs.AddAt(ss.Loc, "write_concern", "applies to writes")
		}
		rp := ReadPref{Mode: "primary"}
		for _, p := range []*ReadPref{ss.ReadPreference, co.c.ReadPreference, mg.ReadPreference} {
			if p != nil {
				rp = *p
				break
			}
		}
		checkReadPref(errs, ss.ReadPreference)
		s.ReadPref = rp
		s.ReadConcern = firstNonEmpty(ss.ReadConcern, co.c.ReadConcern, mg.ReadConcern, "local")
		checkReadConcern(errs, ss.Loc, ss.ReadConcern)
	} else {
		if ss.ReadPreference != nil {
			errs.AddAt(ss.Loc, "read_preference", "applies to reads: writes always go to the primary")
		}
		wc := WriteConcern{W: "majority"}
		for _, w := range []*WriteConcern{ss.WriteConcern, co.c.WriteConcern, mg.WriteConcern} {
			if w != nil {
				wc = *w
				break
			}
		}
		checkWriteConcern(errs, ss.WriteConcern)
		s.WriteConcern = wc
	}
	// Filter fields.
	var filter []*docField
	insert := s.Verb == "insert" || action == workloads.Insert
	if !insert {
		if ss.Filter != nil {
			for _, name := range ss.Filter {
				f, ok := co.byName[name]
				if !ok {
					errs.AddAt(ss.Loc, "filter", "unknown document field %q of %s", name, co.name)
					continue
				}
				if !has(f) && !(f.field != nil && f.field.Name == ctx.spec.Range) {
					errs.AddAt(ss.Loc, "filter", "%s does not know %s (field %q); it knows %s", ctx.name, f.field.Name, name, strings.Join(ctx.spec.Binds, ", "))
					continue
				}
				filter = append(filter, f)
			}
		} else if action == workloads.List && read {
			for _, f := range co.fields {
				if f.field != nil && av[f.field.Name] && f.field.Type.Scalar() {
					filter = append(filter, f)
				}
			}
		} else {
			if id := co.byName["_id"]; id != nil && has(id) {
				filter = append(filter, id)
			}
			for _, k := range co.shardKey {
				f := co.byName[k]
				if f != nil && has(f) && f.name != "_id" {
					filter = append(filter, f)
				}
			}
			if len(filter) == 0 {
				errs.AddAt(ss.Loc, s.Verb, "%s cannot identify a document of %s: it knows neither _id nor a shard key field (it knows %s); give filter:", ctx.name, co.name, strings.Join(ctx.spec.Binds, ", "))
				return false
			}
		}
	}
	matches := map[string]string{}
	for _, e := range ss.Match {
		f, ok := co.byName[e.Key]
		if !ok {
			errs.Add(e.Pos, "match."+e.Key, "unknown document field of %s", co.name)
			continue
		}
		matches[e.Key] = scalarString(&e.Value)
		found := false
		for _, x := range filter {
			found = found || x == f
		}
		if !found && !insert {
			filter = append(filter, f)
		}
	}
	var rangeF *docField
	if read && ctx.spec.Range != "" {
		rangeF = co.byLogical[ctx.spec.Range]
		for i, f := range filter {
			if f == rangeF {
				filter = append(filter[:i], filter[i+1:]...)
				break
			}
		}
	}
	// Targeting: leading shard key fields with equality.
	eqs := map[string]bool{}
	for _, f := range filter {
		eqs[f.name] = true
	}
	if insert {
		for _, k := range co.shardKey {
			f := co.byName[k]
			if f == nil || !has(f) {
				errs.AddAt(ss.Loc, s.Verb, "a document of %s must hold its whole shard key, but %s does not know %s", co.name, ctx.name, k)
				return false
			}
			eqs[k] = true
		}
	}
	keyFields := 0
	for _, k := range co.shardKey {
		if !eqs[k] {
			break
		}
		keyFields++
	}
	s.KeyFields = keyFields
	for _, f := range filter {
		s.Filter = append(s.Filter, f.name)
	}
	if rangeF != nil {
		s.Filter = append(s.Filter, rangeF.name)
	}
	rangeOnKey := rangeF != nil && keyFields < len(co.shardKey) && co.shardKey[keyFields] == rangeF.name && !co.hashed[keyFields]
	targeted := len(co.shardKey) == 0 || keyFields == len(co.shardKey) || keyFields > 0 && hashedWithin(co.hashed, keyFields)
	switch {
	case read && targeted:
		s.Kind = Read
	case read && (keyFields > 0 || rangeOnKey):
		s.Kind = MultiRead
	case read:
		s.Kind = Scan
	case insert || targeted:
		s.Kind = Write
	default:
		s.Kind = BroadcastWrite
	}
	// Statement.
	switch {
	case read && action == workloads.List:
		s.Statement = "find"
	case read:
		s.Statement = "findOne"
	case s.Verb == "delete":
		s.Statement = "deleteOne"
	case insert:
		s.Statement = "insertOne"
	default:
		s.Statement = "updateOne"
	}
	var itemsF *docField
	for _, f := range co.fields {
		if f.field != nil && f.field.Type == workloads.TItems && f.field.Name == "items" {
			itemsF = f
		}
	}
	var stockF, stocksF *docField
	if action == workloads.Decrement {
		stockF = co.byLogical["stock"]
		stocksF = co.byLogical["stocks"]
		if stockF == nil && stocksF == nil {
			errs.AddAt(ss.Loc, s.Verb, "%s has no field holding stock (or stocks) for %s", co.name, ctx.name)
			return false
		}
	}
	sets := setsOf(ctx, ss, errs)
	var setFields []*docField
	if s.Statement == "updateOne" {
		for _, f := range co.fields {
			if _, ok := overs[f.name]; ok && !eqs[f.name] {
				setFields = append(setFields, f)
				continue
			}
			if f.field == nil || !sets[f.field.Name] || f == itemsF || f == stockF || f == stocksF || f.name == "_id" {
				continue
			}
			if !f.field.Type.Scalar() && f.field.Type != workloads.TItems {
				continue
			}
			for _, k := range co.shardKey {
				if k == f.name {
					errs.AddAt(ss.Loc, s.Verb, "%s changes %s, which is shard key field %s of %s", ctx.name, f.field.Name, k, co.name)
				}
			}
			setFields = append(setFields, f)
		}
		itemOp := action == workloads.ItemAdd || action == workloads.ItemSet || action == workloads.ItemRemove
		if itemOp && itemsF == nil && len(setFields) == 0 {
			errs.AddAt(ss.Loc, s.Verb, "%s has no items array for %s", co.name, ctx.name)
			return false
		}
		if !itemOp && action != workloads.Decrement && len(setFields) == 0 {
			errs.AddAt(ss.Loc, s.Verb, "%s writes nothing to %s: no document field holds a field it changes (%s)", ctx.name, co.name, strings.Join(ctx.spec.Sets, ", "))
			return false
		}
	}
	s.Limit = ss.Limit
	// Sizes.
	fixed, perItem := int32(0), int32(0)
	for _, f := range co.fields {
		if f == itemsF {
			perItem = f.field.SizeIn(m)
			fixed += docSize(f, m) - f.size // the array's own name and type
		} else {
			fixed += docSize(f, m)
		}
	}
	fixed += 16
	c := s.c
	c.parts = func(*workloads.Op) int32 { return 1 }
	switch {
	case read && s.Statement == "find":
		limit := int32(ss.Limit)
		hasItems := itemsF != nil
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
	case read:
		hasItems := itemsF != nil
		c.size = func(op *workloads.Op, _ int32) (int32, int32) {
			if hasItems {
				return 1, fixed + perItem*op.Items
			}
			return 1, fixed
		}
	default:
		push := action == workloads.ItemAdd
		c.size = func(op *workloads.Op, _ int32) (int32, int32) {
			switch {
			case insert:
				return 1, fixed + perItem*op.Items
			case push:
				return 1, perItem + 32
			}
			return 1, 64
		}
	}
	if m == nil {
		return true
	}
	// Values.
	val := func(f *docField) valueFn {
		if o, ok := overs[f.name]; ok {
			return bsonConst(o, f.bson)
		}
		if f.kind == srcConst {
			return bsonConst(f.cnode.Value, f.bson)
		}
		get := fieldValue(f.field, m)
		conv := bsonConv(f.field.Type, f.bson)
		if conv == nil {
			return get
		}
		return func(op *workloads.Op, p int32, buf []byte) workloads.Value {
			return conv(withBuf(get(op, p, buf), buf))
		}
	}
	goVal := func(f *docField) func(*workloads.Op) any {
		if f.field != nil && !f.field.Type.Scalar() {
			if _, ok := overs[f.name]; !ok {
				return bsonComposite(f, m)
			}
		}
		get := val(f)
		return func(op *workloads.Op) any {
			v := get(op, 0, nil)
			return bsonGo(f.bson, &v)
		}
	}
	for _, k := range co.shardKey[:keyFields] {
		c.keyVals = append(c.keyVals, val(co.byName[k]))
	}
	// A copy: applyView wraps c.keyVals in place, and the key functions below are
	// wrapped themselves, so they must call the unwrapped ones.
	kv := slices.Clone(c.keyVals)
	// keyValue appends value f's canonical encoding to dst and returns the value, whose
	// text (if any) is the copy in dst.
	keyValue := func(dst []byte, f valueFn, op *workloads.Op, part int32) ([]byte, workloads.Value) {
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
	c.appendKey = func(dst []byte, op *workloads.Op, part int32) []byte {
		for _, f := range kv {
			dst, _ = keyValue(dst, f, op, part)
		}
		return dst
	}
	c.keyValues = func(dst []byte, vals []workloads.Value, op *workloads.Op, part int32) ([]byte, []workloads.Value) {
		for _, f := range kv {
			var v workloads.Value
			dst, v = keyValue(dst, f, op, part)
			vals = append(vals, v)
		}
		return dst, vals
	}
	type fv struct {
		name string
		get  func(*workloads.Op) any
	}
	var filterVals []fv
	for _, f := range filter {
		if mv, ok := matches[f.name]; ok {
			get := bsonConst(mv, f.bson)
			bson := f.bson
			filterVals = append(filterVals, fv{f.name, func(op *workloads.Op) any {
				v := get(op, 0, nil)
				return bsonGo(bson, &v)
			}})
			continue
		}
		filterVals = append(filterVals, fv{f.name, goVal(f)})
	}
	var rangeLo, rangeHi func(*workloads.Op) any
	if rangeF != nil {
		lo, hi := d.rangeValues(rangeF.field, ctx, m)
		conv := bsonConv(rangeF.field.Type, rangeF.bson)
		mk := func(g valueFn) func(*workloads.Op) any {
			return func(op *workloads.Op) any {
				v := g(op, 0, nil)
				if conv != nil {
					v = conv(v)
				}
				return bsonGo(rangeF.bson, &v)
			}
		}
		rangeLo, rangeHi = mk(lo), mk(hi)
	}
	isTimeRange := rangeF != nil && (rangeF.field.Type == workloads.TTimestamp || rangeF.field.Type == workloads.TDate)
	var setVals []fv
	for _, f := range setFields {
		setVals = append(setVals, fv{f.name, goVal(f)})
	}
	var docVals []fv
	if insert {
		for _, f := range co.fields {
			if has(f) {
				docVals = append(docVals, fv{f.name, goVal(f)})
			}
		}
	}
	var itemDoc func(workloads.Item) D
	var oneItem func(*workloads.Op) workloads.Item
	itemKey := ""
	if itemsF != nil {
		itemDoc = itemToDoc(itemsF.itemFields)
		oneItem = opItem(ctx.meta, m)
		for _, e := range itemsF.itemFields {
			if itemAttr(e.Key) == "product_id" {
				itemKey = e.Key
			}
		}
	}
	qtyKey := "quantity"
	for _, e := range itemsFieldsOf(itemsF) {
		if itemAttr(e) == "quantity" {
			qtyKey = e
		}
	}
	zoneGet := func() valueFn {
		if f := ctx.meta.Field("geo_zone"); f != nil {
			return fieldValue(f, m)
		}
		return nil
	}()
	ns := mg.Database
	stmt := s.Statement
	rp, wc, rc := s.ReadPref, s.WriteConcern, s.ReadConcern
	limit := int64(ss.Limit)
	list := action == workloads.List
	c.mongo = func(op *workloads.Op) *Command {
		cmd := &Command{Database: ns, Collection: co.name, Op: stmt, ReadPref: rp, WriteConcern: wc, ReadConcern: rc}
		for _, x := range filterVals {
			cmd.Filter = append(cmd.Filter, E{x.name, x.get(op)})
		}
		if rangeLo != nil {
			hiOp := "$lt"
			if !isTimeRange {
				hiOp = "$lte"
			}
			cmd.Filter = append(cmd.Filter, E{rangeF.name, D{{"$gte", rangeLo(op)}, {hiOp, rangeHi(op)}}})
			if isTimeRange {
				cmd.Sort = D{{rangeF.name, int32(-1)}}
			}
		}
		if list {
			cmd.Limit = int64(op.Qty)
		}
		if limit > 0 {
			cmd.Limit = limit
		}
		switch stmt {
		case "insertOne":
			for _, x := range docVals {
				cmd.Document = append(cmd.Document, E{x.name, x.get(op)})
			}
		case "updateOne":
			var set D
			for _, x := range setVals {
				set = append(set, E{x.name, x.get(op)})
			}
			switch action {
			case workloads.ItemAdd:
				if itemsF != nil {
					cmd.Update = append(cmd.Update, E{"$push", D{{itemsF.name, itemDoc(oneItem(op))}}})
					cmd.Upsert = true
				}
			case workloads.ItemSet:
				if itemsF != nil {
					cmd.Filter = append(cmd.Filter, E{itemsF.name + "." + itemKey, productIDValue(oneItem(op), itemsF.itemFields, itemKey)})
					set = append(set, E{itemsF.name + ".$." + qtyKey, op.Qty})
				}
			case workloads.ItemRemove:
				if itemsF != nil {
					cmd.Update = append(cmd.Update, E{"$pull", D{{itemsF.name, D{{itemKey, productIDValue(oneItem(op), itemsF.itemFields, itemKey)}}}}})
				}
			case workloads.Decrement:
				n := int32(op.Qty)
				if stockF != nil {
					cmd.Filter = append(cmd.Filter, E{stockF.name, D{{"$gte", n}}})
					cmd.Update = append(cmd.Update, E{"$inc", D{{stockF.name, -n}}})
				} else {
					z := zoneGet(op, 0, nil)
					cmd.Filter = append(cmd.Filter, E{stocksF.name, D{{"$elemMatch", D{{"geo_zone", string(z.Bytes)}, {"qty", D{{"$gte", n}}}}}}})
					cmd.Update = append(cmd.Update, E{"$inc", D{{stocksF.name + ".$.qty", -n}}})
				}
			default:
				if itemsF != nil && sets["items"] {
					// A whole-list rewrite (merge).
					items := itemsF.field.Composite(m)(op).([]workloads.Item)
					arr := make([]any, len(items))
					for i := range items {
						arr[i] = itemDoc(items[i])
					}
					set = append(set, E{itemsF.name, arr})
				}
			}
			if len(set) > 0 {
				cmd.Update = append(cmd.Update, E{"$set", set})
			}
		}
		return cmd
	}
	return true
}

// hashedWithin reports whether one of the first n shard key fields is hashed: equality on
// a hashed field pins the hash, so the request targets one chunk range.
func hashedWithin(hashed []bool, n int) bool {
	for i := 0; i < n && i < len(hashed); i++ {
		if hashed[i] {
			return true
		}
	}
	return false
}

func itemsFieldsOf(f *docField) []string {
	if f == nil {
		return nil
	}
	return f.itemFields.Keys()
}

// productIDValue is the item's product id as the item documents store it.
func productIDValue(it workloads.Item, fields Ordered[string], key string) any {
	if t, ok := fields.Get(key); ok && *t == "string" {
		return string(workloads.AppendUUID(nil, it.ProductID))
	}
	return it.ProductID
}

func itemToDoc(fields Ordered[string]) func(workloads.Item) D {
	return func(it workloads.Item) D {
		out := make(D, 0, len(fields))
		for _, e := range fields {
			attr := itemAttr(e.Key)
			v := itemAttrValue(&it, attr)
			if conv := bsonConv(itemAttrType(attr), e.Value); conv != nil {
				v = conv(v)
			}
			out = append(out, E{e.Key, bsonGo(e.Value, &v)})
		}
		return out
	}
}

// bsonConst parses a constant for a BSON type.
func bsonConst(s, bson string) valueFn {
	var c workloads.Value
	switch bson {
	case "int", "long":
		c.Type = workloads.TInt
		if bson == "long" {
			c.Type = workloads.TBigInt
		}
		c.Int, _ = strconv.ParseInt(s, 10, 64)
	case "bool":
		c.Type = workloads.TBool
		if s == "true" {
			c.Int = 1
		}
	case "double":
		c.Type = workloads.TFloat
		c.Float, _ = strconv.ParseFloat(s, 64)
	default:
		c.Type, c.Bytes = workloads.TText, []byte(s)
	}
	return func(_ *workloads.Op, _ int32, buf []byte) workloads.Value {
		v := c
		v.Bytes = append(buf[:0], c.Bytes...)
		return v
	}
}

// bsonComposite converts a composite field for a document.
func bsonComposite(f *docField, m *workloads.Model) func(*workloads.Op) any {
	get := f.field.Composite(m)
	itemDoc := itemToDoc(f.itemFields)
	return func(op *workloads.Op) any {
		switch x := get(op).(type) {
		case []workloads.Item:
			arr := make([]any, len(x))
			for i := range x {
				arr[i] = itemDoc(x[i])
			}
			return arr
		case []workloads.Doc:
			arr := make([]any, len(x))
			for i := range x {
				arr[i] = docToD(x[i])
			}
			return arr
		case workloads.Doc:
			return docToD(x)
		case map[string]string:
			out := make(D, 0, len(x))
			for _, k := range sortedKeys(x) {
				out = append(out, E{k, x[k]})
			}
			return out
		case map[string]int32:
			out := make(D, 0, len(x))
			for _, k := range sortedKeys(x) {
				out = append(out, E{k, x[k]})
			}
			return out
		}
		return nil
	}
}

func docToD(doc workloads.Doc) D {
	out := make(D, len(doc))
	for i, e := range doc {
		v := e.Value
		if ms, ok := v.(int64); ok && e.Key == "updated_at" {
			v = time.UnixMilli(ms).UTC()
		}
		out[i] = E{e.Key, v}
	}
	return out
}
