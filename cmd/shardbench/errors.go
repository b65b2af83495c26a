package main

import (
	"errors"
	"fmt"

	"github.com/shardbench/shardbench/internal/inputfile"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/yamlx"
)

// Exit codes, documented in the README.
const (
	exitOK      = 0
	exitFailure = 1 // the run failed or was interrupted, or a gate failed
	exitUsage   = 2 // bad flags, scenario, design or other input
)

// exitError carries an exit code with an error.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageError marks bad input: exit code 2.
func usageError(err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: exitUsage, err: err}
}

// usageErrorf formats a bad-input error.
func usageErrorf(format string, args ...any) error {
	return usageError(fmt.Errorf(format, args...))
}

// silentFailure exits 1 without printing anything more (the command already explained).
var silentFailure = &exitError{code: exitFailure, err: errors.New("")}

// exitCode is the one exit-code policy of every command (README, "Exit codes"): an error
// marked with a code keeps it; an error about input — a file that cannot be read as what
// it should be (package inputfile), a YAML file with problems (yamlx), a results
// directory that cannot be read (results.ErrUnreadable) or merged — is a usage error (2),
// whichever command met it; anything else is a failure (1).
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if badInput(err) {
		return exitUsage
	}
	return exitFailure
}

func badInput(err error) bool {
	var fe *inputfile.Error
	var ye yamlx.Errors
	var y1 yamlx.Error
	return errors.As(err, &fe) || errors.As(err, &ye) || errors.As(err, &y1) ||
		errors.Is(err, results.ErrUnreadable) || errors.Is(err, results.ErrMergeInput)
}
