package main

import (
	"strings"
	"time"

	"github.com/shardbench/shardbench/internal/backend/sim"
	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/engine"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/schedule"
	"github.com/shardbench/shardbench/internal/yamlx"
	_ "github.com/shardbench/shardbench/workloads/all" // every workload, registered by name
)

// runOverrides are the command-line changes to a scenario; the Set fields say the flag
// was given (0 is then refused rather than ignored).
type runOverrides struct {
	Seed         *int64
	Duration     time.Duration
	DurationSet  bool
	RateScale    float64
	RateScaleSet bool
}

// runInput is everything loaded from files for one run: the scenario with its overrides,
// the schedule, the compiled workload and design variants, and the operation stream.
type runInput struct {
	Scenario  *scenario.Scenario
	Schedule  *schedule.Schedule
	Prepared  *design.Prepared
	Ops       []engine.OpInfo
	NewSource func() (engine.Source, error)
	Variants  []variantSpec
}

// VariantNames are the variants' names in the scenario's order.
func (in *runInput) VariantNames() []string {
	names := make([]string, len(in.Variants))
	for i, v := range in.Variants {
		names[i] = v.Name
	}
	return names
}

// variantSpec is a variant before a backend is opened for it. Variant and Plan are nil for
// the single "default" variant of a scenario that lists no designs (null and delay
// backends need none).
type variantSpec struct {
	// Index is the variant's position among the scenario's variants. Backends derive
	// per-variant state from it (the simulator's random stream, keyspace names), so a
	// run of some of the variants (capacity probes) gives each one what a run of all does.
	Index    int
	Name     string
	Design   string
	Database string
	Params   map[string]string
	Variant  *design.Variant
	Compiled *design.Compiled
}

// loadRun loads a scenario and everything it refers to (designs, workloads, SLO rules),
// reporting every problem at once with file:line:column.
func loadRun(path string, o runOverrides) (*runInput, error) {
	sc, err := scenario.ReadFile(path)
	if err != nil {
		return nil, usageError(err)
	}
	ov := scenario.Overrides{Seed: o.Seed, Duration: o.Duration, DurationSet: o.DurationSet, RateScale: o.RateScale, RateScaleSet: o.RateScaleSet}
	if err := sc.Apply(ov); err != nil {
		return nil, usageError(err)
	}
	return prepareRun(sc)
}

// prepareRun compiles a parsed scenario (with any overrides applied) into a run's input.
func prepareRun(sc *scenario.Scenario) (*runInput, error) {
	var errs yamlx.Errors
	in := &runInput{Scenario: sc, Schedule: schedule.New(sc)}
	prep, err := design.Prepare(sc)
	if err != nil {
		return nil, usageError(err)
	}
	in.Prepared = prep
	for _, op := range prep.Model.Ops {
		in.Ops = append(in.Ops, engine.OpInfo{Name: op.Name, Kind: op.Kind.String()})
	}
	in.NewSource = func() (engine.Source, error) { return prep.Model.NewStream(in.Schedule), nil }
	for i, v := range prep.Variants {
		in.Variants = append(in.Variants, variantSpec{
			Index: i, Name: v.Name, Design: v.Design.Path, Database: v.Design.DatabaseName(), Params: v.Params,
			Variant: v, Compiled: prep.Compiled[i],
		})
	}
	if len(in.Variants) == 0 {
		in.Variants = []variantSpec{{Name: "default"}}
	}
	errs.Append(checkSLO(sc, in.Ops))
	errs.Append(checkBackendSections(sc))
	errs.Append(sim.CheckEvents(sc, prep.Compiled))
	if !sc.Backends["sim"].IsZero() {
		// The simulator's section, with its calibration file if it names one, is checked
		// here so that validate reports it whatever backend a run will use.
		if o, err := sim.LoadOptions(sc); err != nil {
			errs.Append(err)
		} else {
			errs.Append(sim.CheckDesigns(&o, prep))
		}
	}
	if err := errs.Err(); err != nil {
		return nil, usageError(err)
	}
	return in, nil
}

// checkBackendSections refuses a backends.<name> section no backend reads (a typo, or a
// backend this build does not have), naming the ones there are.
func checkBackendSections(sc *scenario.Scenario) error {
	var errs yamlx.Errors
	for name, raw := range sc.Backends {
		if backendOpeners[name] == nil {
			pos, path := sc.Loc.At("backends")
			if !raw.IsZero() {
				pos = raw.Pos()
			}
			errs.Add(pos, yamlx.JoinPath(path, name), "no such backend (backends: %s)", strings.Join(backendNames(), ", "))
		}
	}
	return errs.Err()
}
