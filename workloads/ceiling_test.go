package workloads_test

import (
	"math"
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
// standard deviations. Records created during the run (sessions and orders taken from
// the recent rings) are left out: their reads follow their creation, not the skew. The
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
		if op.Order >= m.FirstNewOrder() {
			continue // placed during the run
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
