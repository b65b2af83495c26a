package workloads_test

import (
	"fmt"
	"hash/fnv"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/schedule"
	"github.com/shardbench/shardbench/workloads"
	_ "github.com/shardbench/shardbench/workloads/all"
)

// testScenario parses a small scenario with the given mix lines.
func testScenario(t testing.TB, seed int64, mix string, extra string) *scenario.Scenario {
	t.Helper()
	text := fmt.Sprintf(`name: t
seed: %d
load:
  arrival: poisson
  phases:
    - {type: constant, rate: 100k, duration: 100s}
population:
  users: 100000
  sessions: 200000
  carts: 50000
  products: 20000
  bots: {count: 5, share: 0.2}
  hot_products: {count: 20, share: 0.1, shift_every: 10s}
%s
mix:
%s
`, seed, extra, mix)
	sc, err := scenario.Parse("t.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func allMix() string {
	var b strings.Builder
	for _, name := range workloads.OpNames() {
		fmt.Fprintf(&b, "  %s: 1\n", name)
	}
	return b.String()
}

func newModel(t testing.TB, sc *scenario.Scenario) *workloads.Model {
	t.Helper()
	m, err := workloads.New(sc)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// fingerprint hashes every field of the first n operations and the derived keys of a few
// logical fields.
func fingerprint(t testing.TB, m *workloads.Model, n int) string {
	t.Helper()
	s := m.NewStream(schedule.New(m.Scenario))
	h := fnv.New64a()
	var op workloads.Op
	var buf []byte
	getters := map[string]workloads.Getter{}
	for i := 0; i < n; i++ {
		if !s.Next(&op) {
			t.Fatalf("stream ended after %d ops", i)
		}
		fmt.Fprintf(h, "%+v\n", op)
		info := m.Ops[op.Type]
		for _, f := range info.Workload.Fields {
			if !f.Type.Scalar() {
				continue
			}
			key := info.Workload.Name + "." + f.Name
			g, ok := getters[key]
			if !ok {
				g = f.Get(m)
				getters[key] = g
			}
			v := g(&op, buf)
			buf = v.Bytes
			fmt.Fprintf(h, "%s=%s;", f.Name, v.String())
		}
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

// Pinned fingerprints: the first 2000 operations of each workload alone, seed 7. A change
// here means every recorded result's stream changed: update deliberately.
var pinned = map[string]string{
	"carts":    "8e460ea4589dcf1b",
	"catalog":  "338c83e7a053df85",
	"orders":   "4c8bfb563f6c5cc8",
	"sessions": "9d3b8a5f17b5bcc9",
	"views":    "6ab72c8b605d25a6",
}

func TestFingerprintPerWorkload(t *testing.T) {
	for _, meta := range workloads.Registered() {
		t.Run(meta.Name, func(t *testing.T) {
			var mix strings.Builder
			for _, o := range meta.Ops {
				fmt.Fprintf(&mix, "  %s.%s: 1\n", meta.Name, o.Name)
			}
			a := fingerprint(t, newModel(t, testScenario(t, 7, mix.String(), "")), 2000)
			b := fingerprint(t, newModel(t, testScenario(t, 7, mix.String(), "")), 2000)
			c := fingerprint(t, newModel(t, testScenario(t, 8, mix.String(), "")), 2000)
			if a != b {
				t.Fatalf("same seed, different streams: %s vs %s", a, b)
			}
			if a == c {
				t.Fatalf("different seeds, same stream %s", a)
			}
			want, ok := pinned[meta.Name]
			if !ok {
				t.Fatalf("no pinned fingerprint for %s (got %s)", meta.Name, a)
			}
			if a != want {
				t.Errorf("fingerprint %s, pinned %s", a, want)
			}
		})
	}
}

func TestEveryOperationIsGenerated(t *testing.T) {
	m := newModel(t, testScenario(t, 1, allMix(), ""))
	s := m.NewStream(schedule.New(m.Scenario))
	seen := make([]int, len(m.Ops))
	var op workloads.Op
	var last time.Duration
	for i := 0; i < 50000 && s.Next(&op); i++ {
		seen[op.Type]++
		if op.Intended < last {
			t.Fatal("intended times must not decrease")
		}
		last = op.Intended
		if op.Seq != uint64(i) {
			t.Fatalf("seq %d at %d", op.Seq, i)
		}
		if want := m.Start + int64(op.Intended); op.Time != want {
			t.Fatalf("time %d, want %d", op.Time, want)
		}
	}
	for i, n := range seen {
		if n == 0 {
			t.Errorf("%s never generated", m.Ops[i].Name)
		}
	}
	if math.Abs(float64(seen[0])/50000-1/float64(len(seen))) > 0.01 {
		t.Errorf("mix share of %s = %d/50000, want about 1/%d", m.Ops[0].Name, seen[0], len(seen))
	}
}
