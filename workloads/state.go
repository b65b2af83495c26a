package workloads

import (
	"math"
	"time"
)

// State is one stream's mutable state, shared by its generators: the random number
// generator (drawn in stream order), and what the run created that later operations refer
// to. Everything here has a fixed size.
type State struct {
	M    *Model
	Rand Rand
	// Op is the operation being generated (its Intended and Time are set).
	Op *Op

	// Sessions created during the run (most recent RingSize).
	NewSessions Ring[SessionRef]
	nextSession int64
	// Orders placed during the run (most recent RingSize).
	NewOrders Ring[OrderRef]
	nextOrder int64
	// Carts: slot table indexed by a hash of the owner.
	Carts []CartSlot
}

// RingSize is the capacity of the rings of recently created records.
const RingSize = 1 << 16

// MaxCartSlots caps the cart slot table (8 bytes a slot).
const MaxCartSlots = 1 << 20

// SessionRef is a session the operation acts in.
type SessionRef struct {
	ID      int64
	User    int64 // -1 for a guest
	Created int64 // unix ns
	Zone    uint8
}

// OrderRef is an order placed during the run.
type OrderRef struct {
	ID      int64
	User    int64
	Created int64
	Zone    uint8
	Items   int32
	Total   int64
}

// CartSlot is the state of the carts hashing to one slot: item count, generation (bumped
// when a cart is checked out, abandoned or merged away), the hot-set epoch when the cart
// started (its items are drawn from that epoch's popularity) and the last update in
// seconds since the run's store-clock start.
type CartSlot struct {
	N       uint8
	Gen     uint8
	Epoch   uint16
	Updated uint32
}

// Ring is a fixed-capacity ring of recent values.
type Ring[T any] struct {
	buf  []T
	next int
	n    int
}

// Push adds v, overwriting the oldest value when full.
func (r *Ring[T]) Push(v T) {
	if r.buf == nil {
		r.buf = make([]T, RingSize)
	}
	r.buf[r.next] = v
	r.next = (r.next + 1) % len(r.buf)
	if r.n < len(r.buf) {
		r.n++
	}
}

// Len is the number of values held.
func (r *Ring[T]) Len() int { return r.n }

// Recent returns a value by age, favouring recent ones: the age is drawn from a geometric
// distribution with the given mean. When the age drawn reaches past the oldest value held
// it returns false: the record of that age was created before the run started (or has
// left the ring), and the caller takes one from the initial population. Capping the age
// at the oldest value instead gave that one value every draw beyond it: in the first
// seconds of a run, the first session created took the activity of the thousands the
// draw meant, which the run had not created yet.
func (r *Ring[T]) Recent(rnd *Rand, meanAge float64) (*T, bool) {
	age := rnd.Geometric(meanAge, math.MaxInt64) - 1
	if age >= int64(r.n) {
		return nil, false
	}
	i := (r.next - 1 - int(age) + 2*len(r.buf)) % len(r.buf)
	return &r.buf[i], true
}

func newState(m *Model) *State {
	st := &State{M: m, Rand: NewRand(uint64(m.Seed) ^ 0x5eed_0f_0b5), nextSession: m.Sessions, nextOrder: m.FirstNewOrder()}
	st.Carts = make([]CartSlot, m.CartSlots())
	// population.carts are active at the start (Model.InitialCartItems).
	for i := range st.Carts {
		st.Carts[i].N = m.InitialCartItems(int64(i))
	}
	return st
}

// User picks the acting user: a bot with the scenario's bot share, else a user by the
// activity skew.
func (st *State) User() (user int64, bot bool) {
	m := st.M
	if m.Bots > 0 && st.Rand.Chance(m.BotShare) {
		return st.Rand.Intn(m.Bots), true
	}
	return m.Bots + m.userPop.Sample(&st.Rand), false
}

// HumanUser picks a user by the activity skew, never a bot.
func (st *State) HumanUser() int64 { return st.M.Bots + st.M.userPop.Sample(&st.Rand) }

// Session picks the session an operation happens in: a bot's session with the bot share;
// with probability recent a recently created one (by age, see Ring.Recent: one created
// during the run, or an initial-population session when the age drawn reaches back before
// the run's start); else an initial-population session by the activity skew.
func (st *State) Session(recent float64) SessionRef {
	m := st.M
	if m.Bots > 0 && st.Rand.Chance(m.BotShare) {
		b := st.Rand.Intn(m.Bots)
		return SessionRef{ID: b, User: b, Created: m.SessionCreated(b), Zone: m.UserZone(b)}
	}
	if st.NewSessions.Len() > 0 && st.Rand.Chance(recent) {
		if s, ok := st.NewSessions.Recent(&st.Rand, 2000); ok {
			return *s
		}
	}
	return st.InitialSession(m.Bots + m.sessPop.Sample(&st.Rand))
}

// InitialSession describes an initial-population session.
func (st *State) InitialSession(s int64) SessionRef {
	m := st.M
	u := m.SessionUser(s)
	return SessionRef{ID: s, User: u, Created: m.SessionCreated(s), Zone: m.SessionZone(s, u)}
}

// GuestSession picks a guest session (for merges at login).
func (st *State) GuestSession() SessionRef {
	for i := 0; i < 64; i++ {
		s := st.Session(0.5)
		if s.User < 0 {
			return s
		}
	}
	// Guests are rare in this population: make one up from a fresh id.
	id := st.NewSessionID()
	return SessionRef{ID: id, User: -1, Created: st.Op.Time, Zone: st.M.SessionZone(id, -1)}
}

// NewSessionID assigns the next session id of the run.
func (st *State) NewSessionID() int64 {
	id := st.nextSession
	st.nextSession++
	return id
}

// NewOrderID assigns the next order id of the run.
func (st *State) NewOrderID() int64 {
	id := st.nextOrder
	st.nextOrder++
	return id
}

// Zone picks a geo zone by the zone weights.
func (st *State) Zone() uint8 { return uint8(st.M.zoneAlias.Sample(&st.Rand)) }

// Category picks a category by the catalog traffic weights.
func (st *State) Category() uint8 { return uint8(st.M.catAlias.Sample(&st.Rand)) }

// Product picks a product: from the current hot set with the hot share, else a category
// by weight and a product by the popularity skew within it.
func (st *State) Product() (int64, uint8) {
	m := st.M
	if m.HotShare > 0 && st.Rand.Chance(m.HotShare) {
		p := m.HotProduct(m.HotEpoch(st.Op.Intended), st.Rand.Intn(m.HotCount))
		return p, m.CategoryOf(p)
	}
	c := st.Category()
	cat := &m.Categories[c]
	return cat.First + cat.pop.Sample(&st.Rand), c
}

// ProductFrom picks a product with a given generator and hot-set epoch (used to derive the
// items of a cart or an order from their identity, so they need not be stored). A
// negative epoch leaves the hot set out.
func (m *Model) ProductFrom(r *Rand, epoch int64) (int64, uint8) {
	if epoch >= 0 && m.HotShare > 0 && r.Chance(m.HotShare) {
		p := m.HotProduct(epoch, r.Intn(m.HotCount))
		return p, m.CategoryOf(p)
	}
	c := uint8(m.catAlias.Sample(r))
	cat := &m.Categories[c]
	return cat.First + cat.pop.Sample(r), c
}

// Since is store-clock seconds since the run's start for t (for compact slot times).
func (m *Model) Since(t int64) uint32 {
	d := (t - m.Start) / int64(time.Second)
	if d < 0 {
		return 0
	}
	return uint32(d)
}
