package sim

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/yamlx"
)

// CalibrationSchema identifies a parameter file written by `shardbench calibrate`.
const CalibrationSchema = "shardbench/sim-calibration"

// Calibration is the parameter file `shardbench calibrate` writes and a scenario refers
// to with backends.sim.calibration: the node model's service times and the per-operation
// scales fitted so that the simulator reproduces a real run's mean service time per
// operation, with the fit itself recorded for the reader to judge.
type Calibration struct {
	Loc    yamlx.Loc
	Schema string `yaml:"schema"`
	// FittedFrom is the results directory of the real run; Backend and Server describe
	// what it ran against; FittedAt is when the fit was made.
	FittedFrom string    `yaml:"fitted_from"`
	Backend    string    `yaml:"backend"`
	Server     string    `yaml:"server,omitempty"`
	FittedAt   time.Time `yaml:"fitted_at"`
	// Network is the round trip the fit assumed (it is not fitted: it cannot be told
	// apart from a constant part of every service time).
	Network time.Duration `yaml:"network,omitempty"`
	// Cassandra and MongoDB hold the fitted node models (only the fields that were fitted
	// are set; the others keep the scenario's values or the defaults).
	Cassandra *CassandraModel `yaml:"cassandra,omitempty"`
	MongoDB   *MongoModel     `yaml:"mongodb,omitempty"`
	// OperationScale is the per-operation factor on every service time drawn.
	OperationScale map[string]float64 `yaml:"operation_scale,omitempty"`
	// ServiceSpread is the fitted σ of log-normal service times (0: the default shape;
	// see Options.ServiceSpread).
	ServiceSpread float64 `yaml:"service_spread,omitempty"`
	// Fit is, per variant and operation, the measured and the calibrated simulation's
	// service times: how good the fit is.
	Fit   []FitRow `yaml:"fit,omitempty"`
	Notes []string `yaml:"notes,omitempty"`
}

// FitRow compares one operation's measured service times with the calibrated simulation.
type FitRow struct {
	Variant       string        `yaml:"variant"`
	Op            string        `yaml:"op"`
	Count         int64         `yaml:"count"`
	MeasuredMean  time.Duration `yaml:"measured_mean"`
	SimulatedMean time.Duration `yaml:"simulated_mean"`
	MeasuredP99   time.Duration `yaml:"measured_p99,omitempty"`
	SimulatedP99  time.Duration `yaml:"simulated_p99,omitempty"`
	// Error is (simulated - measured) / measured of the means.
	Error float64 `yaml:"error"`
}

// ReadCalibration reads and checks a parameter file; errors name the file, line and
// field.
func ReadCalibration(path string) (*Calibration, error) {
	data, err := yamlx.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c := &Calibration{}
	var errs yamlx.Errors
	errs.Append(yamlx.Unmarshal(path, data, c))
	if c.Schema != CalibrationSchema && c.Loc.Pos.File != "" {
		errs.AddAt(c.Loc, "schema", "want %q (a file written by shardbench calibrate), got %q", CalibrationSchema, c.Schema)
	}
	checkScales(&errs, c.Loc, c.OperationScale)
	if c.ServiceSpread < 0 || c.ServiceSpread > 4 {
		errs.AddAt(c.Loc, "service_spread", "must be between 0 and 4 (σ of the log of a service time), got %g", c.ServiceSpread)
	}
	if c.Cassandra != nil {
		checkCassandra(&errs, c.Cassandra)
	}
	if c.MongoDB != nil {
		checkMongo(&errs, c.MongoDB)
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return c, nil
}

// WriteFile writes the parameter file with a header saying how to use it.
func (c *Calibration) WriteFile(path string) error {
	body, err := yamlx.Marshal(c)
	if err != nil {
		return err
	}
	head := fmt.Sprintf("# Simulator parameters fitted by `shardbench calibrate` from %s.\n"+
		"# Use them from a scenario:\n#   backends:\n#     sim:\n#       calibration: %s\n"+
		"# (relative to the scenario file). Fitted values replace the scenario's and the defaults.\n",
		c.FittedFrom, filepath.Base(path))
	return os.WriteFile(path, append([]byte(head), body...), 0o644)
}

// ApplyTo lays the fitted values over o: every field the calibration sets wins.
func (c *Calibration) ApplyTo(o *Options) {
	if c.Cassandra != nil {
		overlay(&o.Cassandra, c.Cassandra)
	}
	if c.MongoDB != nil {
		overlay(&o.MongoDB, c.MongoDB)
	}
	if len(c.OperationScale) > 0 && o.OperationScale == nil {
		o.OperationScale = map[string]float64{}
	}
	for op, f := range c.OperationScale {
		o.OperationScale[op] = f
	}
	if c.ServiceSpread > 0 {
		o.ServiceSpread = c.ServiceSpread
	}
}

// overlay copies src's non-zero fields (but its source location) onto dst, which has
// the same struct type.
func overlay(dst, src any) {
	d, s := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem()
	for i := 0; i < s.NumField(); i++ {
		if f := s.Field(i); !f.IsZero() && s.Type().Field(i).Type != reflect.TypeOf(yamlx.Loc{}) {
			d.Field(i).Set(f)
		}
	}
}

// LoadOptions is ParseOptions for a run: backends.sim with its calibration file (if
// any) applied. Errors name the scenario's file, line and field, or the calibration
// file's.
func LoadOptions(sc *scenario.Scenario) (Options, error) {
	o, err := ParseOptions(sc.Backends["sim"])
	if err != nil || o.Calibration == "" {
		return o, err
	}
	path := o.Calibration
	if !filepath.IsAbs(path) {
		path = filepath.Join(sc.Dir(), path)
	}
	c, err := ReadCalibration(path)
	if err != nil {
		var errs yamlx.Errors
		if errors.Is(err, fs.ErrNotExist) {
			errs.AddAt(o.Loc, "calibration", "no such file: %s (paths are relative to the scenario file; `shardbench calibrate RESULTS_DIR` writes one)", path)
		} else if _, ok := err.(yamlx.Errors); ok {
			return o, err
		} else {
			errs.AddAt(o.Loc, "calibration", "%v", err) // names the file
		}
		return o, errs.Err()
	}
	c.ApplyTo(&o)
	return o, nil
}

func checkScales(errs *yamlx.Errors, loc yamlx.Loc, m map[string]float64) {
	for op, f := range m {
		if !(f > 0) || math.IsInf(f, 0) {
			errs.AddAt(loc, "operation_scale", "%s: must be a positive factor, got %g", op, f)
		}
	}
}

// ScaleKey is the operation_scale key of an operation in one variant, "op@variant", the
// form calibrate writes (a fitted scale holds for the design it was measured on).
func ScaleKey(op, variant string) string { return op + "@" + variant }

// opScales resolves operation_scale for one variant into a slice indexed by operation
// type: a key "op@variant" (what calibrate writes: a fitted scale holds for the design it
// was measured on) wins over a plain "op" (every variant). An operation the workloads do
// not define is an error naming the field.
func (o *Options) opScales(names []string, variant string) ([]float64, error) {
	if len(o.OperationScale) == 0 {
		return nil, nil
	}
	idx := make(map[string]int, len(names))
	for i, n := range names {
		idx[n] = i
	}
	out := make([]float64, len(names))
	for i := range out {
		out[i] = 1
	}
	var errs yamlx.Errors
	exact := map[int]bool{}
	for k, f := range o.OperationScale {
		op, v, scoped := strings.Cut(k, "@")
		i, ok := idx[op]
		switch {
		case !ok:
			errs.AddAt(o.Loc, "operation_scale", "no operation %q in the scenario's workloads", op)
		case scoped && v == variant:
			out[i], exact[i] = f, true
		case !scoped && !exact[i]:
			out[i] = f
		}
	}
	return out, errs.Err()
}
