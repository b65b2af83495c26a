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

// The MongoDB section of a design: collections, their fields, shard keys, indexes and
// defaults.

var bsonTypes = map[string]bool{"objectId": true, "string": true, "int": true, "long": true, "double": true, "decimal": true,
	"date": true, "bool": true, "binData": true, "array": true, "object": true}

func bsonCompatible(from workloads.Type, to string) bool {
	switch from {
	case workloads.TUUID:
		return to == "binData" || to == "string"
	case workloads.TObjectID:
		return to == "objectId" || to == "string"
	case workloads.TText:
		return to == "string"
	case workloads.TInt:
		return to == "int" || to == "long" || to == "double" || to == "decimal"
	case workloads.TBigInt:
		return to == "long" || to == "double"
	case workloads.TTimestamp:
		return to == "date" || to == "long"
	case workloads.TDate:
		return to == "date" || to == "string"
	case workloads.TDecimal:
		return to == "decimal" || to == "double" || to == "long"
	case workloads.TFloat:
		return to == "double" || to == "decimal"
	case workloads.TBool:
		return to == "bool"
	case workloads.TInet:
		return to == "string"
	case workloads.TItems, workloads.TDocs:
		return to == "array"
	case workloads.TTextMap, workloads.TIntMap, workloads.TObject:
		return to == "object"
	}
	return false
}

// resolveMongo validates the MongoDB section and builds its collections.
func (d *Design) resolveMongo(mg *MongoSpec, names map[string]string, errs *yamlx.Errors) {
	if !validMongoName(mg.Database) {
		errs.AddAt(mg.Loc, "database", "must be a MongoDB database name, got %q", mg.Database)
	}
	checkReadPref(errs, mg.ReadPreference)
	checkWriteConcern(errs, mg.WriteConcern)
	checkReadConcern(errs, mg.Loc, mg.ReadConcern)
	if mg.ChunkSizeMB < 0 || mg.ChunkSizeMB > 1024 {
		errs.AddAt(mg.Loc, "chunk_size_mb", "must be between 1 and 1024")
	}
	if len(mg.Collections) == 0 {
		errs.AddAt(mg.Loc, "collections", "must list at least one collection")
	}
	for i := range mg.Collections {
		e := &mg.Collections[i]
		path := "mongodb.collections." + e.Key
		if prev, dup := names[e.Key]; dup {
			errs.Add(e.Pos, path, "name already used by %s", prev)
		}
		names[e.Key] = path
		if co := resolveCollection(e.Key, path, &e.Value, errs); co != nil {
			d.colls = append(d.colls, co)
		}
	}
}

// resolveCollection validates a collection: its fields, shard key, presplit, indexes,
// TTL index, validator and defaults. nil when its entity is unknown.
func resolveCollection(name, path string, c *Collection, errs *yamlx.Errors) *collection {
	co := &collection{name: name, c: c, byName: map[string]*docField{}, byLogical: map[string]*docField{}}
	co.meta = entityMeta(c.Entity)
	if co.meta == nil {
		errs.AddAt(c.Loc, "entity", "unknown entity %q (known: %s)", c.Entity, entityNames())
		return nil
	}
	for j := range c.Fields {
		co.addField(&c.Fields[j], errs)
	}
	if _, ok := co.byName["_id"]; !ok {
		errs.AddAt(c.Loc, "fields", "must define _id")
	}
	hashed := co.resolveShardKey(path, errs)
	if p := c.Presplit; p != nil {
		co.checkPresplit(p, path, hashed, errs)
	}
	co.checkIndexes(path, errs)
	if c.ExpireAfter != 0 || c.ExpireField != "" {
		f, ok := co.byName[c.ExpireField]
		switch {
		case c.ExpireField == "":
			errs.AddAt(c.Loc, "expire_field", "is required with expire_after")
		case !ok:
			errs.AddAt(c.Loc, "expire_field", "unknown document field %q", c.ExpireField)
		case f.bson != "date":
			errs.AddAt(c.Loc, "expire_field", "a TTL index needs a date field; %q is %s", c.ExpireField, f.bson)
		}
	}
	if !c.Validator.IsZero() {
		checkValidator(errs, c.Validator, co)
	}
	checkReadPref(errs, c.ReadPreference)
	checkWriteConcern(errs, c.WriteConcern)
	checkReadConcern(errs, c.Loc, c.ReadConcern)
	return co
}

// addField validates a document field: its BSON type, and the constant or logical field
// (with an item list's item fields) it holds.
func (co *collection) addField(fe *Entry[DocField], errs *yamlx.Errors) {
	df := &docField{name: fe.Key, loc: fe.Value.Loc, bson: fe.Value.Type}
	if !bsonTypes[df.bson] {
		errs.AddAt(fe.Value.Loc, "type", "unknown BSON type %q (objectId, string, int, long, double, decimal, date, bool, binData, array, object)", df.bson)
	}
	co.fields = append(co.fields, df)
	co.byName[fe.Key] = df
	if fe.Value.Value != nil {
		df.kind, df.cnode, df.size = srcConst, fe.Value.Value, int32(len(fe.Value.Value.Value))+1
		return
	}
	fname := fe.Value.Field
	if fname == "" {
		fname = fe.Key
	}
	df.kind, df.field = srcField, co.meta.Field(fname)
	if df.field == nil {
		errs.AddAt(fe.Value.Loc, "field", "document field %q: %s has no logical field %q (fields: %s)", fe.Key, co.meta.Entity, fname, fieldNames(co.meta))
		return
	}
	df.size = df.field.Size
	df.itemFields = fe.Value.ItemFields
	if df.field.Type == workloads.TItems && len(df.itemFields) == 0 {
		errs.AddAt(fe.Value.Loc, "item_fields", "an items array needs item_fields: the fields of each item and their BSON types")
	}
	for _, it := range df.itemFields {
		if attr := workloads.ItemAttrOf(it.Key); attr == 0 {
			errs.Add(it.Pos, fe.Value.Loc.Path+".item_fields."+it.Key, "not an item attribute (%s)", strings.Join(workloads.ItemAttrNames, ", "))
		} else if !bsonCompatible(attr.Type(), it.Value) {
			errs.Add(it.Pos, fe.Value.Loc.Path+".item_fields."+it.Key, "%s cannot be stored as %s", it.Key, it.Value)
		}
	}
	if !bsonCompatible(df.field.Type, df.bson) {
		errs.AddAt(fe.Value.Loc, "type", "field %q holds %s (%s), which cannot be stored as %s", fe.Key, fname, df.field.Type, df.bson)
	}
	co.byLogical[fname] = df
}

// resolveShardKey reads the shard key (each field ranged or hashed) and returns how many
// fields are hashed.
func (co *collection) resolveShardKey(path string, errs *yamlx.Errors) int {
	c := co.c
	hashed := 0
	for _, k := range c.ShardKey {
		if _, ok := co.byName[k.Key]; !ok {
			errs.Add(k.Pos, path+".shard_key."+k.Key, "unknown document field %q (fields: %s)", k.Key, strings.Join(c.Fields.Keys(), ", "))
		}
		v := scalarString(&k.Value)
		switch v {
		case "1":
			co.hashed = append(co.hashed, false)
		case "hashed":
			co.hashed = append(co.hashed, true)
			hashed++
		default:
			errs.Add(k.Pos, path+".shard_key."+k.Key, "a shard key field is 1 (ranged) or hashed, got %q", v)
			co.hashed = append(co.hashed, false)
		}
		co.shardKey = append(co.shardKey, k.Key)
	}
	if hashed > 1 {
		errs.AddAt(c.Loc, "shard_key", "a shard key may have only one hashed field")
	}
	if c.Unique && hashed > 0 {
		errs.AddAt(c.Loc, "unique", "a hashed shard key cannot be unique")
	}
	return hashed
}

// checkPresplit checks a presplit: initial chunks of a hashed key, or split points that
// are shard-key documents.
func (co *collection) checkPresplit(p *Presplit, path string, hashed int, errs *yamlx.Errors) {
	if len(co.c.ShardKey) == 0 {
		errs.AddAt(p.Loc, "chunks", "presplit needs a shard key")
	}
	if p.Chunks < 0 || p.Chunks > 8192 {
		errs.AddAt(p.Loc, "chunks", "must be between 1 and 8192")
	}
	if p.Chunks > 0 && hashed == 0 {
		errs.AddAt(p.Loc, "chunks", "numInitialChunks applies to hashed shard keys; give split points for a ranged key")
	}
	for k := range p.Points {
		pt := &p.Points[k]
		at := fmt.Sprintf("%s.presplit.points[%d]", path, k)
		if pt.Kind != yaml.MappingNode {
			errs.Add(yamlx.Pos{File: p.Loc.Pos.File, Line: pt.Line, Col: pt.Column}, at, "a split point is a shard-key document")
			continue
		}
		for x := 0; x+1 < len(pt.Content); x += 2 {
			if key := pt.Content[x]; indexOf(co.shardKey, key.Value) < 0 {
				errs.Add(yamlx.Pos{File: p.Loc.Pos.File, Line: key.Line, Col: key.Column}, at, "%q is not a shard key field", key.Value)
			}
		}
	}
}

// checkIndexes checks that indexes name document fields with valid directions.
func (co *collection) checkIndexes(path string, errs *yamlx.Errors) {
	for k := range co.c.Indexes {
		ix := &co.c.Indexes[k]
		if len(ix.Key) == 0 {
			errs.AddAt(ix.Loc, "key", "must name at least one field")
		}
		for _, kf := range ix.Key {
			at := fmt.Sprintf("%s.indexes[%d].key.%s", path, k, kf.Key)
			root, _, _ := strings.Cut(kf.Key, ".")
			if _, ok := co.byName[root]; !ok {
				errs.Add(kf.Pos, at, "unknown document field %q", root)
			}
			switch scalarString(&kf.Value) {
			case "1", "-1", "hashed", "text":
			default:
				errs.Add(kf.Pos, at, "index direction must be 1, -1, hashed or text")
			}
		}
	}
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// checkValidator checks that a $jsonSchema validator's required fields are document fields.
func checkValidator(errs *yamlx.Errors, raw yamlx.Raw, co *collection) {
	js := mappingValue(raw.Node, "$jsonSchema")
	if js == nil {
		errs.Add(raw.Pos(), raw.Path, "a validator is written as {$jsonSchema: {...}}")
		return
	}
	if req := mappingValue(js, "required"); req != nil {
		for _, r := range req.Content {
			if _, ok := co.byName[r.Value]; !ok {
				errs.Add(yamlx.Pos{File: raw.File, Line: r.Line, Col: r.Column}, raw.Path+".$jsonSchema.required", "required field %q is not a document field of the collection", r.Value)
			}
		}
	}
	if props := mappingValue(js, "properties"); props != nil {
		for i := 0; i+1 < len(props.Content); i += 2 {
			k := props.Content[i]
			if _, ok := co.byName[k.Value]; !ok {
				errs.Add(yamlx.Pos{File: raw.File, Line: k.Line, Col: k.Column}, raw.Path+".$jsonSchema.properties."+k.Value, "%q is not a document field of the collection", k.Value)
			}
		}
	}
}

func validMongoName(s string) bool {
	return s != "" && len(s) < 64 && !strings.ContainsAny(s, `/\. "$`)
}

var readPrefModes = map[string]bool{"primary": true, "primaryPreferred": true, "secondary": true, "secondaryPreferred": true, "nearest": true}

func checkReadPref(errs *yamlx.Errors, r *ReadPref) {
	if r == nil {
		return
	}
	if !readPrefModes[r.Mode] {
		errs.AddAt(r.Loc, "mode", "read preference must be primary, primaryPreferred, secondary, secondaryPreferred or nearest, got %q", r.Mode)
	}
	if r.MaxStaleness != 0 {
		if r.Mode == "primary" {
			errs.AddAt(r.Loc, "max_staleness", "maxStalenessSeconds cannot be used with primary")
		}
		if r.MaxStaleness < 90*time.Second {
			errs.AddAt(r.Loc, "max_staleness", "MongoDB requires maxStalenessSeconds >= 90, got %s", yamlx.FormatDuration(r.MaxStaleness))
		}
	}
}

func checkWriteConcern(errs *yamlx.Errors, w *WriteConcern) {
	if w == nil {
		return
	}
	if w.W != "majority" {
		n, err := strconv.Atoi(w.W)
		if err != nil || n < 0 || n > 50 {
			errs.AddAt(w.Loc, "w", "must be majority or a number of members, got %q", w.W)
		} else if n == 0 && w.J != nil && *w.J {
			errs.AddAt(w.Loc, "j", "j: true cannot be combined with w: 0")
		}
	}
	if w.WTimeout < 0 {
		errs.AddAt(w.Loc, "wtimeout", "must not be negative")
	}
}

func checkReadConcern(errs *yamlx.Errors, loc yamlx.Loc, rc string) {
	switch rc {
	case "", "local", "available", "majority", "linearizable", "snapshot":
	default:
		errs.AddAt(loc, "read_concern", "must be local, available, majority, linearizable or snapshot, got %q", rc)
	}
}
