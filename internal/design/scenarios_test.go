package design_test

import (
	"path/filepath"
	"testing"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/workloads"
)

// Every shipped scenario parses and validates, its operations and knobs exist, every design
// variant it lists loads, and every variant compiles against its operation table.
func TestShippedScenariosValidate(t *testing.T) {
	files, _ := filepath.Glob("../../scenarios/*.yaml")
	claims, _ := filepath.Glob("../../scenarios/claims/*.yaml")
	bench, _ := filepath.Glob("../../scenarios/bench/*.yaml")
	files = append(append(files, claims...), bench...)
	need := map[string]bool{"black-friday.yaml": false, "smoke.yaml": false}
	for _, f := range files {
		need[filepath.Base(f)] = true
		t.Run(filepath.Base(f), func(t *testing.T) {
			sc, err := scenario.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			prep, err := design.Prepare(sc)
			if err != nil {
				t.Fatal(err)
			}
			if len(prep.Variants) == 0 || len(prep.Compiled) != len(prep.Variants) {
				t.Fatal("a shipped scenario drives at least one design")
			}
			m := prep.Model
			s := stream(m)
			var op workloads.Op
			for i := 0; i < 1000; i++ {
				if !s.Next(&op) {
					t.Fatal("the stream ended early")
				}
			}
		})
	}
	for f, ok := range need {
		if !ok {
			t.Errorf("scenarios/%s is missing", f)
		}
	}
}

// The smoke scenario exercises every operation type; black-friday drives every design file.
func TestSmokeAndBlackFridayCoverage(t *testing.T) {
	sc, err := scenario.ReadFile("../../scenarios/smoke.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Mix) != len(workloads.OpNames()) {
		t.Errorf("smoke mixes %d operations, there are %d", len(sc.Mix), len(workloads.OpNames()))
	}
	bf, err := scenario.ReadFile("../../scenarios/black-friday.yaml")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, d := range bf.Designs {
		used[filepath.Base(d.Design)] = true
	}
	for _, f := range designFiles(t) {
		if !used[filepath.Base(f)] {
			t.Errorf("black-friday does not drive %s", filepath.Base(f))
		}
	}
	if d := bf.Duration(); d.Minutes() < 9 || d.Minutes() > 11 {
		t.Errorf("black-friday lasts %s, want about 10 minutes", d)
	}
}
