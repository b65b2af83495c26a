package design

import (
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/shardbench/shardbench/internal/yamlx"
)

// File is a design file as written. Load resolves parameters and a base file first, so
// a File always holds concrete values.
type File struct {
	Loc         yamlx.Loc
	Name        string `yaml:"name"`
	Description string `yaml:"description,omitempty"`
	// Source names the seed document the design is taken from.
	Source string `yaml:"source,omitempty"`
	// Base and Set make a derived design: the base file with some parameters changed
	// (e.g. a shard key a seed rejects).
	Base string    `yaml:"base,omitempty"`
	Set  yamlx.Raw `yaml:"set,omitempty"`
	// Params are the design's named parameters with their defaults; the file refers to them
	// as ${name}; scenarios override them per variant (set / sweep).
	Params     yamlx.Raw          `yaml:"params,omitempty"`
	Cassandra  *CassandraSpec     `yaml:"cassandra,omitempty"`
	MongoDB    *MongoSpec         `yaml:"mongodb,omitempty"`
	Operations Ordered[OpMapping] `yaml:"operations"`
	// NotServed lists operations the design leaves to another store, with the reason.
	NotServed Ordered[string] `yaml:"not_served,omitempty"`
	Notes     []string        `yaml:"notes,omitempty"`
}

// CassandraSpec is the Cassandra part of a design.
type CassandraSpec struct {
	Loc         yamlx.Loc
	Keyspace    string             `yaml:"keyspace"`
	Replication Replication        `yaml:"replication"`
	Durable     *bool              `yaml:"durable_writes,omitempty"`
	Types       Ordered[UDT]       `yaml:"types,omitempty"`
	Tables      Ordered[Table]     `yaml:"tables"`
	Consistency ConsistencyDefault `yaml:"consistency,omitempty"`
}

// Replication is a keyspace's replication: SimpleStrategy with replication_factor, or
// NetworkTopologyStrategy with a factor per data center.
type Replication struct {
	Loc    yamlx.Loc
	Class  string
	Factor int
	DCs    []DCFactor
}

// DCFactor is one data center's replication factor.
type DCFactor struct {
	DC     string
	Factor int
}

// UnmarshalYAMLX decodes {class: ..., replication_factor: N} or {class: ..., DC1: 3, ...}.
func (r *Replication) UnmarshalYAMLX(d *yamlx.Decoder, n *yaml.Node, path string) {
	r.Loc = yamlx.NewLoc(d.PosOf(n), path)
	if n.Kind != yaml.MappingNode {
		d.Errorf(n, path, "expected a mapping such as {class: SimpleStrategy, replication_factor: 3}")
		return
	}
	r.Loc = locWithKeys(d, n, path)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := yamlx.JoinPath(path, k.Value)
		switch k.Value {
		case "class":
			d.Decode(v, p, &r.Class)
		case "replication_factor":
			d.Decode(v, p, &r.Factor)
		default:
			var f int
			d.Decode(v, p, &f)
			r.DCs = append(r.DCs, DCFactor{DC: k.Value, Factor: f})
		}
	}
}

// MarshalYAML writes the replication mapping back.
func (r Replication) MarshalYAML() (any, error) {
	n := &yaml.Node{Kind: yaml.MappingNode}
	add := func(k, v string) {
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, &yaml.Node{Kind: yaml.ScalarNode, Value: v})
	}
	add("class", r.Class)
	if r.Factor > 0 {
		add("replication_factor", strconv.Itoa(r.Factor))
	}
	for _, dc := range r.DCs {
		add(dc.DC, strconv.Itoa(dc.Factor))
	}
	return n, nil
}

// UDT is a user-defined type: field name -> CQL type, in order.
type UDT struct {
	Loc    yamlx.Loc
	Fields Ordered[string]
}

// UnmarshalYAMLX decodes {field: type, ...}.
func (u *UDT) UnmarshalYAMLX(d *yamlx.Decoder, n *yaml.Node, path string) {
	u.Loc = locWithKeys(d, n, path)
	d.Decode(n, path, &u.Fields)
}

// Table is one Cassandra table.
type Table struct {
	Loc    yamlx.Loc
	Entity string          `yaml:"entity"`
	Doc    string          `yaml:"doc,omitempty"`
	Column Ordered[Column] `yaml:"columns"`
	// PartitionKey lists the partition key columns; Clustering the clustering columns as
	// "name" or "name desc".
	PartitionKey []string           `yaml:"partition_key"`
	Clustering   []string           `yaml:"clustering,omitempty"`
	TTL          time.Duration      `yaml:"ttl,omitempty"`
	GCGrace      *time.Duration     `yaml:"gc_grace,omitempty"`
	Compaction   Ordered[string]    `yaml:"compaction,omitempty"`
	Options      Ordered[string]    `yaml:"options,omitempty"`
	Consistency  ConsistencyDefault `yaml:"consistency,omitempty"`
	// Population: which pre-sale records the table holds (all, none, {top: N}).
	Population *PopulationSpec `yaml:"population,omitempty"`
}

// Column is one column: its CQL type and where its value comes from. Written as a bare
// type ("uuid": the logical field of the same name) or a mapping.
type Column struct {
	Loc  yamlx.Loc
	Type string `yaml:"type"`
	// Field names the logical field the value comes from (default: the column's name).
	Field string `yaml:"field,omitempty"`
	// Bucket derives the value as hash(of) mod count.
	Bucket *BucketSpec `yaml:"bucket,omitempty"`
	// TimeBucket derives the value as the day/month/... of a time field.
	TimeBucket *TimeBucketSpec `yaml:"time_bucket,omitempty"`
	// Value is a constant.
	Value *yaml.Node `yaml:"value,omitempty"`
	// Static marks a static column.
	Static bool `yaml:"static,omitempty"`
}

type columnFields Column

// UnmarshalYAMLX accepts a bare type or a mapping.
func (c *Column) UnmarshalYAMLX(d *yamlx.Decoder, n *yaml.Node, path string) {
	if n.Kind == yaml.ScalarNode {
		c.Loc = yamlx.NewLoc(d.PosOf(n), path)
		d.Decode(n, path, &c.Type)
		return
	}
	d.Decode(n, path, (*columnFields)(c))
}

// BucketSpec is a hash bucket: the value is hash(of) mod count.
type BucketSpec struct {
	Loc   yamlx.Loc
	Of    string `yaml:"of"`
	Count int    `yaml:"count"`
	// Hash is java_uuid_hashcode (Math.abs(uuid.hashCode()) % n, as seed 000's code),
	// java_string_hashcode, murmur3 (the low 64 bits of Murmur3 x64-128 of the value's
	// bytes, as unsigned) or fnv1a (32-bit FNV-1a of the value's bytes).
	Hash string `yaml:"hash"`
}

// TimeBucketSpec is a time bucket: the day, month, hour or year of a time field.
type TimeBucketSpec struct {
	Loc  yamlx.Loc
	Of   string `yaml:"of"`
	Unit string `yaml:"unit"`
	// Format for text columns, using YYYY, MM, DD, HH (default YYYY-MM-DD, YYYY-MM, ...).
	Format string `yaml:"format,omitempty"`
	// UTCOffset shifts bucket boundaries from UTC ("+03:00" for Moscow days).
	UTCOffset string `yaml:"utc_offset,omitempty"`
}

// ConsistencyDefault sets default consistency levels for reads, writes and LWT.
type ConsistencyDefault struct {
	Loc    yamlx.Loc
	Read   string `yaml:"read,omitempty"`
	Write  string `yaml:"write,omitempty"`
	Serial string `yaml:"serial,omitempty"`
}

// MongoSpec is the MongoDB part of a design.
type MongoSpec struct {
	Loc            yamlx.Loc
	Database       string              `yaml:"database"`
	Collections    Ordered[Collection] `yaml:"collections"`
	ReadPreference *ReadPref           `yaml:"read_preference,omitempty"`
	WriteConcern   *WriteConcern       `yaml:"write_concern,omitempty"`
	ReadConcern    string              `yaml:"read_concern,omitempty"`
	// ChunkSizeMB is the balancer's chunk size (seed 001 lowers it to 32).
	ChunkSizeMB int `yaml:"chunk_size_mb,omitempty"`
}

// Collection is one MongoDB collection.
type Collection struct {
	Loc    yamlx.Loc
	Entity string            `yaml:"entity"`
	Doc    string            `yaml:"doc,omitempty"`
	Fields Ordered[DocField] `yaml:"fields"`
	// Validator is written as the $jsonSchema validator document itself.
	Validator yamlx.Raw `yaml:"validator,omitempty"`
	// ShardKey maps fields to 1 (ranged) or hashed, in order; empty: unsharded.
	ShardKey Ordered[yaml.Node] `yaml:"shard_key,omitempty"`
	Unique   bool               `yaml:"unique,omitempty"`
	// Presplit: numInitialChunks for a hashed key; split points for a ranged key.
	Presplit       *Presplit     `yaml:"presplit,omitempty"`
	Indexes        []Index       `yaml:"indexes,omitempty"`
	ReadPreference *ReadPref     `yaml:"read_preference,omitempty"`
	WriteConcern   *WriteConcern `yaml:"write_concern,omitempty"`
	ReadConcern    string        `yaml:"read_concern,omitempty"`
	// ExpireAfter creates a TTL index on the field named by ExpireField.
	ExpireAfter time.Duration `yaml:"expire_after,omitempty"`
	ExpireField string        `yaml:"expire_field,omitempty"`
	// Population: which pre-sale records the collection holds (all, none, {top: N}).
	Population *PopulationSpec `yaml:"population,omitempty"`
}

// DocField is one document field: BSON type and where its value comes from. Written as a
// bare type ("string": the logical field of the same name) or a mapping.
type DocField struct {
	Loc   yamlx.Loc
	Type  string     `yaml:"type"`
	Field string     `yaml:"field,omitempty"`
	Value *yaml.Node `yaml:"value,omitempty"`
	// ItemFields names the fields of each element of an items array and their BSON types
	// (product_id, quantity, price, ...).
	ItemFields Ordered[string] `yaml:"item_fields,omitempty"`
}

type docFieldFields DocField

// UnmarshalYAMLX accepts a bare type or a mapping.
func (f *DocField) UnmarshalYAMLX(d *yamlx.Decoder, n *yaml.Node, path string) {
	if n.Kind == yaml.ScalarNode {
		f.Loc = yamlx.NewLoc(d.PosOf(n), path)
		d.Decode(n, path, &f.Type)
		return
	}
	d.Decode(n, path, (*docFieldFields)(f))
}

// Presplit describes initial chunks.
type Presplit struct {
	Loc yamlx.Loc
	// Chunks is numInitialChunks for hashed keys (pre-7.2 rule; 7.2+ creates one chunk per
	// shard and ignores it).
	Chunks int `yaml:"chunks,omitempty"`
	// Points are split points for ranged keys, each a shard-key document.
	Points []yaml.Node `yaml:"points,omitempty"`
}

// Index is one secondary index.
type Index struct {
	Loc    yamlx.Loc
	Key    Ordered[yaml.Node] `yaml:"key"`
	Name   string             `yaml:"name,omitempty"`
	Unique bool               `yaml:"unique,omitempty"`
	Sparse bool               `yaml:"sparse,omitempty"`
}

// ReadPref is a MongoDB read preference, written as a mode or {mode, max_staleness, tags}.
type ReadPref struct {
	Loc          yamlx.Loc
	Mode         string        `yaml:"mode"`
	MaxStaleness time.Duration `yaml:"max_staleness,omitempty"`
}

type readPrefFields ReadPref

// UnmarshalYAMLX accepts "secondary" or {mode: secondary, max_staleness: 90s}.
func (r *ReadPref) UnmarshalYAMLX(d *yamlx.Decoder, n *yaml.Node, path string) {
	if n.Kind == yaml.ScalarNode {
		r.Loc = yamlx.NewLoc(d.PosOf(n), path)
		d.Decode(n, path, &r.Mode)
		return
	}
	d.Decode(n, path, (*readPrefFields)(r))
}

// WriteConcern is a MongoDB write concern.
type WriteConcern struct {
	Loc      yamlx.Loc
	W        string        `yaml:"w"` // a number or "majority"
	J        *bool         `yaml:"j,omitempty"`
	WTimeout time.Duration `yaml:"wtimeout,omitempty"`
}

// OpMapping says how a design serves one logical operation: its steps in order, written
// as a list, or as a mapping with batch and steps.
type OpMapping struct {
	Loc yamlx.Loc
	// Batch groups the write steps into one logged or unlogged batch (Cassandra).
	Batch string     `yaml:"batch,omitempty"`
	Steps []StepSpec `yaml:"steps"`
	Note  string     `yaml:"note,omitempty"`
}

type opMappingFields OpMapping

// UnmarshalYAMLX accepts a list of steps or a mapping.
func (o *OpMapping) UnmarshalYAMLX(d *yamlx.Decoder, n *yaml.Node, path string) {
	if n.Kind == yaml.SequenceNode {
		o.Loc = yamlx.NewLoc(d.PosOf(n), path)
		d.Decode(n, yamlx.JoinPath(path, ""), &o.Steps)
		return
	}
	d.Decode(n, path, (*opMappingFields)(o))
}

// StepSpec is one physical request of an operation as written: a verb and its target.
type StepSpec struct {
	Loc yamlx.Loc
	// Exactly one verb names the table or collection.
	Read   string `yaml:"read,omitempty"`
	Write  string `yaml:"write,omitempty"`
	Insert string `yaml:"insert,omitempty"`
	Delete string `yaml:"delete,omitempty"`
	// Cassandra.
	Consistency string        `yaml:"consistency,omitempty"`
	Serial      string        `yaml:"serial_consistency,omitempty"`
	LWT         bool          `yaml:"lwt,omitempty"`
	Scan        bool          `yaml:"scan,omitempty"`
	TTL         time.Duration `yaml:"ttl,omitempty"`
	// MongoDB.
	ReadPreference *ReadPref     `yaml:"read_preference,omitempty"`
	WriteConcern   *WriteConcern `yaml:"write_concern,omitempty"`
	ReadConcern    string        `yaml:"read_concern,omitempty"`
	// Filter lists the document fields a MongoDB step filters on (default: _id and the
	// shard key fields the operation knows; for lists, every field it knows; [] for none).
	Filter []string `yaml:"filter,omitempty"`
	// Match gives constants for key columns (Cassandra) or filter fields (MongoDB): the
	// old key of a row being replaced, the status a document must have.
	Match Ordered[yaml.Node] `yaml:"match,omitempty"`
	// Sets restricts the fields an update writes to these (default: every field the
	// operation changes that the target holds).
	Sets []string `yaml:"sets,omitempty"`
	// Both.
	When   string             `yaml:"when,omitempty"` // user | guest | category | global
	View   string             `yaml:"view,omitempty"` // guest: the guest cart of carts.merge
	Values Ordered[yaml.Node] `yaml:"values,omitempty"`
	Limit  int                `yaml:"limit,omitempty"`
	Mode   string             `yaml:"mode,omitempty"` // append | rewrite (item lists)
	Note   string             `yaml:"note,omitempty"`
}

// Ordered is a YAML mapping decoded in file order, each value with its key's position.
type Ordered[T any] []Entry[T]

// Entry is one key of an Ordered mapping.
type Entry[T any] struct {
	Key   string
	Pos   yamlx.Pos // position of the key
	Value T
}

// UnmarshalYAMLX decodes a mapping in order, reporting duplicate keys.
func (o *Ordered[T]) UnmarshalYAMLX(d *yamlx.Decoder, n *yaml.Node, path string) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.Errorf(n, path, "expected a mapping")
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.Errorf(k, path, "keys must be plain names")
			continue
		}
		p := yamlx.JoinPath(path, k.Value)
		if line, dup := seen[k.Value]; dup {
			d.Errorf(k, p, "duplicate key (first at line %d)", line)
			continue
		}
		seen[k.Value] = k.Line
		var e Entry[T]
		e.Key, e.Pos = k.Value, d.PosOf(k)
		d.Decode(v, p, &e.Value)
		*o = append(*o, e)
	}
}

// MarshalYAML writes the mapping in order.
func (o Ordered[T]) MarshalYAML() (any, error) {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for _, e := range o {
		v, err := yamlx.ToNode(e.Value)
		if err != nil {
			return nil, err
		}
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: e.Key}, v)
	}
	return n, nil
}

// Get returns the value for key.
func (o Ordered[T]) Get(key string) (*T, bool) {
	for i := range o {
		if o[i].Key == key {
			return &o[i].Value, true
		}
	}
	return nil, false
}

// Keys lists the keys in order.
func (o Ordered[T]) Keys() []string {
	out := make([]string, len(o))
	for i, e := range o {
		out[i] = e.Key
	}
	return out
}

// locWithKeys builds a Loc for a mapping node decoded by hand.
func locWithKeys(d *yamlx.Decoder, n *yaml.Node, path string) yamlx.Loc {
	// Decode into a throwaway struct with only a Loc to get the key positions.
	var probe struct {
		Loc  yamlx.Loc
		Rest map[string]yaml.Node `yaml:",inline"`
	}
	d.Decode(n, path, &probe)
	return probe.Loc
}

// scalarString is the text of a scalar node ("" for others).
func scalarString(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return strings.TrimSpace(n.Value)
}
