// Package mongo computes, without a database, where a sharded MongoDB collection puts a
// document and where mongos sends a query: hashed shard-key values, chunk tables, and
// query targeting. Values are this package's [Value] (no BSON library needed).
//
// # Exact (as mongod / mongos compute it)
//
//   - [Hash]: BSONElementHasher::hash64 with seed 0 (src/mongo/db/hasher.cpp), the value
//     of a hashed index, convertShardKeyToHashed and $toHashedIndexKey: MD5 over seed,
//     canonical type and value bytes; numbers of every type hash alike through
//     safeNumberLongForHash (truncation, NaN → 0, clamping, the 2^63 quirk); strings,
//     ObjectId, dates, timestamps, booleans, null/missing, binData, MinKey/MaxKey and
//     embedded documents/arrays as mongod does. Checked against MongoDB's own test
//     vectors and documentation.
//   - [Compare]: BSON ordering with the simple collation (canonical type, then value;
//     numbers across types; NaN lowest).
//   - [PresplitHashed], [PresplitHashedZones]: InitialSplitPolicy's split points
//     (calculateHashedSplitPoints) and chunk-to-shard assignment for an empty collection,
//     for 5.0–7.1 ([SplitPre72]: numInitialChunks, default 2 per shard, contiguous runs
//     on the shards in name order; zone quotas) and 7.2+ ([SplitV72]: one chunk per
//     shard, one chunk per shard of each zone). One difference is unavoidable: 7.2+
//     shuffles its shard list with a default-seeded std::shuffle before assigning, so
//     which shard gets which equal chunk follows the order given here, not the server's
//     permutation (boundaries and per-shard counts are exact).
//   - [SingleChunk]: a ranged or ranged-prefix key on an empty collection without zones.
//   - [FromConfigChunks]: a live cluster's table from config.chunks rows.
//   - [ChunkTable.Find]: the chunk whose [min, max) holds a shard key.
//   - [ChunkTable.Route]: ChunkManager::getShardIdsForQuery — per-field bounds (points
//     for equality/$in, hashed when the field is hashed; a range on a hashed field covers
//     everything), flattenBounds, and every chunk overlapping the closed ranges.
//
// # Modelled
//
//   - [SplitByData]: a range-sharded collection whose chunks follow its data. Two
//     documented models: 6.0.3+ (no auto-splitter; the data starts as one chunk on the
//     primary; BalancerPolicy::_singleZoneBalanceBasedOnDataSize moves a chunk-size range
//     from the start of the most loaded shard's first chunk that is not jumbo to the least
//     loaded shard, while the first is above the ideal share, the second below it and they
//     differ by 3 chunk sizes; adjacent chunks on a shard merge, 7.0's auto-merger) and
//     pre-6.0.3 (split every half chunk size; the balancer evens chunk counts by the 2/4/8
//     migration thresholds). In both, one shard-key value holding more than a chunk can
//     hold (1.3 chunk sizes: a migration of it fails ChunkTooBig) is a jumbo chunk that
//     never splits or moves. Real boundaries depend on the order of past splits and
//     migrations; the model gives the shape: ranges spread over shards, jumbo values
//     stuck on the primary, and a monotonic key's new inserts all in the last chunk.
//   - [Range] bounds are closed: mongos also targets with closed bounds, but the query
//     planner drops empty intersections of open bounds that this package keeps as a
//     single point.
package mongo
