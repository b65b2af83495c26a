package itest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Lock holds an exclusive lock named name until the test ends. `go test ./...` runs the
// test binaries of several packages at once; tests that share one server and change its
// state (stopping a node of the shared Cassandra cluster, timing a run on it) take the
// server's lock so they never overlap with another package's tests on it. The lock is a
// file lock (flock) in the system's temporary directory, so it is released when the
// process ends, however it ends.
func Lock(t testing.TB, name string) {
	t.Helper()
	path := filepath.Join(os.TempDir(), "shardbench-itest-"+name+".lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatalf("lock %s: %v", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("lock %s: %v", path, err)
	}
	t.Cleanup(func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	})
}

// Cassandra returns the shared 3-node cluster's hosts (SHARDBENCH_CASSANDRA) and holds
// its lock for the test: every test on the cluster calls it first.
func Cassandra(t testing.TB) string {
	t.Helper()
	hosts := Env(t, "SHARDBENCH_CASSANDRA", "the 3-node Cassandra cluster (testenv/cassandra/start.sh 3)")
	Lock(t, "cassandra")
	return hosts
}
