// Package views is the page-view (user event) workload: every product page view is
// appended to the user's history; a user's recent views and one day of views are read.
//
// Operations (Op fields used):
//
//	append          User, Product, Category, Sub, Price, Zone, Bot, Ref = Time, Size
//	recent_by_user  User, Zone, Qty = row limit, Ref = Time (the newest time bucket)
//	by_day          User, Zone, Qty = row limit, [Ref, Until) = one day (UTC)
//
// Views are by logged-in users (and bots): the seeds key view history by user_id.
package views

import (
	"strconv"
	"time"

	"github.com/shardbench/shardbench/workloads"
)

func init() { workloads.Register(Meta) }

// Meta describes the workload.
var Meta = &workloads.Meta{
	Name:        "views",
	Entity:      "views",
	Description: "page views / user events: append, a user's recent views, a user's day of views",
	Ops: []workloads.OpSpec{
		{Name: "append", Action: workloads.Insert, Doc: "a user views a product page", PerHour: workloads.PacePage, Bots: true},
		{Name: "recent_by_user", Action: workloads.List, Binds: []string{"user_id"}, Range: "viewed_at", Doc: "the user's latest views (newest time bucket)", PerHour: workloads.PacePage, Bots: true},
		{Name: "by_day", Action: workloads.List, Binds: []string{"user_id"}, Range: "viewed_at", Doc: "the user's views of one day", PerHour: workloads.PaceAccount, Bots: true},
	},
	Fields: []workloads.Field{
		workloads.UserID("user_id"),
		workloads.SessionID(),
		workloads.ProductID("product_id"),
		workloads.ProductID("resource_id"),
		workloads.SKU("product_sku"),
		workloads.CategoryName(),
		workloads.DecimalField("price", "the product's price at view time", func(op *workloads.Op) int64 { return op.Price }),
		workloads.TimeField("viewed_at", "when the page was viewed (Op.Ref; for reads the period start)", func(op *workloads.Op) int64 { return op.Ref }),
		workloads.DateField("view_date", "the day of viewed_at (UTC)", func(op *workloads.Op) int64 { return op.Ref }),
		workloads.TimeField("event_time", "seed 004's name for viewed_at", func(op *workloads.Op) int64 { return op.Ref }),
		workloads.DateField("event_date", "seed 004's name for view_date", func(op *workloads.Op) int64 { return op.Ref }),
		workloads.ConstText("event_type", `"VIEW_ITEM" (seed 004's event types)`, 9, func(*workloads.Model, *workloads.Op) string { return "VIEW_ITEM" }),
		workloads.GeoZone(),
		workloads.DeviceType(),
		workloads.AppendText("details", "JSON with the price and category (seed 004's details)", 60, func(m *workloads.Model, dst []byte, op *workloads.Op) []byte {
			dst = append(dst, `{"price":`...)
			dst = workloads.AppendDecimal(dst, op.Price)
			dst = append(dst, `,"category":`...)
			name := ""
			if op.Category != workloads.NoCategory {
				name = m.Categories[op.Category].Name
			}
			dst = strconv.AppendQuote(dst, name)
			return append(dst, '}')
		}),
	},
	Knobs: []workloads.Knob{
		{Name: "recent_limit", Default: 20, Min: 1, Max: 10000, Doc: "rows read by recent_by_user"},
		{Name: "day_limit", Default: 200, Min: 1, Max: 100000, Doc: "rows read by by_day"},
		{Name: "today_share", Default: 0.6, Min: 0, Max: 1, Doc: "share of by_day reads of the current day (else one of the 29 before)"},
	},
	New: newGen,
}

type gen struct {
	st          *workloads.State
	recentLimit int32
	dayLimit    int32
	today       float64
}

func newGen(st *workloads.State) workloads.Generator {
	m := st.M
	return &gen{st: st, recentLimit: int32(m.Knob("views", "recent_limit")), dayLimit: int32(m.Knob("views", "day_limit")), today: m.Knob("views", "today_share")}
}

func (g *gen) Fill(i int, op *workloads.Op) {
	st, m := g.st, g.st.M
	u, bot := st.User()
	op.User, op.Bot, op.Zone = u, bot, m.UserZone(u)
	switch i {
	case 0:
		p, c := st.Product()
		op.Product, op.Category, op.Sub, op.Price = p, c, m.ProductSub(p, c), m.ProductPrice(p, c)
		op.Ref, op.Size, op.Items = op.Time, 120, 1
	case 1:
		op.Ref, op.Qty, op.Items = op.Time, g.recentLimit, g.recentLimit
	case 2:
		day := m.DayStart(op.Time)
		if !st.Rand.Chance(g.today) {
			day -= st.Rand.Range(1, 29) * int64(24*time.Hour)
		}
		op.Ref, op.Until, op.Qty, op.Items = day, day+int64(24*time.Hour), g.dayLimit, g.dayLimit/4
	}
}
