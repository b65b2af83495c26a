package cassandra

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/results"
)

// loadTable keeps each record set's load progress in the variant's keyspace, so that an
// interrupted load resumes and --skip-load can tell a loaded keyspace from an empty one.
const loadTable = "shardbench_load"

// load is the load step: the scenario's population written into every table of the
// variant's design before the measured run (backend.PopulationLoad), at load.scale; with
// --skip-load only the progress is read, to say what the keyspace holds.
func (b *Backend) load(ctx context.Context) error {
	if err := b.session.Query(fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s.%s (key text PRIMARY KEY, sig text, done bigint, total bigint)", b.keyspace, loadTable)).
		ExecContext(ctx); err != nil {
		return fmt.Errorf("cassandra %s: creating %s.%s: %s", b.target.redacted, b.keyspace, loadTable, b.log.Redact(err.Error()))
	}
	if b.cfg.SkipLoad {
		b.log.Note("%s", backend.SkippedLoad(ctx, b, b.cfg.Compiled, design.Cassandra, b.opts.Load.Fraction()))
		return nil
	}
	if b.opts.Load.Fraction() == 0 {
		b.log.Note("load.scale is 0: no population loaded; reads of records that exist before the sale find nothing")
		return nil
	}
	ld := backend.PopulationLoad{Database: design.Cassandra, Options: b.opts.Load, Store: b, Write: b.writeRows, Log: b.cfg.Log, Name: "cassandra: variant " + b.cfg.Variant.Name}
	r, err := ld.Run(ctx, b.cfg.Compiled)
	b.loaded = &r
	if err != nil {
		return fmt.Errorf("cassandra %s: %s", b.target.redacted, b.log.Redact(err.Error()))
	}
	b.log.Note("%s", r)
	if n := b.loadRetries.Load(); n > 0 {
		b.log.Note("load: %d writes at ALL were tried again after a timeout or an unavailable replica (up to %d tries each)", n, loadAttempts)
	}
	return nil
}

// LoadProgress reads the saved progress (backend.LoadStore).
func (b *Backend) LoadProgress(ctx context.Context) (map[string]backend.LoadMark, error) {
	iter := b.session.Query(fmt.Sprintf("SELECT key, sig, done, total FROM %s.%s", b.keyspace, loadTable)).IterContext(ctx)
	out := map[string]backend.LoadMark{}
	var key, sig string
	var done, total int64
	for iter.Scan(&key, &sig, &done, &total) {
		out[key] = backend.LoadMark{Sig: sig, Done: done, Total: total}
	}
	return out, iter.Close()
}

// SaveProgress saves one record set's progress (backend.LoadStore).
func (b *Backend) SaveProgress(ctx context.Context, key string, m backend.LoadMark) error {
	return b.session.Query(fmt.Sprintf("INSERT INTO %s.%s (key, sig, done, total) VALUES (?, ?, ?, ?)", b.keyspace, loadTable), key, m.Sig, m.Done, m.Total).
		Consistency(gocql.Quorum).ExecContext(ctx)
}

// maxBatchBytes keeps an unlogged batch of one partition's rows under Cassandra's
// batch_size_fail_threshold (50 KiB by default; warnings start at 5 KiB).
const maxBatchBytes = 40 << 10

// writeRows inserts rows of one table: the rows of one partition in unlogged batches
// (one mutation for the replicas), every group sent concurrently.
func (b *Backend) writeRows(ctx context.Context, l *design.Loader, rows []backend.LoadRow) error {
	cql := rewriteKeyspace(l.Step.CQL, b.cfg.Compiled.Design.Cassandra.Keyspace, b.keyspace)
	// Data written long before the sale is on every replica: the load writes at ALL, so
	// that a read at any consistency level finds it (a replica missing a row would make
	// reads at ONE miss what a real cluster has).
	cl := gocql.All
	// Groups of consecutive rows of one partition (a cart's items, a category's
	// products), each within the batch size limit.
	type group struct{ from, to int }
	var groups []group
	var key, prev []byte
	size := 0
	for i := range rows {
		r := &rows[i]
		key = r.A.AppendKey(key[:0], &r.Op)
		n := len(groups)
		if n > 0 && bytes.Equal(key, prev) && size+int(r.A.Bytes) <= maxBatchBytes {
			groups[n-1].to = i + 1
			size += int(r.A.Bytes)
		} else {
			groups = append(groups, group{i, i + 1})
			size = int(r.A.Bytes)
		}
		prev = append(prev[:0], key...)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	sem := make(chan struct{}, 16)
	for _, g := range groups {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			err := b.retryLoadWrite(ctx, func() error {
				if g.to-g.from == 1 {
					r := &rows[g.from]
					return b.session.Query(cql, args(&r.A, &r.Op, nil)...).Consistency(cl).Idempotent(true).ExecContext(ctx)
				}
				bt := b.session.Batch(gocql.UnloggedBatch).Consistency(cl)
				for i := g.from; i < g.to; i++ {
					r := &rows[i]
					bt.Query(cql, args(&r.A, &r.Op, nil)...)
				}
				return bt.ExecContext(ctx)
			})
			if err != nil {
				mu.Lock()
				first = err
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return first
}

// loadAttempts bounds the tries of one load write. A load writes every row of the
// population at ALL, so one slow replica (a node restarting, compacting or sharing its
// CPU) times a write out; the population is not the measurement, and an insert is
// idempotent, so a timed-out write is tried again, after a pause that doubles from
// loadBackoff, instead of losing the load. Retries are counted and said after the load.
const (
	loadAttempts = 6
	loadBackoff  = 250 * time.Millisecond
)

// retryLoadWrite runs write until it succeeds, fails with an error no retry can mend
// (anything but a timeout, an unavailable replica or an overloaded coordinator), or has
// been tried loadAttempts times.
func (b *Backend) retryLoadWrite(ctx context.Context, write func() error) error {
	pause := loadBackoff
	for attempt := 1; ; attempt++ {
		err := write()
		if err == nil || attempt == loadAttempts {
			return err
		}
		switch Classify(err, ctx.Err()) {
		case metrics.Timeout, metrics.Unavailable, metrics.Overloaded:
		default:
			return err
		}
		b.loadRetries.Add(1)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
		pause *= 2
	}
}

// loadTableView is the load as server.json shows it: per table the rows and bytes
// written, and the load's time and throughput.
func (b *Backend) loadTableView(sv *results.ServerVariant) {
	if b.loaded == nil {
		return
	}
	sv.Tables = append(sv.Tables, backend.LoadTable(*b.loaded))
}

// countRead counts one read of step s that returned n rows.
func (b *Backend) countRead(s *design.Step, n int) {
	if n > 0 {
		b.found.Add(1)
	} else {
		b.missed.Add(1)
	}
	b.reads.Add(s, n)
}

// ReadRows lists, per read step, the reads and the rows they returned.
func (b *Backend) ReadRows() []backend.StepReads { return b.reads.Steps() }

// Loaded is what the load step wrote (nil when none ran).
func (b *Backend) Loaded() *backend.LoadResult { return b.loaded }
