// Package catalog is the product catalog workload: product pages (with stock per geo
// zone), category listings with a price range, popular products, and stock decrements.
// Catalog traffic follows population.categories (electronics about 70%), products within a
// category follow population.product_popularity, and the hot set takes its share.
//
// Operations (Op fields used):
//
//	product_read      Product, Category, Sub, Price, Ref = the product's creation, Zone =
//	                  the reader's zone, Session, User, Bot
//	category_listing  Category, Price..Aux = the price range (minor units), Qty = page size,
//	                  Zone, Session, User, Bot
//	popular           Category (NoCategory for the global top), Qty = rows, Zone
//	stock_decrement   Product, Category, Sub, Price, Ref, Zone = the warehouse zone,
//	                  Qty = units sold
package catalog

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shardbench/shardbench/workloads"
)

func init() { workloads.Register(Meta) }

var productBinds = []string{"product_id", "product_sku", "stock_key", "category", "category_id", "subcategory", "brand", "price", "created_at", "geo_zone"}

// Meta describes the workload.
var Meta = &workloads.Meta{
	Name:        "catalog",
	Entity:      "products",
	Description: "catalog: product page with stock per zone, category listing by price range, popular products, stock decrement",
	Ops: []workloads.OpSpec{
		{Name: "product_read", Action: workloads.Get, Binds: productBinds, Doc: "a product page, with the stock of the reader's zone", PerHour: workloads.PacePage, Bots: true},
		{Name: "category_listing", Action: workloads.List, Binds: []string{"category",
			"category_id"}, Range: "price", Doc: "a page of a category, filtered by a price range",
			PerHour: workloads.PacePage, Bots: true},
		{Name: "popular", Action: workloads.List, Binds: []string{"category", "category_id",
			"session_id"}, Doc: "the most popular products of a category, or of the whole store",
			PerHour: workloads.PacePage, Bots: true},
		{Name: "stock_decrement", Action: workloads.Decrement, Binds: productBinds,
			Sets:    []string{"stock", "updated_at"},
			Doc:     "units sold leave a zone's stock (must not oversell)",
			PerHour: workloads.PaceOrderItems},
	},
	Fields: []workloads.Field{
		workloads.ProductID("product_id"),
		workloads.SessionID(),
		workloads.AppendText("stock_key", `"<sku>:<zone>": one stock record (seed 001's inventory documents)`, 26, func(m *workloads.Model, dst []byte, op *workloads.Op) []byte {
			dst = m.AppendSKU(dst, op.Product, m.CategoryOf(op.Product))
			dst = append(dst, ':')
			return append(dst, m.Zones[op.Zone]...)
		}),
		workloads.SKU("product_sku"),
		workloads.ProductName("name"),
		workloads.AppendText("description", "a short description", 120, func(m *workloads.Model, dst []byte, op *workloads.Op) []byte {
			dst = append(dst, "Описание: "...)
			return m.AppendProductName(dst, op.Product, m.CategoryOf(op.Product))
		}),
		workloads.CategoryName(),
		workloads.CategoryID(),
		workloads.Subcategory(),
		workloads.Brand(),
		workloads.DecimalField("price", "the product's price; for listings the range's lower bound", func(op *workloads.Op) int64 { return op.Price }),
		workloads.DecimalField("price_max", "a listing's price upper bound (Op.Aux)", func(op *workloads.Op) int64 { return op.Aux }),
		workloads.Created("created_at"),
		workloads.Now("updated_at", "the operation's time"),
		workloads.GeoZone(),
		{Name: "stock", Type: workloads.TInt, Size: 4, Doc: "the product's stock in Op.Zone (before a decrement)",
			Get: func(m *workloads.Model) workloads.Getter {
				return func(op *workloads.Op, buf []byte) workloads.Value {
					var v workloads.Value
					v.Type, v.Null, v.Int = workloads.TInt, false, int64(m.Stock(op.Product, op.Zone))
					return v
				}
			}},
		workloads.IntField("units", "units a decrement takes (Op.Qty)", func(op *workloads.Op) int64 { return int64(op.Qty) }),
		workloads.AppendText("warehouse_id", `the zone's warehouse, e.g. "WH-MOSCOW-01"`, 12, func(m *workloads.Model, dst []byte, op *workloads.Op) []byte {
			dst = append(dst, "WH-"...)
			for _, c := range []byte(m.Zones[op.Zone]) {
				if c >= 'a' && c <= 'z' {
					c -= 'a' - 'A'
				}
				dst = append(dst, c)
			}
			return append(dst, "-01"...)
		}),
		{Name: "stock_by_geo", Type: workloads.TIntMap, Size: 14, Doc: "stock per geo zone (map zone -> units)",
			PerKey: &workloads.PerKey{Value: "stock", Key: "geo_zone"},
			Composite: func(m *workloads.Model) func(*workloads.Op) any {
				return func(op *workloads.Op) any {
					out := map[string]int32{}
					for z, name := range m.Zones {
						out[name] = m.Stock(op.Product, uint8(z))
					}
					return out
				}
			}},
		{Name: "stocks", Type: workloads.TDocs, Size: 48, Doc: "stock per zone as documents {geo_zone, qty, warehouse_id, updated_at} (seed 001)",
			PerKey: &workloads.PerKey{Value: "stock", Key: "geo_zone", DocKey: "geo_zone", DocValue: "qty"},
			Composite: func(m *workloads.Model) func(*workloads.Op) any {
				return func(op *workloads.Op) any {
					out := make([]workloads.Doc, len(m.Zones))
					for z, name := range m.Zones {
						out[z] = workloads.Doc{{Key: "geo_zone", Value: name}, {Key: "qty", Value: m.Stock(op.Product, uint8(z))},
							{Key: "warehouse_id", Value: "WH-" + name + "-01"}, {Key: "updated_at", Value: time.UnixMilli(workloads.FloorDiv(m.Start, 1e6)).UTC()}}
					}
					return out
				}
			}},
		{Name: "attributes", Type: workloads.TTextMap, Size: 15000, Doc: "the product's specifications (color, weight, then spec_NN entries): about catalog.attributes_bytes of text",
			Sized: func(m *workloads.Model) int32 { return int32(m.Knob("catalog", "attributes_bytes")) },
			Composite: func(m *workloads.Model) func(*workloads.Op) any {
				size := int(m.Knob("catalog", "attributes_bytes"))
				return func(op *workloads.Op) any { return Attributes(m, op.Product, size) }
			}},
		{Name: "is_active", Type: workloads.TBool, Size: 1, Doc: "true",
			Get: func(*workloads.Model) workloads.Getter {
				return func(op *workloads.Op, buf []byte) workloads.Value {
					var v workloads.Value
					v.Type, v.Null, v.Int = workloads.TBool, false, 1
					return v
				}
			}},
		{Name: "rating", Type: workloads.TFloat, Size: 4, Doc: "average rating 3.0-5.0",
			Get: func(m *workloads.Model) workloads.Getter {
				return func(op *workloads.Op, buf []byte) workloads.Value {
					var v workloads.Value
					v.Type, v.Null = workloads.TFloat, false
					v.Float = 3 + float64(workloads.Hash(m.Seed, 0x4a7, op.Product)%21)/10
					return v
				}
			}},
		workloads.ImageURL("image_url"),
		{Name: "popularity_rank", Type: workloads.TInt, Size: 4, Doc: "the product's rank within its category (1 = most popular)",
			Get: func(m *workloads.Model) workloads.Getter {
				return func(op *workloads.Op, buf []byte) workloads.Value {
					var v workloads.Value
					v.Type, v.Null, v.Int = workloads.TInt, false, 1
					if op.Product >= 0 {
						v.Int = op.Product - m.Categories[m.CategoryOf(op.Product)].First + 1
					}
					return v
				}
			}},
		workloads.ConstText("stock_status", "in_stock | low | out_of_stock", 8, func(m *workloads.Model, op *workloads.Op) string {
			switch s := m.Stock(op.Product, op.Zone); {
			case s == 0:
				return "out_of_stock"
			case s < 10:
				return "low"
			}
			return "in_stock"
		}),
	},
	Knobs: []workloads.Knob{
		// Seed 001, task 8 §1.1: getShardDistribution of products shows 8.2 GB for 520,000
		// documents on one shard, 2.5 GB for 150,000 on another: about 16 KB a product.
		{Name: "attributes_bytes", Default: 15000, Min: 16, Max: 1 << 20,
			Doc: "bytes of a product's specifications (attributes): with its other fields about " +
				"16 KB a product, as seed 001 task 8's shard distribution (8.2 GB for 520,000 " +
				"products)"},
		{Name: "page_size", Default: 24, Min: 1, Max: 10000, Doc: "rows of a category listing page"},
		{Name: "popular_rows", Default: 20, Min: 1, Max: 10000, Doc: "rows of a popular-products read"},
		{Name: "popular_global_share", Default: 0.3, Min: 0, Max: 1, Doc: "share of popular reads of the store-wide top (else a category's)"},
		{Name: "recent_share", Default: 0.3, Min: 0, Max: 1,
			Doc: "share of catalog operations in recently created sessions (by age, mean 2,000 " +
				"sessions: created during the run, or before it while the run has created fewer)"},
	},
	Population: population,
	Expansions: expansions,
	New:        newGen,
}

// population is the catalog: one set per category, its products by popularity rank.
func population(m *workloads.Model) []workloads.RecordSet {
	sets := make([]workloads.RecordSet, len(m.Categories))
	for c := range m.Categories {
		cat := &m.Categories[c]
		sets[c] = workloads.RecordSet{Name: cat.Name, Count: cat.Count, Record: func(i int64, op *workloads.Op) bool {
			p := cat.First + i
			*op = m.NewRecord()
			op.Product, op.Category = p, uint8(c)
			op.Sub, op.Price, op.Ref = m.ProductSub(p, uint8(c)), m.ProductPrice(p, uint8(c)), m.ProductCreated(p)
			op.Items = 1
			return true
		}}
	}
	return sets
}

// expansions: a table keyed by a stock record (seed 001's inventory: a document per
// product and zone) holds a row per geo zone.
func expansions(m *workloads.Model) []workloads.Expansion {
	return []workloads.Expansion{{Name: "zone", Fields: []string{"stock_key", "geo_zone", "warehouse_id"},
		Count: func(*workloads.Op) int { return len(m.Zones) },
		Apply: func(op *workloads.Op, k int) { op.Zone = uint8(k) }}}
}

// Attributes is product p's specifications: color and weight, then spec_NN entries of
// filler text until the map holds about size bytes of keys and values.
func Attributes(m *workloads.Model, p int64, size int) map[string]string {
	h := workloads.Hash(m.Seed, 0xa77, p)
	colors := []string{"black", "white", "silver", "blue", "red"}
	out := map[string]string{"color": colors[h%5], "weight": workloads.FormatDecimal(int64(h>>8%500) * 100)}
	n := 5 + len(out["color"]) + 6 + len(out["weight"])
	const phrase = "характеристика товара, значение и единица измерения; "
	for k := 1; n < size; k++ {
		key := "spec_" + strconv.Itoa(k)
		left := size - n - len(key)
		v := strings.Repeat(phrase, max(1, min(4, left/len(phrase))))
		if left < len(v) {
			v = v[:max(left, 1)]
			for !utf8.ValidString(v) { // do not cut a letter in two
				v = v[:len(v)-1]
			}
		}
		out[key] = v
		n += len(key) + len(v)
	}
	return out
}

type gen struct {
	st             *workloads.State
	page, popRows  int32
	global, recent float64
}

func newGen(st *workloads.State) workloads.Generator {
	m := st.M
	return &gen{st: st, page: int32(m.Knob("catalog", "page_size")), popRows: int32(m.Knob("catalog", "popular_rows")),
		global: m.Knob("catalog", "popular_global_share"), recent: m.Knob("catalog", "recent_share")}
}

func (g *gen) Fill(i int, op *workloads.Op) {
	st, m := g.st, g.st.M
	s := st.Session(g.recent)
	op.Session, op.User, op.Zone, op.Bot = s.ID, s.User, s.Zone, m.IsBot(s.User)
	op.Ref = op.Time
	switch i {
	case 0, 3:
		p, c := st.Product()
		op.Product, op.Category, op.Sub, op.Price = p, c, m.ProductSub(p, c), m.ProductPrice(p, c)
		op.Ref, op.Items, op.Size = m.ProductCreated(p), 1, 600
		if i == 3 {
			op.Qty = 1
			if st.Rand.Chance(0.1) {
				op.Qty = 2
			}
		}
	case 1:
		c := st.Category()
		med := m.Categories[c].Median
		// A price band around the median: [median/4 .. median] or [median .. 4 median].
		op.Category, op.Qty, op.Items = c, g.page, g.page
		if st.Rand.Chance(0.5) {
			op.Price, op.Aux = med/4, med
		} else {
			op.Price, op.Aux = med, med*4
		}
		op.Size = 200 * g.page
	case 2:
		op.Qty, op.Items = g.popRows, g.popRows
		if !st.Rand.Chance(g.global) {
			op.Category = st.Category()
		}
		op.Size = 150 * g.popRows
	}
}
