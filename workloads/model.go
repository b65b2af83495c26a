package workloads

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/yamlx"
)

// Model is a scenario compiled for generation: the population with its skew, and the
// operation table. It is immutable and safe for concurrent use; streams and field getters
// read it.
type Model struct {
	Scenario *scenario.Scenario
	Seed     int64
	// Start is the store clock at the run's start (unix ns); Scale is store seconds per run
	// second.
	Start int64
	Scale float64
	// Offset is the store's UTC offset (ns), from the clock start's zone: days and months of
	// the workload's periods begin at local midnight (Moscow for the default clock).
	Offset int64

	Users, Sessions, Products, Carts int64
	GuestShare                       float64
	OrdersPerUser                    float64
	// Bots are users 0..Bots-1, each with one long-lived session (sessions 0..Bots-1);
	// BotShare of user-attributed operations come from them.
	Bots     int64
	BotShare float64
	// Categories in file order; products are laid out by category: category c owns
	// product ids [First, First+Count), and within it rank 1 of the popularity skew is
	// First.
	Categories []Category
	// Zones are the geo zone names in file order.
	Zones []string
	// HotCount products take HotShare of product picks; the set moves every HotShift.
	HotCount int64
	HotShare float64
	HotShift time.Duration
	// OrderSlots is the number of order ids reserved per user for historic orders: user
	// u's historic orders are u*OrderSlots + j, j < HistoricOrders(u).
	OrderSlots int64

	// Ops is the operation table: the scenario's mix in file order. Op.Type indexes it.
	Ops []OpInfo

	userPop   Popularity // non-bot users, rank 0 = Bots
	sessPop   Popularity // non-bot initial sessions, rank 0 = Bots
	catAlias  Alias
	zoneAlias Alias
	mixAlias  Alias
	knobs     map[string]float64

	// derived holds what other packages derive from the model once (Derived).
	derivedMu sync.Mutex
	derived   sync.Map
}

// Derived is a value another package derives from the model (the population's table
// sizes): made by make on first use under key, the same value for every caller after.
func (m *Model) Derived(key any, make func() any) any {
	if v, ok := m.derived.Load(key); ok {
		return v
	}
	m.derivedMu.Lock()
	defer m.derivedMu.Unlock()
	if v, ok := m.derived.Load(key); ok {
		return v
	}
	v := make()
	m.derived.Store(key, v)
	return v
}

// OpInfo is one entry of the operation table.
type OpInfo struct {
	Name     string // "carts.add_item"
	Kind     Kind
	Weight   float64
	Workload *Meta
	Index    int // into Workload.Ops
	Spec     *OpSpec
}

// Category is one product category of the population.
type Category struct {
	Name  string
	Share float64 // share of catalog traffic
	First int64
	Count int64
	// Subcategories and brands with their weights; Median is the median price (minor units).
	Subs       []string
	Brands     []string
	Median     int64
	subAlias   Alias
	brandAlias Alias
	pop        Popularity
}

// Salts name what a hash derives, so that attributes are independent.
const (
	saltUser uint64 = iota + 1
	saltSession
	saltProduct
	saltOrder
	saltCart
	saltCategory
	saltZone
	saltGuest
	saltSessUser
	saltCreated
	saltDevice
	saltIP
	saltSub
	saltBrand
	saltPrice
	saltHot
	saltHistoric
	saltStatus
	saltItem
	saltPayment
	saltAddress
	saltWarehouse
	saltStock
	saltMisc
	saltEvent
)

// ID kinds for UUIDs.
const (
	KindUser     = saltUser
	KindSession  = saltSession
	KindProduct  = saltProduct
	KindOrder    = saltOrder
	KindCart     = saltCart
	KindCategory = saltCategory
	KindEvent    = saltEvent
)

// New compiles a scenario (already defaulted and validated). Every operation of the mix
// must name a registered workload's operation, and every population.extra key a knob of a
// registered workload; problems carry the position of the offending line.
func New(sc *scenario.Scenario) (*Model, error) {
	p := &sc.Population
	m := &Model{
		Scenario: sc, Seed: sc.Seed,
		Start: sc.Clock.Start.UnixNano(), Scale: sc.Clock.Scale,
		Users: p.Users, Sessions: p.Sessions, Products: p.Products, Carts: p.Carts,
		GuestShare: p.GuestShare, OrdersPerUser: p.OrdersPerUser,
		Bots: int64(p.Bots.Count), BotShare: p.Bots.Share,
		HotCount: int64(p.HotProducts.Count), HotShare: p.HotProducts.Share, HotShift: p.HotProducts.ShiftEvery,
		knobs: map[string]float64{},
	}
	if m.Scale == 0 {
		m.Scale = 1
	}
	_, off := sc.Clock.Start.Zone()
	m.Offset = int64(off) * int64(time.Second)
	var errs yamlx.Errors
	if m.Bots >= m.Sessions {
		errs.AddAt(p.Bots.Loc, "count", "must be below population.sessions (%d): each bot holds one session", m.Sessions)
	}
	if m.Bots >= m.Users {
		errs.AddAt(p.Bots.Loc, "count", "must be below population.users (%d)", m.Users)
	}
	if m.HotCount == 0 {
		m.HotShare = 0
	}
	m.OrderSlots = max(1, int64(math.Ceil(2*m.OrdersPerUser)))
	if m.Users > math.MaxInt64/4/m.OrderSlots {
		errs.AddAt(p.Loc, "orders_per_user", "users × orders_per_user is too large")
	}
	if len(p.Categories) > NoCategory || len(p.GeoZones) > 254 {
		errs.AddAt(p.Loc, "categories", "at most %d categories and 254 geo zones", NoCategory)
	}

	m.userPop = NewPopularity(max(1, m.Users-m.Bots), p.UserActivity.Distribution, p.UserActivity.S)
	m.sessPop = NewPopularity(max(1, m.Sessions-m.Bots), p.UserActivity.Distribution, p.UserActivity.S)
	m.zoneAlias = NewAlias(p.GeoZones.Shares())
	m.Zones = p.GeoZones.Names()
	m.catAlias = NewAlias(p.Categories.Shares())
	m.layoutCategories(p)

	// Knobs: population.extra keys are "<workload>.<knob>".
	pos, path := p.Loc.At("extra")
	keys := make([]string, 0, len(p.Extra))
	for k := range p.Extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := p.Extra[k]
		wl, name, _ := strings.Cut(k, ".")
		meta := Lookup(wl)
		var knob *Knob
		if meta != nil {
			knob = meta.Knob(name)
		}
		if knob == nil {
			errs.Add(pos, yamlx.JoinPath(path, k), "unknown knob (known: %s)", strings.Join(KnobNames(), ", "))
			continue
		}
		if v < knob.Min || v > knob.Max {
			errs.Add(pos, yamlx.JoinPath(path, k), "must be between %g and %g, got %g", knob.Min, knob.Max, v)
			continue
		}
		m.knobs[k] = v
	}

	// The operation table, in mix order.
	var weights []float64
	for _, w := range sc.Mix {
		meta, idx, spec := LookupOp(w.Name)
		if spec == nil {
			errs.Add(w.Pos, "mix."+w.Name, "unknown operation%s", suggestOp(w.Name))
			continue
		}
		m.Ops = append(m.Ops, OpInfo{Name: w.Name, Kind: spec.Action.Kind(), Weight: w.Weight, Workload: meta, Index: idx, Spec: spec})
		weights = append(weights, w.Weight)
	}
	if len(m.Ops) > math.MaxUint16 {
		errs.AddAt(sc.Loc, "mix", "too many operations")
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	m.mixAlias = NewAlias(weights)
	return m, nil
}

// KnobNames lists every knob of every registered workload.
func KnobNames() []string {
	var out []string
	for _, meta := range Registered() {
		for _, k := range meta.Knobs {
			out = append(out, meta.Name+"."+k.Name)
		}
	}
	return out
}

// OpNames lists every operation of every registered workload.
func OpNames() []string {
	var out []string
	for _, meta := range Registered() {
		for _, o := range meta.Ops {
			out = append(out, meta.Name+"."+o.Name)
		}
	}
	return out
}

func suggestOp(name string) string {
	all := OpNames()
	if len(all) == 0 {
		return " (no workloads are registered: import workloads/all)"
	}
	wl, _, _ := strings.Cut(name, ".")
	var same []string
	for _, o := range all {
		if strings.HasPrefix(o, wl+".") {
			same = append(same, o)
		}
	}
	if len(same) > 0 {
		return " (" + wl + " has: " + strings.Join(same, ", ") + ")"
	}
	var wls []string
	for _, meta := range Registered() {
		wls = append(wls, meta.Name)
	}
	return " (workloads: " + strings.Join(wls, ", ") + ")"
}

// Knob returns the value of "<workload>.<name>" from population.extra or its default.
func (m *Model) Knob(workload, name string) float64 {
	if v, ok := m.knobs[workload+"."+name]; ok {
		return v
	}
	if meta := Lookup(workload); meta != nil {
		if k := meta.Knob(name); k != nil {
			return k.Default
		}
	}
	panic(fmt.Sprintf("workloads: unknown knob %s.%s", workload, name))
}

// OpIndex returns the operation table index of a full operation name, or -1.
func (m *Model) OpIndex(name string) int {
	for i := range m.Ops {
		if m.Ops[i].Name == name {
			return i
		}
	}
	return -1
}

// Catalog knowledge for the categories the seeds name; other categories get generic
// subcategories and brands.
var knownCategories = map[string]struct {
	subs    []string
	subW    []float64
	brands  []string
	brandW  []float64
	medianR int64 // median price in roubles
}{
	"electronics": {[]string{"smartphones", "laptops", "tvs", "other_electronics"}, []float64{45, 25, 15, 15},
		[]string{"Apple", "Samsung", "Xiaomi", "Huawei", "Sony", "Lenovo", "Asus", "Honor"}, []float64{30, 25, 18, 7, 6, 5, 5, 4}, 35000},
	"appliances": {[]string{"refrigerators", "washing_machines", "vacuum_cleaners", "kitchen_appliances"}, []float64{25, 25, 25, 25},
		[]string{"Bosch", "LG", "Samsung", "Indesit", "Philips", "Redmond"}, []float64{25, 20, 20, 15, 10, 10}, 25000},
	"accessories": {[]string{"cases", "chargers", "headphones", "cables"}, []float64{35, 25, 25, 15},
		[]string{"Apple", "Samsung", "Baseus", "Anker", "Xiaomi", "Ugreen"}, []float64{25, 20, 15, 15, 15, 10}, 1500},
	"books": {[]string{"fiction", "nonfiction", "children", "textbooks"}, []float64{40, 25, 20, 15},
		[]string{"Eksmo", "AST", "Piter", "MIF", "Azbuka"}, []float64{30, 30, 15, 15, 10}, 600},
	"clothing": {[]string{"men", "women", "kids", "shoes"}, []float64{30, 40, 15, 15},
		[]string{"Gloria Jeans", "Zara", "Nike", "Adidas", "Uniqlo"}, []float64{25, 25, 20, 20, 10}, 3000},
	"home": {[]string{"furniture", "decor", "kitchenware", "textiles"}, []float64{25, 25, 30, 20},
		[]string{"IKEA", "Hoff", "Tefal", "Zara Home"}, []float64{40, 20, 25, 15}, 2500},
}

func (m *Model) layoutCategories(p *scenario.Population) {
	shares := p.Categories.Shares()
	var next int64
	for i, w := range p.Categories {
		c := Category{Name: w.Name, Share: shares[i]}
		c.Count = int64(math.Round(float64(m.Products) * c.Share))
		if c.Count < 1 {
			c.Count = 1
		}
		if i == len(p.Categories)-1 && next+c.Count < m.Products {
			c.Count = m.Products - next
		}
		c.First = next
		next += c.Count
		if k, ok := knownCategories[w.Name]; ok {
			c.Subs, c.Brands, c.Median = k.subs, k.brands, k.medianR*100
			c.subAlias, c.brandAlias = NewAlias(k.subW), NewAlias(k.brandW)
		} else {
			for j := 1; j <= 4; j++ {
				c.Subs = append(c.Subs, fmt.Sprintf("%s_%d", w.Name, j))
			}
			c.Brands = []string{"Brand A", "Brand B", "Brand C", "Brand D"}
			c.Median = 200000
			c.subAlias, c.brandAlias = NewAlias([]float64{1, 1, 1, 1}), NewAlias([]float64{4, 3, 2, 1})
		}
		c.pop = NewPopularity(c.Count, p.ProductPopularity.Distribution, p.ProductPopularity.S)
		m.Categories = append(m.Categories, c)
	}
	// Rounding may lay out more ids than population.products; the layout is what counts.
	m.Products = next
}

// UUID derives the UUID (version 4 layout) of entity id of a kind, from the seed.
func (m *Model) UUID(kind uint64, id int64) [16]byte {
	h1 := Hash(m.Seed, kind, id)
	h2 := Mix(h1, uint64(id)^kind<<56)
	var u [16]byte
	binary.BigEndian.PutUint64(u[:8], h1)
	binary.BigEndian.PutUint64(u[8:], h2)
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u
}

// ObjectID derives a MongoDB ObjectId for entity id created at unix ns t: 4 bytes of
// seconds, 5 bytes derived from the seed and id, a 3-byte counter from the id.
func (m *Model) ObjectID(kind uint64, id int64, t int64) [16]byte {
	var o [16]byte
	s := uint32(FloorDiv(t, 1e9))
	o[0], o[1], o[2], o[3] = byte(s>>24), byte(s>>16), byte(s>>8), byte(s)
	h := Hash(m.Seed, kind|0x80, id)
	for i := 0; i < 5; i++ {
		o[4+i] = byte(h >> (56 - 8*i))
	}
	o[9], o[10], o[11] = byte(id>>16), byte(id>>8), byte(id)
	return o
}

// ---- users and sessions ----

// IsBot reports whether user u is a bot.
func (m *Model) IsBot(u int64) bool { return u >= 0 && u < m.Bots }

// UserZone is user u's home geo zone.
func (m *Model) UserZone(u int64) uint8 { return uint8(m.zoneAlias.Pick(Hash(m.Seed, saltZone, u))) }

// SessionUser is the user of an initial-population session, or -1 for a guest.
func (m *Model) SessionUser(s int64) int64 {
	if s < m.Bots {
		return s
	}
	if unit(Hash(m.Seed, saltGuest, s)) < m.GuestShare {
		return -1
	}
	r := NewRand(Hash(m.Seed, saltSessUser, s))
	return m.Bots + m.userPop.Sample(&r)
}

// SessionZone is the geo zone of a session with the given user (-1: guest).
func (m *Model) SessionZone(s, user int64) uint8 {
	if user >= 0 {
		return m.UserZone(user)
	}
	return uint8(m.zoneAlias.Pick(Hash(m.Seed, saltZone, -1-s)))
}

// SessionCreated is when an initial-population session started: up to a day before the
// run (bots' sessions an hour before).
func (m *Model) SessionCreated(s int64) int64 {
	if s < m.Bots {
		return m.Start - int64(time.Hour)
	}
	return m.Start - below(Hash(m.Seed, saltCreated, s), int64(24*time.Hour))
}

// Devices, user agents and their shares.
var (
	DeviceTypes = []string{"mobile", "desktop", "tablet"}
	deviceAlias = NewAlias([]float64{62, 33, 5})
	UserAgents  = [][]string{
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
			"Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36",
			"Mozilla/5.0 (Linux; Android 13; 23049PCD8G) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 Mobile Safari/537.36 YaBrowser/24.6"},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
			"Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
			"Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:127.0) Gecko/20100101 Firefox/127.0"},
		{"Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"},
	}
	BotUserAgent = "Mozilla/5.0 (compatible; PriceMonitorBot/2.1; +http://example.com/bot)"
)

// SessionDevice is a session's device type index (DeviceTypes).
func (m *Model) SessionDevice(s int64) uint8 {
	if s < m.Bots {
		return 1
	}
	return uint8(deviceAlias.Pick(Hash(m.Seed, saltDevice, s)))
}

// SessionUserAgent is a session's user agent.
func (m *Model) SessionUserAgent(s int64) string {
	if s < m.Bots {
		return BotUserAgent
	}
	d := m.SessionDevice(s)
	list := UserAgents[d]
	return list[below(Hash(m.Seed, saltDevice+100, s), int64(len(list)))]
}

// zonePrefixes are plausible first octets of addresses per zone index.
var zonePrefixes = []byte{95, 178, 46, 92, 176, 85, 188, 217}

// SessionIP is a session's IPv4 address.
func (m *Model) SessionIP(s int64, zone uint8) [4]byte {
	h := Hash(m.Seed, saltIP, s)
	return [4]byte{zonePrefixes[int(zone)%len(zonePrefixes)], byte(h >> 8), byte(h >> 16), byte(h>>24) | 1}
}

// ---- products ----

// CategoryOf returns the category index of a product.
func (m *Model) CategoryOf(p int64) uint8 {
	cs := m.Categories
	i := sort.Search(len(cs), func(i int) bool { return cs[i].First+cs[i].Count > p })
	if i >= len(cs) {
		i = len(cs) - 1
	}
	return uint8(i)
}

// ProductSub is a product's subcategory index within its category.
func (m *Model) ProductSub(p int64, cat uint8) uint8 {
	return uint8(m.Categories[cat].subAlias.Pick(Hash(m.Seed, saltSub, p)))
}

// ProductBrand is a product's brand.
func (m *Model) ProductBrand(p int64, cat uint8) string {
	c := &m.Categories[cat]
	return c.Brands[c.brandAlias.Pick(Hash(m.Seed, saltBrand, p))]
}

// ProductPrice is a product's price in minor units: log-uniform between a quarter and
// four times the category median, ending in 90 roubles.
func (m *Model) ProductPrice(p int64, cat uint8) int64 {
	med := float64(m.Categories[cat].Median)
	f := math.Exp2(unit(Hash(m.Seed, saltPrice, p))*4 - 2)
	r := int64(med*f/100/100)*100 + 90 // roubles
	if r < 90 {
		r = 90
	}
	return r * 100
}

// ProductCreated is when a product was added to the catalog (up to two years before the
// run).
func (m *Model) ProductCreated(p int64) int64 {
	return m.Start - below(Hash(m.Seed, saltCreated+50, p), int64(730*24*time.Hour))
}

// AppendProductName appends a product's display name ("Apple smartphones 4093").
func (m *Model) AppendProductName(dst []byte, p int64, cat uint8) []byte {
	dst = append(dst, m.ProductBrand(p, cat)...)
	dst = append(dst, ' ')
	dst = append(dst, m.Categories[cat].Subs[m.ProductSub(p, cat)]...)
	dst = append(dst, ' ')
	return appendInt(dst, p)
}

// AppendSKU appends a product's SKU ("PROD-ELE-0000004093"), the string id seed 001 uses
// for products in MongoDB.
func (m *Model) AppendSKU(dst []byte, p int64, cat uint8) []byte {
	dst = append(dst, "PROD-"...)
	name := m.Categories[cat].Name
	for i := 0; i < 3; i++ {
		c := byte('X')
		if i < len(name) {
			c = name[i]
			if c >= 'a' && c <= 'z' {
				c -= 'a' - 'A'
			}
		}
		dst = append(dst, c)
	}
	dst = append(dst, '-')
	var buf [10]byte
	for i := 9; i >= 0; i-- {
		buf[i] = byte('0' + p%10)
		p /= 10
	}
	return append(dst, buf[:]...)
}

func appendInt(dst []byte, v int64) []byte {
	if v < 0 {
		dst = append(dst, '-')
		v = -v
	}
	var buf [20]byte
	i := len(buf)
	for {
		i--
		buf[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return append(dst, buf[i:]...)
}

// HotProduct is the k-th product of the hot set in epoch e.
func (m *Model) HotProduct(epoch, k int64) int64 {
	return below(Mix(Hash(m.Seed, saltHot, epoch), uint64(k)), m.Products)
}

// HotEpoch is the hot set's epoch at run time t.
func (m *Model) HotEpoch(intended time.Duration) int64 {
	if m.HotShift <= 0 {
		return 0
	}
	return int64(intended / m.HotShift)
}

// Stock is a product's stock in a zone at the start of the run.
func (m *Model) Stock(p int64, zone uint8) int32 {
	return int32(below(Mix(Hash(m.Seed, saltStock, p), uint64(zone)), 300))
}

// ---- orders ----

// HistoricOrders is how many orders user u placed before the run (uniform 0..OrderSlots,
// mean OrdersPerUser).
func (m *Model) HistoricOrders(u int64) int64 {
	return below(Hash(m.Seed, saltHistoric, u), m.OrderSlots+1)
}

// OrderUser is the user of a historic order id.
func (m *Model) OrderUser(o int64) int64 { return o / m.OrderSlots }

// OrderCreated is when a historic order was placed: within the year before the run.
func (m *Model) OrderCreated(o int64) int64 {
	return m.Start - int64(time.Hour) - below(Hash(m.Seed, saltCreated+100, o), int64(365*24*time.Hour))
}

// FirstNewOrder is the first order id the run assigns.
func (m *Model) FirstNewOrder() int64 { return m.Users * m.OrderSlots }

// OrderStatuses in lifecycle order (seed 001's validator enum).
var OrderStatuses = []string{"created", "paid", "processing", "shipped", "delivered", "cancelled"}

// CartStatuses (seed 001's validator enum).
var CartStatuses = []string{"active", "ordered", "abandoned", "merged"}

// PaymentMethods and their shares.
var (
	PaymentMethods = []string{"card", "sbp", "cash_on_delivery", "installments"}
	paymentAlias   = NewAlias([]float64{55, 25, 12, 8})
)

// OrderPayment is an order's payment method.
func (m *Model) OrderPayment(o int64) string {
	return PaymentMethods[paymentAlias.Pick(Hash(m.Seed, saltPayment, o))]
}

// ZoneCity is the city name of a geo zone for addresses.
func (m *Model) ZoneCity(zone uint8) string {
	switch m.Zones[zone] {
	case "moscow":
		return "Москва"
	case "spb":
		return "Санкт-Петербург"
	case "ekaterinburg":
		return "Екатеринбург"
	case "novosibirsk":
		return "Новосибирск"
	case "kaliningrad":
		return "Калининград"
	}
	return m.Zones[zone]
}

var streets = []string{"Тверская ул.", "Ленинский пр.", "Невский пр.", "ул. Ленина", "ул. Мира", "Садовая ул.", "пр. Победы", "ул. Гагарина"}

// AppendAddress appends a user's delivery address as one line.
func (m *Model) AppendAddress(dst []byte, u int64, zone uint8) []byte {
	h := Hash(m.Seed, saltAddress, u)
	dst = append(dst, m.ZoneCity(zone)...)
	dst = append(dst, ", "...)
	dst = append(dst, streets[below(h, int64(len(streets)))]...)
	dst = append(dst, ", "...)
	dst = appendInt(dst, 1+int64(h>>20)%150)
	dst = append(dst, ", кв. "...)
	return appendInt(dst, 1+int64(h>>40)%400)
}

// ---- time ----

// DayStart returns the unix ns of the local midnight (Model.Offset) starting t's day.
func (m *Model) DayStart(t int64) int64 {
	return FloorDiv(t+m.Offset, int64(24*time.Hour))*int64(24*time.Hour) - m.Offset
}

// MonthStart returns the unix ns of the local midnight starting t's month, shifted by
// delta months.
func (m *Model) MonthStart(t int64, delta int) int64 {
	y, mo, _ := CivilFromDays(FloorDiv(t+m.Offset, int64(24*time.Hour)))
	mi := int64(mo-1) + int64(delta)
	y += FloorDiv(mi, 12)
	mi -= FloorDiv(mi, 12) * 12
	return DaysFromCivil(y, int(mi)+1, 1)*int64(24*time.Hour) - m.Offset
}
