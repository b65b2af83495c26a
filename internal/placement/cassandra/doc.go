// Package cassandra computes, without a database, where Cassandra puts a partition: the
// Murmur3Partitioner token of its key, the vnode range that owns the token, and the
// replicas that hold it under SimpleStrategy or NetworkTopologyStrategy; and how many
// replica responses each consistency level needs.
//
// # Exact (bit-for-bit with Cassandra)
//
//   - [TokenOf]: org.apache.cassandra.utils.MurmurHash.hash3_x64_128 with seed 0, token =
//     h1, including Cassandra's deviation from reference MurmurHash3 (tail bytes are read
//     as signed Java bytes and sign-extended before shifting), the normalisation of
//     Long.MIN_VALUE to Long.MAX_VALUE, and the empty key mapping to the minimum token
//     (Murmur3Partitioner.getToken).
//   - [KeyBuilder] and the Append* functions: the bytes the native protocol sends for
//     each CQL type, and CompositeType framing (2-byte big-endian length, bytes, 0x00 end
//     of component) for multi-column partition keys.
//   - [Ring.VNode], [Placement.Replicas]: a token is owned by the first ring token >= it
//     (ranges are (previous, token], wrapping); SimpleStrategy walks the ring clockwise
//     collecting distinct nodes; NetworkTopologyStrategy follows
//     NetworkTopologyStrategy.calculateNaturalReplicas (one pass over the ring, per DC:
//     a node from a not-yet-seen rack is always taken, and while the DC has fewer racks
//     than its RF, the first rf-racks nodes met on already-seen racks are taken too).
//   - [Consistency.Need]: ConsistencyLevel.blockFor and validateForRead/validateForWrite
//     (ignoring pending endpoints during range movements).
//
// # Modelled (documented approximations)
//
//   - [BuildRing] with AllocRandom gives each node num_tokens uniformly random tokens, as
//     Cassandra's old random allocator does (the values differ from any real cluster's,
//     only the statistics match).
//   - [BuildRing] with AllocBalanced (the default) approximates the goal of Cassandra
//     4.0+'s allocate_tokens_for_local_replication_factor: each DC's nodes are added one by
//     one, the first node gets num_tokens evenly spaced tokens from a seeded random
//     start, and each later node takes its tokens from the ranges of the currently most
//     loaded nodes so that primary ownership ends near 1/N per node. It does not
//     reproduce the allocator's exact token choices; build the ring from the live
//     cluster ([RingFromPeers]) when exact tokens matter.
package cassandra
