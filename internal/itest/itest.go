// Package itest gates integration tests on the real servers and tools the project starts
// itself (Cassandra, PostgreSQL + FerretDB, Java HdrHistogram, Chromium).
//
// `make test` starts them, exports where they are, and sets SHARDBENCH_INTEGRATION=require:
// then a missing server FAILS the test instead of skipping it, so CI can never pass by
// quietly skipping. A developer running plain `go test ./...` without servers sees skips.
package itest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/shardbench/shardbench/internal/design"
	// Designs name the operations and fields of every workload.
	_ "github.com/shardbench/shardbench/workloads/all"
)

// Env returns the value of an environment variable naming a server or tool. When it is
// empty the test is skipped — or failed, when SHARDBENCH_INTEGRATION=require.
func Env(t testing.TB, name, what string) string {
	t.Helper()
	v := os.Getenv(name)
	if v != "" {
		return v
	}
	if Required() {
		t.Fatalf("%s is not set but SHARDBENCH_INTEGRATION=require: %s must be started by make test", name, what)
	}
	t.Skipf("%s not set: start %s (make test does) to run this integration test", name, what)
	return ""
}

// Required reports whether integration tests must run (make test sets it).
func Required() bool { return os.Getenv("SHARDBENCH_INTEGRATION") == "require" }

// Designs lists the shipped design files (repo/scenarios/designs) that has accepts, and
// fails the test when fewer than atLeast do: a design renamed away must not shrink an
// integration test silently.
func Designs(t testing.TB, repo string, has func(*design.Design) bool, atLeast int) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repo, "scenarios/designs/*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		d, err := design.Load(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if has(d) {
			out = append(out, f)
		}
	}
	if len(out) < atLeast {
		t.Fatalf("only %d matching designs found: %v", len(out), out)
	}
	return out
}
