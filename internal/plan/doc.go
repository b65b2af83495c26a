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
// Every table starts with the data that exists before the run (population.go): the
// scenario's population written by each design's loader. Partition sizes start from it,
// and a MongoDB collection with a ranged or compound shard key has the chunks the
// balancer leaves over it (placement/mongo.SplitByData): split at the design's chunk
// size, balanced by data size, a shard-key value larger than a chunk a jumbo chunk on its
// shard, and a monotonic key's new inserts in the last chunk.
package plan
