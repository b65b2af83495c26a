package results

import (
	"encoding/json"
	"strconv"

	"github.com/shardbench/shardbench/internal/inputfile"
)

// ServerFile holds what the servers themselves (or the simulator's model of them) said
// during a run, beside the client-side figures of summary.json and hotspots.json: per-node
// or per-shard tables (Cassandra system_views, nodetool figures, MongoDB $collStats and
// $shardedDataDistribution, chunk counts) and time series (utilisation, queue length,
// server-side latency). The format is deliberately generic so every backend can fill it
// without a report change: reports render every table and chart every series.
const ServerFile = "server.json"

// ServerSchema identifies server.json.
const ServerSchema = "shardbench/server"

// ServerReport is server.json.
type ServerReport struct {
	Schema   string          `json:"schema"`
	Version  int             `json:"version"`
	Variants []ServerVariant `json:"variants"`
}

// ServerVariant is one variant's server-side view.
type ServerVariant struct {
	Variant string `json:"variant"`
	// Source says where the figures come from, e.g. "system_views (Cassandra 5.0.4, 3
	// nodes)", "mongos $collStats", "simulator model".
	Source string `json:"source"`
	// Tables are snapshots (before/after the run, or deltas) in rows and columns.
	Tables []ServerTable `json:"tables,omitempty"`
	// Series are values over run time, one per node/shard and metric.
	Series []ServerSeries `json:"series,omitempty"`
	// Nodes are the per-node figures in numbers, for programs rather than for display
	// (capacity's what-breaks-first reads them); backends that know them fill them.
	Nodes []ServerNode `json:"nodes,omitempty"`
	// Contention is contention on one partition or document in numbers (the simulator's
	// LWT Paxos rounds and MongoDB write conflicts), for programs as Nodes are.
	Contention []ServerContention `json:"contention,omitempty"`
	// Disagreements say, in words, where the server's figures and the client-side
	// placement figures differ (e.g. "node 127.0.0.2: server counted 12% more writes").
	Disagreements []string `json:"disagreements,omitempty"`
	Notes         []string `json:"notes,omitempty"`
}

// ServerTable is one table of server-side figures. Cells are display text (already
// formatted with units) so any server statistic fits; Numeric marks the columns that
// hold numbers, for right-alignment.
type ServerTable struct {
	Title string `json:"title"` // e.g. "per node: local write latency (system_views)"
	// Subject ties the table to client-side figures: "nodes" (per node/shard rows),
	// "table:<keyspace.table>" or "" (anything else). Reports put "nodes" tables beside the
	// client-side node load table.
	Subject string     `json:"subject,omitempty"`
	Columns []string   `json:"columns"`
	Numeric []bool     `json:"numeric,omitempty"` // per column
	Rows    [][]string `json:"rows"`
	Note    string     `json:"note,omitempty"`
}

// Kinds of contention.
const (
	ContentionLWT           = "lwt"            // Cassandra LWTs: Paxos rounds lost to another proposer
	ContentionWriteConflict = "write_conflict" // MongoDB updates of one document (WiredTiger)
)

// ServerContention is the contention of one kind of request on one partition or
// document: how many ran, how many met another in progress (lost a Paxos round, a write
// conflict), the retries that cost, and how many timed out (-1: not counted).
type ServerContention struct {
	Kind      string `json:"kind"`
	Requests  int64  `json:"requests"`
	Contended int64  `json:"contended"`
	Retries   int64  `json:"retries"`
	TimedOut  int64  `json:"timed_out"`
}

// ServerNode is one node's (or MongoDB shard member's) work during the run, per request
// stage: a Cassandra node's read and write stages, a MongoDB member as one stage.
type ServerNode struct {
	Node  string `json:"node"`
	Shard string `json:"shard,omitempty"` // MongoDB: the replica set the member belongs to
	// Requests served and requests dropped after waiting past their timeout.
	Requests int64         `json:"requests"`
	Dropped  int64         `json:"dropped"`
	DownS    float64       `json:"down_s,omitempty"`
	Stages   []ServerStage `json:"stages"`
}

// ServerStage is one request stage of a node: a pool of workers and its queue.
type ServerStage struct {
	Stage    string `json:"stage"` // "read", "write" (Cassandra), "member" (MongoDB)
	Workers  int    `json:"workers"`
	Requests int64  `json:"requests"`
	Dropped  int64  `json:"dropped"`
	// Utilisation is busy worker time over capacity per sampling interval (TickS): the
	// mean and the highest interval's.
	MeanUtilisation float64 `json:"mean_utilisation"`
	PeakUtilisation float64 `json:"peak_utilisation"`
	// PeakQueue is the highest interval's mean number of requests waiting.
	PeakQueue float64 `json:"peak_queue"`
	// SaturatedS is how long the stage ran at SaturatedAt utilisation or more, and
	// FirstSaturatedS when that first happened (seconds since the start; absent: never).
	SaturatedS      float64  `json:"saturated_s"`
	FirstSaturatedS *float64 `json:"first_saturated_s,omitempty"`
	TickS           float64  `json:"tick_s"`
}

// SaturatedAt is the utilisation from which a stage counts as saturated: its queue then
// grows with any burst, and waits grow with it.
const SaturatedAt = 0.95

// ServerSeries is one metric of one node/shard over the run's time line.
type ServerSeries struct {
	Metric string `json:"metric"` // e.g. "utilisation", "queue length", "write p99"
	Unit   string `json:"unit"`   // "ratio" (0..1, shown as %), "ms", "ops/s", "count", "bytes"
	Node   string `json:"node"`   // node address or shard name ("" = whole cluster)
	// Points are [seconds since the variant's start, value].
	Points [][2]float64 `json:"points"`
}

// ReadServer loads server.json; it returns (nil, nil) when the directory has none.
func ReadServer(dir string) (*ServerReport, error) { return readDoc[ServerReport](dir, serverDoc) }

var serverDoc = docKind{file: ServerFile, schema: ServerSchema, input: inputfile.Server}

// WriteServer writes server.json atomically.
func (d *Dir) WriteServer(r *ServerReport) error {
	d.addMu.Lock()
	defer d.addMu.Unlock()
	d.server, d.serverParts = nil, nil // AddServer reads the file again
	return d.writeServer(r)
}

// writeServer writes r as WriteJSON would, byte for byte, from each variant's encoding
// (serverPart), made once per variant and kept in d.serverParts: a simulated run's
// server.json is tens of megabytes, rewritten as each variant finishes, and indenting
// all of it every time was most of the cost of writing it.
func (d *Dir) writeServer(r *ServerReport) error {
	r.Schema, r.Version = ServerSchema, 1
	if len(r.Variants) == 0 {
		return d.WriteJSON(ServerFile, r)
	}
	if d.serverParts == nil {
		d.serverParts = map[string][]byte{}
	}
	parts := make([][]byte, len(r.Variants))
	size := 0
	for i := range r.Variants {
		v := &r.Variants[i]
		p, ok := d.serverParts[v.Variant]
		if !ok {
			var err error
			if p, err = serverPart(v); err != nil {
				return err
			}
			d.serverParts[v.Variant] = p
		}
		parts[i] = p
		size += len(p) + 6
	}
	b, err := serverDocument(r, parts, size)
	if err != nil {
		return err
	}
	return d.WriteFile(ServerFile, b)
}

// serverPart is a variant as json.MarshalIndent(report, "", "  ") lays it out inside
// the report's variants (two levels deep), without its first line's indentation.
func serverPart(v *ServerVariant) ([]byte, error) { return json.MarshalIndent(v, "    ", "  ") }

// serverDocument is json.MarshalIndent(r, "", "  ") and a newline, assembled from its
// variants' parts (serverPart); size is about their total length. It lists
// ServerReport's fields in order: a field added there must be added here
// (TestServerDocumentIsMarshalIndent compares the two).
func serverDocument(r *ServerReport, parts [][]byte, size int) ([]byte, error) {
	schema, err := json.Marshal(r.Schema)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, size+len(schema)+64)
	b = append(b, "{\n  \"schema\": "...)
	b = append(b, schema...)
	b = append(b, ",\n  \"version\": "...)
	b = strconv.AppendInt(b, int64(r.Version), 10)
	b = append(b, ",\n  \"variants\": ["...)
	for i, p := range parts {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n    "...)
		b = append(b, p...)
	}
	return append(b, "\n  ]\n}\n"...), nil
}

// Variant returns the server-side view of one variant, or nil.
func (r *ServerReport) Variant(name string) *ServerVariant {
	if r == nil {
		return nil
	}
	for i := range r.Variants {
		if r.Variants[i].Variant == name {
			return &r.Variants[i]
		}
	}
	return nil
}

// AddServer adds (or replaces) one variant's server-side view in server.json; safe for
// variants finishing concurrently.
func (d *Dir) AddServer(v ServerVariant) error {
	d.addMu.Lock()
	defer d.addMu.Unlock()
	r := d.server
	if r == nil {
		var err error
		if r, err = ReadServer(d.Path); err != nil {
			return err
		}
		if r == nil {
			r = &ServerReport{}
		}
	}
	r.Variants = upsert(r.Variants, v, d.order, func(x *ServerVariant) string { return x.Variant })
	d.server = nil
	delete(d.serverParts, v.Variant) // encoded anew: it may replace one of the same name
	if err := d.writeServer(r); err != nil {
		d.serverParts = nil
		return err
	}
	d.server = r
	return nil
}
