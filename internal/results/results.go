// Package results reads and writes the results directory: the only thing reports, gates,
// merge and compare read, so any old run re-renders and re-gates.
//
//	summary.json                   versioned summary: scenario, backend, phases, variants,
//	                               per-operation counts, rates and latency percentiles, with
//	                               the exact cumulative histograms embedded
//	scenario.yaml                  the scenario as run, every default explicit
//	histograms/<variant>/<op>.hlog HdrHistogram interval logs (format 1.3), one interval per
//	                               second: untagged = response time, Tag=service, Tag=lag
//	timeseries.jsonl               one line per variant per second: target vs achieved rate,
//	                               percentiles, errors by class, late, dropped, in flight
package results

import (
	"fmt"
	"time"

	"github.com/shardbench/shardbench/internal/units"
)

// Schema identifies the summary format; Version changes when a reader would misread it.
//
// Version 2 counts operations a variant does not serve apart (OpStats.Unserved and
// UnservedReason, Variant.Coverage, Point.Unserved): they are in no histogram, count, rate
// or percentile of the served operations, and "all" (Totals) merges served operations
// only. Version 1 recorded them as completed not_supported errors of zero latency; Read
// converts such a directory on the fly (convert.go), and so does ReadTimeseries.
const (
	Schema  = "shardbench/summary"
	Version = 2
)

// File names inside a results directory.
const (
	SummaryFile    = "summary.json"
	ScenarioFile   = "scenario.yaml"
	TimeseriesFile = "timeseries.jsonl"
	HistogramsDir  = "histograms"
)

// Summary is summary.json.
type Summary struct {
	Schema   string       `json:"schema"`
	Version  int          `json:"version"`
	Tool     Tool         `json:"tool"`
	Scenario ScenarioInfo `json:"scenario"`
	Backend  BackendInfo  `json:"backend"`
	// Dispatch is how operations were released in real time (nil for simulated runs).
	Dispatch *Dispatch `json:"dispatch,omitempty"`
	// StartedAt and EndedAt are wall-clock times of the whole run.
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at"`
	// Complete is false while the run is in progress (the file is rewritten periodically)
	// and when it was interrupted.
	Complete    bool             `json:"complete"`
	Interrupted string           `json:"interrupted,omitempty"` // why the run stopped early, if it did
	Phases      []Phase          `json:"phases"`
	Variants    []SummaryVariant `json:"variants"`
	// MergedFrom lists the result directories a merged summary was built from.
	MergedFrom []string `json:"merged_from,omitempty"`
	// Shard is set when the directory holds one shard of a distributed run (run --shard):
	// its operations are those the shard owns, and only `merge` of every shard makes the
	// whole run.
	Shard *ShardInfo `json:"shard,omitempty"`
	// Merge says what a merged directory pools (set by merge).
	Merge *MergeInfo `json:"merge,omitempty"`
	// Measured, when set, is the window of the schedule the variants' figures cover: only
	// operations intended in it count (a capacity search's whole-schedule probe, judged
	// over the peak its window probes run); timeseries.jsonl and the histogram logs hold
	// every operation.
	Measured *MeasureWindow `json:"measured,omitempty"`
}

// MeasureWindow is a stretch of the schedule, in seconds from its start.
type MeasureWindow struct {
	FromS float64 `json:"from_s"`
	ToS   float64 `json:"to_s"`
}

// From is the window's start as a duration.
func (m *MeasureWindow) From() time.Duration { return time.Duration(m.FromS * float64(time.Second)) }

// To is the window's end as a duration.
func (m *MeasureWindow) To() time.Duration { return time.Duration(m.ToS * float64(time.Second)) }

// Within says whether the window lies in a schedule of length d: 0 ≤ from < to ≤ d.
func (m *MeasureWindow) Within(d time.Duration) error {
	if m.FromS < 0 || m.ToS <= m.FromS || m.ToS > d.Seconds()+1e-9 {
		return fmt.Errorf("measure window %s–%s is not within the schedule's %s (need 0 ≤ from < to ≤ %s)", units.Seconds(m.FromS), units.Seconds(m.ToS), units.Seconds(d.Seconds()), units.Seconds(d.Seconds()))
	}
	return nil
}

// DueS is the time the summary's operations were due over: the window's, or the
// schedule's.
func (s *Summary) DueS() float64 {
	if s.Measured != nil {
		return s.Measured.ToS - s.Measured.FromS
	}
	return s.Scenario.DurationS
}

// ShardInfo places a results directory in a distributed run.
type ShardInfo struct {
	Index int `json:"index"`
	Count int `json:"count"`
	// StartAt is the wall-clock origin every shard aligned its schedule to (run
	// --start-at), RFC 3339; empty when the shard started on its own clock.
	StartAt string `json:"start_at,omitempty"`
}

// MergeInfo says what a merged directory holds.
type MergeInfo struct {
	// Kind is MergeShards (the shards of one distributed run: together the whole run) or
	// MergeRepeats (repeated runs of one scenario, pooled for more samples).
	Kind string `json:"kind"`
	// Runs is how many runs were pooled (repeats) or how many shards the run had.
	Runs int `json:"runs"`
	// Missing lists what a partial merge (merge --partial) lacks, e.g. "shard 2 of 4";
	// empty for a complete merge.
	Missing []string `json:"missing,omitempty"`
}

// Merge kinds.
const (
	MergeShards  = "shards"
	MergeRepeats = "repeats"
)

// Tool is the harness that wrote the results.
type Tool struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	GoVersion string `json:"go_version"`
	Host      string `json:"host,omitempty"`
}

// ScenarioInfo identifies the scenario.
type ScenarioInfo struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Source      string `json:"source"` // path it was read from
	Seed        int64  `json:"seed"`
	// Digest identifies the scenario as run (every override applied, the seed left out)
	// and the designs of its variants, so that merge can tell runs of one scenario from
	// runs of different ones.
	Digest      string  `json:"digest,omitempty"`
	DurationS   float64 `json:"duration_s"`
	ExpectedOps float64 `json:"expected_ops"` // per variant
	Arrival     string  `json:"arrival"`
	MaxInFlight int     `json:"max_in_flight"`
}

// BackendPlan is the backend of a placement plan's summary: keys placed, no operation
// executed, so nothing was timed.
const BackendPlan = "plan"

// BackendInfo describes what the operations ran against. Target never holds credentials.
type BackendInfo struct {
	Name      string            `json:"name"`
	Simulated bool              `json:"simulated"`
	Target    string            `json:"target,omitempty"`
	Server    string            `json:"server,omitempty"` // server version as reported
	Details   map[string]string `json:"details,omitempty"`
}

// Dispatch is how the real-time engine waited for each operation's intended start, and why.
type Dispatch struct {
	// SpinBelowMS: waits shorter than this were spun; 0 when the dispatcher only slept on
	// timers (starts up to about a millisecond late, counted as schedule lag).
	SpinBelowMS float64 `json:"spin_below_ms"`
	Reason      string  `json:"reason"`
	CPUs        int     `json:"cpus"`
}

// ClientCost is the harness process's own CPU (user + system: dispatch, driver, recording)
// while a real-time variant ran (from before its first dispatch to the end of its drain; the
// summary computed after it is not included), in all and per completed operation: what decides how many
// load machines a rate needs, and whether the client rather than the server was the limit.
type ClientCost struct {
	CPUS    float64 `json:"cpu_s"`
	PerOpUS float64 `json:"per_op_us"`
}

// Phase is a scenario phase on the run's time line.
type Phase struct {
	Name        string  `json:"name"`
	Type        string  `json:"type"`
	StartS      float64 `json:"start_s"`
	EndS        float64 `json:"end_s"`
	ExpectedOps float64 `json:"expected_ops"`
}

// Event is something that happened during a run (a node stopped, a shard added).
type Event struct {
	AtS    float64 `json:"at_s"`
	Action string  `json:"action"`
	Target string  `json:"target,omitempty"`
	Note   string  `json:"note,omitempty"`
	Error  string  `json:"error,omitempty"`
}

// SummaryVariant is one design variant's results.
type SummaryVariant struct {
	Name     string            `json:"name"`
	Design   string            `json:"design,omitempty"`
	Database string            `json:"database,omitempty"` // cassandra | mongodb
	Params   map[string]string `json:"params,omitempty"`
	// StartedAt is when this variant's schedule started (variants of a real run go one
	// after another, each with the whole schedule).
	StartedAt time.Time `json:"started_at"`
	// DurationS is the measured span: the schedule, plus the drain of the last operations.
	DurationS   float64 `json:"duration_s"`
	Interrupted bool    `json:"interrupted,omitempty"`
	// Client is the harness's CPU during this variant (real-time variants).
	Client *ClientCost `json:"client,omitempty"`
	// Totals is every served operation merged: an operation the variant does not serve
	// adds only to Totals.Unserved.
	Totals OpStats   `json:"totals"`
	Ops    []OpStats `json:"ops"`
	// Coverage is how much of the offered stream the variant serves (from Ops; Read
	// recomputes it).
	Coverage Coverage `json:"coverage"`
	// ErrorExamples holds the first messages seen per error class (credentials redacted).
	ErrorExamples map[string][]string `json:"error_examples,omitempty"`
	// Nodes is per-node (or per-shard) operation counts as the client saw them.
	Nodes []NodeCount `json:"nodes,omitempty"`
	// Events that happened during this variant's run (node down, shard added, commands).
	Events []Event `json:"events,omitempty"`
	// Notes are things the user must know to read the numbers (features a server could not
	// apply, a simulated model's assumptions).
	Notes []string `json:"notes,omitempty"`
}

// NodeCount is how many operations one node or shard served, as the client saw it.
type NodeCount struct {
	Node string `json:"node"`
	Ops  int64  `json:"ops"`
}

// Coverage is how much of the offered operation stream a variant serves: "serves
// ServedOps of Ops operations, ServedShare of the offered traffic".
type Coverage struct {
	Ops         int      `json:"ops"`          // operation types the stream offered
	ServedOps   int      `json:"served_ops"`   // of which the variant serves
	Offered     int64    `json:"offered"`      // operations whose intended time came
	Unserved    int64    `json:"unserved"`     // of which the variant does not serve
	ServedShare float64  `json:"served_share"` // (Offered − Unserved) / Offered; 0 when nothing was offered
	UnservedOps []string `json:"unserved_ops,omitempty"`
}

// Full reports whether the variant serves every operation it was offered.
func (c Coverage) Full() bool { return c.ServedOps == c.Ops }

// OpStats is one operation type's results (or all of a variant's served ones, in Totals).
type OpStats struct {
	Op   string `json:"op"`
	Kind string `json:"kind,omitempty"` // read | write
	// Unserved operations were offered but the variant does not serve them (its design
	// has no mapping for the operation, or the backend does not drive the database its
	// steps run on): never dispatched, counted here only. UnservedReason says why (the
	// design's not_served reason). An operation the variant does not serve has every other
	// count zero and no latency.
	Unserved       int64  `json:"unserved,omitempty"`
	UnservedReason string `json:"unserved_reason,omitempty"`
	// Scheduled = Completed + Dropped + Abandoned: every served operation whose intended
	// time came.
	Scheduled int64            `json:"scheduled"`
	Completed int64            `json:"completed"`
	OK        int64            `json:"ok"`
	Errors    map[string]int64 `json:"errors,omitempty"`
	ErrorRate float64          `json:"error_rate"`
	// Late operations started more than late_after after their intended time.
	Late int64 `json:"late"`
	// Dropped operations never started (pool full with on_full: drop, still waiting for a
	// worker when the schedule ended, or interrupted).
	Dropped int64 `json:"dropped"`
	// Abandoned operations started but did not finish before the drain timeout.
	Abandoned    int64   `json:"abandoned"`
	TargetRate   float64 `json:"target_rate"`   // scheduled per second
	AchievedRate float64 `json:"achieved_rate"` // completed per second
	Response     Latency `json:"response"`
	Service      Latency `json:"service"`
	Lag          Latency `json:"lag"`
	HistogramLog string  `json:"histogram_log,omitempty"` // relative path of the .hlog
}

// Latency summarises a histogram in milliseconds and carries the histogram itself
// (base64 compressed HdrHistogram V2) so that merges and gates stay exact.
type Latency struct {
	Count     int64   `json:"count"`
	Min       float64 `json:"min_ms"`
	Mean      float64 `json:"mean_ms"`
	P50       float64 `json:"p50_ms"`
	P90       float64 `json:"p90_ms"`
	P99       float64 `json:"p99_ms"`
	P999      float64 `json:"p99_9_ms"`
	P9999     float64 `json:"p99_99_ms"`
	Max       float64 `json:"max_ms"`
	StdDev    float64 `json:"stddev_ms"`
	Histogram string  `json:"histogram,omitempty"`
}

// Point is one line of timeseries.jsonl: one variant, one interval.
type Point struct {
	Variant      string           `json:"variant"`
	StartS       float64          `json:"start_s"`
	EndS         float64          `json:"end_s"`
	Phase        string           `json:"phase"`
	TargetRate   float64          `json:"target_rate"`
	AchievedRate float64          `json:"achieved_rate"`
	Completed    int64            `json:"completed"`
	OK           int64            `json:"ok"`
	Errors       map[string]int64 `json:"errors,omitempty"`
	Late         int64            `json:"late"`
	Dropped      int64            `json:"dropped"`
	Abandoned    int64            `json:"abandoned,omitempty"`
	// Unserved operations came due in the interval but the variant does not serve them;
	// TargetRate leaves them out, as every other figure of the point does.
	Unserved   int64   `json:"unserved,omitempty"`
	InFlight   int64   `json:"in_flight"`
	P50        float64 `json:"p50_ms"`
	P90        float64 `json:"p90_ms"`
	P99        float64 `json:"p99_ms"`
	P999       float64 `json:"p99_9_ms"`
	Max        float64 `json:"max_ms"`
	ServiceP99 float64 `json:"service_p99_ms"`
	LagP99     float64 `json:"lag_p99_ms"`
}

// Variant returns the variant with the given name, or nil.
func (s *Summary) Variant(name string) *SummaryVariant {
	for i := range s.Variants {
		if s.Variants[i].Name == name {
			return &s.Variants[i]
		}
	}
	return nil
}

// Served reports whether the variant served the operation (measured it). An operation
// is served or not as a whole; a merge of runs that disagree keeps what was measured.
func (s *OpStats) Served() bool { return s.Scheduled > 0 || s.Unserved == 0 }

// Op returns the stats of one operation, or nil.
func (v *SummaryVariant) Op(name string) *OpStats {
	for i := range v.Ops {
		if v.Ops[i].Op == name {
			return &v.Ops[i]
		}
	}
	return nil
}
