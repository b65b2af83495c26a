// Package itest gates integration tests on the real servers and tools the project starts
// itself (Cassandra, PostgreSQL + FerretDB, Java HdrHistogram, Chromium).
//
// `make test` starts them, exports where they are, and sets SHARDBENCH_INTEGRATION=require:
// then a missing server FAILS the test instead of skipping it, so CI can never pass by
// quietly skipping. A developer running plain `go test ./...` without servers sees skips.
package itest

import (
	"os"
	"testing"
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
