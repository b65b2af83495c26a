// Package workloads turns a scenario's traffic into a deterministic stream of logical
// operations ("carts.add_item", "orders.place", ...). Operations carry integer identities
// (user 17, product 4093); the design layer turns them into the keys and rows of each
// physical design, so every design sees the very same logical stream.
package workloads

import "time"

// Op is one logical operation. It is a plain value (no pointers) so the stream can be
// produced without allocation and handed to workers by copy.
type Op struct {
	// Seq is the operation's position in the stream (0-based).
	Seq uint64
	// Type indexes the run's operation table (Stream.Ops()).
	Type uint16
	// Intended is when the operation is meant to start, measured from the run's start.
	Intended time.Duration
	// Time is the store's clock for this operation (unix nanoseconds): the scenario's
	// clock start plus Intended times the clock scale. Keys with time buckets use it.
	Time int64

	// Logical identities. -1 means "none" (e.g. User for a guest).
	User    int64
	Session int64
	Product int64
	Order   int64
	// Category and Zone index the scenario's population.categories / geo_zones.
	Category uint8
	Zone     uint8
	Bot      bool
	// Quantity, item count, price (minor units) and payload size of the logical record.
	Qty   int32
	Items int32
	Price int64
	Size  int32
	// Aux carries an operation-specific second identity (e.g. the guest session merged
	// into a user's cart, or the new status of an order).
	Aux int64
}
