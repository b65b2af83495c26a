// Package mongo is the real MongoDB backend: it drives a design's MongoDB accesses through
// mongo-driver v2 against a mongos, a replica set, a standalone mongod or a wire-compatible
// server (FerretDB); sets up each variant's database (collections, $jsonSchema validators,
// indexes and, on a mongos, enableSharding/shardCollection with presplitting); says which
// design features the server could not apply instead of failing; attributes operations to
// servers (command monitoring) and, on a mongos, to shards (config.chunks and the
// placement code); and writes the server's own figures to server.json.
//
// Only this package (and internal/backend/cassandra) imports a database driver.
package mongo

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readconcern"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/metrics"
	pm "github.com/shardbench/shardbench/internal/placement/mongo"
	"github.com/shardbench/shardbench/workloads"
)

// Backend runs one variant's operations against MongoDB.
type Backend struct {
	cfg     backend.Config
	opts    Options
	target  target
	client  *mongo.Client
	db      *mongo.Database
	dbName  string
	dep     Deployment
	mon     *monitor
	conv    converter
	timeout time.Duration

	// colls holds one collection handle per step: its read preference, write concern and
	// read concern as the design says.
	colls map[*design.Step]*mongo.Collection
	// log tells the user what happens and keeps the notes (features not applied) the
	// results show, with the target's secrets scrubbed.
	log *backend.Log
	// routing is the mongos chunk attribution (nil elsewhere).
	routing *routing
	// The load step: what it wrote, the collections it wrote to, the chunk tables it left
	// on a mongos (or why there are none); reads counts, per read step, the reads and the
	// documents they returned.
	loaded       *backend.LoadResult
	loadColls    map[string]*mongo.Collection
	loadedChunks map[string]*pm.ChunkTable
	chunkNote    string
	reads        *backend.ReadRows
	before       serverSnapshot

	wtimeoutNoted bool
	// hosts are the servers the target names (seed list; SRV resolved).
	hosts []string

	accPool sync.Pool
	// foreign counts operations with steps on another database (mixed designs).
	foreign atomic.Int64
	found   atomic.Int64
	missed  atomic.Int64
}

// Option changes how Open builds the backend (tests watch the wire with it).
type Option func(*openSettings)

type openSettings struct {
	onCommand func(*event.CommandStartedEvent)
	// dbSuffix is appended to the variant's database name (the server check's database
	// must not be the one `run` fills).
	dbSuffix string
	// noLoad leaves the population out (the server check replays operations instead).
	noLoad bool
}

// WithCommandStarted calls f for every command the driver sends (command monitoring),
// setup commands included. f must be safe for concurrent use.
func WithCommandStarted(f func(*event.CommandStartedEvent)) Option {
	return func(s *openSettings) { s.onCommand = f }
}

// Open connects, detects the deployment, sets up the variant's database and returns the
// backend. Errors in backends.mongo are returned as *yamlx errors (usage); an unreachable
// server as an error naming the (redacted) target.
func Open(ctx context.Context, cfg backend.Config, opt ...Option) (*Backend, error) {
	var set openSettings
	for _, o := range opt {
		o(&set)
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	o, err := ParseOptions(cfg.Options)
	if err != nil {
		return nil, &UsageError{err}
	}
	if cfg.Compiled == nil || cfg.Variant == nil || cfg.Compiled.Design.MongoDB == nil {
		name := "the scenario"
		if cfg.Variant != nil {
			name = "variant " + cfg.Variant.Name + " (design " + cfg.Compiled.Design.Name + ")"
		}
		return nil, &UsageError{fmt.Errorf("%s has no mongodb section: the mongo backend runs MongoDB designs only (use --backend cassandra or sim for it, or a scenario listing MongoDB designs)", name)}
	}
	t, err := parseTarget(cfg.Target, o.PasswordFile)
	if err != nil {
		return nil, &UsageError{err}
	}
	b := newBackend(cfg, o, t, set.onCommand)
	if err := b.connect(ctx); err != nil {
		return nil, err
	}
	if b.dep.FerretDB != "" {
		b.conv.decimalAsDouble = true
		b.log.Note("FerretDB has no decimal128 (it drops the connection on one): decimal fields are sent as doubles")
	}
	prefix := o.Database
	if prefix == "" {
		prefix = cfg.Compiled.Design.MongoDB.Database
	}
	b.dbName = databaseName(prefix+set.dbSuffix, "", cfg.Variant.Name)
	b.db = b.client.Database(b.dbName)
	b.log.Logf("variant %s → database %s on %s (%s)", cfg.Variant.Name, b.dbName, t.redacted, b.dep)
	if cfg.SkipSetup {
		b.log.Note("collections, indexes, sharding and load phase left to the distributed run's setup step (run --setup-only)")
	} else if err := b.setup(ctx); err != nil {
		b.client.Disconnect(context.Background())
		return nil, fmt.Errorf("mongo %s: setting up %s: %s", t.redacted, b.dbName, b.log.Redact(err.Error()))
	}
	if err := b.handles(); err != nil {
		b.client.Disconnect(context.Background())
		return nil, &UsageError{err}
	}
	if !set.noLoad {
		if err := b.load(ctx); err != nil {
			b.client.Disconnect(context.Background())
			return nil, err
		}
	}
	b.before = b.snapshot(ctx)
	b.mon.reset()
	return b, nil
}

// newBackend is a backend not yet connected; each operation is bounded by the scenario's
// load.timeout (default 5s).
func newBackend(cfg backend.Config, o Options, t target, onCommand func(*event.CommandStartedEvent)) *Backend {
	b := &Backend{cfg: cfg, opts: o, target: t, mon: newMonitor(onCommand),
		colls: map[*design.Step]*mongo.Collection{}, reads: backend.NewReadRows(cfg.Compiled),
		log: backend.NewLog(cfg.Log, "mongo", t.secrets)}
	b.timeout = 5 * time.Second
	if cfg.Scenario != nil && cfg.Scenario.Load.Timeout > 0 {
		b.timeout = cfg.Scenario.Load.Timeout
	}
	return b
}

// connect builds the driver client from the target and options, connects, and detects the
// deployment (hello, buildInfo). Errors name the redacted target.
func (b *Backend) connect(ctx context.Context) error {
	o, t := b.opts, b.target
	pool := o.PoolSize
	if pool == 0 && b.cfg.Scenario != nil {
		pool = b.cfg.Scenario.Load.MaxInFlight
	}
	sel := o.ServerSelectionTimeout
	if sel == 0 {
		sel = b.timeout
	}
	co := options.Client().ApplyURI(t.uri).
		SetAppName("shardbench").
		SetMonitor(b.mon.event()).
		SetConnectTimeout(o.ConnectTimeout).
		SetServerSelectionTimeout(sel)
	if pool > 0 {
		co.SetMaxPoolSize(uint64(pool))
	}
	if t.user != "" {
		cred := options.Credential{Username: t.user, Password: t.password, PasswordSet: t.hasPass}
		if co.Auth != nil { // authSource / authMechanism from the URI
			cred.AuthSource, cred.AuthMechanism, cred.AuthMechanismProperties = co.Auth.AuthSource, co.Auth.AuthMechanism, co.Auth.AuthMechanismProperties
		}
		co.SetAuth(cred)
	}
	if err := co.Validate(); err != nil {
		return &UsageError{fmt.Errorf("--target %s: %s", t.redacted, b.log.Redact(err.Error()))}
	}
	b.hosts = co.Hosts
	var err error
	b.client, err = mongo.Connect(co)
	if err != nil {
		return fmt.Errorf("mongo %s: %s", t.redacted, b.log.Redact(err.Error()))
	}
	cctx, cancel := context.WithTimeout(ctx, o.ConnectTimeout)
	defer cancel()
	b.dep, err = detect(cctx, b.client)
	if err != nil {
		b.client.Disconnect(context.Background())
		return fmt.Errorf("mongo %s: connect and hello (connect_timeout %s): %s", t.redacted, o.ConnectTimeout, b.log.Redact(err.Error()))
	}
	return nil
}

// UsageError marks bad input (backends.mongo, --target): the CLI exits 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// databaseName gives each variant its own database: the design's name (or the
// backends.mongo.database prefix) and a hash of the variant's name, so variants of a sweep
// never share data and a rerun of the same variant finds its own.
func databaseName(prefix, designDB, variant string) string {
	if prefix == "" {
		prefix = designDB
	}
	h := fnv.New32a()
	h.Write([]byte(variant))
	suffix := fmt.Sprintf("_%08x", h.Sum32())
	if len(prefix)+len(suffix) > 63 {
		prefix = prefix[:63-len(suffix)]
	}
	return prefix + suffix
}

// handles builds one collection handle per step with its read preference, write concern
// and read concern.
func (b *Backend) handles() error {
	m := b.cfg.Compiled.Model
	for i := range m.Ops {
		for _, s := range b.cfg.Compiled.Steps(i) {
			if s.Database != design.MongoDB || b.colls[s] != nil {
				continue
			}
			co := options.Collection()
			if s.Kind.IsWrite() {
				wc, err := writeConcern(s.WriteConcern)
				if err != nil {
					return fmt.Errorf("%s step %d: %v", s.Op, s.Index, err)
				}
				co.SetWriteConcern(wc)
				if s.WriteConcern.WTimeout > 0 && !b.wtimeoutNoted {
					b.wtimeoutNoted = true
					b.log.Note("write concern wtimeout %s not sent: mongo-driver v2 has no wtimeout; the operation timeout (load.timeout) bounds the wait instead", s.WriteConcern.WTimeout)
				}
			} else {
				rp, err := readPref(s.ReadPref)
				if err != nil {
					return fmt.Errorf("%s step %d: %v", s.Op, s.Index, err)
				}
				co.SetReadPreference(rp)
				if s.ReadConcern != "" && s.ReadConcern != "local" {
					co.SetReadConcern(&readconcern.ReadConcern{Level: s.ReadConcern})
				}
			}
			b.colls[s] = b.db.Collection(s.Target, co)
		}
	}
	return nil
}

func readPref(p design.ReadPref) (*readpref.ReadPref, error) {
	mode := p.Mode
	if mode == "" {
		mode = "primary"
	}
	m, err := readpref.ModeFromString(mode)
	if err != nil {
		return nil, err
	}
	var ro []readpref.Option
	if p.MaxStaleness > 0 {
		ro = append(ro, readpref.WithMaxStaleness(p.MaxStaleness))
	}
	return readpref.New(m, ro...)
}

func writeConcern(w design.WriteConcern) (*writeconcern.WriteConcern, error) {
	wc := &writeconcern.WriteConcern{Journal: w.J}
	switch {
	case w.W == "":
		wc.W = "majority"
	case w.W == "majority":
		wc.W = "majority"
	default:
		var n int
		if _, err := fmt.Sscanf(w.W, "%d", &n); err != nil || fmt.Sprint(n) != w.W {
			wc.W = w.W // a tag set name
		} else {
			wc.W = n
		}
	}
	return wc, nil
}

// Execute runs the operation's MongoDB accesses in order; the first failure ends it.
func (b *Backend) Execute(ctx context.Context, op *workloads.Op) backend.Outcome {
	accp, _ := b.accPool.Get().(*[]design.Access)
	if accp == nil {
		accp = new([]design.Access)
	}
	defer b.accPool.Put(accp)
	acc := b.cfg.Compiled.Accesses(op, (*accp)[:0])
	*accp = acc
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	for i := range acc {
		a := &acc[i]
		if a.Step.Database != design.MongoDB {
			b.foreign.Add(1)
			return backend.Outcome{Class: metrics.Client,
				Err: fmt.Errorf("internal error (please report): %s step %d runs on %s, yet the "+
					"mongo backend was given the operation (the engine does not dispatch what a "+
					"backend does not serve)",
					a.Step.Op, a.Step.Index, a.Step.Database)}
		}
		if b.routing != nil {
			b.routing.attribute(a, op)
		}
		if err := b.run(ctx, a, op); err != nil {
			return backend.Outcome{Class: Classify(err, ctx.Err()), Err: errors.New(b.log.Redact(fmt.Sprintf("%s %s.%s: %v", a.Step.Op, a.Step.Target, a.Step.Statement, err)))}
		}
	}
	return backend.Outcome{}
}

// upsert is the options of an upserting updateOne (read-only, shared by every operation).
var upsert = options.UpdateOne().SetUpsert(true)

// run sends one access's command.
func (b *Backend) run(ctx context.Context, a *design.Access, op *workloads.Op) error {
	cmd := a.Mongo(op)
	if cmd == nil {
		return fmt.Errorf("no MongoDB command for %s", a.Step)
	}
	coll := b.colls[a.Step]
	filter := b.conv.doc(cmd.Filter)
	if filter == nil {
		filter = bson.D{}
	}
	switch cmd.Op {
	case "insertOne":
		_, err := coll.InsertOne(ctx, b.conv.doc(cmd.Document))
		return err
	case "updateOne":
		var err error
		if cmd.Upsert {
			_, err = coll.UpdateOne(ctx, filter, b.conv.doc(cmd.Update), upsert)
		} else {
			_, err = coll.UpdateOne(ctx, filter, b.conv.doc(cmd.Update))
		}
		return err
	case "deleteOne":
		_, err := coll.DeleteOne(ctx, filter)
		return err
	case "findOne":
		fo := options.FindOne()
		if cmd.Sort != nil {
			fo.SetSort(b.conv.doc(cmd.Sort))
		}
		err := coll.FindOne(ctx, filter, fo).Err()
		if errors.Is(err, mongo.ErrNoDocuments) {
			b.countRead(a.Step, 0)
			return nil
		}
		if err == nil {
			b.countRead(a.Step, 1)
		}
		return err
	case "find":
		fo := options.Find()
		if cmd.Sort != nil {
			fo.SetSort(b.conv.doc(cmd.Sort))
		}
		if cmd.Limit > 0 {
			fo.SetLimit(cmd.Limit)
		}
		cur, err := coll.Find(ctx, filter, fo)
		if err != nil {
			return err
		}
		n := 0
		for cur.Next(ctx) {
			n++
		}
		err = cur.Err()
		cur.Close(context.WithoutCancel(ctx))
		b.countRead(a.Step, n)
		return err
	}
	return fmt.Errorf("unknown MongoDB request %q", cmd.Op)
}

// Close disconnects.
func (b *Backend) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return b.client.Disconnect(ctx)
}

// ServerHosts is the servers the target names (backend.Servers).
func (b *Backend) ServerHosts() []string { return b.hosts }

// Database is the variant's database name.
func (b *Backend) Database() string { return b.dbName }

// Deployment is what Open found.
func (b *Backend) Deployment() Deployment { return b.dep }

// Notes lists the design features the server did not apply, and other things the results
// must say.
func (b *Backend) Notes() []string { return b.log.Notes() }

// Describe says what the backend talks to, for the summary.
func (b *Backend) Describe() backend.Info {
	d := map[string]string{
		"deployment": b.dep.Kind,
		"database":   b.dbName,
		"pool_size":  fmt.Sprint(b.poolSize()),
		"timeout":    b.timeout.String(),
	}
	if b.dep.SetName != "" {
		d["replica_set"] = b.dep.SetName
	}
	if notes := b.log.Notes(); len(notes) > 0 {
		d["not_applied"] = fmt.Sprint(len(notes), " design feature(s): see the variant's notes")
	}
	return backend.Info{Name: "mongo", Target: b.target.redacted, Server: b.dep.String(), Details: d}
}

func (b *Backend) poolSize() int {
	if b.opts.PoolSize > 0 {
		return b.opts.PoolSize
	}
	if b.cfg.Scenario != nil {
		return b.cfg.Scenario.Load.MaxInFlight
	}
	return 100
}
