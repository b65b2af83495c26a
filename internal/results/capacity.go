package results

import (
	"sort"
	"time"

	"github.com/shardbench/shardbench/internal/inputfile"
)

// CapacityFile holds what `shardbench capacity` found: per design variant, the largest
// multiple of the scenario's load shape at which its SLO holds, the smallest at which it
// fails, the served operations per second it sustains at the peak, and what breaks first,
// with the evidence from the failing step's results directory. Every probe the search ran
// is a results directory of its own under CapacityStepsDir, named in the file, so each
// figure can be opened, re-gated and re-rendered.
//
// A verdict ranks designs by Sustains (the multiple), and by Outcome first: "above_range"
// holds at the largest multiple tried (a lower bound), "below_range" fails at the smallest
// (an upper bound), "found" is bracketed to Precision.
const CapacityFile = "capacity.json"

// CapacityStepsDir is where a capacity search keeps each probe's results directory.
const CapacityStepsDir = "steps"

// CapacitySchema identifies capacity.json.
const CapacitySchema = "shardbench/capacity"

// CapacityVersion changes when a reader would misread the file.
const CapacityVersion = 1

// Capacity methods.
const (
	// CapacitySimulated: probes simulate a window around the schedule's peak, and the
	// answer is confirmed by simulating the whole schedule (the sim backend).
	CapacitySimulated = "simulated"
	// CapacityStepped: constant-rate steps at multiples of the scenario's peak rate, each
	// after a warm-up, on a real database.
	CapacityStepped = "stepped"
)

// Outcomes of a variant's search.
const (
	CapacityFound       = "found"       // sustains < breaks ≤ sustains × (1 + precision)
	CapacityAboveRange  = "above_range" // the SLO held at the largest multiple tried
	CapacityBelowRange  = "below_range" // the SLO failed at the smallest multiple tried
	CapacityIncomplete  = "incomplete"  // stopped (interrupt, --max-duration) before the precision was reached
	CapacityUnconfirmed = "unconfirmed" // bracketed, not confirmed: the window's answer not settled on the whole schedule, or a step's failure not run again
)

// Capacity is capacity.json.
type Capacity struct {
	Schema   string       `json:"schema"`
	Version  int          `json:"version"`
	Tool     Tool         `json:"tool"`
	Scenario ScenarioInfo `json:"scenario"`
	Backend  BackendInfo  `json:"backend"`
	Method   string       `json:"method"`
	// StartedAt and EndedAt are the search's wall-clock times; Complete is false while it
	// runs (the file is rewritten after every probe) and when it was interrupted.
	StartedAt   time.Time   `json:"started_at"`
	EndedAt     time.Time   `json:"ended_at"`
	Complete    bool        `json:"complete"`
	Interrupted string      `json:"interrupted,omitempty"`
	SLO         CapacitySLO `json:"slo"`
	// Precision is the relative width the search brackets each answer to:
	// Breaks ≤ Sustains × (1 + Precision).
	Precision float64 `json:"precision"`
	// MinMultiple and MaxMultiple bound the multiples tried.
	MinMultiple float64 `json:"min_multiple"`
	MaxMultiple float64 `json:"max_multiple"`
	// PeakRate is the scenario's own peak offered rate in operations per second (multiple
	// 1), all operation types together; PeakPhase is the phase it is reached in.
	PeakRate  float64 `json:"peak_rate"`
	PeakPhase string  `json:"peak_phase"`
	// Window is the stretch of the schedule a simulated probe runs (method simulated).
	Window *CapacityWindow `json:"window,omitempty"`
	// Stepping is the real-database steps' timing (method stepped).
	Stepping *CapacityStepping `json:"stepping,omitempty"`
	Variants []CapacityVariant `json:"variants"`
	// Probes lists every run of the search in the order they ran.
	Probes []CapacityProbe `json:"probes"`
	Notes  []string        `json:"notes,omitempty"`
}

// CapacitySLO is the SLO a capacity search holds each variant to.
type CapacitySLO struct {
	// Source is "default" or where the rules came from (the scenario's slo section, a
	// --slo file).
	Source string   `json:"source"`
	Rules  []string `json:"rules"`
	// P99BoundMs is the p99 bound drawn on the capacity curve: the default SLO's, or the
	// tightest p99 rule on every operation (0: the rules have none).
	P99BoundMs float64 `json:"p99_bound_ms,omitempty"`
	// Served: rules apply to the operations each design serves; an operation a design does
	// not serve is left out of every figure.
	Served bool `json:"served"`
}

// CapacityWindow is the stretch of the schedule a simulated probe runs: the peak segment
// (FromS..ToS of the whole schedule) with LeadInS before it for queues to build.
type CapacityWindow struct {
	FromS     float64 `json:"from_s"`
	ToS       float64 `json:"to_s"`
	PeakFromS float64 `json:"peak_from_s"`
	LeadInS   float64 `json:"lead_in_s"`
	// ScheduleS is the whole schedule's length; confirming probes run its first ToS,
	// judged over FromS..ToS.
	ScheduleS float64 `json:"schedule_s"`
}

// CapacityStepping is how a real database was stepped.
type CapacityStepping struct {
	WarmupS       float64 `json:"warmup_s"`
	StepS         float64 `json:"step_s"`
	MaxDurationS  float64 `json:"max_duration_s,omitempty"`
	Growth        float64 `json:"growth"`
	StartMultiple float64 `json:"start_multiple"`
}

// CapacityVariant is one variant's answer.
type CapacityVariant struct {
	Variant  string            `json:"variant"`
	Design   string            `json:"design,omitempty"`
	Database string            `json:"database,omitempty"`
	Params   map[string]string `json:"params,omitempty"`
	Outcome  string            `json:"outcome"`
	// Sustains is the largest multiple of the scenario's load at which the SLO held (0:
	// none held); Breaks the smallest at which it failed (0: none failed).
	Sustains float64 `json:"sustains"`
	Breaks   float64 `json:"breaks"`
	// SustainedPeakRate is the offered peak rate at Sustains (PeakRate × Sustains), all
	// operation types; ServedPeakRate the served operations per second measured at that
	// step's peak: the rate the design sustains.
	SustainedPeakRate float64 `json:"sustained_peak_rate"`
	ServedPeakRate    float64 `json:"served_peak_rate"`
	// Headroom is Sustains − 1 against the scenario's own peak: 0.4 is 40% to spare,
	// −0.3 is 30% short.
	Headroom float64 `json:"headroom"`
	// Confirmed: Sustains passed and Breaks failed on the whole schedule (simulated), or
	// Breaks failed in two steps in a row (real; beyond the range, on measured steps).
	// Confirmation says how.
	Confirmed    bool   `json:"confirmed"`
	Confirmation string `json:"confirmation,omitempty"`
	// PassStep and FailStep are the results directories (relative to the capacity
	// directory) of the step at Sustains and at Breaks.
	PassStep string `json:"pass_step,omitempty"`
	FailStep string `json:"fail_step,omitempty"`
	// Failed lists the SLO checks that failed at FailStep.
	Failed []CapacityCheck `json:"failed,omitempty"`
	// BreaksFirst is what gave way at FailStep, with the evidence.
	BreaksFirst *CapacityCause `json:"breaks_first,omitempty"`
	// Curve is every probe of the variant: the capacity curve.
	Curve []CapacityPoint `json:"curve"`
}

// CapacityCheck is a failed SLO check, as text.
type CapacityCheck struct {
	Name      string `json:"name"`
	Value     string `json:"value"`
	Threshold string `json:"threshold"`
	Detail    string `json:"detail,omitempty"`
}

// Kinds of what breaks first.
const (
	CauseNode          = "node"           // a Cassandra node's stage saturated
	CauseShard         = "shard"          // a MongoDB shard member saturated
	CauseCluster       = "cluster"        // servers at capacity with the load spread evenly: not a hot spot
	CauseScan          = "scan"           // full scans (a query the design has no table for) saturate every node
	CauseLWT           = "lwt"            // lightweight transactions contending on a partition
	CauseClient        = "client"         // the harness: its in-flight limit or its CPU
	CausePartitionSize = "partition_size" // a partition projected past its size limit
	CauseErrors        = "errors"         // errors without a saturated server (unavailable, a node down)
	CauseSLO           = "slo"            // a rule failed and nothing above explains it
)

// CapacityCause is what breaks first: a kind, the thing that broke (a node, a shard, a
// partition, the client), one sentence, and the figures it rests on.
type CapacityCause struct {
	Kind     string             `json:"kind"`
	Subject  string             `json:"subject"`
	Summary  string             `json:"summary"`
	Evidence []CapacityEvidence `json:"evidence"`
}

// CapacityEvidence is one figure behind a cause, with the file it was read from.
type CapacityEvidence struct {
	Source string `json:"source"` // summary.json, server.json, hotspots.json
	Figure string `json:"figure"`
	Value  string `json:"value"`
	Detail string `json:"detail,omitempty"`
}

// CapacityPoint is one probe of one variant: the capacity curve.
type CapacityPoint struct {
	Multiple    float64 `json:"multiple"`
	OfferedRate float64 `json:"offered_rate"` // the probe's offered peak rate, all operation types
	Kind        string  `json:"kind"`         // window | full | step
	Pass        bool    `json:"pass"`
	// P99Ms is the highest p99 response time of the variant's served operations, Op the
	// operation it belongs to.
	P99Ms float64 `json:"p99_ms"`
	Op    string  `json:"op,omitempty"`
	Step  string  `json:"step"`
	// SetAside: a failing step that held when run again (real databases): a cold or
	// briefly disturbed cluster, not part of the answer, kept to show it.
	SetAside bool `json:"set_aside,omitempty"`
	// Workloads is the same per workload (the operations' name prefix: sessions, carts,
	// views, orders, catalog), for verdicts per entity: whether the SLO's checks on that
	// workload's operations held (checks on the totals belong to none), its worst p99.
	Workloads map[string]CapacityWorkloadPoint `json:"workloads,omitempty"`
}

// CapacityWorkloadPoint is one workload's figures at one probe.
type CapacityWorkloadPoint struct {
	Pass  bool    `json:"pass"`
	P99Ms float64 `json:"p99_ms"`
	Op    string  `json:"op,omitempty"`
}

// Probe kinds.
const (
	ProbeWindow = "window" // a window around the peak (simulated)
	ProbeFull   = "full"   // the whole schedule (simulated)
	ProbeStep   = "step"   // a constant-rate step after a warm-up (real)
)

// CapacityProbe is one run of the search.
type CapacityProbe struct {
	Step     string   `json:"step"` // results directory, relative
	Kind     string   `json:"kind"`
	Multiple float64  `json:"multiple"`
	Variants []string `json:"variants"`
	Failed   []string `json:"failed,omitempty"` // the variants whose SLO failed
	WallS    float64  `json:"wall_s"`
	Error    string   `json:"error,omitempty"`
}

// Variant returns one variant's answer, or nil.
func (c *Capacity) Variant(name string) *CapacityVariant {
	if c == nil {
		return nil
	}
	for i := range c.Variants {
		if c.Variants[i].Variant == name {
			return &c.Variants[i]
		}
	}
	return nil
}

// Ranking orders the variants (indices into Variants) from the most capacity to the
// least: those that held their SLO at the largest multiple tried (a lower bound), then
// those bracketed, by the multiple sustained, then those stopped before they were
// bracketed, and last those that failed at the smallest multiple tried. Ties keep the
// scenario's order.
func (c *Capacity) Ranking() []int {
	rank := map[string]int{CapacityAboveRange: 0, CapacityFound: 1, CapacityIncomplete: 2, CapacityUnconfirmed: 2, CapacityBelowRange: 3}
	order := make([]int, len(c.Variants))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		va, vb := &c.Variants[order[a]], &c.Variants[order[b]]
		if ra, rb := rank[va.Outcome], rank[vb.Outcome]; ra != rb {
			return ra < rb
		}
		return va.Sustains > vb.Sustains
	})
	return order
}

// ReadCapacity loads capacity.json; it returns (nil, nil) when the directory has none.
func ReadCapacity(dir string) (*Capacity, error) { return readDoc[Capacity](dir, capacityDoc) }

var capacityDoc = docKind{file: CapacityFile, schema: CapacitySchema, version: CapacityVersion, input: inputfile.Report}

// WriteCapacity writes capacity.json atomically.
func (d *Dir) WriteCapacity(c *Capacity) error {
	c.Schema, c.Version = CapacitySchema, CapacityVersion
	return d.WriteJSON(CapacityFile, c)
}
