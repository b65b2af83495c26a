package workloads_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/schedule"
	"github.com/shardbench/shardbench/workloads"
)

// At Black Friday's peak (scenarios/black-friday.yaml at its flash-sale 100K ops/s), no
// person makes an operation faster than its human ceiling: each operation's busiest
// person (the session, for operations in a session: a person holds at most max_sessions)
// stays within the ceiling's expected count over the window plus a Poisson allowance of 5
// standard deviations. Reads and updates of records created during the run (sessions and
// orders taken from the recent rings) are left out: they follow their creation, which the
// ceiling bounds, not the skew. The
// bots keep one identity each at a high rate.
func TestHumanCeilingAtBlackFriday(t *testing.T) {
	sc, err := scenario.ReadFile("../scenarios/black-friday.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const window = 20 * time.Second
	sc.Load.Phases = []scenario.Phase{{Name: "peak", Type: "constant", Rate: 100_000, Duration: window}}
	m := newModel(t, sc)
	if len(m.Overdrawn) > 0 {
		t.Fatalf("black-friday overdraws its people: %v", m.Overdrawn)
	}
	type key struct {
		op int
		id int64
	}
	counts := map[key]int64{}
	bots := map[int64]int64{}
	s := m.NewStream(schedule.New(sc))
	var op workloads.Op
	for s.Next(&op) {
		if op.User < 0 && op.Session < 0 {
			continue
		}
		if op.Bot {
			bots[op.User]++
			continue
		}
		name := m.Ops[op.Type].Name
		id := op.User
		if op.Session >= 0 && name != "sessions.create" && name != "carts.merge" {
			if op.Session >= m.Sessions {
				continue // created during the run
			}
			id = -2 - op.Session
		}
		if id == -1 {
			continue // a guest creating a session
		}
		if op.Order >= m.FirstNewOrder() && name != "orders.place" {
			continue // an order placed during the run, read or moved on
		}
		counts[key{int(op.Type), id}]++
	}
	busiest := make([]int64, len(m.Ops))
	for k, c := range counts {
		busiest[k.op] = max(busiest[k.op], c)
	}
	for i := range m.Ops {
		lambda := m.Ceiling(i) * window.Seconds() / 3600
		allow := lambda + 5*math.Sqrt(lambda) + 5
		if m.Ceiling(i) == 0 {
			continue
		}
		if float64(busiest[i]) > allow {
			t.Errorf("%s: busiest person made %d in %v; the ceiling of %g an hour allows %.1f", m.Ops[i].Name, busiest[i], window, m.Ceiling(i), allow)
		}
	}
	// 20 bots make 8% of the bot operations: hundreds a second each, one identity apiece.
	if len(bots) != 20 {
		t.Fatalf("%d bot identities, want 20", len(bots))
	}
	for b, c := range bots {
		if r := float64(c) / window.Seconds(); r < 100 {
			t.Errorf("bot %d made %.0f ops/s, want hundreds", b, r)
		}
	}
}

// The scenario's overrides: max_per_hour per operation (0 lifts the ceiling), bots.ops
// replacing the workloads' set, and errors naming file:line and field.
func TestActivityDeclarations(t *testing.T) {
	mix := "  orders.place: 1\n  views.append: 1\n"
	sc := testScenario(t, 1, mix, "")
	sc.Population.UserActivity.MaxPerHour = map[string]float64{"orders.place": 0, "views.append": 600}
	sc.Population.Bots.Ops = []string{"orders.place"}
	m := newModel(t, sc)
	place, view := m.OpIndex("orders.place"), m.OpIndex("views.append")
	if m.Ceiling(place) != 0 || m.Ceiling(view) != 600 {
		t.Errorf("ceilings %g, %g; want 0 (lifted) and 600", m.Ceiling(place), m.Ceiling(view))
	}
	if m.Ops[place].BotShare != 0.2 || m.Ops[view].BotShare != 0 {
		t.Errorf("bot shares %g, %g; want 0.2 (bots.ops names it) and 0", m.Ops[place].BotShare, m.Ops[view].BotShare)
	}
	// Defaults: bots view pages, never place orders.
	m = newModel(t, testScenario(t, 1, mix, ""))
	if m.Ops[place].BotShare != 0 || m.Ops[view].BotShare != 0.2 || m.Ceiling(place) != workloads.PaceCheckout {
		t.Errorf("defaults: bot shares %g, %g, orders.place ceiling %g", m.Ops[place].BotShare, m.Ops[view].BotShare, m.Ceiling(place))
	}

	bad := `name: t
load:
  phases: [{type: constant, rate: 100, duration: 1s}]
population:
  user_activity: {distribution: zipf, s: 1, max_per_hour: {orders.plac: 3}}
  product_popularity: {distribution: zipf, s: 1, max_sessions: 2}
  bots: {count: 2, share: 0.1, ops: [views.append, carts.nope]}
mix:
  orders.place: 1
  views.append: 1
`
	sc, err := scenario.Parse("bad.yaml", []byte(bad))
	if err == nil || !strings.Contains(err.Error(), "bad.yaml:6:") || !strings.Contains(err.Error(), "population.product_popularity.max_sessions") {
		t.Fatalf("max_sessions on product_popularity: %v", err)
	}
	sc.Population.ProductPopularity.MaxSessions = 0
	_, err = workloads.New(sc)
	for _, want := range []string{
		"bad.yaml:5:", "population.user_activity.max_per_hour.orders.plac: not an operation of the mix",
		"bad.yaml:7:", "population.bots.ops[1]: \"carts.nope\" is not an operation of the mix",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
}

// A population too small for the rate asked of its people is noted, not silently spread.
func TestOverdrawnCeilingIsNoted(t *testing.T) {
	sc := testScenario(t, 1, "  orders.place: 1\n", "")
	sc.Population.Users = 1000 // 1,000 people at 12 an hour make 3.3/s; the schedule asks 100,000/s
	m := newModel(t, sc)
	if len(m.Overdrawn) == 0 || !strings.Contains(m.Overdrawn[0], "orders.place: 995 people") {
		t.Fatalf("overdrawn notes %q", m.Overdrawn)
	}
}
