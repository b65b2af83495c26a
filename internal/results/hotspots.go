package results

import (
	"github.com/shardbench/shardbench/internal/inputfile"
	"slices"
)

// HotspotsFile holds the hot-partition analysis of a run or a plan: where every key went
// (partition, token or hashed value, replicas or shard), the heaviest partitions, the load
// per node or shard, and partition size projections. The plan command, the simulator and
// the real backends all write it in this one format.
const HotspotsFile = "hotspots.json"

// Hotspots is hotspots.json.
type Hotspots struct {
	Schema   string            `json:"schema"` // "shardbench/hotspots"
	Version  int               `json:"version"`
	Variants []HotspotsVariant `json:"variants"`
}

// HotspotsSchema identifies hotspots.json.
const HotspotsSchema = "shardbench/hotspots"

// HotspotsVariant is one variant's analysis.
type HotspotsVariant struct {
	Variant  string `json:"variant"`
	Database string `json:"database"` // cassandra | mongodb
	// Source says how placement was known: "computed" (the placement code, client side),
	// "server" (read from a live cluster's ring or chunk table).
	Source string `json:"source"`
	// Topology in words, e.g. "3 nodes, 1 DC, num_tokens 16, RF 3" or "2 shards, 8 chunks".
	Topology string          `json:"topology,omitempty"`
	Tables   []TableHotspots `json:"tables"`
	Nodes    []NodeLoad      `json:"nodes"`
	// Balance is the headline imbalance: the most unbalanced of Balances (see
	// NodeBalances), which measure each database's nodes or shards apart, by every
	// request and by reads, writes and bytes written.
	Balance  Imbalance   `json:"balance"`
	Balances []Imbalance `json:"balances,omitempty"`
	Notes    []string    `json:"notes,omitempty"`
}

// TableHotspots is the analysis of one table or collection.
type TableHotspots struct {
	Table  string `json:"table"`  // keyspace.table or db.collection
	Entity string `json:"entity"` // logical entity (sessions, carts, ...)
	// Key describes the partition or shard key, e.g. "((customer_id, time_bucket))" or
	// "{user_id: hashed, created_at: 1}".
	Key    string `json:"key"`
	Ops    int64  `json:"ops"`
	Reads  int64  `json:"reads"`
	Writes int64  `json:"writes"`
	Rows   int64  `json:"rows_written"`
	Bytes  int64  `json:"bytes_written"`
	// Partitions is the number of distinct partitions touched (exact when PartitionsExact,
	// else an estimate with the stated relative error).
	Partitions      int64   `json:"partitions"`
	PartitionsExact bool    `json:"partitions_exact"`
	PartitionsError float64 `json:"partitions_error,omitempty"`
	// Top partitions by operations, heaviest first (Space-Saving; see ErrorBound).
	Top []PartitionLoad `json:"top"`
	// Cumulative is the share of operations taken by the top fraction of partitions.
	Cumulative []SharePoint `json:"cumulative,omitempty"`
	// Projections of the largest partitions' sizes to the design's horizon.
	Projections []SizeProjection `json:"projections,omitempty"`
	// Targeting: how reads reached partitions / shards.
	SinglePartitionReads int64 `json:"single_partition_reads,omitempty"`
	MultiPartitionReads  int64 `json:"multi_partition_reads,omitempty"`
	BroadcastReads       int64 `json:"broadcast_reads,omitempty"`
	// Loaded is the data the table held before the run (the scenario's population);
	// nil when it held none.
	Loaded *LoadedData `json:"loaded,omitempty"`
	// Shards: for a sharded MongoDB collection, its chunks per shard as the run started
	// (from the loaded data, or the live cluster's config.chunks).
	Shards []ShardChunks `json:"shards,omitempty"`
}

// Hottest is the heaviest entry of Top that is one partition (nil: none). Top lists keys
// by operations, and a MongoDB key whose requests reach several chunks (Chunks) is a
// load the balancer spreads over them, not a hot partition: the verdict, the gates and
// the reports' "hottest partition" all pass over it.
func (t *TableHotspots) Hottest() *PartitionLoad {
	for i := range t.Top {
		if t.Top[i].Chunks <= 1 {
			return &t.Top[i]
		}
	}
	return nil
}

// LoadedData is a table's data before the run: what the load step writes (at
// load.scale 1), and what plan and the simulator start from.
type LoadedData struct {
	Rows    int64 `json:"rows"`
	Bytes   int64 `json:"bytes"`
	Records int64 `json:"records"` // the entity's records offered to the table (one without its key, a guest in sessions_by_user, has no row)
	// Sample says how they were counted: "every record", or the head of each record set
	// enumerated whole and one record in N of the rest (the figures are then estimates).
	Sample string `json:"sample"`
	// Largest are the partitions (Cassandra) or shard-key values (MongoDB) holding 64 KiB
	// or more, largest first (at most 20).
	Largest []LoadedPartition `json:"largest,omitempty"`
}

// LoadedPartition is one large partition before the run.
type LoadedPartition struct {
	Key   string `json:"key"`
	Rows  int64  `json:"rows"`
	Bytes int64  `json:"bytes"`
	Exact bool   `json:"exact"` // every row of it counted (no sampled row)
}

// ShardChunks is one shard's part of a collection: its chunks (jumbo ones listed by
// range), the loaded bytes they hold, and the operations it served.
type ShardChunks struct {
	Shard       string   `json:"shard"`
	Chunks      int      `json:"chunks"`
	LoadedBytes int64    `json:"loaded_bytes"`
	Jumbo       []string `json:"jumbo,omitempty"`
	// Ops is the operations the shard served on the collection (a broadcast counts on
	// every shard it reaches).
	Ops int64 `json:"ops"`
}

// PartitionLoad is one heavy partition.
type PartitionLoad struct {
	Key string `json:"key"` // human-readable key, e.g. "time_bucket='2025-11-28'"
	// Cassandra: Token (decimal) and the owning vnode Range "(start, end]"; MongoDB: Hashed
	// (the hashed shard-key value, when hashed) and the chunk Range.
	Token    string   `json:"token,omitempty"`
	Hashed   string   `json:"hashed,omitempty"`
	Range    string   `json:"range,omitempty"`
	Replicas []string `json:"replicas,omitempty"` // Cassandra nodes holding it
	Shard    string   `json:"shard,omitempty"`    // MongoDB shard owning it
	// Chunks (MongoDB) is how many chunks a request with this key reaches when more than
	// one: a shard-key prefix whose range the balancer has split, such as {category:
	// electronics} under {category: 1, _id: hashed}. Its load spreads over those chunks
	// and the shards that own them, so it is not one partition (see Hottest).
	Chunks int   `json:"chunks,omitempty"`
	Ops    int64 `json:"ops"`
	Reads  int64 `json:"reads"`
	Writes int64 `json:"writes"`
	Rows   int64 `json:"rows_written"`
	Bytes  int64 `json:"bytes_written"`
	// ErrorBound is Space-Saving's maximum overcount of Ops (0 = exact).
	ErrorBound int64   `json:"error_bound"`
	Share      float64 `json:"share"` // of the table's operations
	// ProjectedBytes/Rows at the design's horizon (see the table's projections).
	ProjectedBytes int64 `json:"projected_bytes,omitempty"`
	ProjectedRows  int64 `json:"projected_rows,omitempty"`
	// LoadedRows/Bytes: what the partition held before the run (see TableHotspots.Loaded).
	LoadedRows  int64 `json:"loaded_rows,omitempty"`
	LoadedBytes int64 `json:"loaded_bytes,omitempty"`
}

// SharePoint says the top Fraction of partitions took Share of the operations.
type SharePoint struct {
	Fraction float64 `json:"fraction"`
	Share    float64 `json:"share"`
}

// SizeProjection projects one partition's size to a horizon.
type SizeProjection struct {
	Key string `json:"key"`
	// LoadedBytes/Rows: the partition's size before the run, which the projection starts
	// from (growth is added to it; a TTL's steady state already holds it).
	LoadedBytes    int64   `json:"loaded_bytes,omitempty"`
	LoadedRows     int64   `json:"loaded_rows,omitempty"`
	ObservedBytes  int64   `json:"observed_bytes"`
	ObservedRows   int64   `json:"observed_rows"`
	ObservedS      float64 `json:"observed_s"` // store-clock seconds the observation covers
	Horizon        string  `json:"horizon"`    // e.g. "TTL 30d", "end of day bucket", "1 year"
	ProjectedBytes int64   `json:"projected_bytes"`
	ProjectedRows  int64   `json:"projected_rows"`
	// LimitBytes/LimitRows are the guidance it is judged against (Cassandra ~100 MB and
	// ~100K rows per partition; MongoDB's chunk size); Exceeds says whether it does.
	LimitBytes int64  `json:"limit_bytes"`
	LimitRows  int64  `json:"limit_rows,omitempty"`
	Exceeds    bool   `json:"exceeds"`
	Note       string `json:"note,omitempty"`
	// LimitSource says where the limit comes from (the design's chunk_size_mb, or the
	// database's documented default).
	LimitSource string `json:"limit_source,omitempty"`
	// Unit is "chunk" when the projection is of a MongoDB chunk (a shard key range) rather
	// than of one partition or key value; Splittable says the chunk holds more than one
	// shard key value, so the balancer splits it when it outgrows the limit and growing
	// past it is not a problem of its own (only a single value's chunk is jumbo).
	Unit       string `json:"unit,omitempty"`
	Splittable bool   `json:"splittable,omitempty"`
	// Rate says what the rest of its life is projected at: the scenario's steady rate or
	// its declared daily profile (the observed peak only when it declares neither).
	Rate string `json:"rate,omitempty"`
}

// Over reports whether the projection goes past its limit in a way that matters: a
// splittable chunk never does (the balancer splits it).
func (p *SizeProjection) Over() bool {
	if p.Splittable {
		return false
	}
	return p.Exceeds || (p.LimitBytes > 0 && p.ProjectedBytes > p.LimitBytes) || (p.LimitRows > 0 && p.ProjectedRows > p.LimitRows)
}

// NodeLoad is one node's (or shard's) share of the work.
type NodeLoad struct {
	Node string `json:"node"` // address or shard name
	// Database is "cassandra" (a node) or "mongodb" (a shard): a mixed design's nodes and
	// shards are measured apart.
	Database string `json:"database,omitempty"`
	DC       string `json:"dc,omitempty"`
	Rack     string `json:"rack,omitempty"`
	Ops      int64  `json:"ops"` // replica operations (Cassandra) / shard operations (MongoDB)
	Reads    int64  `json:"reads"`
	Writes   int64  `json:"writes"`
	Bytes    int64  `json:"bytes_written"`
	// Share is the node's share of its database's operations.
	Share float64 `json:"share"`
	// Deviation from its database's mean, e.g. +0.42 = 42% above; Over30 applies the
	// seed's rule.
	Deviation float64 `json:"deviation"`
	Over30    bool    `json:"over_30pct"`
}

// Imbalance summarises how evenly load spreads over nodes or shards.
type Imbalance struct {
	MaxOverMean float64  `json:"max_over_mean"`
	CV          float64  `json:"cv"`                   // coefficient of variation
	Gini        float64  `json:"gini"`                 // 0 = perfectly even, 1 = one node takes all
	Over30      []string `json:"over_30pct,omitempty"` // nodes deviating > 30% from the mean
	// Database, DC and Measure say what was measured: one database's nodes or shards
	// ("cassandra", "mongodb"; empty in files written before they were told apart), of one
	// data center for a Cassandra ring that spans several, by one
	// measure (MeasureOps, MeasureReads, MeasureWrites, MeasureBytes). Busiest is the
	// node or shard with the most of it and BusiestShare its share.
	Database     string  `json:"database,omitempty"`
	DC           string  `json:"dc,omitempty"` // a Cassandra data center's nodes
	Measure      string  `json:"measure,omitempty"`
	Busiest      string  `json:"busiest,omitempty"`
	BusiestShare float64 `json:"busiest_share,omitempty"`
}

// ReadHotspots loads hotspots.json; it returns (nil, nil) when the directory has none.
func ReadHotspots(dir string) (*Hotspots, error) { return readDoc[Hotspots](dir, hotspotsDoc) }

var hotspotsDoc = docKind{file: HotspotsFile, schema: HotspotsSchema, input: inputfile.Report}

// WriteHotspots writes hotspots.json atomically.
func (d *Dir) WriteHotspots(h *Hotspots) error {
	h.Schema, h.Version = HotspotsSchema, 1
	return d.WriteJSON(HotspotsFile, h)
}

// Variant returns the analysis of one variant, or nil.
func (h *Hotspots) Variant(name string) *HotspotsVariant {
	if h == nil {
		return nil
	}
	for i := range h.Variants {
		if h.Variants[i].Variant == name {
			return &h.Variants[i]
		}
	}
	return nil
}

// AddHotspots adds (or replaces) one variant's analysis in hotspots.json. Variants
// simulated in parallel call it concurrently; the read-modify-write is serialised.
func (d *Dir) AddHotspots(v HotspotsVariant) error {
	d.addMu.Lock()
	defer d.addMu.Unlock()
	h, err := ReadHotspots(d.Path)
	if err != nil {
		return err
	}
	if h == nil {
		h = &Hotspots{}
	}
	h.Variants = upsert(h.Variants, v, d.order, func(x *HotspotsVariant) string { return x.Variant })
	return d.WriteHotspots(h)
}

// upsert replaces the element with v's name, or inserts v before the first element
// that comes after it in order (appends it when order does not name it).
func upsert[V any](list []V, v V, order map[string]int, name func(*V) string) []V {
	for i := range list {
		if name(&list[i]) == name(&v) {
			list[i] = v
			return list
		}
	}
	rank := func(x *V) int {
		if i, ok := order[name(x)]; ok {
			return i
		}
		return len(order)
	}
	at := len(list)
	if r := rank(&v); r < len(order) {
		for i := range list {
			if rank(&list[i]) > r {
				at = i
				break
			}
		}
	}
	return slices.Insert(list, at, v)
}
