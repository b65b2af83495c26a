package workloads

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/shardbench/shardbench/internal/yamlx"
)

// actor says who makes one operation of the table: the share its bots take and the
// truncated skews its people are drawn from.
type actor struct {
	// perHour is the operation's human ceiling in effect (0: none).
	perHour float64
	// botShare is the share of the operation's traffic bots make (0 when bots do not
	// make it).
	botShare float64
	// users draws the acting person (0-based over the Users-Bots people); sessions draws
	// the initial-population session of people and guests (0-based over Sessions-Bots).
	users, sessions Activity
}

// compileActors sets each operation's human ceiling, its bot share and the truncated
// skews that keep every person within the ceiling at the schedule's peak rate, and the
// owner skew that gives no person more than max_sessions of the initial sessions.
// Problems are added to errs with the scenario position they come from.
func (m *Model) compileActors(errs *yamlx.Errors) {
	sc := m.Scenario
	p := &sc.Population
	act := &p.UserActivity
	humans, humanSessions := max(1, m.Users-m.Bots), max(1, m.Sessions-m.Bots)

	// Overrides of the ceilings name operations of the mix.
	pos, path := act.Loc.At("max_per_hour")
	for _, name := range sortedKeys(act.MaxPerHour) {
		v := act.MaxPerHour[name]
		switch {
		case m.OpIndex(name) < 0:
			errs.Add(pos, yamlx.JoinPath(path, name), "not an operation of the mix%s", suggestOp(name))
		case v < 0 || math.IsNaN(v) || v > 1e9:
			errs.Add(pos, yamlx.JoinPath(path, name), "must be between 0 (no ceiling) and 1e9 an hour, got %g", v)
		}
	}
	// Bots make the operations bots.ops names, else those their workload marks.
	botOps := map[string]bool{}
	bpos, bpath := p.Bots.Loc.At("ops")
	for i, name := range p.Bots.Ops {
		if m.OpIndex(name) < 0 {
			errs.Add(bpos, yamlx.JoinPath(bpath, "["+strconv.Itoa(i)+"]"), "%q is not an operation of the mix%s", name, suggestOp(name))
		}
		botOps[name] = true
	}

	total := 0.0
	for _, o := range m.Ops {
		total += o.Weight
	}
	// Rates in store time: a person's hour is an hour of the store's clock.
	peak := sc.PeakRate() / m.Scale
	m.actors = make([]actor, len(m.Ops))
	for i := range m.Ops {
		o := &m.Ops[i]
		a := &m.actors[i]
		a.perHour = o.Spec.PerHour
		if v, ok := act.MaxPerHour[o.Name]; ok {
			a.perHour = v
		}
		bots := o.Spec.Bots
		if len(p.Bots.Ops) > 0 {
			bots = botOps[o.Name]
		}
		if bots && m.Bots > 0 {
			a.botShare = m.BotShare
		}
		o.PerHour, o.BotShare = a.perHour, a.botShare
		// The people's rate of this operation at the peak; a ceiling is a share of it.
		rate := peak * o.Weight / total * (1 - a.botShare)
		share := 0.0
		if a.perHour > 0 && rate > 0 {
			share = a.perHour / 3600 / rate
		}
		// A ceiling the pool cannot hold (too few people for the rate asked of them) spreads
		// the operation evenly over the pool and is noted: every person then runs above it.
		var ok bool
		if a.users, ok = NewActivity(humans, act.Distribution, act.S, share); !ok {
			m.Overdrawn = append(m.Overdrawn,
				fmt.Sprintf("%s: %d people at most %g an hour make %.4g/s, below the %.4g/s the "+
					"peak asks of them: each makes %.4g an hour (raise population.users or "+
					"max_per_hour.%s)",
					o.Name, humans, a.perHour, float64(humans)*a.perHour/3600, rate, rate*3600/float64(humans), o.Name))
		}
		a.sessions, _ = NewActivity(humanSessions, act.Distribution, act.S, share)
	}

	// Owners of the initial sessions: logged-in sessions spread over people with at most
	// max_sessions each.
	owned := float64(humanSessions) * (1 - m.GuestShare)
	ownerShare := 0.0
	if owned >= 1 {
		ownerShare = act.MaxSessions / owned
	}
	var ok bool
	if m.owners, ok = NewActivity(humans, act.Distribution, act.S, ownerShare); !ok {
		m.Overdrawn = append(m.Overdrawn, fmt.Sprintf("sessions: %d people with at most %g sessions each cannot hold the %.0f logged-in sessions of population.sessions: each holds %.3g",
			humans, act.MaxSessions, owned, owned/float64(humans)))
	}
}

func sortedKeys(mp map[string]float64) []string {
	keys := make([]string, 0, len(mp))
	for k := range mp {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Ceiling is operation i's human ceiling in effect: the most one person makes of it in an
// hour of store time (0: none).
func (m *Model) Ceiling(i int) float64 { return m.actors[i].perHour }

// People is the truncated skew operation i draws its acting person from (index + Bots is
// the user id).
func (m *Model) People(i int) *Activity { return &m.actors[i].users }
