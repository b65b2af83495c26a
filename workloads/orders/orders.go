// Package orders is the order workload: orders are placed, read, listed per user (a month,
// or the whole history), listed per period (a day or a month, for operations staff), and
// move through their statuses.
//
// Users have historic orders from the year before the run (population.orders_per_user on
// average; user u's are ids u*OrderSlots+j); orders placed during the run get new ids and
// are kept in a ring so later reads and status changes find them.
//
// Operations (Op fields used):
//
//	place             Order (new), User, Zone, Bot, Items, Price = total, Ref = Time, Aux = status
//	read              Order, User, Zone, Ref = its creation, Items, Price
//	history_by_month  User, Zone, [Ref, Until) = one month, Qty = limit, Items = expected rows
//	history_all       User, Zone, [Ref, Until) = orders.history_months up to now, Qty, Items
//	list_by_period    [Ref, Until) = a day (Aux 0) or a month (Aux 1), Qty = limit
//	status_change     Order, User, Zone, Ref, Aux = the new status (OrderStatuses index)
package orders

import (
	"time"

	"github.com/shardbench/shardbench/workloads"
)

func init() { workloads.Register(Meta) }

var orderBinds = []string{"order_id", "order_oid", "user_id", "created_at", "geo_zone"}

// Meta describes the workload.
var Meta = &workloads.Meta{
	Name:        "orders",
	Entity:      "orders",
	Description: "orders: place, read, a user's history (a month, everything), orders of a day or month, status changes",
	Ops: []workloads.OpSpec{
		{Name: "place", Action: workloads.Insert, Doc: "a user places an order", PerHour: workloads.PaceCheckout},
		{Name: "read", Action: workloads.Get, Binds: orderBinds, Doc: "read one order (the user opens it from their order list)", PerHour: workloads.PaceAccount},
		{Name: "history_by_month", Action: workloads.List, Binds: []string{"user_id", "geo_zone"}, Range: "created_at", Doc: "a user's orders of one month", PerHour: workloads.PaceAccount},
		{Name: "history_all", Action: workloads.List, Binds: []string{"user_id", "geo_zone"}, Range: "created_at", Doc: "a user's whole order history", PerHour: workloads.PaceAccount},
		{Name: "list_by_period", Action: workloads.List, Range: "created_at", Doc: "all orders of a day or a month (operations, reports)"},
		{Name: "status_change", Action: workloads.Update, Binds: orderBinds, Sets: []string{"status", "updated_at"}, Doc: "an order moves to its next status", PerHour: workloads.PaceOrderStatus},
	},
	Fields: []workloads.Field{
		workloads.IDField("order_id", workloads.KindOrder, "the order's UUID", func(op *workloads.Op) int64 { return op.Order }),
		{Name: "order_oid", Type: workloads.TObjectID, Size: 12, Doc: "the order's ObjectId (MongoDB _id): its creation second, then bytes from the id",
			Get: func(m *workloads.Model) workloads.Getter {
				return func(op *workloads.Op, buf []byte) workloads.Value {
					var v workloads.Value
					v.Type, v.Null, v.ID = workloads.TObjectID, op.Order < 0, m.ObjectID(workloads.KindOrder, op.Order, op.Ref)
					return v
				}
			}},
		workloads.UserID("user_id"),
		workloads.Created("created_at"),
		workloads.Now("updated_at", "the operation's time"),
		{Name: "delivery_date", Type: workloads.TTimestamp, Size: 8, Doc: "created_at plus two days",
			Get: func(*workloads.Model) workloads.Getter {
				return func(op *workloads.Op, buf []byte) workloads.Value {
					var v workloads.Value
					v.Type, v.Null, v.Int = workloads.TTimestamp, false, workloads.FloorDiv(op.Ref+int64(48*time.Hour), 1e6)
					return v
				}
			}},
		workloads.ConstText("status", "created | paid | processing | shipped | delivered | cancelled (Op.Aux)", 9, func(_ *workloads.Model, op *workloads.Op) string {
			return workloads.OrderStatuses[op.Aux%int64(len(workloads.OrderStatuses))]
		}),
		{Name: "items", Type: workloads.TItems, Size: 70, Doc: "the order's items (Op.Items): product, name, quantity, price, category",
			Composite: func(m *workloads.Model) func(*workloads.Op) any {
				return func(op *workloads.Op) any { return Items(m, op) }
			}},
		workloads.DecimalField("total_amount", "the order's total (Op.Price)", func(op *workloads.Op) int64 { return op.Price }),
		workloads.GeoZone(),
		workloads.ConstText("payment_method", "card | sbp | cash_on_delivery | installments", 6, func(m *workloads.Model, op *workloads.Op) string {
			return m.OrderPayment(op.Order)
		}),
		workloads.AppendText("delivery_address", "the delivery address as one line", 48, func(m *workloads.Model, dst []byte, op *workloads.Op) []byte {
			return m.AppendAddress(dst, op.User, op.Zone)
		}),
		{Name: "shipping_address", Type: workloads.TObject, Size: 64, Doc: "the address as a document {city, street, postal_code} (seed 001)",
			Composite: func(m *workloads.Model) func(*workloads.Op) any {
				return func(op *workloads.Op) any {
					line := string(m.AppendAddress(nil, op.User, op.Zone))
					h := workloads.Hash(m.Seed, 0xadd, op.User)
					return workloads.Doc{{Key: "city", Value: m.ZoneCity(op.Zone)}, {Key: "street", Value: line}, {Key: "postal_code", Value: 100000 + int64(h%900000)}}
				}
			}},
	},
	Knobs: []workloads.Knob{
		{Name: "items_mean", Default: 1.8, Min: 1, Max: 50, Doc: "mean items per placed order"},
		{Name: "recent_share", Default: 0.5, Min: 0, Max: 1,
			Doc: "share of read/status_change on recently placed orders (by age, mean 5,000 " +
				"orders: placed during the run, or historic while the run has placed fewer)"},
		{Name: "history_months", Default: 12, Min: 1, Max: 120, Doc: "months history_all covers"},
		{Name: "history_limit", Default: 50, Min: 1, Max: 100000, Doc: "rows read by history reads"},
		{Name: "period_limit", Default: 100, Min: 1, Max: 1000000, Doc: "rows read by list_by_period (one page)"},
		{Name: "period_month_share", Default: 0.2, Min: 0, Max: 1, Doc: "share of list_by_period reading a month (else a day)"},
		{Name: "current_share", Default: 0.6, Min: 0, Max: 1, Doc: "share of period and month reads of the current day/month"},
	},
	Owner:      owner,
	Population: population,
	New:        newGen,
}

// owner: placing, reading and moving an order the run placed through its statuses go
// with the order; historic orders and the history and period listings belong to no life
// cycle of the run's.
func owner(m *workloads.Model, i int, op *workloads.Op) (uint64, int64) {
	switch i {
	case opPlace, opRead, opStatus:
		if op.Order >= m.FirstNewOrder() {
			return workloads.KindOrder, op.Order
		}
	}
	return 0, 0
}

// population is the users' historic orders, by user (bots first, then by activity rank):
// candidate i is user i/OrderSlots's order i%OrderSlots, a record when the user placed
// that many (HistoricOrders). An order placed over a week before the run is delivered,
// a newer one shipped.
func population(m *workloads.Model) []workloads.RecordSet {
	week := int64(7 * 24 * time.Hour)
	return []workloads.RecordSet{{Name: "history", Count: m.Users * m.OrderSlots, Record: func(o int64, op *workloads.Op) bool {
		u := m.OrderUser(o)
		if o-u*m.OrderSlots >= m.HistoricOrders(u) {
			return false
		}
		*op = m.NewRecord()
		op.Order, op.User, op.Zone, op.Bot = o, u, m.UserZone(u), m.IsBot(u)
		op.Ref = m.OrderCreated(o)
		op.Time = op.Ref
		op.Items = historicItems(m, o)
		op.Price = total(m, o, op.Items)
		op.Aux = 4 // delivered
		if m.Start-op.Ref < week {
			op.Aux = 3 // shipped
		}
		return true
	}}}
}

// item derives the j-th item of order o.
func item(m *workloads.Model, o int64, j int32) (int64, uint8, int32) {
	r := workloads.NewRand(workloads.Mix(workloads.Hash(m.Seed, 0x0de5, o), uint64(j)))
	p, c := m.ProductFrom(&r, -1)
	q := int32(1)
	if r.Chance(0.15) {
		q = 2
	}
	return p, c, q
}

// Items lists an order's items.
func Items(m *workloads.Model, op *workloads.Op) []workloads.Item {
	out := make([]workloads.Item, op.Items)
	var buf []byte
	for j := range out {
		p, c, q := item(m, op.Order, int32(j))
		buf = m.AppendProductName(buf[:0], p, c)
		name := string(buf)
		buf = m.AppendSKU(buf[:0], p, c)
		out[j] = workloads.Item{ProductID: m.UUID(workloads.KindProduct, p), SKU: string(buf), Name: name,
			Category: m.Categories[c].Name, Quantity: q, Price: m.ProductPrice(p, c), AddedAt: workloads.FloorDiv(op.Ref, 1e6)}
	}
	return out
}

func total(m *workloads.Model, o int64, n int32) int64 {
	var t int64
	for j := int32(0); j < n; j++ {
		p, c, q := item(m, o, j)
		t += m.ProductPrice(p, c) * int64(q)
	}
	return t
}

// Stats reports the orders placed during the run (workloads.Stater).
func (g *gen) Stats(add func(string, int64)) { add("placed", g.placed) }

type gen struct {
	placed               int64
	st                   *workloads.State
	itemsMean            float64
	recent               float64
	months               int
	histLimit, perLimit  int32
	monthShare, curShare float64
}

func newGen(st *workloads.State) workloads.Generator {
	m := st.M
	return &gen{st: st, itemsMean: m.Knob("orders", "items_mean"), recent: m.Knob("orders", "recent_share"),
		months: int(m.Knob("orders", "history_months")), histLimit: int32(m.Knob("orders", "history_limit")),
		perLimit: int32(m.Knob("orders", "period_limit")), monthShare: m.Knob("orders", "period_month_share"),
		curShare: m.Knob("orders", "current_share")}
}

const (
	opPlace = iota
	opRead
	opHistMonth
	opHistAll
	opPeriod
	opStatus
)

// historicItems is how many items a historic order has (1-4).
func historicItems(m *workloads.Model, o int64) int32 {
	return 1 + int32(workloads.Hash(m.Seed, 0x17e5, o)%4)
}

func (g *gen) pick(op *workloads.Op) {
	st, m := g.st, g.st.M
	if st.NewOrders.Len() > 0 && st.Rand.Chance(g.recent) {
		// An age beyond the orders placed so far is an order placed before the run: a
		// historic one, below.
		if o, ok := st.NewOrders.Recent(&st.Rand, 5000); ok {
			op.Order, op.User, op.Ref, op.Zone, op.Items, op.Price = o.ID, o.User, o.Created, o.Zone, o.Items, o.Total
			op.Bot = m.IsBot(o.User)
			return
		}
	}
	for try := 0; ; try++ {
		u, bot := st.User()
		n := m.HistoricOrders(u)
		if n == 0 && try < 16 {
			continue
		}
		n = max(n, 1)
		o := u*m.OrderSlots + st.Rand.Intn(n)
		op.Order, op.User, op.Bot, op.Zone, op.Ref = o, u, bot, m.UserZone(u), m.OrderCreated(o)
		op.Items = historicItems(m, o)
		op.Price = total(m, o, op.Items)
		return
	}
}

func (g *gen) Fill(i int, op *workloads.Op) {
	st, m := g.st, g.st.M
	switch i {
	case opPlace:
		u, bot := st.User()
		o := st.NewOrderID()
		op.Order, op.User, op.Bot, op.Zone, op.Ref = o, u, bot, m.UserZone(u), op.Time
		op.Items = int32(st.Rand.Geometric(g.itemsMean, 20))
		op.Price = total(m, o, op.Items)
		op.Size = 200 + 70*op.Items
		g.placed++
		st.NewOrders.Push(workloads.OrderRef{ID: o, User: u, Created: op.Time, Zone: op.Zone, Items: op.Items, Total: op.Price})
	case opRead:
		g.pick(op)
		op.Size = 200 + 70*op.Items
		op.Aux = 2
	case opStatus:
		g.pick(op)
		op.Aux = st.Rand.Range(1, int64(len(workloads.OrderStatuses))-1)
	case opHistMonth, opHistAll:
		u, bot := st.User()
		op.User, op.Bot, op.Zone, op.Qty = u, bot, m.UserZone(u), g.histLimit
		n := m.HistoricOrders(u)
		if i == opHistMonth {
			back := 0
			if !st.Rand.Chance(g.curShare) {
				back = int(st.Rand.Range(1, int64(g.months)-1+1))
			}
			op.Ref, op.Until = m.MonthStart(op.Time, -back), m.MonthStart(op.Time, -back+1)
			op.Items = int32(min(int64(g.histLimit), (n+11)/12))
		} else {
			op.Ref, op.Until = m.MonthStart(op.Time, -(g.months-1)), op.Time+1
			op.Items = int32(min(int64(g.histLimit), n))
		}
	case opPeriod:
		op.Qty, op.Items = g.perLimit, g.perLimit
		cur := st.Rand.Chance(g.curShare)
		if st.Rand.Chance(g.monthShare) {
			back := 0
			if !cur {
				back = int(st.Rand.Range(1, 11))
			}
			op.Ref, op.Until, op.Aux = m.MonthStart(op.Time, -back), m.MonthStart(op.Time, -back+1), 1
		} else {
			day := m.DayStart(op.Time)
			if !cur {
				day -= st.Rand.Range(1, 30) * int64(24*time.Hour)
			}
			op.Ref, op.Until = day, day+int64(24*time.Hour)
		}
	}
}
