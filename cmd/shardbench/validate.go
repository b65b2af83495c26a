package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

// ValidateOptions are the inputs of `shardbench validate`.
type ValidateOptions struct {
	IO    *IO
	Files []string
}

func newValidateCmd(io *IO, runF func(*ValidateOptions) error) *cobra.Command {
	opts := &ValidateOptions{IO: io}
	cmd := &cobra.Command{
		Use:   "validate SCENARIO...",
		Short: "Check scenario files (and the designs they use) and report every problem",
		Long: `validate parses each scenario strictly, with the designs it drives and its SLO and
backend sections, and prints every problem with file:line:column and the field. It
exits 0 when all files are valid and 2 otherwise.`,
		Args: minArgs(1, "at least one scenario file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			if runF != nil {
				return runF(opts)
			}
			return runValidate(opts)
		},
	}
	return cmd
}

func runValidate(opts *ValidateOptions) error {
	bad := 0
	for _, f := range opts.Files {
		in, err := loadRun(f, runOverrides{})
		if err != nil {
			bad++
			fmt.Fprintln(opts.IO.ErrOut, err)
			continue
		}
		fmt.Fprintf(opts.IO.Out, "%s: ok\n", f)
		// Human ceilings the population cannot hold at the peak: valid, but every person
		// then acts faster than a person does.
		for _, note := range in.Prepared.Model.Overdrawn {
			fmt.Fprintf(opts.IO.Out, "%s: note: population.user_activity: %s\n", f, note)
		}
	}
	if bad > 0 {
		return usageError(errors.New(plural(bad, "file is", "files are") + " invalid"))
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
