// Package carts is the shopping-cart workload: items are added, their quantity changed
// and removed, the active cart is read, a guest cart is merged into the user's cart at
// login (owner "s:<session>" -> "u:<user>"), and carts are checked out or abandoned.
//
// A cart belongs to an owner: the user when the session is logged in, else the guest
// session. Carts accumulate up to carts.max_items items. The state is a fixed slot table
// (min(population.carts, 2^20) slots hashed by owner; 8 bytes each) holding each cart's
// item count, generation and last update; the items themselves derive from (owner,
// generation, position), so a cart's items need not be stored.
//
// Operations (Op fields used):
//
//	add_item     User/Session (owner), Product, Category, Sub, Qty, Price, Items = count after,
//	             Ref = the item's time (= Time)
//	change_qty   as add_item; Product is an item already in the cart, Ref = when it was
//	             added (the cart's last update), Qty = the new quantity
//	remove_item  as change_qty; Items = count after
//	read         owner, Items = count (expected rows)
//	merge        User (the cart kept), Session (the guest cart merged into it), Items = count
//	             after, Qty = the guest cart's item count
//	checkout     owner, Items; the cart's status becomes "ordered"
//	abandon      owner, Items; the cart's status becomes "abandoned"
//
// Aux packs the cart status index (bits 0-7, carts: active, ordered, abandoned, merged),
// the cart's generation (bits 8-15) and, for merge, the guest cart's generation (bits
// 16-23). cart_id derives from the owner and the generation.
package carts

import (
	"time"

	"github.com/shardbench/shardbench/workloads"
)

func init() { workloads.Register(Meta) }

// Status indexes into workloads.CartStatuses.
const (
	StatusActive    = 0
	StatusOrdered   = 1
	StatusAbandoned = 2
	StatusMerged    = 3
)

// Guest returns the view of a merge operation that acts on the guest cart: the owner is
// the session, the status "merged", the generation the guest cart's. Designs apply it to
// the steps that touch the guest cart.
func Guest(op *workloads.Op) workloads.Op {
	g := *op
	g.User = -1
	g.Aux = StatusMerged | (op.Aux>>16&0xff)<<8
	g.Items = op.Qty
	return g
}

var cartBinds = []string{"owner_key", "owner_id", "user_id", "session_id", "cart_id", "cart_oid", "status"}

var itemFields = []string{"product_id", "product_sku", "product_name", "product_image_url", "category", "quantity", "price", "added_at"}

func concat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// Meta describes the workload.
var Meta = &workloads.Meta{
	Name:        "carts",
	Entity:      "carts",
	Description: "shopping carts: add/change/remove items, read, merge a guest cart at login, checkout, abandon",
	Ops: []workloads.OpSpec{
		{Name: "add_item", Action: workloads.ItemAdd, Binds: cartBinds,
			Sets: concat(itemFields, []string{"items", "updated_at", "total", "expires_at"}), Doc: "add a product to the owner's active cart", PerHour: workloads.PaceCartEdit},
		{Name: "change_qty", Action: workloads.ItemSet, Binds: concat(cartBinds, []string{"product_id", "product_sku", "added_at"}),
			Sets: []string{"quantity", "items", "updated_at", "total", "expires_at"}, Doc: "change the quantity of an item in the cart", PerHour: workloads.PaceCartEdit},
		{Name: "remove_item", Action: workloads.ItemRemove, Binds: concat(cartBinds, []string{"product_id", "product_sku", "added_at"}),
			Sets: []string{"items", "updated_at", "total", "expires_at"}, Doc: "remove an item from the cart", PerHour: workloads.PaceCartEdit},
		{Name: "read", Action: workloads.Get, Binds: []string{"owner_key", "owner_id", "user_id", "session_id", "status"}, Doc: "read the owner's active cart", PerHour: workloads.PacePage},
		{Name: "merge", Action: workloads.Update, Binds: cartBinds,
			Sets: []string{"items", "updated_at", "total", "expires_at", "status"}, Doc: "at login, merge the guest cart (s:<session>) into the user's cart (u:<user>)", PerHour: workloads.PaceCheckout,
			Views: []workloads.View{{Name: "guest", Doc: "the guest cart merged into the user's", Of: Guest}}},
		{Name: "checkout", Action: workloads.Update, Binds: cartBinds, Sets: []string{"status", "updated_at"}, Doc: "the cart becomes an order", PerHour: workloads.PaceCheckout},
		{Name: "abandon", Action: workloads.Update, Binds: cartBinds,
			Sets: []string{"status", "updated_at", "abandoned_at", "abandonment_date", "total"}, Doc: "the cart is abandoned (recorded for marketing)", PerHour: workloads.PaceCheckout},
	},
	Fields: []workloads.Field{
		workloads.OwnerKey(),
		workloads.OwnerID(),
		workloads.UserID("user_id"),
		workloads.SessionID(),
		{Name: "cart_id", Type: workloads.TUUID, Size: 16, Doc: "the cart's UUID, from the owner and the cart's generation",
			Get: func(m *workloads.Model) workloads.Getter {
				return func(op *workloads.Op, buf []byte) workloads.Value {
					var v workloads.Value
					v.Type, v.Null, v.ID = workloads.TUUID, false, m.UUID(workloads.KindCart, cartIdent(op))
					return v
				}
			}},
		{Name: "cart_oid", Type: workloads.TObjectID, Size: 12, Doc: "the cart's ObjectId (MongoDB _id)",
			Get: func(m *workloads.Model) workloads.Getter {
				return func(op *workloads.Op, buf []byte) workloads.Value {
					var v workloads.Value
					v.Type, v.Null, v.ID = workloads.TObjectID, false, m.ObjectID(workloads.KindCart, cartIdent(op), m.Start)
					return v
				}
			}},
		workloads.ConstText("status", "active | ordered | abandoned | merged", 7, func(_ *workloads.Model, op *workloads.Op) string {
			return workloads.CartStatuses[op.Aux&0xff]
		}),
		workloads.ProductID("product_id"),
		workloads.SKU("product_sku"),
		workloads.ProductName("product_name"),
		workloads.ImageURL("product_image_url"),
		workloads.CategoryName(),
		workloads.IntField("quantity", "the item's quantity (Op.Qty)", func(op *workloads.Op) int64 { return int64(op.Qty) }),
		workloads.DecimalField("price", "the item's unit price (Op.Price)", func(op *workloads.Op) int64 { return op.Price }),
		workloads.TimeField("added_at", "when the item's row was written (Op.Ref): seed 000 clusters cart rows by it", func(op *workloads.Op) int64 { return op.Ref }),
		workloads.Now("updated_at", "the operation's time"),
		workloads.TimeField("created_at", "when the cart started (approximated by the item's time)", func(op *workloads.Op) int64 { return op.Ref }),
		{Name: "expires_at", Type: workloads.TTimestamp, Size: 8, Doc: "updated_at plus carts.ttl_days",
			Get: func(m *workloads.Model) workloads.Getter {
				ttl := int64(m.Knob("carts", "ttl_days") * float64(24*time.Hour))
				return func(op *workloads.Op, buf []byte) workloads.Value {
					var v workloads.Value
					v.Type, v.Null, v.Int = workloads.TTimestamp, false, workloads.FloorDiv(op.Time+ttl, 1e6)
					return v
				}
			}},
		workloads.Now("abandoned_at", "when the cart was abandoned"),
		workloads.DateField("abandonment_date", "the day the cart was abandoned (seed 001's abandoned_carts partition)", func(op *workloads.Op) int64 { return op.Time }),
		{Name: "items", Type: workloads.TItems, Size: 60, Doc: "the cart's items (Op.Items of them): product, quantity, price, name, category, added_at",
			Composite: func(m *workloads.Model) func(*workloads.Op) any {
				return func(op *workloads.Op) any { return Items(m, op) }
			}},
		{Name: "total", Type: workloads.TDecimal, Size: 8, Doc: "sum of the items' price × quantity",
			Get: func(m *workloads.Model) workloads.Getter {
				return func(op *workloads.Op, buf []byte) workloads.Value {
					var v workloads.Value
					var t int64
					for i := int32(0); i < op.Items; i++ {
						p, c, q := item(m, op, i)
						t += m.ProductPrice(p, c) * int64(q)
					}
					v.Type, v.Null, v.Int = workloads.TDecimal, false, t
					return v
				}
			}},
	},
	Item:    opItem,
	ItemKey: "product_id",
	Knobs: []workloads.Knob{
		{Name: "max_items", Default: 100, Min: 1, Max: 255, Doc: "items a cart can hold (seed 000: about 100)"},
		{Name: "recent_share", Default: 0.3, Min: 0, Max: 1,
			Doc: "share of cart operations in recently created sessions (by age, mean 2,000 " +
				"sessions: created during the run, or before it while the run has created fewer)"},
		{Name: "ttl_days", Default: 7, Min: 0.01, Max: 3650, Doc: "cart lifetime after the last update (expires_at)"},
	},
	Owner:      owner,
	Population: population,
	Expansions: expansions,
	New:        newGen,
}

// owner: a cart's operations go with its owner, the user or the guest session (a guest's
// cart thus with the guest's session); merge goes with the user's cart it fills.
func owner(_ *workloads.Model, _ int, op *workloads.Op) (uint64, int64) {
	if op.User >= 0 {
		return workloads.KindUser, op.User
	}
	return workloads.KindSession, op.Session
}

// population is the carts active at the run's start: each owner whose slot of the cart
// table holds items (Model.InitialCartItems) has a cart of that many items, generation 0,
// last updated at the run's start — the carts the run's operations find. Users' carts
// first (bots, then by activity rank), then the guest sessions' carts.
func population(m *workloads.Model) []workloads.RecordSet {
	cart := func(op *workloads.Op, user, session int64) bool {
		owner := user * 2
		if user < 0 {
			owner = session*2 + 1
		}
		n := m.InitialCartItems(m.CartSlot(owner))
		if n == 0 {
			return false
		}
		*op = m.NewRecord()
		op.User, op.Session, op.Bot = user, session, m.IsBot(user)
		op.Zone = m.SessionZone(session, user)
		op.Items, op.Aux = int32(n), StatusActive
		return true
	}
	return []workloads.RecordSet{
		{Name: "users", Count: m.Users, Record: func(u int64, op *workloads.Op) bool { return cart(op, u, -1) }},
		{Name: "guests", Count: m.Sessions, Record: func(s int64, op *workloads.Op) bool {
			return m.SessionUser(s) < 0 && cart(op, -1, s)
		}},
	}
}

// expansions: a table keyed by the product of an item (seed 000's row per item) holds a
// row per item of the cart.
func expansions(m *workloads.Model) []workloads.Expansion {
	return []workloads.Expansion{{Name: "item", Fields: []string{"product_id", "product_sku"},
		Count: func(op *workloads.Op) int { return int(op.Items) },
		Apply: func(op *workloads.Op, k int) {
			p, c, q := item(m, op, int32(k))
			op.Product, op.Category, op.Sub, op.Price, op.Qty = p, c, m.ProductSub(p, c), m.ProductPrice(p, c), q
		}}}
}

// opItem is the item an item operation adds, changes or removes: Op.Product as the
// product_id, product_sku, product_name, category and product_image_url fields give it,
// at Op.Qty and Op.Price, added at Op.Ref.
func opItem(m *workloads.Model) func(op *workloads.Op) workloads.Item {
	pid := workloads.ProductID("product_id").Get(m)
	sku, name := workloads.SKU("product_sku").Get(m), workloads.ProductName("product_name").Get(m)
	cat, img := workloads.CategoryName().Get(m), workloads.ImageURL("product_image_url").Get(m)
	return func(op *workloads.Op) workloads.Item {
		text := func(g workloads.Getter) string { return string(g(op, nil).Bytes) }
		return workloads.Item{ProductID: pid(op, nil).ID, SKU: text(sku), Name: text(name), Category: text(cat), ImageURL: text(img),
			Quantity: op.Qty, Price: op.Price, AddedAt: workloads.FloorDiv(op.Ref, 1e6)}
	}
}

// cartIdent identifies an owner's cart generation: user u -> 2u, guest session s -> 2s+1.
func cartIdent(op *workloads.Op) int64 {
	var owner int64
	if op.User >= 0 {
		owner = op.User * 2
	} else {
		owner = op.Session*2 + 1
	}
	return owner<<8 | op.Aux>>8&0xff
}

// item derives the i-th item of the op's cart (generation included).
func item(m *workloads.Model, op *workloads.Op, i int32) (product int64, cat uint8, qty int32) {
	r := workloads.NewRand(workloads.Mix(workloads.Hash(m.Seed, 0xca27, cartIdent(op)), uint64(i)))
	p, c := m.ProductFrom(&r, -1)
	q := int32(1)
	if r.Chance(0.2) {
		q = int32(r.Range(2, 4))
	}
	return p, c, q
}

// Items lists the op's cart items (Op.Items of them).
func Items(m *workloads.Model, op *workloads.Op) []workloads.Item {
	out := make([]workloads.Item, op.Items)
	var buf []byte
	for i := range out {
		p, c, q := item(m, op, int32(i))
		buf = m.AppendProductName(buf[:0], p, c)
		name := string(buf)
		buf = m.AppendSKU(buf[:0], p, c)
		if op.Product == p && op.Qty > 0 {
			q = op.Qty
		}
		out[i] = workloads.Item{ProductID: m.UUID(workloads.KindProduct, p), SKU: string(buf), Name: name,
			Category: m.Categories[c].Name, Quantity: q, Price: m.ProductPrice(p, c), AddedAt: workloads.FloorDiv(op.Ref, 1e6)}
	}
	return out
}

type gen struct {
	st       *workloads.State
	maxItems int32
	recent   float64
}

func newGen(st *workloads.State) workloads.Generator {
	return &gen{st: st, maxItems: int32(st.M.Knob("carts", "max_items")), recent: st.M.Knob("carts", "recent_share")}
}

const (
	opAdd = iota
	opChange
	opRemove
	opRead
	opMerge
	opCheckout
	opAbandon
)

func (g *gen) slot(op *workloads.Op) *workloads.CartSlot {
	var owner int64
	if op.User >= 0 {
		owner = op.User * 2
	} else {
		owner = op.Session*2 + 1
	}
	return &g.st.Carts[g.st.M.CartSlot(owner)]
}

func (g *gen) Fill(i int, op *workloads.Op) {
	st, m := g.st, g.st.M
	if i == opMerge {
		g.merge(op)
		return
	}
	s := st.Session(g.recent)
	op.Session, op.User, op.Zone, op.Bot = s.ID, s.User, s.Zone, m.IsBot(s.User)
	sl := g.slot(op)
	now := m.Since(op.Time)
	op.Aux = int64(sl.Gen) << 8
	op.Ref = m.Start + int64(sl.Updated)*int64(time.Second)
	switch i {
	case opChange, opRemove:
		if sl.N == 0 {
			// Nothing to change in an empty cart: the shopper adds something instead.
			g.add(op, sl, now)
			return
		}
		k := int32(st.Rand.Intn(int64(sl.N)))
		if i == opRemove {
			k = int32(sl.N) - 1
		}
		op.Items = int32(sl.N)
		p, c, q := item(m, op, k)
		op.Product, op.Category, op.Sub, op.Price = p, c, m.ProductSub(p, c), m.ProductPrice(p, c)
		if i == opRemove {
			op.Qty = q
			sl.N--
			op.Items--
		} else {
			op.Qty = int32(st.Rand.Range(1, 5))
		}
		sl.Updated = now
	case opAdd:
		g.add(op, sl, now)
	case opRead:
		op.Items = int32(sl.N)
		op.Ref = op.Time
	case opCheckout, opAbandon:
		op.Items = int32(sl.N)
		if i == opCheckout {
			op.Aux |= StatusOrdered
		} else {
			op.Aux |= StatusAbandoned
		}
		sl.N, sl.Gen, sl.Updated = 0, sl.Gen+1, now
	}
	op.Size = 60 * op.Items
}

// Stats reports the carts holding items and their items (workloads.Stater).
func (g *gen) Stats(add func(string, int64)) {
	var carts, items int64
	for _, sl := range g.st.Carts {
		if sl.N > 0 {
			carts++
			items += int64(sl.N)
		}
	}
	add("active_carts", carts)
	add("items_in_carts", items)
}

func (g *gen) add(op *workloads.Op, sl *workloads.CartSlot, now uint32) {
	m := g.st.M
	k := int32(sl.N)
	if k >= g.maxItems {
		k = g.maxItems - 1 // a full cart: the last item is replaced
	} else {
		sl.N++
	}
	op.Items = int32(sl.N)
	p, c, q := item(m, op, k)
	op.Product, op.Category, op.Sub, op.Price, op.Qty = p, c, m.ProductSub(p, c), m.ProductPrice(p, c), q
	op.Ref = op.Time
	sl.Updated = now
	op.Size = 60 * op.Items
}

func (g *gen) merge(op *workloads.Op) {
	st, m := g.st, g.st.M
	guest := st.GuestSession()
	u := st.HumanUser()
	op.User, op.Session, op.Zone = u, guest.ID, m.UserZone(u)
	now := m.Since(op.Time)
	// The guest cart.
	gop := workloads.Op{User: -1, Session: guest.ID}
	gs := g.slot(&gop)
	us := g.slot(op)
	op.Qty = int32(gs.N)
	op.Aux = StatusActive | int64(us.Gen)<<8 | int64(gs.Gen)<<16
	n := int32(us.N) + int32(gs.N)
	if n > g.maxItems {
		n = g.maxItems
	}
	us.N, us.Updated = uint8(n), now
	gs.N, gs.Gen, gs.Updated = 0, gs.Gen+1, now
	op.Items = n
	op.Ref = op.Time
	op.Size = 60 * n
}
