package backend_test

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/yamlx"
	_ "github.com/shardbench/shardbench/workloads/all"
)

// memStore is a LoadStore in memory.
type memStore struct {
	mu    sync.Mutex
	marks map[string]backend.LoadMark
}

func (s *memStore) LoadProgress(context.Context) (map[string]backend.LoadMark, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]backend.LoadMark{}
	for k, v := range s.marks {
		out[k] = v
	}
	return out, nil
}

func (s *memStore) SaveProgress(_ context.Context, key string, m backend.LoadMark) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.marks[key] = m
	return nil
}

// sink records the rows written, per table, by record identity.
type sink struct {
	mu   sync.Mutex
	rows map[string]map[[3]int64]int // table -> (session, order, product) -> times written
	fail int                         // fail the write after this many rows (0: never)
	n    int
}

func (s *sink) write(_ context.Context, l *design.Loader, rows []backend.LoadRow) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail > 0 && s.n+len(rows) > s.fail {
		return errors.New("server gone")
	}
	s.n += len(rows)
	if s.rows[l.Target] == nil {
		s.rows[l.Target] = map[[3]int64]int{}
	}
	for _, r := range rows {
		s.rows[l.Target][[3]int64{r.Op.Session, r.Op.Order, r.Op.Product*8 + int64(r.Op.Zone)}]++
	}
	return nil
}

func plan(t *testing.T, designFile string) *design.Compiled {
	t.Helper()
	text := `name: l
seed: 3
load:
  phases: [{type: constant, rate: 100, duration: 10s}]
population: {users: 3000, sessions: 5000, carts: 800, products: 1200, extra: {catalog.attributes_bytes: 64}}
mix: {sessions.read: 1, catalog.product_read: 1, orders.read: 1}
designs:
  - design: ` + filepath.Join("../../scenarios/designs", designFile) + `
`
	sc, err := scenario.Parse("l.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	prep, err := design.Prepare(sc)
	if err != nil {
		t.Fatal(err)
	}
	return prep.Compiled[0]
}

// A load writes every record of each set once, at scale the first part of each set; an
// interrupted load resumes from its saved progress, and a complete one is skipped.
func TestPopulationLoadResumes(t *testing.T) {
	p := plan(t, "seed004.yaml") // sessions by id, products by id and by category
	half := 0.5
	store := &memStore{marks: map[string]backend.LoadMark{}}
	s := &sink{rows: map[string]map[[3]int64]int{}, fail: 700}
	ld := backend.PopulationLoad{Database: design.Cassandra, Options: backend.LoadOptions{Scale: &half, Concurrency: 4, Batch: 50}, Store: store, Write: s.write}
	// The failing load runs one writer: a set's progress advances only over its finished
	// leading tasks (200 records each), and with four writers the 700th row can fall
	// before any of them finishes, leaving nothing to resume from.
	first := ld
	first.Options.Concurrency = 1
	if _, err := first.Run(context.Background(), p); err == nil {
		t.Fatal("a failing write did not fail the load")
	}
	if len(store.marks) == 0 {
		t.Fatal("no progress saved before the failure")
	}
	s.fail = 0
	r, err := ld.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	var resumed int64
	for _, tl := range r.Tables {
		resumed += tl.Resumed
	}
	if resumed == 0 {
		t.Fatalf("the second load did not resume: %+v", r.Tables)
	}
	m := p.Model
	if got, want := len(s.rows["user_sessions"]), int(math.Ceil(0.5*float64(m.Sessions))); got != want {
		t.Errorf("user_sessions: %d distinct rows, want %d (half the sessions)", got, want)
	}
	// Products: the most popular half of each category, each exactly once (a row the
	// failed load wrote may be written again on resume: that is an upsert).
	var want int
	for _, c := range m.Categories {
		n := int64(math.Ceil(0.5 * float64(c.Count)))
		want += int(n)
		for p := c.First; p < c.First+n; p++ {
			if s.rows["products"][[3]int64{-1, -1, p * 8}] == 0 {
				t.Fatalf("product %d (rank %d of %s) not loaded", p, p-c.First, c.Name)
			}
		}
		if s.rows["products"][[3]int64{-1, -1, (c.First + n) * 8}] != 0 {
			t.Fatalf("product %d beyond the scale loaded", c.First+n)
		}
	}
	if len(s.rows["products"]) != want {
		t.Errorf("%d products loaded, want %d", len(s.rows["products"]), want)
	}
	// Done: a third run writes nothing.
	n := s.n
	r, err = ld.Run(context.Background(), p)
	if err != nil || !r.Skipped || s.n != n {
		t.Fatalf("a complete load ran again: %+v, %v (%d rows written)", r, err, s.n-n)
	}
	if msg := backend.SkippedLoad(context.Background(), store, p, design.Cassandra, half); !containsAll(msg, "holds this scenario's population") {
		t.Errorf("skip-load note: %s", msg)
	}
	if msg := backend.SkippedLoad(context.Background(), store, p, design.Cassandra, 1); !containsAll(msg, "does not hold", "first missing") {
		t.Errorf("skip-load note at another scale: %s", msg)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}

// Bad load options are reported with the file, line and field: scale out of range,
// and the load.ops of the first-operations replay this step replaced.
func TestLoadOptionErrors(t *testing.T) {
	text := "name: x\nload: {phases: [{type: constant, rate: 1, duration: 1s}]}\nmix: {sessions.read: 1}\nbackends:\n  cassandra:\n    load: {scale: 1.5, ops: 800, batch: -1}\n"
	sc, err := scenario.Parse("x.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	var o struct {
		Load backend.LoadOptions `yaml:"load"`
	}
	var errs yamlx.Errors
	errs.Append(sc.Backends["cassandra"].Decode(&o))
	o.Load.Check(&errs)
	msg := errs.Err().Error()
	for _, want := range []string{
		"x.yaml:6:19: backends.cassandra.load.scale: must be between 0 and 1 (a fraction of the population), got 1.5",
		"backends.cassandra.load.ops: unknown field",
		"backends.cassandra.load.batch: must be between 1 and 100000, got -1",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("missing %q in\n%s", want, msg)
		}
	}
	var def backend.LoadOptions
	def.Check(&errs)
	if def.Fraction() != 1 || def.Concurrency != 32 || def.Batch != 256 {
		t.Errorf("defaults: %+v", def)
	}
}
