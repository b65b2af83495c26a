// Package hotspot is the hot-partition analysis shared by the plan command, the
// simulator and the real backends: bounded-memory heavy hitters per table, distinct
// partition counts, load imbalance over nodes or shards, and partition size
// projections. Stdlib only; nothing here knows Cassandra or MongoDB beyond their size
// guidance.
//
//   - [TopK]: Space-Saving (stream summary) over operations per partition, O(1) per
//     operation, k counters: each entry's count overestimates by at most its Err, and
//     any partition with more than N/k of N operations is reported. Rows and bytes
//     written are tracked per entry since it entered the summary. [TopK.Share] bounds
//     the share of traffic taken by the top x% of partitions.
//   - [Distinct]: exact distinct count up to [ExactLimit], HyperLogLog (≈0.8%) above.
//   - [Measure]: max/mean, coefficient of variation, Gini (normalised so one node taking
//     everything is 1), per-entry deviation from the mean and the seed's rule (|deviation|
//     > 30%).
//   - [Project]: a partition's size at the end of its life: what the observation saw plus
//     the rest of its life (time bucket or period, capped by the TTL) at the ordinary
//     rate (the observed rate × [Growth].Factor: the scenario's steady rate or declared
//     daily profile, never the peak extrapolated); [GrowthOf] places a timed [TopK] entry
//     in its bucket's life (began or finished during the observation). Judged against
//     [CassandraLimits] (100 MiB, 100K rows) or [ChunkLimits] (the design's
//     chunk_size_mb, else MongoDB's 128 MiB default), each with its source.
package hotspot
