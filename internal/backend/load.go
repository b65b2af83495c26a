package backend

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/yamlx"
	"github.com/shardbench/shardbench/workloads"
)

// LoadOptions is the load step's part of a real backend's options (backends.cassandra.load,
// backends.mongo.load): before the measured run, the scenario's population — every record
// that exists before the sale — is written into each table and collection of the
// variant's design.
type LoadOptions struct {
	Loc yamlx.Loc
	// Scale is the fraction of each record set loaded (default 1, the whole population):
	// the first Scale of every set, its busiest records first (the most popular products
	// of each category, the most active users' orders), for a test cluster too small for
	// all of it. The run's operations still refer to the whole population, so reads of the
	// records left out find nothing: the results count the rows reads return. 0 loads
	// nothing.
	Scale *float64 `yaml:"scale,omitempty"`
	// Concurrency is how many writers run at once (default 32).
	Concurrency int `yaml:"concurrency,omitempty"`
	// Batch is how many rows one writer sends at a time (default 256): a MongoDB
	// insertMany, a Cassandra group of concurrent inserts (rows of one partition in an
	// unlogged batch).
	Batch int `yaml:"batch,omitempty"`
}

// Fraction is the scale to load at: Scale, or 1 when it is not set.
func (o *LoadOptions) Fraction() float64 {
	if o.Scale == nil {
		return 1
	}
	return *o.Scale
}

// Check validates the options and fills the defaults.
func (o *LoadOptions) Check(errs *yamlx.Errors) {
	if f := o.Fraction(); f < 0 || f > 1 || math.IsNaN(f) {
		errs.AddAt(o.Loc, "scale", "must be between 0 and 1 (a fraction of the population), got %g", f)
	}
	if o.Concurrency < 0 || o.Concurrency > 4096 {
		errs.AddAt(o.Loc, "concurrency", "must be between 1 and 4096, got %d", o.Concurrency)
	}
	if o.Batch < 0 || o.Batch > 100_000 {
		errs.AddAt(o.Loc, "batch", "must be between 1 and 100000, got %d", o.Batch)
	}
	if o.Concurrency == 0 {
		o.Concurrency = 32
	}
	if o.Batch == 0 {
		o.Batch = 256
	}
}

// LoadRow is one row the load writes: the insert's access and the row's record.
type LoadRow struct {
	A  design.Access
	Op workloads.Op
}

// LoadStore keeps a load's progress in the target database, so that a load interrupted
// (Ctrl-C, a failure) resumes where it stopped and --skip-load can tell a loaded database
// from an empty one. Keys name a record set of a table; done is the candidates written,
// all of those below it; sig identifies what was loaded (seed, population, scale).
type LoadStore interface {
	LoadProgress(ctx context.Context) (map[string]LoadMark, error)
	SaveProgress(ctx context.Context, key string, m LoadMark) error
}

// LoadMark is one record set's progress.
type LoadMark struct {
	Sig   string
	Done  int64 // candidates written (every one below Done)
	Total int64 // candidates to write
}

// PopulationLoad writes the population into the tables of one database of a design
// (a design may keep some entities in Cassandra and others in MongoDB): Write sends rows
// of one table (from one goroutine per writer; rows are the caller's until Write returns).
type PopulationLoad struct {
	Database design.Database
	Options  LoadOptions
	Store    LoadStore
	Write    func(ctx context.Context, l *design.Loader, rows []LoadRow) error
	// Log receives progress lines; Every is their interval (default 5s).
	Log   io.Writer
	Every time.Duration
	// Name prefixes the progress lines (the variant).
	Name string
}

// TableLoaded is what the load wrote to one table.
type TableLoaded struct {
	Target      string
	Rows, Bytes int64
	// Candidates written, of Total; Resumed of them were found written by an earlier load.
	Candidates, Total, Resumed int64
}

// LoadResult is what a load did.
type LoadResult struct {
	Scale       float64
	Tables      []TableLoaded
	Rows, Bytes int64
	Took        time.Duration
	// Skipped: every set was already loaded (same seed, population and scale).
	Skipped bool
}

// RowsPerSecond is the load's throughput.
func (r LoadResult) RowsPerSecond() float64 {
	if r.Took <= 0 {
		return 0
	}
	return float64(r.Rows) / r.Took.Seconds()
}

func (r LoadResult) String() string {
	if r.Skipped {
		return fmt.Sprintf("load: the population (scale %g) was already loaded", r.Scale)
	}
	s := fmt.Sprintf("load: %d rows (%s) in %d tables at scale %g in %s, %.0f rows/s", r.Rows, humanBytes(r.Bytes), len(r.Tables), r.Scale, r.Took.Round(time.Millisecond), r.RowsPerSecond())
	var resumed int64
	for _, t := range r.Tables {
		resumed += t.Resumed
	}
	if resumed > 0 {
		s += fmt.Sprintf(" (resumed: %d records were written by an earlier load)", resumed)
	}
	return s
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f, u := float64(n), 0
	for f >= unit && u < 5 {
		f /= unit
		u++
	}
	return fmt.Sprintf("%.1f %ciB", f, "KMGTP"[u-1])
}

// loadTask is a run of candidates of one record set of one table.
type loadTask struct {
	table, set int
	from, to   int64
}

// loadSet is one record set's share of the load.
type loadSet struct {
	key, sig string
	total    int64
	// done: candidates written below next; finished marks the tasks after it that are.
	mu       sync.Mutex
	next     int64
	finished map[int64]int64 // from -> to of tasks written beyond next
	saved    int64
}

// advance records task [from, to) as written and moves next over the written prefix.
func (s *loadSet) advance(from, to int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finished[from] = to
	for {
		to, ok := s.finished[s.next]
		if !ok {
			return
		}
		delete(s.finished, s.next)
		s.next = to
	}
}

// tasksPerBatch: a task is this many batches' worth of candidates, small enough for
// progress to be saved often, large enough to fill batches.
const tasksPerBatch = 4

// Run loads the population of compiled's tables at the options' scale.
func (ld *PopulationLoad) Run(ctx context.Context, compiled *design.Compiled) (LoadResult, error) {
	scale := ld.Options.Fraction()
	res := LoadResult{Scale: scale}
	ls, err := loaders(compiled, ld.Database)
	if err != nil {
		return res, err
	}
	marks := map[string]LoadMark{}
	if ld.Store != nil {
		if marks, err = ld.Store.LoadProgress(ctx); err != nil {
			return res, fmt.Errorf("load progress: %w", err)
		}
	}
	every := ld.Every
	if every <= 0 {
		every = 5 * time.Second
	}
	// The sets, and the tasks left of each.
	sets := make([][]*loadSet, len(ls))
	var tasks []loadTask
	var left int64
	taskSize := int64(tasksPerBatch * max(ld.Options.Batch, 1))
	res.Tables = make([]TableLoaded, len(ls))
	for t, l := range ls {
		res.Tables[t].Target = l.Target
		for i := range l.Sets {
			n := int64(math.Ceil(scale * float64(l.Count(i))))
			key := l.Target + "/" + l.Sets[i].Name
			sig := loadSig(compiled.Model, l, i, scale)
			s := &loadSet{key: key, sig: sig, total: n, finished: map[int64]int64{}}
			if m, ok := marks[key]; ok && m.Sig == sig {
				s.next, s.saved = min(m.Done, n), min(m.Done, n)
				res.Tables[t].Resumed += s.next
			}
			sets[t] = append(sets[t], s)
			res.Tables[t].Total += n
			for from := s.next; from < n; from += taskSize {
				tasks = append(tasks, loadTask{t, i, from, min(from+taskSize, n)})
				left += min(from+taskSize, n) - from
			}
		}
	}
	if left == 0 {
		res.Skipped = true
		return res, nil
	}
	start := time.Now()
	var rows, bytes, written atomic.Int64
	perTable := make([][2]atomic.Int64, len(ls))
	var next atomic.Int64
	var failed atomic.Value
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for range max(1, min(ld.Options.Concurrency, len(tasks))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			batch := make([]LoadRow, 0, ld.Options.Batch)
			var op workloads.Op
			for {
				k := next.Add(1) - 1
				if k >= int64(len(tasks)) || ctx.Err() != nil {
					return
				}
				tk := tasks[k]
				l := ls[tk.table]
				flush := func() bool {
					if len(batch) == 0 {
						return true
					}
					if err := ld.Write(ctx, l, batch); err != nil {
						if ctx.Err() == nil {
							failed.CompareAndSwap(nil, fmt.Errorf("%s: %w", l.Target, err))
						}
						cancel()
						return false
					}
					var b int64
					for i := range batch {
						b += int64(batch[i].A.Bytes)
					}
					rows.Add(int64(len(batch)))
					bytes.Add(b)
					perTable[tk.table][0].Add(int64(len(batch)))
					perTable[tk.table][1].Add(b)
					batch = batch[:0]
					return true
				}
				ok := true
				for c := tk.from; c < tk.to && ok; c++ {
					if !l.Sets[tk.set].Record(c, &op) {
						continue
					}
					l.Rows(&op, func(a *design.Access, row *workloads.Op) {
						if !ok {
							return
						}
						batch = append(batch, LoadRow{A: *a, Op: *row})
						if len(batch) >= ld.Options.Batch {
							ok = flush()
						}
					})
				}
				if !ok || !flush() {
					return
				}
				sets[tk.table][tk.set].advance(tk.from, tk.to)
				written.Add(tk.to - tk.from)
			}
		}()
	}
	// Progress, with an ETA, and the saved marks, until the writers are done.
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(every)
	defer tick.Stop()
	save := func() {
		if ld.Store == nil {
			return
		}
		for _, ss := range sets {
			for _, s := range ss {
				s.mu.Lock()
				n := s.next
				s.mu.Unlock()
				if n != s.saved {
					if ld.Store.SaveProgress(context.WithoutCancel(ctx), s.key, LoadMark{Sig: s.sig, Done: n, Total: s.total}) == nil {
						s.saved = n
					}
				}
			}
		}
	}
wait:
	for {
		select {
		case <-done:
			break wait
		case <-tick.C:
			save()
			if ld.Log != nil {
				el := time.Since(start)
				w := written.Load()
				line := fmt.Sprintf("%s load: %d of %d records (%.0f%%), %d rows, %.0f rows/s", ld.Name, w, left, 100*float64(w)/float64(left), rows.Load(), float64(rows.Load())/el.Seconds())
				if w > 0 {
					eta := time.Duration(float64(el) * float64(left-w) / float64(w))
					line += ", ETA " + eta.Round(time.Second).String()
				}
				fmt.Fprintln(ld.Log, strings.TrimSpace(line))
			}
		}
	}
	save()
	res.Took = time.Since(start)
	res.Rows, res.Bytes = rows.Load(), bytes.Load()
	for t := range res.Tables {
		res.Tables[t].Rows, res.Tables[t].Bytes = perTable[t][0].Load(), perTable[t][1].Load()
		for _, s := range sets[t] {
			res.Tables[t].Candidates += s.next
		}
	}
	if err, _ := failed.Load().(error); err != nil {
		return res, err
	}
	if err := ctx.Err(); err != nil && written.Load() < left {
		return res, errors.Join(errors.New("load interrupted (a new run resumes it)"), err)
	}
	return res, nil
}

// loadSig identifies what set i of l holds at scale: the seed, the table's definition
// and the set's size. A load of another population or scale starts the set again.
func loadSig(m *workloads.Model, l *design.Loader, i int, scale float64) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%d %s %s %d %g", m.Seed, l.Signature(), l.Sets[i].Name, l.Sets[i].Count, scale))
	return hex.EncodeToString(sum[:8])
}

// SkippedLoad says what a database reused with --skip-load holds: whether the load of this
// scenario's population at this scale completed there, from the progress store.
func SkippedLoad(ctx context.Context, store LoadStore, compiled *design.Compiled, db design.Database, scale float64) string {
	ls, err := loaders(compiled, db)
	if err != nil {
		return "--skip-load: " + err.Error()
	}
	marks, err := store.LoadProgress(ctx)
	if err != nil {
		return "--skip-load: the load progress could not be read: " + err.Error()
	}
	sets, complete := 0, 0
	missing := ""
	for _, l := range ls {
		for i := range l.Sets {
			sets++
			n := int64(math.Ceil(scale * float64(l.Count(i))))
			m, ok := marks[l.Target+"/"+l.Sets[i].Name]
			if ok && m.Sig == loadSig(compiled.Model, l, i, scale) && m.Done >= n {
				complete++
			} else if missing == "" {
				missing = l.Target + "/" + l.Sets[i].Name
			}
		}
	}
	if complete == sets {
		return fmt.Sprintf("--skip-load: the database holds this scenario's population at scale %g (all %d record sets loaded)", scale, sets)
	}
	return fmt.Sprintf("--skip-load: the database does not hold this scenario's population at "+
		"scale %g: %d of %d record sets loaded (first missing: %s); reads of records that "+
		"exist before the sale may find nothing",
		scale, complete, sets, missing)
}

// LoadTable is a load as server.json shows it: per table the rows and bytes written, the
// candidates of the population's record sets done (of those at this scale; resumed: done
// by an earlier load), and the load's time and throughput.
func LoadTable(r LoadResult) results.ServerTable {
	t := results.ServerTable{
		Title:   fmt.Sprintf("load step: the population at scale %g, %d rows in %s (%.0f rows/s)", r.Scale, r.Rows, r.Took.Round(time.Millisecond), r.RowsPerSecond()),
		Columns: []string{"table", "rows written", "bytes", "candidates done", "of", "resumed"},
		Numeric: []bool{false, true, true, true, true, true},
	}
	for _, tl := range r.Tables {
		t.Rows = append(t.Rows, []string{tl.Target, fmt.Sprint(tl.Rows), fmt.Sprint(tl.Bytes), fmt.Sprint(tl.Candidates), fmt.Sprint(tl.Total), fmt.Sprint(tl.Resumed)})
	}
	return t
}

// loaders are compiled's loaders of the tables in db.
func loaders(compiled *design.Compiled, db design.Database) ([]*design.Loader, error) {
	all, err := compiled.Loaders()
	var out []*design.Loader
	for _, l := range all {
		if l.Database == db {
			out = append(out, l)
		}
	}
	return out, err
}
