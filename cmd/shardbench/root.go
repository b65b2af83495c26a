package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shardbench/shardbench/internal/redact"
)

// version is set at build time (-ldflags "-X main.version=...").
var version = "dev"

// Main runs the CLI and returns the exit code.
//
// Everything the commands print goes through a redact.Writer: control characters from
// names read in files or results are escaped, and the secrets of any --target given are
// scrubbed (the backends already redact; this is the last line of defence).
func Main(args []string, io *IO) int {
	io = io.safe(redact.New(targetArgs(args)))
	root := newRootCmd(io)
	root.SetArgs(args)
	err := root.Execute()
	if err != nil && strings.HasPrefix(err.Error(), "unknown command ") {
		// cobra's own error for a command it does not know: a usage error.
		err = usageError(fmt.Errorf("%w\nRun 'shardbench --help' for usage.", err))
	}
	if err != nil {
		if msg := err.Error(); msg != "" {
			fmt.Fprintln(io.ErrOut, "shardbench: "+strings.ReplaceAll(msg, "\n", "\n  "))
		}
	}
	return exitCode(err)
}

// targetArgs finds the --target values of a command line.
func targetArgs(args []string) []string {
	var out []string
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--target="); ok {
			out = append(out, v)
		} else if a == "--target" && i+1 < len(args) {
			out = append(out, args[i+1])
		}
	}
	return out
}

func newRootCmd(io *IO) *cobra.Command {
	root := &cobra.Command{
		Use:   "shardbench",
		Short: "Measure whether Cassandra and MongoDB designs avoid hot partitions",
		Long: `shardbench drives the same Black Friday traffic against competing Cassandra and
MongoDB designs (partition keys, buckets, TTLs, shard keys, consistency levels) and
measures what each does: latency (coordinated-omission correct), hot partitions and
hot nodes/shards, partition growth. It runs against a simulated cluster (the default,
no database needed) or real Cassandra and MongoDB.

Exit codes: 0 ok, 1 run or gate failure (or interrupted), 2 usage or bad input.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		CompletionOptions: cobra.CompletionOptions{
			HiddenDefaultCmd: true,
		},
	}
	root.SetOut(io.Out)
	root.SetErr(io.ErrOut)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError(fmt.Errorf("%w\nRun '%s --help' for usage.", err, c.CommandPath()))
	})
	root.AddCommand(
		newRunCmd(io, nil),
		newValidateCmd(io, nil),
		newVersionCmd(io),
		newGateCmd(io, nil),
		newMergeCmd(io, nil),
		newSchemaCmd(io, nil),
		newReportCmd(io, nil),
		newCompareCmd(io, nil),
		newPlanCmd(io, nil),
		newKeyCmd(io, nil),
		newAnalyzeCmd(io, nil),
		newCalibrateCmd(io, nil),
		newCapacityCmd(io, nil),
		newFidelityCmd(io, nil),
	)
	return root
}

// exactArgs is cobra.ExactArgs with a usage exit code.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErrorf("%s needs %s (got %d arguments)\nRun '%s --help' for usage.", c.CommandPath(), what, len(args), c.CommandPath())
		}
		return nil
	}
}

// minArgs is cobra.MinimumNArgs with a usage exit code.
func minArgs(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) < n {
			return usageErrorf("%s needs %s\nRun '%s --help' for usage.", c.CommandPath(), what, c.CommandPath())
		}
		return nil
	}
}
