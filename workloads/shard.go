package workloads

// A distributed run splits the one operation stream among N processes (run --shard I/N).
// Every process generates the whole stream, because the generators' state (sessions
// created, carts filled, orders placed) evolves with every operation: a process that
// generated only its own would generate different ones. Each process sends only the
// operations its shard owns, so the N shards together send exactly the single-process
// stream, each operation once, at its own intended time.
//
// An operation's shard follows the entity whose life cycle it belongs to (Meta.Owner): a
// session the run creates is created, touched, read and expired by one process, an order
// the run places is read and moved through its statuses by the process that placed it,
// and a cart, whose contents evolve through the run, is filled, changed and checked out
// by one, so those steps go out in stream order from a single dispatcher. Operations on
// entities that existed before the run (the initial sessions, the historic orders) and
// outside any life cycle (page views, the catalog, reads of a user's lists) are spread by
// their position in the stream: no creation of theirs is in the stream to come first,
// and spreading them keeps the shards even where pinning the hottest initial sessions
// would not (Zipf activity puts a few percent of all traffic on the hottest one).
//
// The one operation that spans two owners is carts.merge (a guest cart folded into the
// user's cart at login): it goes with the user's cart, and the guest cart's earlier
// operations, sent by the guest session's shard, precede it by their intended times on
// the shards' common clock (run --start-at), not by one dispatcher's order.

// saltShard derives the shard of an owner; saltShardSeq spreads operations without one.
// (Literal values, apart from the model's iota salts.)
const (
	saltShard    uint64 = 0x5a4d_0b1e
	saltShardSeq uint64 = 0x5a4d_05e9
)

// OwnerFunc names the entity whose life cycle workload operation i (an index into
// Meta.Ops) belongs to: a kind (KindSession, KindUser, KindOrder, ...) and an id. Kind 0
// means the operation belongs to none.
type OwnerFunc func(m *Model, i int, op *Op) (kind uint64, id int64)

// Shard returns which of n shards sends op: the same for every operation of one owner,
// spread by position for operations without one. n < 2 is the whole stream (shard 0).
func (m *Model) Shard(op *Op, n int) int {
	if n < 2 {
		return 0
	}
	var h uint64
	info := &m.Ops[op.Type]
	kind, id := uint64(0), int64(0)
	if f := info.Workload.Owner; f != nil {
		kind, id = f(m, info.Index, op)
	}
	if kind != 0 {
		h = Hash(m.Seed, saltShard^kind<<32, id)
	} else {
		h = Hash(m.Seed, saltShardSeq, int64(op.Seq))
	}
	return int(below(h, int64(n)))
}
