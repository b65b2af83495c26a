// Package plan places every access of a design variant on a cluster layout and
// accumulates the hot-partition analysis (results.HotspotsVariant, hotspots.json), with
// no database and no timing. The sim backend, the engine's observer of real runs and the
// plan and key commands share it:
//
//   - [Cluster]: the synthetic layout (data centers, racks, num_tokens; MongoDB shards).
//   - [Placer.Place]: where one access goes — token, vnode and replicas on the ring; the
//     chunk, hashed value and shards mongos targets. This is the reusable "place one
//     access" function; callers own one Placer per goroutine.
//   - [Observer]: top partitions per table, distinct partitions, targeting, per-node and
//     per-shard load and imbalance, partition size projections.
//
// Ranged MongoDB shard keys need the data already in the collection to have chunks at all:
// NewPlacer takes the first operations of the stream as that data and splits and balances
// it as the server does (placement/mongo.SplitByData), so a monotonic key's new inserts
// fall in the last chunk, as they do on a real cluster.
package plan
