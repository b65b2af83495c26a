package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// version is set at build time (-ldflags "-X main.version=...").
var version = "dev"

// Main runs the CLI and returns the exit code.
func Main(args []string, io *IO) int {
	root := newRootCmd(io)
	root.SetArgs(args)
	err := root.Execute()
	if err != nil {
		if msg := err.Error(); msg != "" {
			fmt.Fprintln(io.ErrOut, "shardbench: "+strings.ReplaceAll(msg, "\n", "\n  "))
		}
	}
	return exitCode(err)
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
