// Package workloads turns a scenario's traffic into a deterministic stream of logical
// operations ("carts.add_item", "orders.place", ...). Operations carry integer identities
// (user 17, product 4093); the design layer turns them into the keys and rows of each
// physical design, so every design sees the very same logical stream.
//
// # Pieces
//
//   - [Op] is one logical operation: a flat value without pointers.
//   - Workloads (sessions, carts, views, orders, catalog; one package each under
//     workloads/) register a [Meta] by name: their operations ([OpSpec]), the logical
//     fields of their entity ([Field]) and their knobs (population.extra keys), and what
//     a design needs beyond values: an operation's other views ([View]), the item an
//     item operation names (Meta.Item, Meta.ItemKey, [ItemAttr]), a field holding
//     another per key ([PerKey]). Import workloads/all to register every one of them.
//   - [New] compiles a scenario into a [Model]: the population (users, sessions, products
//     laid out by category, geo zones, bots, the hot product set) and the operation table
//     (the scenario's mix, in file order; Op.Type indexes Model.Ops).
//   - [Model.NewStream] returns a [Stream]: schedule + mix + generators. Its Next method
//     implements engine.Source; every stream of a model yields the identical operations.
//   - [Model.Getter] compiles a logical field ("session_id", "owner_key", "created_at") into
//     an accessor that derives the typed value from an Op without allocating.
//
// # Determinism and bounded state
//
// All randomness comes from one generator seeded by the scenario seed, drawn in stream
// order, so the stream does not depend on timing or worker count. Entities of the initial
// population are not stored: their attributes (a session's user, a product's category and
// price, a user's home zone) are pure functions of (seed, id). What the run creates and later
// refers to (new sessions, placed orders, cart contents) lives in fixed-size rings and slot
// tables, so memory does not grow with run length.
package workloads

import "time"

// Op is one logical operation. It is a plain value (no pointers) so the stream can be
// produced without allocation and handed to workers by copy.
//
// Field meanings per operation are listed with each workload's OpSpec; the common rules:
// identities are -1 when absent (User for a guest); Ref is the store time of the record the
// operation refers to; List operations read [Ref, Until) when Until is not zero, newest
// first, at most Qty records.
type Op struct {
	// Seq is the operation's position in the stream (0-based).
	Seq uint64
	// Type indexes the run's operation table (Model.Ops).
	Type uint16
	// Intended is when the operation is meant to start, measured from the run's start.
	Intended time.Duration
	// Time is the store's clock for this operation (unix nanoseconds): the scenario's
	// clock start plus Intended times the clock scale. Keys with time buckets use it.
	Time int64
	// Ref is the store time (unix ns) of the record the operation refers to: when the
	// session, order or cart item was created (equal to Time for operations that create
	// it). For List operations with a period it is the period's start.
	Ref int64
	// Until is the exclusive end of a List operation's period (unix ns); 0 for no period.
	Until int64

	// Logical identities. -1 means "none" (e.g. User for a guest).
	User    int64
	Session int64
	Product int64
	Order   int64
	// Category and Zone index the scenario's population.categories / geo_zones; Sub is the
	// subcategory within the category (NoSub when the operation does not name one).
	Category uint8
	Zone     uint8
	Sub      uint8
	Bot      bool
	// Quantity (or the row limit of a List operation), item count, price (minor units,
	// kopecks) and payload size in bytes of the logical record.
	Qty   int32
	Items int32
	Price int64
	Size  int32
	// Aux carries an operation-specific value (the new status of an order, the upper price
	// bound of a listing, the cart generation); each OpSpec documents its use.
	Aux int64
}

// NoSub is Op.Sub when an operation names no subcategory; NoCategory likewise for Category.
const (
	NoSub      = 255
	NoCategory = 255
)
