package results

import (
	"time"

	"github.com/shardbench/shardbench/internal/inputfile"
)

// FidelityFile is what `shardbench fidelity` writes into the real run's results
// directory: the run beside its simulation (on the ring, racks and replication read from
// the cluster, calibrated on one variant or a given parameter file), compared per
// variant: where requests landed (per node and table, from the servers' own counters),
// per-operation latency predicted against measured, and the order of the variants.
const FidelityFile = "fidelity.json"

// FidelitySchema identifies fidelity.json.
const FidelitySchema = "shardbench/fidelity"

// FidelityVersion changes when a reader would misread the file.
const FidelityVersion = 1

// Fidelity is fidelity.json.
type Fidelity struct {
	Schema  string `json:"schema"`
	Version int    `json:"version"`
	// Simulated is the simulated twin's results directory, relative to this one.
	Simulated string    `json:"simulated"`
	Target    string    `json:"target"` // redacted
	Server    string    `json:"server,omitempty"`
	At        time.Time `json:"at"`
	// Calibration says what the simulation's service times were fitted to.
	Calibration FidelityCalibration `json:"calibration"`
	Tolerance   FidelityTolerance   `json:"tolerance"`
	Variants    []FidelityVariant   `json:"variants"`
	Rankings    []FidelityRanking   `json:"rankings,omitempty"`
	// Verdict is one line per criterion, in words, and whether all were met.
	Verdict FidelityVerdict `json:"verdict"`
	Notes   []string        `json:"notes,omitempty"`
}

// FidelityCalibration is where the simulated service times came from: fitted to one
// variant of this run (Variant; its latency rows are in-sample) or read from a parameter
// file (File: every row is a prediction).
type FidelityCalibration struct {
	Variant string `json:"variant,omitempty"`
	File    string `json:"file,omitempty"`
	// Written is the parameter file the simulation used, relative to this directory.
	Written string `json:"written,omitempty"`
	// NetworkMS is the round trip the simulation used (measured, or as given).
	NetworkMS float64 `json:"network_ms"`
	// Model is the fitted node model in words ("read 412µs, write 180µs, ...").
	Model string   `json:"model,omitempty"`
	Notes []string `json:"notes,omitempty"`
}

// FidelityTolerance is what counts as agreement.
type FidelityTolerance struct {
	// SharePP is the largest difference, in percentage points, between a node's share of
	// the requests on the servers' counters and in the simulation.
	SharePP float64 `json:"share_pp"`
	// Latency is the largest relative error of a predicted mean, p50 or p99.
	Latency float64 `json:"latency"`
	// Utilisation is the highest simulated node utilisation at which latency is judged:
	// beyond it queueing dominates and small differences in capacity decide.
	Utilisation float64 `json:"utilisation"`
	// MinOps is the fewest measured operations an operation needs for its latency to be
	// judged (a p99 of fewer is noise).
	MinOps int64 `json:"min_ops"`
}

// FidelityVariant is one design variant, real beside simulated.
type FidelityVariant struct {
	Name   string `json:"name"`
	Design string `json:"design"`
	// Calibrated: the simulation's service times were fitted to this variant's real run,
	// so its latency rows show the fit, not a prediction.
	Calibrated bool `json:"calibrated,omitempty"`
	// Nodes is each node's share of the replica requests (reads and writes of every
	// table), Tables the same per table, Coordinators the share of requests coordinated.
	Nodes        []FidelityShare `json:"nodes"`
	Tables       []FidelityShare `json:"tables,omitempty"`
	Coordinators []FidelityShare `json:"coordinators,omitempty"`
	// MaxNodeDiffPP is the largest |simulated − real| node share, percentage points.
	MaxNodeDiffPP float64 `json:"max_node_diff_pp"`
	// Hottest is the busiest node by its share of the replica requests, real and simulated.
	HottestReal FidelityHot `json:"hottest_real"`
	HottestSim  FidelityHot `json:"hottest_sim"`
	// Utilisation is the simulated busiest node's mean utilisation over the run.
	Utilisation float64           `json:"utilisation"`
	Ops         []FidelityLatency `json:"ops"`
	// All is every served operation together (the variant's totals).
	All FidelityLatency `json:"all"`
	// CapacityReal and CapacitySim are the largest multiple of the load within the SLO,
	// when a capacity search was given for both sides.
	CapacityReal *float64 `json:"capacity_real,omitempty"`
	CapacitySim  *float64 `json:"capacity_sim,omitempty"`
	Notes        []string `json:"notes,omitempty"`
}

// FidelityShare is one node's (or one node and table's) share of requests.
type FidelityShare struct {
	Node      string  `json:"node"`
	Table     string  `json:"table,omitempty"`
	RealCount int64   `json:"real_count"`
	SimCount  int64   `json:"sim_count"`
	Real      float64 `json:"real"` // fraction of the requests (of the table, for a table row)
	Sim       float64 `json:"sim"`
	DiffPP    float64 `json:"diff_pp"` // (Sim − Real) × 100
}

// FidelityHot is a variant's busiest node and its share of the requests.
type FidelityHot struct {
	Node  string  `json:"node"`
	Share float64 `json:"share"`
}

// FidelityLatency is one operation's service time, measured beside simulated.
type FidelityLatency struct {
	Op       string       `json:"op"`
	Count    int64        `json:"count"`
	SimCount int64        `json:"sim_count"`
	Real     FidelityStat `json:"real"`
	Sim      FidelityStat `json:"sim"`
	// Error is (simulated − measured) / measured of each figure.
	Error FidelityStat `json:"error"`
	// Judged: a prediction (not the calibration's own variant) with enough operations at
	// a utilisation within the tolerance; Within says whether every error is within it.
	// Why says why a row is not judged.
	Judged bool   `json:"judged"`
	Within bool   `json:"within"`
	Why    string `json:"why,omitempty"`
}

// FidelityStat is a mean, p50 and p99 in milliseconds (or relative errors).
type FidelityStat struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
}

// FidelityRanking is the order of a group of variants by one measure, real beside
// simulated, best first.
type FidelityRanking struct {
	// Group is a design with several variants (a sweep), or "all" for every variant.
	Group string `json:"group"`
	// By is "hottest node" (share of the busiest node, lower first), "p99" (service
	// p99 of all served operations, lower first) or "capacity" (higher first).
	By   string   `json:"by"`
	Real []string `json:"real"`
	Sim  []string `json:"sim"`
	// RealValues and SimValues are the measure per variant, in Real's and Sim's order.
	RealValues []float64 `json:"real_values"`
	SimValues  []float64 `json:"sim_values"`
	// Tie is how close two real values may be and still count as a tie (no order to
	// reproduce); Discordant lists the pairs the simulation orders the other way.
	Tie        float64  `json:"tie"`
	Agree      bool     `json:"agree"`
	Discordant []string `json:"discordant,omitempty"`
}

// FidelityVerdict says whether the simulation met each criterion.
type FidelityVerdict struct {
	Placement bool     `json:"placement"`
	Latency   bool     `json:"latency"`
	Ranking   bool     `json:"ranking"`
	Lines     []string `json:"lines"`
}

// Pass reports whether every criterion was met.
func (v FidelityVerdict) Pass() bool { return v.Placement && v.Latency && v.Ranking }

// ReadFidelity loads fidelity.json; it returns (nil, nil) when the directory has none.
func ReadFidelity(dir string) (*Fidelity, error) { return readDoc[Fidelity](dir, fidelityDoc) }

var fidelityDoc = docKind{file: FidelityFile, schema: FidelitySchema, version: FidelityVersion, input: inputfile.Report}

// WriteFidelity writes fidelity.json atomically.
func (d *Dir) WriteFidelity(f *Fidelity) error {
	f.Schema, f.Version = FidelitySchema, FidelityVersion
	return d.WriteJSON(FidelityFile, f)
}
