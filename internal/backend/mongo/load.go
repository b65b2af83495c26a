package mongo

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/design"
	pm "github.com/shardbench/shardbench/internal/placement/mongo"
	"github.com/shardbench/shardbench/internal/results"
)

// loadCollection keeps each record set's load progress in the variant's database, so
// that an interrupted load resumes and --skip-load can tell a loaded database from an
// empty one.
const loadCollection = "shardbench_load"

// load is the load step: the scenario's population written into every collection of the
// variant's design before the measured run (backend.PopulationLoad), at load.scale; with
// --skip-load only the progress is read, to say what the database holds. On a mongos the
// chunk tables are read again afterwards: the balancer splits and moves chunks as the
// data arrives, and the run's per-shard attribution starts from what it left.
func (b *Backend) load(ctx context.Context) error {
	switch {
	case b.cfg.SkipLoad:
		b.log.Note("%s", backend.SkippedLoad(ctx, b, b.cfg.Compiled, design.MongoDB, b.opts.Load.Fraction()))
	case b.opts.Load.Fraction() == 0:
		b.log.Note("load.scale is 0: no population loaded; reads of records that exist before the sale find nothing")
	default:
		b.loadColls = map[string]*mongo.Collection{}
		ls, err := b.cfg.Compiled.Loaders()
		if err != nil {
			return err
		}
		for _, l := range ls {
			if l.Database != design.MongoDB {
				continue
			}
			wc, err := writeConcern(l.Step.WriteConcern)
			if err != nil {
				return &UsageError{fmt.Errorf("%s: %v", l.Target, err)}
			}
			b.loadColls[l.Target] = b.db.Collection(l.Target, options.Collection().SetWriteConcern(wc))
		}
		ld := backend.PopulationLoad{Database: design.MongoDB, Options: b.opts.Load, Store: b, Write: b.writeDocs, Log: b.cfg.Log, Name: "mongo: variant " + b.cfg.Variant.Name}
		r, err := ld.Run(ctx, b.cfg.Compiled)
		b.loaded = &r
		if err != nil {
			return fmt.Errorf("mongo %s: %s", b.target.redacted, b.log.Redact(err.Error()))
		}
		b.log.Note("%s", r)
	}
	b.afterLoad(ctx)
	return nil
}

// afterLoad reads the chunk tables the run starts from: on a mongos, config.chunks now
// (the run's attribution uses them); elsewhere there are none, and the results say so.
func (b *Backend) afterLoad(ctx context.Context) {
	if !b.dep.IsMongos() || b.routing == nil {
		b.chunkNote = fmt.Sprintf("%s is not a mongos: its collections are not sharded, so there "+
			"are no chunks (config.chunks) to show after the load; the plan's chunk tables "+
			"are computed client-side",
			b.dep)
		b.log.Note("%s", b.chunkNote)
		return
	}
	b.loadedChunks = map[string]*pm.ChunkTable{}
	var names []string
	for c := range b.routing.tables {
		names = append(names, c)
	}
	sort.Strings(names)
	for _, c := range names {
		t, err := readChunkTable(ctx, b.client, b.dbName+"."+c)
		if err != nil {
			b.log.Note("config.chunks of %s after the load: %s", c, b.log.Redact(err.Error()))
			continue
		}
		b.routing.tables[c] = t
		b.loadedChunks[c] = t
	}
}

// LoadProgress reads the saved progress (backend.LoadStore).
func (b *Backend) LoadProgress(ctx context.Context) (map[string]backend.LoadMark, error) {
	cur, err := b.db.Collection(loadCollection).Find(ctx, bson.D{})
	if err != nil {
		return nil, err
	}
	defer cur.Close(ctx)
	out := map[string]backend.LoadMark{}
	for cur.Next(ctx) {
		var d struct {
			Key   string `bson:"_id"`
			Sig   string `bson:"sig"`
			Done  int64  `bson:"done"`
			Total int64  `bson:"total"`
		}
		if err := cur.Decode(&d); err != nil {
			return nil, err
		}
		out[d.Key] = backend.LoadMark{Sig: d.Sig, Done: d.Done, Total: d.Total}
	}
	return out, cur.Err()
}

// SaveProgress saves one record set's progress (backend.LoadStore).
func (b *Backend) SaveProgress(ctx context.Context, key string, m backend.LoadMark) error {
	_, err := b.db.Collection(loadCollection).ReplaceOne(ctx, bson.D{{Key: "_id", Value: key}},
		bson.D{{Key: "_id", Value: key}, {Key: "sig", Value: m.Sig}, {Key: "done", Value: m.Done}, {Key: "total", Value: m.Total}},
		options.Replace().SetUpsert(true))
	return err
}

// writeDocs inserts rows of one collection with one unordered insertMany. A document
// already there (a resumed load rewriting its last batches) is no failure.
func (b *Backend) writeDocs(ctx context.Context, l *design.Loader, rows []backend.LoadRow) error {
	docs := make([]any, 0, len(rows))
	for i := range rows {
		cmd := rows[i].A.Mongo(&rows[i].Op)
		if cmd == nil {
			return fmt.Errorf("no MongoDB command for %s", l.Step)
		}
		docs = append(docs, b.conv.doc(cmd.Document))
	}
	_, err := b.loadColls[l.Target].InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
	var bwe mongo.BulkWriteException
	if errors.As(err, &bwe) && bwe.WriteConcernError == nil {
		for _, we := range bwe.WriteErrors {
			if we.Code != 11000 { // duplicate key
				return err
			}
		}
		return nil
	}
	return err
}

// countRead counts one read of step s that returned n documents.
func (b *Backend) countRead(s *design.Step, n int) {
	if n > 0 {
		b.found.Add(1)
	} else {
		b.missed.Add(1)
	}
	b.reads.Add(s, n)
}

// ReadRows lists, per read step, the reads and the documents they returned.
func (b *Backend) ReadRows() []backend.StepReads { return b.reads.Steps() }

// Loaded is what the load step wrote (nil when none ran).
func (b *Backend) Loaded() *backend.LoadResult { return b.loaded }

// LoadedChunks is a collection's chunk table as config.chunks held it after the load (nil
// off a mongos).
func (b *Backend) LoadedChunks(coll string) *pm.ChunkTable { return b.loadedChunks[coll] }

// loadView adds the load, the chunks it left and the reads' rows to server.json.
func (b *Backend) loadView(sv *results.ServerVariant) {
	if b.loaded != nil {
		sv.Tables = append(sv.Tables, backend.LoadTable(*b.loaded))
	}
	if len(b.loadedChunks) > 0 {
		t := results.ServerTable{Title: "chunks per shard after the load (config.chunks: the run starts from them)", Subject: "nodes",
			Columns: []string{"collection", "shard", "chunks", "jumbo chunks"}, Numeric: []bool{false, false, true, true}}
		var names []string
		for c := range b.loadedChunks {
			names = append(names, c)
		}
		sort.Strings(names)
		for _, c := range names {
			tb := b.loadedChunks[c]
			jumbo := make([]int, len(tb.Shards))
			for _, i := range tb.JumboChunks() {
				jumbo[tb.Chunks[i].Shard]++
			}
			for i, n := range tb.ChunksPerShard() {
				t.Rows = append(t.Rows, []string{c, tb.Shards[i], fmt.Sprint(n), fmt.Sprint(jumbo[i])})
			}
		}
		sv.Tables = append(sv.Tables, t)
	}
	if rt := b.reads.Table(); len(rt.Rows) > 0 {
		sv.Tables = append(sv.Tables, rt)
	}
}
