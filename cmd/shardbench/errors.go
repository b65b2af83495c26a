package main

import (
	"errors"
	"fmt"
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

func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return exitFailure
}
