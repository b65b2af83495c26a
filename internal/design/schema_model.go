package design

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/shardbench/shardbench/internal/yamlx"
	"github.com/shardbench/shardbench/workloads"
)

// srcKind says where a column's or document field's value comes from.
type srcKind uint8

const (
	srcField srcKind = iota + 1
	srcBucket
	srcTimeBucket
	srcConst
	srcUDT // a frozen UDT whose fields are entity fields of the same names
)

type table struct {
	name   string
	t      *Table
	meta   *workloads.Meta
	cols   []*column
	byName map[string]*column
	pk, ck []*column
	ckDesc []bool
	rf     int
}

type column struct {
	name   string
	loc    yamlx.Loc
	typ    *cqlType
	kind   srcKind
	field  *workloads.Field // the value's field, or the bucket's "of" field
	bucket *BucketSpec
	tb     *timeBucket
	cnode  *yaml.Node
	pk, ck bool
	items  bool // a list of items (the entity's items field)
	size   int32
}

type timeBucket struct {
	unit   string
	format string
	offMs  int64
}

type collection struct {
	name   string
	c      *Collection
	meta   *workloads.Meta
	fields []*docField
	byName map[string]*docField
	// byLogical maps a logical field to the document field holding it.
	byLogical map[string]*docField
	shardKey  []string
	hashed    []bool
}

type docField struct {
	name       string
	loc        yamlx.Loc
	bson       string
	kind       srcKind
	field      *workloads.Field
	cnode      *yaml.Node
	size       int32
	itemFields Ordered[string]
}

// entityMeta finds the workload whose entity this is.
func entityMeta(entity string) *workloads.Meta {
	for _, m := range workloads.Registered() {
		if m.Entity == entity {
			return m
		}
	}
	return nil
}

func entityNames() string {
	var names []string
	for _, m := range workloads.Registered() {
		names = append(names, m.Entity)
	}
	return strings.Join(names, ", ")
}

func fieldNames(m *workloads.Meta) string {
	names := make([]string, len(m.Fields))
	for i, f := range m.Fields {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// replicationFactor is the total replication factor of the keyspace.
func (c *CassandraSpec) replicationFactor() int {
	if c.Replication.Factor > 0 {
		return c.Replication.Factor
	}
	n := 0
	for _, dc := range c.Replication.DCs {
		n += dc.Factor
	}
	return n
}

func (c *CassandraSpec) isNTS() bool {
	return strings.HasSuffix(c.Replication.Class, "NetworkTopologyStrategy")
}

var compactionClasses = map[string]bool{
	"SizeTieredCompactionStrategy": true, "LeveledCompactionStrategy": true,
	"TimeWindowCompactionStrategy": true, "UnifiedCompactionStrategy": true,
}

// resolveSchema validates the tables and collections and builds their lookup structures.
func (d *Design) resolveSchema(errs *yamlx.Errors) {
	f := d.File
	if strings.TrimSpace(f.Name) == "" {
		errs.AddAt(f.Loc, "name", "must not be empty")
	}
	if f.Cassandra == nil && f.MongoDB == nil {
		errs.AddAt(f.Loc, "cassandra", "a design needs a cassandra section, a mongodb section, or both")
	}
	names := map[string]string{}
	if c := f.Cassandra; c != nil {
		d.resolveCassandra(c, names, errs)
	}
	if m := f.MongoDB; m != nil {
		d.resolveMongo(m, names, errs)
	}
}

func (d *Design) resolveCassandra(c *CassandraSpec, names map[string]string, errs *yamlx.Errors) {
	if !validIdent(c.Keyspace) {
		errs.AddAt(c.Loc, "keyspace", "must be a CQL identifier (letters, digits, _), got %q", c.Keyspace)
	}
	r := &c.Replication
	switch r.Class {
	case "SimpleStrategy", "org.apache.cassandra.locator.SimpleStrategy":
		if r.Factor < 1 {
			errs.AddAt(r.Loc, "replication_factor", "SimpleStrategy needs replication_factor >= 1, got %d", r.Factor)
		}
		for _, dc := range r.DCs {
			errs.AddAt(r.Loc, dc.DC, "SimpleStrategy takes only replication_factor (per-DC factors need NetworkTopologyStrategy)")
		}
	case "NetworkTopologyStrategy", "org.apache.cassandra.locator.NetworkTopologyStrategy":
		if len(r.DCs) == 0 {
			errs.AddAt(r.Loc, "class", "NetworkTopologyStrategy needs a factor per data center, e.g. {class: NetworkTopologyStrategy, DC1: 3, DC2: 3}")
		}
		if r.Loc.Has("replication_factor") {
			errs.AddAt(r.Loc, "replication_factor", "NetworkTopologyStrategy takes a factor per data center, not replication_factor")
		}
		for _, dc := range r.DCs {
			if dc.Factor < 0 || dc.Factor > 32 {
				errs.AddAt(r.Loc, dc.DC, "replication factor must be between 0 and 32, got %d", dc.Factor)
			}
		}
	case "":
		errs.AddAt(r.Loc, "class", "is required (SimpleStrategy or NetworkTopologyStrategy)")
	default:
		errs.AddAt(r.Loc, "class", "must be SimpleStrategy or NetworkTopologyStrategy, got %q", r.Class)
	}
	checkCL(errs, c.Consistency, c, "")
	udts := map[string]*udtInfo{}
	for _, e := range c.Types {
		if !validIdent(e.Key) {
			errs.Add(e.Pos, "cassandra.types."+e.Key, "type name must be a CQL identifier")
		}
		u := &udtInfo{Name: strings.ToLower(e.Key)}
		for _, fe := range e.Value.Fields {
			t, err := parseCQLType(fe.Value, udts)
			if err != nil {
				errs.Add(fe.Pos, "cassandra.types."+e.Key+"."+fe.Key, "%v", err)
				continue
			}
			u.Fields = append(u.Fields, udtField{Name: fe.Key, Type: t})
		}
		udts[u.Name] = u
	}
	if len(c.Tables) == 0 {
		errs.AddAt(c.Loc, "tables", "must list at least one table")
	}
	for i := range c.Tables {
		e := &c.Tables[i]
		path := "cassandra.tables." + e.Key
		if prev, dup := names[e.Key]; dup {
			errs.Add(e.Pos, path, "name already used by %s", prev)
		}
		names[e.Key] = path
		if !validIdent(e.Key) {
			errs.Add(e.Pos, path, "table name must be a CQL identifier")
		}
		t := d.resolveTable(e.Key, &e.Value, udts, c, errs)
		if t != nil {
			d.tables = append(d.tables, t)
		}
	}
}

func (d *Design) resolveTable(name string, tt *Table, udts map[string]*udtInfo, c *CassandraSpec, errs *yamlx.Errors) *table {
	t := &table{name: name, t: tt, byName: map[string]*column{}, rf: c.replicationFactor()}
	if tt.Entity != "" {
		t.meta = entityMeta(tt.Entity)
		if t.meta == nil {
			errs.AddAt(tt.Loc, "entity", "unknown entity %q (known: %s)", tt.Entity, entityNames())
			return nil
		}
	}
	if len(tt.Column) == 0 {
		errs.AddAt(tt.Loc, "columns", "must list the table's columns")
	}
	for i := range tt.Column {
		e := &tt.Column[i]
		col := d.resolveColumn(e.Key, &e.Value, t.meta, udts, errs)
		if col != nil {
			if !validIdent(e.Key) {
				errs.Add(e.Pos, col.loc.Path, "column name must be a CQL identifier")
			}
			t.cols = append(t.cols, col)
			t.byName[e.Key] = col
		}
	}
	if len(tt.PartitionKey) == 0 {
		errs.AddAt(tt.Loc, "partition_key", "must name at least one column")
	}
	used := map[string]bool{}
	for _, k := range tt.PartitionKey {
		col, ok := t.byName[k]
		switch {
		case !ok:
			errs.AddAt(tt.Loc, "partition_key", "unknown column %q (columns: %s)", k, strings.Join(tt.Column.Keys(), ", "))
			continue
		case used[k]:
			errs.AddAt(tt.Loc, "partition_key", "column %q is listed twice", k)
			continue
		}
		used[k] = true
		if col.typ.isCollection() && !col.typ.Frozen {
			errs.AddAt(tt.Loc, "partition_key", "column %q is a non-frozen collection and cannot be in a key", k)
		}
		col.pk = true
		t.pk = append(t.pk, col)
	}
	for _, s := range tt.Clustering {
		k, order, _ := strings.Cut(strings.TrimSpace(s), " ")
		order = strings.ToLower(strings.TrimSpace(order))
		col, ok := t.byName[k]
		switch {
		case !ok:
			errs.AddAt(tt.Loc, "clustering", "unknown column %q (columns: %s)", k, strings.Join(tt.Column.Keys(), ", "))
			continue
		case used[k]:
			errs.AddAt(tt.Loc, "clustering", "column %q is already in the key", k)
			continue
		case order != "" && order != "asc" && order != "desc":
			errs.AddAt(tt.Loc, "clustering", "order of %q must be asc or desc, got %q", k, order)
		}
		used[k] = true
		if col.typ.isCollection() && !col.typ.Frozen {
			errs.AddAt(tt.Loc, "clustering", "column %q is a non-frozen collection and cannot be in a key", k)
		}
		col.ck = true
		t.ck = append(t.ck, col)
		t.ckDesc = append(t.ckDesc, order == "desc")
	}
	for _, col := range t.cols {
		if (col.pk || col.ck) && col.typ.Name == "counter" {
			errs.AddAt(col.loc, "type", "counter columns cannot be in a key")
		}
		if col.items && (col.pk || col.ck) {
			errs.AddAt(col.loc, "type", "an item list cannot be in a key")
		}
	}
	if tt.TTL < 0 || tt.TTL > 20*365*24*time.Hour {
		errs.AddAt(tt.Loc, "ttl", "must be between 0 and 20 years")
	}
	if tt.TTL%time.Second != 0 {
		errs.AddAt(tt.Loc, "ttl", "must be whole seconds")
	}
	if tt.GCGrace != nil && *tt.GCGrace < 0 {
		errs.AddAt(tt.Loc, "gc_grace", "must not be negative")
	}
	if len(tt.Compaction) > 0 {
		cls, ok := tt.Compaction.Get("class")
		if !ok {
			errs.AddAt(tt.Loc, "compaction", "needs a class")
		} else if !compactionClasses[strings.TrimPrefix(*cls, "org.apache.cassandra.db.compaction.")] {
			errs.AddAt(tt.Loc, "compaction", "unknown compaction class %q (SizeTiered, Leveled, TimeWindow or UnifiedCompactionStrategy)", *cls)
		} else if strings.Contains(*cls, "TimeWindow") {
			if u, ok := tt.Compaction.Get("compaction_window_unit"); ok {
				switch *u {
				case "MINUTES", "HOURS", "DAYS":
				default:
					errs.AddAt(tt.Loc, "compaction", "compaction_window_unit must be MINUTES, HOURS or DAYS, got %q", *u)
				}
			}
		}
	}
	checkCL(errs, tt.Consistency, c, "")
	return t
}

func (d *Design) resolveColumn(name string, c *Column, meta *workloads.Meta, udts map[string]*udtInfo, errs *yamlx.Errors) *column {
	col := &column{name: name, loc: c.Loc}
	typ, err := parseCQLType(c.Type, udts)
	if err != nil {
		errs.AddAt(c.Loc, "type", "%v", err)
		return nil
	}
	col.typ = typ
	if meta == nil {
		// A schema-only table (no entity): written by something other than the workload.
		if c.Field != "" || c.Bucket != nil || c.TimeBucket != nil || c.Value != nil {
			errs.AddAt(c.Loc, "field", "a table without an entity has plain typed columns")
		}
		col.kind, col.size = srcConst, 8
		return col
	}
	sources := 0
	for _, b := range []bool{c.Field != "", c.Bucket != nil, c.TimeBucket != nil, c.Value != nil} {
		if b {
			sources++
		}
	}
	if sources > 1 {
		errs.AddAt(c.Loc, "field", "give one of field, bucket, time_bucket or value")
	}
	switch {
	case c.Bucket != nil:
		b := c.Bucket
		col.kind, col.bucket, col.size = srcBucket, b, 4
		col.field = meta.Field(b.Of)
		if col.field == nil {
			errs.AddAt(b.Loc, "of", "unknown field %q of %s (fields: %s)", b.Of, meta.Entity, fieldNames(meta))
		}
		if b.Count < 1 {
			errs.AddAt(b.Loc, "count", "bucket count must be at least 1, got %d", b.Count)
		}
		switch b.Hash {
		case "java_uuid_hashcode":
			if col.field != nil && col.field.Type != workloads.TUUID {
				errs.AddAt(b.Loc, "hash", "java_uuid_hashcode needs a UUID field; %s is %s", b.Of, col.field.Type)
			}
		case "java_string_hashcode", "murmur3", "fnv1a":
		case "":
			errs.AddAt(b.Loc, "hash", "is required: java_uuid_hashcode, java_string_hashcode, murmur3 or fnv1a")
		default:
			errs.AddAt(b.Loc, "hash", "must be java_uuid_hashcode, java_string_hashcode, murmur3 or fnv1a, got %q", b.Hash)
		}
		switch typ.Name {
		case "int", "bigint", "smallint", "tinyint", "text", "varchar":
		default:
			errs.AddAt(c.Loc, "type", "a bucket column must be an integer or text type, got %s", typ)
		}
	case c.TimeBucket != nil:
		tb := c.TimeBucket
		col.kind = srcTimeBucket
		col.field = meta.Field(tb.Of)
		if col.field == nil {
			errs.AddAt(tb.Loc, "of", "unknown field %q of %s (fields: %s)", tb.Of, meta.Entity, fieldNames(meta))
		} else if col.field.Type != workloads.TTimestamp && col.field.Type != workloads.TDate {
			errs.AddAt(tb.Loc, "of", "a time bucket needs a timestamp or date field; %s is %s", tb.Of, col.field.Type)
		}
		col.tb = &timeBucket{unit: tb.Unit, format: tb.Format}
		switch tb.Unit {
		case "hour", "day", "month", "year":
		default:
			errs.AddAt(tb.Loc, "unit", "must be hour, day, month or year, got %q", tb.Unit)
		}
		if tb.UTCOffset != "" {
			off, err := parseOffset(tb.UTCOffset)
			if err != nil {
				errs.AddAt(tb.Loc, "utc_offset", "%v", err)
			}
			col.tb.offMs = off
		}
		switch typ.Name {
		case "text", "varchar", "ascii":
			if col.tb.format == "" {
				col.tb.format = map[string]string{"hour": "YYYY-MM-DD HH", "day": "YYYY-MM-DD", "month": "YYYY-MM", "year": "YYYY"}[tb.Unit]
			}
			if !strings.Contains(col.tb.format, "YYYY") {
				errs.AddAt(tb.Loc, "format", "must contain YYYY (and MM, DD, HH as the unit needs), got %q", col.tb.format)
			}
			col.size = int32(len(col.tb.format))
		case "date", "int", "timestamp":
			if tb.Format != "" {
				errs.AddAt(tb.Loc, "format", "applies to text columns only")
			}
			col.size = 4
			if typ.Name == "timestamp" {
				col.size = 8
			}
			if typ.Name == "date" && tb.Unit == "hour" {
				errs.AddAt(tb.Loc, "unit", "an hour bucket cannot be stored as a date")
			}
		default:
			errs.AddAt(c.Loc, "type", "a time bucket column must be text, date, int (yyyymmdd) or timestamp, got %s", typ)
		}
	case c.Value != nil:
		col.kind, col.cnode = srcConst, c.Value
		if c.Value.Kind != yaml.ScalarNode {
			errs.AddAt(c.Loc, "value", "a constant must be a scalar")
		}
		col.size = int32(len(c.Value.Value)) + 1
	default:
		fname := c.Field
		if fname == "" {
			fname = name
		}
		col.kind = srcField
		col.field = meta.Field(fname)
		if col.field == nil {
			if typ.UDT != nil && c.Field == "" && typ.Frozen {
				// A frozen UDT whose fields are entity fields.
				col.kind = srcUDT
				for _, uf := range typ.UDT.Fields {
					f := meta.Field(uf.Name)
					if f == nil {
						errs.AddAt(c.Loc, "type", "field %q of type %s is not a field of %s (fields: %s)", uf.Name, typ.UDT.Name, meta.Entity, fieldNames(meta))
						continue
					}
					if err := compatible(f.Type, uf.Type); err != nil {
						errs.AddAt(c.Loc, "type", "%s.%s: %v", typ.UDT.Name, uf.Name, err)
					}
					col.size += f.Size
				}
				return col
			}
			how := "set field: to one of them, or use bucket/time_bucket/value"
			errs.AddAt(c.Loc, "field", "column %q: %s has no logical field %q (fields: %s; %s)", name, meta.Entity, fname, fieldNames(meta), how)
			return col
		}
		col.size = col.field.Size
		if err := compatible(col.field.Type, typ); err != nil {
			errs.AddAt(c.Loc, "type", "column %q holds %s (%s): %v", name, fname, col.field.Type, err)
		}
		if col.field.Type == workloads.TItems {
			col.items = true
		}
	}
	return col
}

func parseOffset(s string) (int64, error) {
	sign := int64(1)
	switch {
	case strings.HasPrefix(s, "+"):
		s = s[1:]
	case strings.HasPrefix(s, "-"):
		sign, s = -1, s[1:]
	default:
		return 0, fmt.Errorf("utc_offset must look like +03:00, got %q", s)
	}
	h, m, ok := strings.Cut(s, ":")
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if !ok || err1 != nil || err2 != nil || hh > 14 || mm > 59 {
		return 0, fmt.Errorf("utc_offset must look like +03:00, got %q", s)
	}
	return sign * (int64(hh)*3600 + int64(mm)*60) * 1000, nil
}

// compatible checks that a logical field's values can be stored in a CQL type.
func compatible(from workloads.Type, to *cqlType) error {
	ok := false
	n := to.Name
	switch from {
	case workloads.TUUID:
		ok = n == "uuid" || to.isText() || n == "blob"
	case workloads.TObjectID:
		ok = to.isText() || n == "blob"
	case workloads.TText:
		ok = to.isText() || n == "blob"
	case workloads.TInt, workloads.TBigInt:
		ok = n == "int" || n == "bigint" || n == "varint" || n == "smallint" || n == "tinyint" || n == "counter" || to.isText() || n == "double" || n == "float"
	case workloads.TTimestamp:
		ok = n == "timestamp" || n == "date" || n == "bigint" || to.isText()
	case workloads.TDate:
		ok = n == "date" || n == "timestamp" || to.isText()
	case workloads.TDecimal:
		ok = n == "decimal" || n == "double" || n == "float" || n == "bigint" || n == "int" || to.isText()
	case workloads.TFloat:
		ok = n == "float" || n == "double" || n == "decimal"
	case workloads.TBool:
		ok = n == "boolean"
	case workloads.TInet:
		ok = n == "inet" || to.isText()
	case workloads.TItems:
		ok = (n == "list" || n == "set") && len(to.Args) == 1 && to.Args[0].UDT != nil
		if ok {
			for _, f := range to.Args[0].UDT.Fields {
				if workloads.ItemAttrOf(f.Name) == 0 {
					return fmt.Errorf("type %s has field %q, which is not an item attribute (%s)", to.Args[0].UDT.Name, f.Name, strings.Join(workloads.ItemAttrNames, ", "))
				}
			}
		}
	case workloads.TTextMap:
		ok = n == "map" && to.Args[0].isText() && to.Args[1].isText() || to.isText()
	case workloads.TIntMap:
		ok = n == "map" && to.Args[0].isText() && (to.Args[1].Name == "int" || to.Args[1].Name == "bigint")
	case workloads.TObject:
		ok = to.isText()
	}
	if !ok {
		return fmt.Errorf("cannot be stored as %s", to)
	}
	return nil
}

// checkCL validates default consistency levels.
func checkCL(errs *yamlx.Errors, cd ConsistencyDefault, c *CassandraSpec, _ string) {
	if cd.Read != "" {
		if err := clValid(cd.Read, false, c); err != nil {
			errs.AddAt(cd.Loc, "read", "%v", err)
		}
	}
	if cd.Write != "" {
		if err := clValid(cd.Write, true, c); err != nil {
			errs.AddAt(cd.Loc, "write", "%v", err)
		}
	}
	if cd.Serial != "" {
		if cl, ok := consistencyLevels[cd.Serial]; !ok || !cl.serial {
			errs.AddAt(cd.Loc, "serial", "serial consistency must be SERIAL or LOCAL_SERIAL, got %q", cd.Serial)
		}
	}
}

// clValid checks a consistency level for a read or a write against the keyspace.
func clValid(cl string, write bool, c *CassandraSpec) error {
	info, ok := consistencyLevels[cl]
	if !ok {
		return fmt.Errorf("unknown consistency level %q (ANY, ONE, TWO, THREE, QUORUM, ALL, LOCAL_QUORUM, EACH_QUORUM, LOCAL_ONE, SERIAL, LOCAL_SERIAL)", cl)
	}
	if write && !info.write {
		if info.serial {
			return fmt.Errorf("%s is a serial consistency: give it as serial_consistency of an LWT write", cl)
		}
		return fmt.Errorf("%s is not valid for writes", cl)
	}
	if !write && !info.read {
		return fmt.Errorf("%s is not valid for reads (ANY applies to writes only)", cl)
	}
	if cl == "EACH_QUORUM" && c != nil && !c.isNTS() {
		return fmt.Errorf("EACH_QUORUM needs NetworkTopologyStrategy")
	}
	need := map[string]int{"TWO": 2, "THREE": 3}[cl]
	if c != nil && need > 0 && c.replicationFactor() < need {
		return fmt.Errorf("%s needs %d replicas but the keyspace keeps %d", cl, need, c.replicationFactor())
	}
	return nil
}
