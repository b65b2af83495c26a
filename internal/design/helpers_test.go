package design_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/schedule"
	"github.com/shardbench/shardbench/internal/yamlx"
	"github.com/shardbench/shardbench/workloads"
	_ "github.com/shardbench/shardbench/workloads/all"
)

const designsDir = "../../scenarios/designs"

// allOpsScenario is a scenario with every registered operation in its mix.
func allOpsScenario(t testing.TB, seed int64) *scenario.Scenario {
	t.Helper()
	var mix strings.Builder
	for _, name := range workloads.OpNames() {
		fmt.Fprintf(&mix, "  %s: 1\n", name)
	}
	text := fmt.Sprintf(`name: t
seed: %d
load:
  arrival: uniform
  phases:
    - {type: constant, rate: 1000, duration: 60s}
population:
  users: 20000
  sessions: 40000
  carts: 10000
  products: 5000
  bots: {count: 3, share: 0.1}
  hot_products: {count: 10, share: 0.1, shift_every: 10s}
mix:
%s`, seed, mix.String())
	sc, err := scenario.Parse("t.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func model(t testing.TB, sc *scenario.Scenario) *workloads.Model {
	t.Helper()
	m, err := workloads.New(sc)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func designFiles(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(designsDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no design files in %s: %v", designsDir, err)
	}
	return files
}

func stream(m *workloads.Model) *workloads.Stream {
	return m.NewStream(schedule.New(m.Scenario))
}

func mustLoad(t testing.TB, path string) *design.Design {
	t.Helper()
	d, err := design.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func yamlScalar(v string, line, col int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: v, Line: line, Column: col}
}

func pos(file string, line, col int) yamlx.Pos { return yamlx.Pos{File: file, Line: line, Col: col} }
