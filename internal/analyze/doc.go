// Package analyze judges shard keys and partition keys before any data exists: it runs a
// scenario's operation stream through each design variant's exact placement
// (internal/plan's Placer: Murmur3 tokens on a vnode ring, MongoDB chunk tables and
// mongos's targeting) and reports, per table or collection, the numbers MongoDB's
// analyzeShardKey gives only after the data and the queries are in a cluster:
//
//   - key characteristics: documents (rows) written, distinct key values (exact up to
//     hotspot.ExactLimit, then HyperLogLog with its error stated), the most common values
//     with their frequency, monotonicity (the correlation coefficient between key order
//     and insertion order, computed as mongod does on a bounded reservoir sample), the
//     average document size;
//   - read and write distribution: single-shard / multi-shard / scatter-gather requests
//     (MongoDB), single-partition / multi-partition / scan requests (Cassandra), per
//     operation, and requests per chunk or token range;
//   - flags with reasons in plain words, a verdict per variant, and a ranking of the
//     variants of each entity.
//
// Memory is bounded whatever the number of distinct keys: per table a Space-Saving top-K,
// a distinct counter (a set up to the exact limit, then 16 KiB of HyperLogLog
// registers) and a fixed-size reservoir of keys for the monotonicity coefficient.
package analyze
