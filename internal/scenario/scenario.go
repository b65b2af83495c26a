// Package scenario defines the scenario file: what traffic to send (load phases, arrival
// process, population and skew, operation mix), to which design variants, which events
// happen during the run, and which SLOs gate it.
//
// Parsing is strict: unknown keys, wrong types and bad values are all reported at once,
// each with file:line:column and the field path. Sections owned by other packages (slo,
// per-backend options) stay raw here and are decoded strictly by their owners, keeping
// their positions.
package scenario

import (
	"time"

	"github.com/shardbench/shardbench/internal/yamlx"
)

// Scenario is one parsed scenario file.
type Scenario struct {
	Loc  yamlx.Loc
	File string `yaml:"-"` // path the scenario was read from
	// BaseDir, when set, is where relative paths (designs, files) resolve from instead of
	// File's directory: a scenario copied into a results directory keeps its original one.
	BaseDir     string `yaml:"-"`
	Name        string `yaml:"name"`
	Description string `yaml:"description,omitempty"`
	// Seed makes the operation stream reproducible: the same scenario and seed produce the
	// same operations, keys and intended start times on every machine and worker count.
	Seed  int64 `yaml:"seed"`
	Clock Clock `yaml:"clock"`
	Load  Load  `yaml:"load"`
	// Population sizes and skew: users, sessions, products, categories, geo zones, bots.
	Population Population `yaml:"population"`
	// Mix gives the relative weight of each logical operation ("carts.add_item": 8).
	Mix Weights `yaml:"mix"`
	// Designs are the physical design variants the same operation stream is driven against.
	Designs []VariantSpec `yaml:"designs,omitempty"`
	// Events happen at given times during the run (node down, add shard, a command).
	Events []Event `yaml:"events,omitempty"`
	// SLO is decoded by the gate package.
	SLO yamlx.Raw `yaml:"slo,omitempty"`
	// Backends holds per-backend options (sim, cassandra, mongo), decoded by each backend.
	Backends map[string]yamlx.Raw `yaml:"backends,omitempty"`
	// Projection is the traffic that partitions grow at once the run's peak is over, for
	// size projections (docs/hot-partitions.md#size-projections).
	Projection *Projection `yaml:"projection,omitempty"`
}

// Projection says how fast partitions grow beyond the run: a run is a peak of minutes,
// and a partition that lives a day or a year grows at the ordinary rate most of that
// time. Daily takes precedence for the operations it names; the others grow at
// SteadyRate's share of the mix. Both empty: the rate of the slowest constant (or spike
// base) phase, the scenario's own idea of steady traffic.
type Projection struct {
	Loc yamlx.Loc
	// SteadyRate is the whole mix's ordinary rate, operations per run second.
	SteadyRate Rate `yaml:"steady_rate,omitempty"`
	// Daily gives operations a day per logical operation ("orders.place: 1e6"), as the
	// design documents state their traffic; a store day is 86,400 store seconds.
	Daily Weights `yaml:"daily,omitempty"`
}

// Clock maps run time onto the store's calendar, for time-bucketed keys and TTLs.
type Clock struct {
	Loc yamlx.Loc
	// Start is the store time at the start of the run (e.g. Black Friday 00:00 Moscow).
	Start time.Time `yaml:"start"`
	// Scale is store seconds per run second: 24 replays a day in an hour. Rates stay per run
	// second; only the timestamps written into keys and rows move faster.
	Scale float64 `yaml:"scale"`
}

// Arrival processes.
const (
	ArrivalUniform = "uniform"
	ArrivalPoisson = "poisson"
)

// What the engine does with an operation that is due while every worker is busy.
const (
	OnFullQueue = "queue" // wait for a worker; counted late; response time includes the wait; dropped if still waiting when the schedule ends
	OnFullDrop  = "drop"  // skip it; counted as dropped
)

// Load describes the open-model arrival schedule.
type Load struct {
	Loc yamlx.Loc
	// Arrival is "uniform" (evenly spaced) or "poisson" (exponential gaps at the same rate).
	Arrival string `yaml:"arrival"`
	// MaxInFlight bounds concurrent operations (the worker pool size).
	MaxInFlight int `yaml:"max_in_flight"`
	// OnFull is "queue" or "drop": see the constants.
	OnFull string `yaml:"on_full"`
	// LateAfter: an operation that starts more than this after its intended time is late.
	LateAfter time.Duration `yaml:"late_after"`
	// Timeout for one operation (backends apply it; the sim times out queued requests).
	Timeout time.Duration `yaml:"timeout"`
	// DrainTimeout bounds the wait for in-flight operations at the end or on interrupt.
	DrainTimeout time.Duration `yaml:"drain_timeout"`
	Phases       []Phase       `yaml:"phases"`
}

// Phase types.
const (
	PhaseConstant = "constant"
	PhaseRamp     = "ramp"
	PhaseStep     = "step"
	PhaseSpike    = "spike"
)

// Phase is one stretch of the schedule. Rates are operations per second.
//
//	constant: rate
//	ramp:     from -> to, linearly
//	step:     from -> to in `steps` equal stairs
//	spike:    rate as the base, peak for spike_for starting spike_at into the phase
type Phase struct {
	Loc      yamlx.Loc
	Name     string        `yaml:"name"`
	Type     string        `yaml:"type"`
	Duration time.Duration `yaml:"duration"`
	Rate     Rate          `yaml:"rate,omitempty"`
	From     Rate          `yaml:"from,omitempty"`
	To       Rate          `yaml:"to,omitempty"`
	Steps    int           `yaml:"steps,omitempty"`
	Peak     Rate          `yaml:"peak,omitempty"`
	SpikeAt  time.Duration `yaml:"spike_at,omitempty"`
	SpikeFor time.Duration `yaml:"spike_for,omitempty"`
}

// Population describes the entities and their skew.
type Population struct {
	Loc yamlx.Loc
	// Users is the number of registered users.
	Users int64 `yaml:"users"`
	// Sessions is the number of active sessions at the start of the run.
	Sessions int64 `yaml:"sessions"`
	// GuestShare is the share of sessions without a logged-in user.
	GuestShare float64 `yaml:"guest_share"`
	// Carts is the number of active carts at the start.
	Carts int64 `yaml:"carts"`
	// Products in the catalog.
	Products int64 `yaml:"products"`
	// OrdersPerUser is the mean number of historic orders of a user (for history reads).
	OrdersPerUser float64 `yaml:"orders_per_user"`
	// UserActivity is how activity concentrates on people: Zipf exponent s (0 = uniform),
	// truncated at each operation's human ceiling (max_per_hour) and at max_sessions
	// active sessions a person.
	UserActivity Skew `yaml:"user_activity"`
	// ProductPopularity is the Zipf exponent of product views within a category.
	ProductPopularity Skew `yaml:"product_popularity"`
	// Bots are a few users with enormous activity.
	Bots Bots `yaml:"bots"`
	// Categories and their share of catalog traffic (electronics ~70%).
	Categories Weights `yaml:"categories"`
	// GeoZones and their share of users and orders (Moscow-heavy).
	GeoZones Weights `yaml:"geo_zones"`
	// HotProducts is a small set of products taking a share of views that can move.
	HotProducts HotSet `yaml:"hot_products"`
	// Extra holds workload-specific knobs (e.g. cart size); each workload documents its own.
	Extra map[string]float64 `yaml:"extra,omitempty"`
}

// Skew of a popularity distribution.
type Skew struct {
	Loc          yamlx.Loc
	Distribution string  `yaml:"distribution"` // zipf | uniform
	S            float64 `yaml:"s,omitempty"`  // Zipf exponent (> 0)
	// MaxPerHour overrides the human ceiling of operations ("orders.place": 6): the most
	// one person does in an hour of store time; 0 lifts the ceiling. Operations not named
	// keep their workload's default. user_activity only.
	MaxPerHour map[string]float64 `yaml:"max_per_hour,omitempty"`
	// MaxSessions is the most active sessions one person holds at the start (default 5).
	// user_activity only.
	MaxSessions float64 `yaml:"max_sessions,omitempty"`
}

// Bots are a separate population of identities with outsized activity: users
// 0..count-1, each holding one long-lived session. Humans are bounded by their ceilings;
// bots are not.
type Bots struct {
	Loc   yamlx.Loc
	Count int     `yaml:"count"`
	Share float64 `yaml:"share"` // share of each bot operation's traffic made by bots
	// Ops are the operations bots make (full names); empty: every operation of the mix
	// whose workload marks it as one a bot does (page, catalog and view reads and writes,
	// never carts, orders, logins or logouts).
	Ops []string `yaml:"ops,omitempty"`
}

// HotSet is a set of hot items that can shift over time.
type HotSet struct {
	Loc        yamlx.Loc
	Count      int           `yaml:"count"`
	Share      float64       `yaml:"share"`
	ShiftEvery time.Duration `yaml:"shift_every,omitempty"`
}

// VariantSpec names a design to drive, optionally with parameter overrides and a sweep.
type VariantSpec struct {
	Loc yamlx.Loc
	// Name of the variant (defaults to the design's name); sweep values are appended.
	Name string `yaml:"name,omitempty"`
	// Design is a design file path, relative to the scenario file.
	Design string `yaml:"design"`
	// Set overrides design parameters ("orders.shard_key": "{user_id: hashed}").
	Set map[string]any `yaml:"set,omitempty"`
	// Sweep crosses parameters: each combination becomes a variant.
	Sweep map[string][]any `yaml:"sweep,omitempty"`
	// SetParams and SweepParams hold the same overrides in file order with their YAML
	// nodes and positions (filled by the decoder), for the design package.
	SetParams   []Param      `yaml:"-"`
	SweepParams []SweepParam `yaml:"-"`
}

// Event actions.
const (
	EventNodeDown = "node_down"
	EventNodeUp   = "node_up"
	EventAddNode  = "add_node"
	EventAddShard = "add_shard"
	EventExec     = "exec"
)

// Event happens at a time into the run. The sim backend models the topology events; real
// backends run `exec` events (e.g. a script that stops a Cassandra node).
type Event struct {
	Loc     yamlx.Loc
	At      time.Duration `yaml:"at"`
	Action  string        `yaml:"action"`
	Node    string        `yaml:"node,omitempty"`    // node name or index, for node events
	DC      string        `yaml:"dc,omitempty"`      // data center of a new node
	Rack    string        `yaml:"rack,omitempty"`    // rack of a new node
	Shard   string        `yaml:"shard,omitempty"`   // shard name, for add_shard
	Command []string      `yaml:"command,omitempty"` // argv, for exec
	Note    string        `yaml:"note,omitempty"`    // shown on charts
}

// Duration is the length of the whole schedule.
func (s *Scenario) Duration() time.Duration {
	var d time.Duration
	for _, p := range s.Load.Phases {
		d += p.Duration
	}
	return d
}

// PeakRate is the highest rate any phase of the schedule reaches (ops/s).
func (s *Scenario) PeakRate() float64 {
	var peak Rate
	for _, p := range s.Load.Phases {
		peak = max(peak, p.Rate, p.From, p.To, p.Peak)
	}
	return float64(peak)
}
