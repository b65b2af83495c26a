package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/yamlx"
	_ "github.com/shardbench/shardbench/workloads/all" // the logical vocabulary designs refer to
)

// SchemaOptions are the inputs of `shardbench schema`.
type SchemaOptions struct {
	IO *IO
	// Path is a design file, or a scenario file (then the schema of each of its variants).
	Path string
	// Set overrides design parameters: name=value, the value in YAML.
	Set []string
	// Variant selects, for a scenario, the variants whose name contains it.
	Variant string
}

func newSchemaCmd(io *IO, runF func(*SchemaOptions) error) *cobra.Command {
	opts := &SchemaOptions{IO: io}
	cmd := &cobra.Command{
		Use:   "schema DESIGN|SCENARIO",
		Short: "Print the CQL and MongoDB commands a design implies",
		Long: `schema prints what a design needs in the databases: for Cassandra, CREATE KEYSPACE,
CREATE TYPE and CREATE TABLE statements with their options (Cassandra 5.0 CQL); for
MongoDB, mongosh commands: createCollection with the $jsonSchema validator,
createIndexes, enableSharding and shardCollection with presplitting.

Given a scenario, it prints the schema of every design variant the scenario drives (its
set and sweep values applied), or of the variants whose name contains --variant.`,
		Example: `  shardbench schema scenarios/designs/seed000.yaml
  shardbench schema scenarios/designs/seed000.yaml --set sessions.buckets=10
  shardbench schema scenarios/designs/seed001-mongo.yaml --set 'orders.shard_key={created_at: 1}'
  shardbench schema scenarios/claims/session-buckets.yaml --variant 'buckets=1000'`,
		Args: exactArgs(1, "a design or scenario file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runSchema(opts)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&opts.Set, "set", nil, "override a design parameter: name=value (YAML value; repeatable)")
	f.StringVar(&opts.Variant, "variant", "", "with a scenario: only variants whose name contains this")
	return cmd
}

// isScenario tells a scenario file from a design file by its top-level keys.
func isScenario(path string) (bool, error) {
	var probe map[string]yaml.Node
	data, err := yamlx.ReadFile(path)
	if err != nil {
		return false, err
	}
	root, err := yamlx.Parse(path, data)
	if err != nil {
		return false, err
	}
	if err := root.Decode(&probe); err != nil {
		return false, nil
	}
	_, hasMix := probe["mix"]
	_, hasLoad := probe["load"]
	return hasMix || hasLoad, nil
}

func runSchema(opts *SchemaOptions) error {
	scen, err := isScenario(opts.Path)
	if err != nil {
		return usageError(err)
	}
	if scen {
		if len(opts.Set) > 0 {
			return usageErrorf("--set applies to a design file; a scenario sets parameters per variant")
		}
		sc, err := scenario.ReadFile(opts.Path)
		if err != nil {
			return usageError(err)
		}
		vs, err := design.Expand(sc)
		if err != nil {
			return usageError(err)
		}
		printed := 0
		for _, v := range vs {
			if opts.Variant != "" && !strings.Contains(v.Name, opts.Variant) {
				continue
			}
			if printed > 0 {
				fmt.Fprintln(opts.IO.Out)
			}
			fmt.Fprintf(opts.IO.Out, "-- variant %s\n", v.Name)
			if err := design.WriteSchema(opts.IO.Out, v.Design); err != nil {
				return err
			}
			printed++
		}
		if printed == 0 {
			return usageErrorf("%s: no variant matches %q", opts.Path, opts.Variant)
		}
		return nil
	}
	if opts.Variant != "" {
		return usageErrorf("--variant applies to a scenario file; for a design use --set")
	}
	overrides, err := designOverrides(opts.Set)
	if err != nil {
		return err
	}
	d, err := design.Load(opts.Path, overrides...)
	if err != nil {
		return usageError(err)
	}
	return design.WriteSchema(opts.IO.Out, d)
}
