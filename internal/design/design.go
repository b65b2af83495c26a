// Package design reads design files and maps each logical operation of the workload onto
// the physical requests a design makes: which table or collection, what kind of request,
// which partition or shard key values, what rows or documents, at which consistency.
//
// # Design files
//
// A design file (scenarios/designs/*.yaml) describes one proposal: Cassandra tables
// (columns with CQL types, partition key, clustering order, hash buckets, time buckets,
// TTL, compaction, replication, consistency levels) and/or MongoDB collections (fields with
// BSON types, $jsonSchema validator, shard key, presplit, indexes, read preference, write
// concern), and, for every logical operation, the steps that serve it. Columns and fields
// name the logical field their value comes from (workloads' vocabulary: session_id,
// owner_key, created_at, ...); a bucket is hash(field) mod N, a time bucket the day or month
// of a time field. Parameters (params:, referenced as ${name}) are what scenarios sweep;
// a file may also derive from a base file with some parameters set (a rejected
// alternative). Load and Parse report every problem at once with file:line:column: unknown
// columns, bucket counts below one, a consistency level the statement cannot use, an
// operation the tables cannot serve (a partition key the operation cannot compute).
//
// The package knows no particular workload: the operations, fields, views of an
// operation (a step's view:), item lists and per-key counters it maps come from the
// workloads registry (workloads.Meta), which the program fills by importing the workload
// packages (workloads/all).
//
// # API
//
//	d, err := design.Load("scenarios/designs/seed000.yaml", overrides...) // parse + validate
//	vs, err := design.Expand(sc)          // a scenario's variants (set/sweep), each a *Design
//	prep, err := design.Prepare(sc)       // model + variants + plans, every error at once
//	plan, err := design.Compile(d, model) // bind to a workloads.Model's operation table
//	acc = plan.Accesses(&op, acc[:0])     // op -> physical requests (zero allocation)
//	for i := range acc {
//	    a := &acc[i]
//	    a.Step.Database, a.Step.Target, a.Step.Kind, a.Step.Consistency, a.Step.Serial,
//	    a.Step.ReadPref, a.Step.WriteConcern, a.Step.TTL, a.Step.TimeBucket, a.Step.Batch,
//	    a.Part, a.Parts, a.Rows, a.Bytes                      // what the simulator needs
//	    key = a.AppendKey(key[:0], &op)                        // serialised partition key
//	    vals, buf = a.ShardKey(&op, vals[:0], buf)             // typed key values (MongoValue: BSON)
//	    a.Step.CQL; args = a.Bind(&op, args[:0])               // Cassandra backend
//	    cmd := a.Mongo(&op)                                    // MongoDB backend
//	}
//	design.WriteSchema(w, d)                                   // CREATE ... / mongosh
//
// A Step is one statement shape of an operation (static: target, kind, consistency, CQL
// text); an Access is one request of one operation (a step, and the partition of a
// multi-partition read). Kinds: Write and Read reach one partition (or a shard-key-targeted
// MongoDB query), MultiRead one of Parts partitions (or a ranged shard-key prefix), Scan
// every partition (ALLOW FILTERING) or shard (broadcast), LWT a Paxos write with its serial
// consistency, BroadcastWrite a MongoDB write without its shard key.
//
// Accesses, AppendKey and ShardKey never allocate once the caller's buffers have grown
// (except on steps that act on a view of the operation, such as carts.merge's guest cart,
// which copy it): `plan` and hot-partition analysis run them for every key. AppendKey
// gives, for Cassandra, exactly the partition key bytes the native protocol sends (one column: its
// value; several: the composite framing), serialised by internal/placement/cassandra, so
// TokenOf(key) is the token; for MongoDB a canonical type-tagged encoding of the shard key
// values the request supplies (for counting partitions). ShardKey gives the same values
// typed: TText (string), TInt (int32), TBigInt (int64), TTimestamp (date, unix ms), TUUID
// (binData subtype 4), TObjectID, TDecimal (decimal128, scale 2), TFloat (double), TBool.
//
// Bind and Mongo build driver-neutral Go values for the backends, in statement order:
// [16]byte UUIDs, ObjectID, string, int32 (CQL int), int64, time.Time (timestamps and
// dates, UTC), Decimal, float64/float32, bool, net.IP, []byte; lists as slices, user types
// as map[string]any, maps as Go maps; MongoDB documents as D (ordered). They allocate.
package design

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shardbench/shardbench/workloads"
)

// Design is a loaded, validated design (with its parameter values applied).
type Design struct {
	*File
	// Path is the file it was loaded from.
	Path string
	// Params lists the parameters with the values used.
	Params []Param

	tables []*table
	colls  []*collection
	static map[string][]*Step // compiled without a model: for inspection
}

// Database a step talks to.
type Database uint8

// Databases.
const (
	Cassandra Database = iota + 1
	MongoDB
)

func (d Database) String() string {
	switch d {
	case Cassandra:
		return "cassandra"
	case MongoDB:
		return "mongodb"
	}
	return "unknown"
}

// Kind classifies a physical request by how many partitions (shards) it reaches.
type Kind uint8

// Request kinds.
const (
	// Write is a single-partition write (Cassandra), or a write targeted by the shard key
	// (MongoDB).
	Write Kind = iota + 1
	// Read is a single-partition read, or a MongoDB read with the whole shard key.
	Read
	// MultiRead is one partition of a read that spans several (Access.Parts of them), or a
	// MongoDB read with a ranged prefix of the shard key (several chunks, maybe shards).
	MultiRead
	// Scan reads every partition (Cassandra ALLOW FILTERING) or every shard (a MongoDB
	// broadcast, scatter-gather).
	Scan
	// LWT is a Cassandra lightweight transaction (Paxos, serial consistency).
	LWT
	// BroadcastWrite is a MongoDB write whose filter lacks the shard key: every shard is asked.
	BroadcastWrite
)

var kindNames = [...]string{"", "write", "read", "multi_read", "scan", "lwt", "broadcast_write"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && k != 0 {
		return kindNames[k]
	}
	return "unknown"
}

// IsWrite reports whether the request writes.
func (k Kind) IsWrite() bool { return k == Write || k == LWT || k == BroadcastWrite }

// Batch says whether a write travels in a batch.
type Batch uint8

// Batches.
const (
	NoBatch Batch = iota
	LoggedBatch
	UnloggedBatch
)

func (b Batch) String() string {
	return [...]string{"", "logged", "unlogged"}[b]
}

// Step is one physical request shape of an operation in a design: static, shared by every
// operation of that type. The fields of one database only are in its embedded part:
// CassandraStep on a Cassandra step, MongoStep on a MongoDB one (the other is zero).
type Step struct {
	// ID, Database, Kind and c (the compiled functions) are read for every access of
	// every variant: they come first, in the same cache line or two.

	// ID numbers the steps of a Compiled from 0 to Compiled.NumSteps()-1, so that per-step state
	// can live in a slice indexed by it rather than in a map looked up for every access.
	ID int
	// Database is the database the step talks to; Kind what the request reaches.
	Database Database
	Kind     Kind
	c        *stepFuncs
	// Op is the logical operation ("sessions.create") and Index the step's position.
	Op    string
	Index int
	// Target (table or collection) and Namespace (keyspace or database).
	Target    string
	Namespace string
	Entity    string
	// Verb as written: read, write, insert, delete. Statement is the concrete request:
	// SELECT, INSERT, UPDATE, DELETE, findOne, find, insertOne, updateOne, deleteOne.
	Verb      string
	Statement string
	// KeyColumns are the partition key columns (Cassandra) or shard key fields (MongoDB).
	KeyColumns []string
	// Limit is the row limit of a read (0: none; List operations use Op.Qty).
	Limit int
	Note  string

	CassandraStep
	MongoStep
}

// CassandraStep is the part of a Step only Cassandra steps have.
type CassandraStep struct {
	// Consistency and serial consistency (LWT); CQL text with ? markers.
	Consistency string
	Serial      string
	CQL         string
	// TTL of written data (the table default or USING TTL); TimeBucket the unit of the
	// partition key's time bucket ("day", "month"), if any.
	TTL        time.Duration
	TimeBucket string
	// Batch: the op's write steps with the same BatchGroup travel in one batch.
	Batch      Batch
	BatchGroup int
	// SingleRow: a read that names the whole primary key (one row). LimitQty: the read's
	// LIMIT is bound to Op.Qty (a List operation without a static limit).
	SingleRow bool
	LimitQty  bool
}

// MongoStep is the part of a Step only MongoDB steps have.
type MongoStep struct {
	// Hashed marks hashed shard key fields, parallel to Step.KeyColumns.
	Hashed []bool
	// KeyFields is how many leading shard key fields the request supplies: all of them
	// targets one chunk range, a prefix several, none broadcasts.
	KeyFields int
	// Filter lists the document fields the request filters on (equality, then the range
	// field), in order.
	Filter []string
	// Limited: a read with a limit of documents: findOne, a List operation's find
	// (limited to its Op.Qty where the generator sets one, as the catalog's do), or one
	// with the design's limit.
	Limited bool
	// Read preference, write concern, read concern.
	ReadPref     ReadPref
	WriteConcern WriteConcern
	ReadConcern  string
}

// Access is one physical request an operation causes.
type Access struct {
	Step *Step
	// Part is this request's partition among Parts partitions the step reaches for this
	// operation (1 for a single-partition request).
	Part, Parts int32
	// Rows and Bytes are the rows (documents) written or expected to be read, and their
	// approximate size.
	Rows  int32
	Bytes int32
}

// Compiled is a design bound to a workload model: each operation type of the model's table maps
// to its steps.
type Compiled struct {
	Design *Design
	Model  *workloads.Model
	byType [][]*Step
	plans  [][]stepPlan // byType's steps as Accesses reads them
	reason []string     // not served: why
	steps  int          // Step.ID bound
}

// stepPlan is what Accesses needs of a step, copied out of its stepFuncs: the steps of an
// operation type lie in one array, which Accesses reads for every operation of every
// variant, instead of at the end of two pointers each.
type stepPlan struct {
	step  *Step
	when  condition
	view  opView
	parts partsFunc
	size  sizeFunc
	sized sizeConst
}

// plan lays out byType's steps for Accesses.
func (p *Compiled) plan() {
	p.plans = make([][]stepPlan, len(p.byType))
	for i, opSteps := range p.byType {
		for _, s := range opSteps {
			c := s.c
			p.plans[i] = append(p.plans[i], stepPlan{step: s, when: c.when, view: c.view, parts: c.parts, size: c.size, sized: c.sized})
		}
	}
}

// Compile binds a design to a model's operation table. Every operation of the table must
// be mapped by the design or listed under not_served.
func Compile(d *Design, m *workloads.Model) (*Compiled, error) {
	p := &Compiled{Design: d, Model: m, byType: make([][]*Step, len(m.Ops)), reason: make([]string, len(m.Ops))}
	steps, errs := d.compileAll(m)
	for i, info := range m.Ops {
		if opSteps, ok := steps[info.Name]; ok {
			p.byType[i] = opSteps
			continue
		}
		if r, ok := d.NotServed.Get(info.Name); ok {
			p.reason[i] = *r
			continue
		}
		errs.Add(d.Loc.Pos, "operations", "design %s does not say how it serves %s: map it under operations or list it under not_served with the reason", d.Name, info.Name)
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	for _, opSteps := range p.byType {
		for _, s := range opSteps {
			s.ID = p.steps
			p.steps++
		}
	}
	p.plan()
	return p, nil
}

// NumSteps bounds the plan's Step.ID values.
func (p *Compiled) NumSteps() int { return p.steps }

// Accesses appends the physical requests op causes to dst. It never allocates once dst
// has capacity.
func (p *Compiled) Accesses(op *workloads.Op, dst []Access) []Access {
	plans := p.plans[op.Type]
	for i := range plans {
		sp := &plans[i]
		if !sp.when.holds(op) {
			continue
		}
		sop := op
		if sp.view != nil {
			v := sp.view(op)
			sop = &v
		}
		parts := int32(1)
		if sp.parts != nil {
			parts = sp.parts(sop)
		}
		rows, bytes := sp.sized.rows, sp.sized.bytes
		if !sp.sized.ok {
			rows, bytes = sp.size(sop, parts)
		}
		for k := int32(0); k < parts; k++ {
			dst = append(dst, Access{Step: sp.step, Part: k, Parts: parts, Rows: rows, Bytes: bytes})
		}
	}
	return dst
}

// Without is the plan less its steps on target (a table or collection): the same steps
// otherwise, with the same IDs.
func (p *Compiled) Without(target string) *Compiled {
	return p.filter(func(s *Step) bool { return s.Target == target })
}

// Only is the plan's steps on target alone, with the same IDs: what places one table that
// several variants share.
func (p *Compiled) Only(target string) *Compiled {
	return p.filter(func(s *Step) bool { return s.Target != target })
}

// filter is the plan less the steps drop reports; the operations it serves stay served.
func (p *Compiled) filter(drop func(*Step) bool) *Compiled {
	q := *p
	q.byType = make([][]*Step, len(p.byType))
	for i, opSteps := range p.byType {
		if opSteps != nil { // an operation left without steps is still served
			q.byType[i] = slices.DeleteFunc(slices.Clone(opSteps), drop)
		}
	}
	q.plan()
	return &q
}

// Steps lists the steps of an operation type (nil when the design does not serve it).
func (p *Compiled) Steps(opType int) []*Step { return p.byType[opType] }

// Served reports whether the design serves an operation type, and if not, why.
func (p *Compiled) Served(opType int) (bool, string) {
	return p.byType[opType] != nil, p.reason[opType]
}

// AppendKey appends the serialised partition key of the access's partition: for Cassandra
// the bytes the native protocol sends for the partition key (single column: the value;
// composite: each component as 2-byte length, value, 0), from which Murmur3 gives the
// token; for MongoDB a canonical encoding of the shard key values the request supplies
// (nothing for a broadcast).
func (a *Access) AppendKey(dst []byte, op *workloads.Op) []byte {
	c := a.Step.c
	return c.appendKey(dst, c.viewed(op), a.Part)
}

// KeyValues is [Access.AppendKey] and [Access.ShardKey] at once: it appends the
// serialised key to dst and the key's values to vals. A MongoDB step derives each value
// once and its text values share dst's array; other steps call the two in turn.
func (a *Access) KeyValues(dst []byte, vals []workloads.Value, op *workloads.Op) ([]byte, []workloads.Value) {
	if c := a.Step.c; c.keyValues != nil {
		return c.keyValues(dst, vals, c.viewed(op), a.Part)
	}
	vals, _ = a.ShardKey(op, vals, nil)
	return a.AppendKey(dst, op), vals
}

// ShardKey appends the values of the partition key columns (Cassandra), or of the leading
// shard key fields the request supplies (MongoDB; Step.KeyFields of them), to dst. Text
// values share buf, which the caller reuses.
func (a *Access) ShardKey(op *workloads.Op, dst []workloads.Value, buf []byte) ([]workloads.Value, []byte) {
	c := a.Step.c
	op = c.viewed(op)
	buf = buf[:0]
	for _, k := range c.keyVals {
		v := k(op, a.Part, buf[len(buf):])
		if n := len(v.Bytes); n > 0 {
			buf = append(buf, v.Bytes...) // in place when the getter used buf's room
			v.Bytes = buf[len(buf)-n:]
		}
		dst = append(dst, v)
	}
	return dst, buf
}

// KeyString describes the partition or shard key of the access for people
// ("time_bucket='2025-11-28'", "{user_id: 5f0c…}").
func (a *Access) KeyString(op *workloads.Op) string {
	vals, _ := a.ShardKey(op, nil, nil)
	if len(vals) == 0 {
		if a.Step.Database == MongoDB {
			return "(broadcast)"
		}
		return "(every partition)"
	}
	parts := make([]string, len(vals))
	for i := range vals {
		name := a.Step.KeyColumns[i]
		if a.Step.Database == MongoDB {
			parts[i] = name + ": " + vals[i].String()
		} else {
			parts[i] = name + "=" + quoteIfText(&vals[i])
		}
	}
	if a.Step.Database == MongoDB {
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return strings.Join(parts, ", ")
}

func quoteIfText(v *workloads.Value) string {
	if v.Type == workloads.TText && !v.Null {
		return "'" + v.String() + "'"
	}
	return v.String()
}

// Bind appends the bind values of the access's CQL statement (Step.CQL), in order, as
// driver-neutral Go values. Cassandra only.
func (a *Access) Bind(op *workloads.Op, dst []any) []any {
	c := a.Step.c
	op = c.viewed(op)
	for _, b := range c.binds {
		dst = append(dst, b(op, a.Part))
	}
	return dst
}

// Mongo returns the command of a MongoDB access.
func (a *Access) Mongo(op *workloads.Op) *Command {
	c := a.Step.c
	if c.command == nil {
		return nil
	}
	return c.command(c.viewed(op))
}

// String describes a step in one line.
func (s *Step) String() string {
	return fmt.Sprintf("%s %s.%s %s", s.Kind, s.Namespace, s.Target, s.Statement)
}

// Databases lists the databases a design uses.
func (d *Design) Databases() []Database {
	var out []Database
	if d.Cassandra != nil {
		out = append(out, Cassandra)
	}
	if d.MongoDB != nil {
		out = append(out, MongoDB)
	}
	return out
}

// DatabaseName is "cassandra", "mongodb" or "cassandra+mongodb".
func (d *Design) DatabaseName() string {
	var names []string
	for _, db := range d.Databases() {
		names = append(names, db.String())
	}
	return strings.Join(names, "+")
}

// StaticSteps returns an operation's steps as compiled without a model (for inspection:
// kinds, targets, CQL text); they cannot produce keys or values.
func (d *Design) StaticSteps(op string) []*Step { return d.static[op] }

// Serves reports whether the design maps op, or else the reason it gives under not_served.
func (d *Design) Serves(op string) (bool, string) {
	if _, ok := d.Operations.Get(op); ok {
		return true, ""
	}
	if r, ok := d.NotServed.Get(op); ok {
		return false, *r
	}
	return false, ""
}
