package main

import (
	"errors"
	"time"

	"github.com/shardbench/shardbench/internal/engine"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/schedule"
	"github.com/shardbench/shardbench/internal/yamlx"
)

// runOverrides are the command-line changes to a scenario.
type runOverrides struct {
	Seed      *int64
	Duration  time.Duration
	RateScale float64
}

// runInput is everything loaded from files for one run: the scenario with its overrides,
// the schedule, the operation stream and the variants to drive.
type runInput struct {
	Scenario  *scenario.Scenario
	Schedule  *schedule.Schedule
	Ops       []engine.OpInfo
	NewSource func() (engine.Source, error)
	Variants  []variantSpec
}

// variantSpec is a variant before a backend is opened for it.
type variantSpec struct {
	Name     string
	Design   string
	Database string
	Params   map[string]string
}

// streamBuilder builds the operation stream of a scenario.
type streamBuilder func(sc *scenario.Scenario, sch *schedule.Schedule) ([]engine.OpInfo, func() (engine.Source, error), error)

// defaultStreamBuilder is replaced when the workloads package provides streams.
var defaultStreamBuilder streamBuilder = func(*scenario.Scenario, *schedule.Schedule) ([]engine.OpInfo, func() (engine.Source, error), error) {
	return nil, nil, errors.New("no workloads are registered in this build")
}

// loadRun loads a scenario and everything it refers to, reporting every problem at once.
func loadRun(path string, o runOverrides) (*runInput, error) {
	return loadRunWith(path, o, defaultStreamBuilder)
}

func loadRunWith(path string, o runOverrides, build streamBuilder) (*runInput, error) {
	sc, err := scenario.ReadFile(path)
	if err != nil {
		return nil, usageError(err)
	}
	if err := sc.Apply(scenario.Overrides{Seed: o.Seed, Duration: o.Duration, RateScale: o.RateScale}); err != nil {
		return nil, usageError(err)
	}
	var errs yamlx.Errors
	in := &runInput{Scenario: sc, Schedule: schedule.New(sc)}
	ops, newSource, err := build(sc, in.Schedule)
	errs.Append(err)
	in.Ops, in.NewSource = ops, newSource
	errs.Append(checkSLO(sc, ops))
	if len(sc.Designs) == 0 {
		in.Variants = []variantSpec{{Name: "default"}}
	}
	if err := errs.Err(); err != nil {
		return nil, usageError(err)
	}
	return in, nil
}
