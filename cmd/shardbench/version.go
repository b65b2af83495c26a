package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func newVersionCmd(io *IO) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of shardbench and of the drivers it was built with",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprintf(io.Out, "shardbench %s (%s %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			for _, d := range keyDependencies() {
				fmt.Fprintf(io.Out, "  %s %s\n", d.Path, d.Version)
			}
			return nil
		},
	}
}

// keyDependencies lists the drivers and libraries whose versions matter to results.
func keyDependencies() []*debug.Module {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	want := map[string]bool{
		"github.com/apache/cassandra-gocql-driver/v2": true,
		"go.mongodb.org/mongo-driver/v2":              true,
		"github.com/HdrHistogram/hdrhistogram-go":     true,
	}
	var out []*debug.Module
	for _, d := range info.Deps {
		if want[d.Path] {
			out = append(out, d)
		}
	}
	return out
}
