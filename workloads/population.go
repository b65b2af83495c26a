package workloads

// The data that exists before the run's first operation: each workload may describe its
// entity's records (Meta.Population), which the design layer maps to every table or
// collection that holds the entity, to load real databases and to start the simulator's
// and plan's partition sizes and chunk tables from them.

// RecordSet is one part of an entity's population (the products of one category, the
// users' carts): Count candidate records, enumerated by index. Record fills candidate i
// as a logical record of the entity — an Op shaped like the entity's insert, from which
// every field of the entity derives — and reports whether it is a record (false: a hole,
// e.g. a user without historic orders in that slot). Candidates come in the order the run
// reaches them most (popularity rank first), so a prefix of a set is its busiest part:
// the load step's load.scale loads a prefix of every set.
//
// Record is a pure function of the model and i: safe for concurrent use, and the same
// record every time.
type RecordSet struct {
	Name   string
	Count  int64
	Record func(i int64, op *Op) bool
}

// Expansion is a dimension along which one record stands for several rows of a table: a
// product's stock in each geo zone (seed 001's inventory holds a document per product and
// zone), a cart's items (seed 000 keeps a row per item). A table expands a record along it
// when the table's key (Cassandra primary key, MongoDB _id or shard key) holds one of
// Fields; other tables store the record once.
type Expansion struct {
	Name   string
	Fields []string
	// Count is how many rows op stands for (0: none); Apply makes op the k-th of them.
	Count func(op *Op) int
	Apply func(op *Op, k int)
}

// NewRecord is the zero record every RecordSet.Record starts from: identities -1, no
// category or subcategory, the store clock at the run's start.
func (m *Model) NewRecord() Op {
	return Op{User: -1, Session: -1, Product: -1, Order: -1, Category: NoCategory, Sub: NoSub, Time: m.Start, Ref: m.Start}
}

// Population lists the record sets of an entity before the run (nil: it has none, as
// page views: their history is not modelled).
func (m *Model) Population(entity string) []RecordSet {
	if meta := entityMeta(entity); meta != nil && meta.Population != nil {
		return meta.Population(m)
	}
	return nil
}

// Expansions lists the dimensions along which an entity's records expand.
func (m *Model) Expansions(entity string) []Expansion {
	if meta := entityMeta(entity); meta != nil && meta.Expansions != nil {
		return meta.Expansions(m)
	}
	return nil
}

func entityMeta(entity string) *Meta {
	for _, meta := range Registered() {
		if meta.Entity == entity {
			return meta
		}
	}
	return nil
}

// Records is the number of records of a population (holes excluded) as far as it can be
// told without enumerating them: Count summed over the sets. Sets with holes overstate.
func Records(sets []RecordSet) int64 {
	var n int64
	for _, s := range sets {
		n += s.Count
	}
	return n
}

// ---- the population's shared parts: sessions, users' carts ----

// SessionRecord fills op with initial-population session s: its user (-1 for a guest),
// zone, and creation time, which is also its last activity.
func (m *Model) SessionRecord(s int64, op *Op) {
	*op = m.NewRecord()
	u := m.SessionUser(s)
	op.Session, op.User, op.Zone, op.Bot = s, u, m.SessionZone(s, u), m.IsBot(u)
	op.Ref = m.SessionCreated(s)
	op.Time = op.Ref
}

// CartSlots is the number of slots of the cart table every stream keeps (see State.Carts).
func (m *Model) CartSlots() int64 { return max(min(m.Carts, MaxCartSlots), 1) }

// CartOwners is the number of owners a cart can belong to: every user, and every guest
// session of the initial population (about GuestShare of the non-bot sessions).
func (m *Model) CartOwners() float64 {
	return float64(m.Users) + float64(max(m.Sessions-m.Bots, 0))*m.GuestShare
}

// InitialCartItems is the item count slot i of the cart table holds at the run's start:
// population.carts of the CartOwners owners have an active cart, about three items each.
func (m *Model) InitialCartItems(i int64) uint8 {
	p := float64(m.Carts) / max(m.CartOwners(), 1)
	h := Hash(m.Seed, saltCart, i)
	if unit(h) >= p {
		return 0
	}
	r := NewRand(h)
	return uint8(r.Geometric(3, 20))
}

// CartSlot is the slot of the cart table an owner's cart lives in (owner: 2×user for a
// user, 2×session+1 for a guest).
func (m *Model) CartSlot(owner int64) int64 {
	return int64(Hash(m.Seed, 0x51075, owner) % uint64(m.CartSlots()))
}
