package workloads_test

import (
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/schedule"
	"github.com/shardbench/shardbench/workloads"
)

// The sampler matches P(k) = k^-s / H(n,s) for s below, at and above 1.
func TestZipfMatchesItsDistribution(t *testing.T) {
	const n, draws = 50, 400_000
	for _, s := range []float64{0.6, 1.0, 1.3} {
		z := workloads.NewZipf(n, s)
		r := workloads.NewRand(42)
		counts := make([]float64, n+1)
		for i := 0; i < draws; i++ {
			k := z.Sample(&r)
			if k < 1 || k > n {
				t.Fatalf("s=%g: rank %d out of range", s, k)
			}
			counts[k]++
		}
		h := 0.0
		for k := 1; k <= n; k++ {
			h += math.Pow(float64(k), -s)
		}
		chi := 0.0
		for k := 1; k <= n; k++ {
			exp := draws * math.Pow(float64(k), -s) / h
			chi += (counts[k] - exp) * (counts[k] - exp) / exp
		}
		// 49 degrees of freedom: the 99.9th percentile is about 85.
		if chi > 85 {
			t.Errorf("s=%g: chi-square %.1f against the exact distribution", s, chi)
		}
	}
}

func TestZipfLargeNDoesNotAllocate(t *testing.T) {
	z := workloads.NewZipf(100_000_000, 0.9)
	r := workloads.NewRand(1)
	if a := testing.AllocsPerRun(1000, func() { z.Sample(&r) }); a != 0 {
		t.Fatalf("%v allocations per sample", a)
	}
}

func collect(t *testing.T, m *workloads.Model, n int, f func(op *workloads.Op)) {
	t.Helper()
	s := m.NewStream(schedule.New(m.Scenario))
	var op workloads.Op
	for i := 0; i < n && s.Next(&op); i++ {
		f(&op)
	}
}

// Catalog traffic follows the category weights (electronics 70%), sessions the zone weights
// (Moscow 45%), and bots take their share.
func TestSkewFollowsThePopulation(t *testing.T) {
	sc := testScenario(t, 5, "  catalog.product_read: 1\n", "")
	sc.Population.HotProducts.Share = 0
	m := newModel(t, sc)
	var cats [256]int
	var zones [256]int
	bots, n := 0, 100_000
	collect(t, m, n, func(op *workloads.Op) {
		cats[op.Category]++
		zones[op.Zone]++
		if op.Bot {
			bots++
		}
		if got := m.CategoryOf(op.Product); got != op.Category {
			t.Fatalf("product %d is in category %d, op says %d", op.Product, got, op.Category)
		}
	})
	if share := float64(cats[0]) / float64(n); math.Abs(share-0.70) > 0.01 {
		t.Errorf("electronics share %.3f, want 0.70", share)
	}
	if share := float64(bots) / float64(n); math.Abs(share-0.2) > 0.01 {
		t.Errorf("bot share %.3f, want 0.2", share)
	}
	// Zones of non-bot sessions follow the zone weights; bots sit in their home zones.
	if share := float64(zones[0]) / float64(n); share < 0.35 || share > 0.6 {
		t.Errorf("moscow share %.3f, want about 0.45", share)
	}
	if zones[0] < 3*zones[4] {
		t.Errorf("moscow %d should dwarf kaliningrad %d", zones[0], zones[4])
	}
}

// The hot product set takes its share and moves every shift_every.
func TestHotSetShifts(t *testing.T) {
	sc := testScenario(t, 5, "  views.append: 1\n", "")
	sc.Population.Bots.Share = 0
	sc.Population.HotProducts = scenario.HotSet{Count: 5, Share: 0.5, ShiftEvery: 10 * time.Second}
	m := newModel(t, sc)
	epochTop := map[int64]map[int64]int{}
	collect(t, m, 300_000, func(op *workloads.Op) {
		e := int64(op.Intended / (10 * time.Second))
		if epochTop[e] == nil {
			epochTop[e] = map[int64]int{}
		}
		epochTop[e][op.Product]++
	})
	hot := func(e int64) map[int64]bool {
		out := map[int64]bool{}
		for k := int64(0); k < 5; k++ {
			out[m.HotProduct(e, k)] = true
		}
		return out
	}
	for e := int64(0); e < 2; e++ {
		total, inHot := 0, 0
		for p, c := range epochTop[e] {
			total += c
			if hot(e)[p] {
				inHot += c
			}
		}
		if share := float64(inHot) / float64(total); share < 0.48 || share > 0.56 {
			t.Errorf("epoch %d: hot share %.3f, want about 0.5 (plus the hot items' own popularity)", e, share)
		}
	}
	same := 0
	for p := range hot(0) {
		if hot(1)[p] {
			same++
		}
	}
	if same == 5 {
		t.Error("the hot set did not move")
	}
}

// Sessions created during the run are touched and read later; carts fill up and empty at
// checkout; placed orders are read back.
func TestStateCarriesOver(t *testing.T) {
	sc := testScenario(t, 9, "  sessions.create: 1\n  sessions.read: 1\n  carts.add_item: 3\n  carts.checkout: 0.2\n  orders.place: 1\n  orders.read: 1\n", "")
	m := newModel(t, sc)
	newRead, maxItems, orderReadNew := 0, int32(0), 0
	firstNew := m.FirstNewOrder()
	collect(t, m, 50_000, func(op *workloads.Op) {
		switch m.Ops[op.Type].Name {
		case "sessions.read":
			if op.Session >= m.Sessions {
				newRead++
			}
		case "carts.add_item":
			maxItems = max(maxItems, op.Items)
		case "orders.read":
			if op.Order >= firstNew {
				orderReadNew++
			}
		}
	})
	if newRead == 0 {
		t.Error("no read of a session created during the run")
	}
	if maxItems < 5 {
		t.Errorf("carts never grew: max %d items", maxItems)
	}
	if orderReadNew == 0 {
		t.Error("no read of an order placed during the run")
	}
}

// Memory does not grow with run length: the rings and the cart table have fixed sizes.
func TestStateIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	m := newModel(t, testScenario(t, 1, allMix(), ""))
	s := m.NewStream(schedule.New(m.Scenario))
	var op workloads.Op
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	for i := 0; i < 500_000; i++ {
		s.Next(&op)
	}
	before := heap()
	for i := 0; i < 3_000_000; i++ {
		s.Next(&op)
	}
	after := heap()
	if after > before+1<<20 {
		t.Fatalf("heap grew from %d to %d bytes over 3M operations", before, after)
	}
}

func TestMixAndKnobErrorsHavePositions(t *testing.T) {
	text := `name: x
load:
  phases: [{type: constant, rate: 10, duration: 1s}]
population:
  extra:
    carts.max_itemz: 5
    carts.max_items: 1000
mix:
  carts.add_item: 1
  carts.add: 1
  basket.read: 1
`
	sc, err := scenario.Parse("x.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	_, err = workloads.New(sc)
	if err == nil {
		t.Fatal("expected errors")
	}
	for _, want := range []string{
		"x.yaml:10:14: mix.carts.add: unknown operation (carts has: carts.add_item",
		"x.yaml:11:16: mix.basket.read: unknown operation (workloads: carts, catalog, orders, sessions, views)",
		"population.extra.carts.max_itemz: unknown knob",
		"population.extra.carts.max_items: must be between 1 and 255, got 1000",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in\n%v", want, err)
		}
	}
}

// Keys derived from the stream do not allocate.
func TestGettersDoNotAllocate(t *testing.T) {
	m := newModel(t, testScenario(t, 1, allMix(), ""))
	s := m.NewStream(schedule.New(m.Scenario))
	var op workloads.Op
	s.Next(&op)
	buf := make([]byte, 0, 256)
	for _, meta := range workloads.Registered() {
		for _, f := range meta.Fields {
			if !f.Type.Scalar() {
				continue
			}
			g := f.Get(m)
			if a := testing.AllocsPerRun(100, func() { v := g(&op, buf); _ = v }); a != 0 {
				t.Errorf("%s.%s: %v allocations", meta.Name, f.Name, a)
			}
		}
	}
}

// Generators that keep state report it through the optional Stater interface.
func TestStreamStats(t *testing.T) {
	sc := testScenario(t, 3, "  sessions.create: 1\n  carts.add_item: 1\n  orders.place: 1\n", "")
	m := newModel(t, sc)
	s := m.NewStream(schedule.New(sc))
	var op workloads.Op
	counts := map[string]int64{}
	for i := 0; i < 3000 && s.Next(&op); i++ {
		counts[m.Ops[op.Type].Name]++
	}
	st := s.Stats()
	if st["sessions.created"] != counts["sessions.create"] || st["orders.placed"] != counts["orders.place"] {
		t.Fatalf("stats %v, ops %v", st, counts)
	}
	if st["carts.active_carts"] == 0 || st["carts.items_in_carts"] < st["carts.active_carts"] {
		t.Fatalf("cart stats %v", st)
	}
}

func TestModelGetter(t *testing.T) {
	m := newModel(t, testScenario(t, 1, "  sessions.create: 1\n", ""))
	g, typ, err := m.Getter("sessions", "owner_key")
	if err != nil || typ != workloads.TText {
		t.Fatal(err, typ)
	}
	op := workloads.Op{User: -1, Session: 7}
	if v := g(&op, nil); !strings.HasPrefix(string(v.Bytes), "s:") || len(v.Bytes) != 38 {
		t.Fatalf("guest owner key %q", v.Bytes)
	}
	if _, _, err := m.Getter("sessions", "items"); err == nil {
		t.Fatal("sessions have no items")
	}
	if _, _, err := m.Getter("carts", "items"); err == nil || !strings.Contains(err.Error(), "composite") {
		t.Fatalf("items is composite: %v", err)
	}
}
