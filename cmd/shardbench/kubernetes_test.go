package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"
)

// The Kubernetes manifests' shardbench command lines parse with this CLI, and their
// scenario ConfigMap holds a valid scenario whose designs serve every operation of its
// mix. (docker/kubernetes's own module decodes the manifests into the Kubernetes API
// types.)
func TestKubernetesManifestsMatchTheCLI(t *testing.T) {
	dir := filepath.Join("..", "..", "docker", "kubernetes")
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s: %v", dir, err)
	}
	type container struct {
		Name string   `yaml:"name"`
		Args []string `yaml:"args"`
	}
	var obj struct {
		Kind     string `yaml:"kind"`
		Metadata struct {
			Name string `yaml:"name"`
		} `yaml:"metadata"`
		Data map[string]string `yaml:"data"`
		Spec struct {
			Template struct {
				Spec struct {
					InitContainers []container `yaml:"initContainers"`
					Containers     []container `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	configMaps := map[string]map[string]string{}
	var commands [][]string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		obj.Kind, obj.Data, obj.Spec.Template.Spec.InitContainers, obj.Spec.Template.Spec.Containers = "", nil, nil, nil
		if err := yaml.Unmarshal(b, &obj); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		switch obj.Kind {
		case "ConfigMap":
			configMaps[obj.Metadata.Name] = obj.Data
		case "Job":
			for _, c := range append(obj.Spec.Template.Spec.InitContainers, obj.Spec.Template.Spec.Containers...) {
				commands = append(commands, c.Args)
			}
		}
	}
	run := configMaps["shardbench-run"]
	ref := regexp.MustCompile(`\$\(([A-Z_]+)\)`)
	seen := map[string]int{}
	for _, args := range commands {
		expanded := make([]string, len(args))
		for i, a := range args {
			expanded[i] = ref.ReplaceAllStringFunc(a, func(v string) string {
				name := ref.FindStringSubmatch(v)[1]
				if name == "JOB_COMPLETION_INDEX" {
					return "0"
				}
				return run[name]
			})
		}
		io, _, _ := testIO()
		root := &cobra.Command{Use: "shardbench", SilenceErrors: true, SilenceUsage: true}
		var runOpts *RunOptions
		root.AddCommand(
			newRunCmd(io, func(o *RunOptions) error { runOpts = o; return nil }),
			newMergeCmd(io, func(*MergeOptions) error { return nil }),
			newReportCmd(io, func(*ReportOptions) error { return nil }),
			newGateCmd(io, func(*GateOptions) error { return nil }),
		)
		root.SetArgs(expanded)
		if err := root.Execute(); err != nil {
			t.Errorf("shardbench %s: %v", strings.Join(expanded, " "), err)
			continue
		}
		seen[args[0]]++
		if runOpts != nil && runOpts.Shards > 0 {
			if _, err := parseShard(runOpts.Shard, runOpts.Shards, func(string) string { return "0" }); err != nil {
				t.Errorf("the shard's flags: %v", err)
			}
			if _, err := parseStartAt(runOpts.StartAt); err != nil {
				t.Errorf("the shard's start: %v", err)
			}
		}
	}
	if seen["run"] != 2 || seen["merge"] != 1 || seen["report"] != 1 || seen["gate"] != 1 {
		t.Errorf("want setup and shards (run), merge, report and gate: %v", seen)
	}

	// The scenario, as the pods see it: the ConfigMap's files in one folder.
	scenarioDir := t.TempDir()
	for name, body := range configMaps["shardbench-scenario"] {
		if err := os.WriteFile(filepath.Join(scenarioDir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in, err := loadRun(filepath.Join(scenarioDir, "scenario.yaml"), runOverrides{})
	if err != nil {
		t.Fatalf("the ConfigMap's scenario: %v", err)
	}
	if len(in.Variants) < 2 {
		t.Errorf("%d variants", len(in.Variants))
	}
	for _, v := range in.Variants {
		if v.Compiled == nil || v.Compiled.Design.Cassandra == nil {
			t.Errorf("%s: the Jobs run the cassandra backend; this design has no Cassandra part", v.Name)
			continue
		}
		for i, op := range in.Ops {
			if ok, why := v.Compiled.Served(i); !ok {
				t.Errorf("%s does not serve %s (%s): every operation of the mix must be served, or the gate's error rate counts it", v.Name, op.Name, why)
			}
		}
	}
}

// The one-host compose file runs the same steps with the same flags: setup, four shards
// (their indexes from JOB_COMPLETION_INDEX), merge of the four, report, gate.
func TestComposeDistributedRunMatchesTheCLI(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docker", "distributed", "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Services map[string]struct {
			Command     []string          `yaml:"command"`
			Environment map[string]string `yaml:"environment"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	defaults := regexp.MustCompile(`\$\{[A-Z_]+:-([^}]*)\}`) // compose's ${VAR:-default}
	indexes := map[string]bool{}
	for name, svc := range f.Services {
		args := make([]string, len(svc.Command))
		for i, a := range svc.Command {
			args[i] = defaults.ReplaceAllString(a, "$1")
		}
		io, _, _ := testIO()
		root := &cobra.Command{Use: "shardbench", SilenceErrors: true, SilenceUsage: true}
		var runOpts *RunOptions
		root.AddCommand(
			newRunCmd(io, func(o *RunOptions) error { runOpts = o; return nil }),
			newMergeCmd(io, func(*MergeOptions) error { return nil }),
			newReportCmd(io, func(*ReportOptions) error { return nil }),
			newGateCmd(io, func(*GateOptions) error { return nil }),
		)
		root.SetArgs(args)
		if err := root.Execute(); err != nil {
			t.Errorf("%s: shardbench %s: %v", name, strings.Join(args, " "), err)
			continue
		}
		if runOpts == nil || runOpts.Shards == 0 {
			continue
		}
		env := svc.Environment
		sh, err := parseShard(runOpts.Shard, runOpts.Shards, func(k string) string { return env[k] })
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if want := fmt.Sprintf("/shard-%d", sh.Index); !strings.HasSuffix(runOpts.Out, want) {
			t.Errorf("%s is shard %d but writes %s", name, sh.Index, runOpts.Out)
		}
		indexes[fmt.Sprint(sh.Index)] = true
	}
	if len(indexes) != 4 || f.Services["merge"].Command == nil || f.Services["gate"].Command == nil {
		t.Errorf("want shards 0-3, merge and gate: shards %v", indexes)
	}
}
