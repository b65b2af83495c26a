package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shardbench/shardbench/internal/engine"
	"github.com/shardbench/shardbench/workloads"
)

// jobIndexEnv is the variable a Kubernetes Indexed Job sets to each pod's completion index.
const jobIndexEnv = "JOB_COMPLETION_INDEX"

// shardSpec is which shard of a distributed run this process is (Count 0: the whole run).
type shardSpec struct {
	Index, Count int
}

// parseShard reads --shard I/N, or --shards N with the index from JOB_COMPLETION_INDEX
// (getenv looks variables up; tests pass their own). Neither: the whole run.
func parseShard(shard string, shards int, getenv func(string) string) (shardSpec, error) {
	switch {
	case shard != "" && shards != 0:
		return shardSpec{}, usageErrorf("--shard %s and --shards %d: give one (--shards takes the index from %s)", shard, shards, jobIndexEnv)
	case shard != "":
		i, n, ok := strings.Cut(shard, "/")
		index, err1 := strconv.Atoi(strings.TrimSpace(i))
		count, err2 := strconv.Atoi(strings.TrimSpace(n))
		if !ok || err1 != nil || err2 != nil {
			return shardSpec{}, usageErrorf("--shard %q: want INDEX/COUNT, e.g. --shard 0/4 for the first of four", shard)
		}
		return checkShard(index, count, "--shard "+shard)
	case shards != 0:
		v := getenv(jobIndexEnv)
		if v == "" {
			return shardSpec{}, usageErrorf("--shards %d takes this process's index from %s, which is not set (a Kubernetes Indexed Job sets it): set it, or give --shard INDEX/%d", shards, jobIndexEnv, shards)
		}
		index, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return shardSpec{}, usageErrorf("%s=%q is not a shard index", jobIndexEnv, v)
		}
		return checkShard(index, shards, fmt.Sprintf("--shards %d with %s=%d", shards, jobIndexEnv, index))
	}
	return shardSpec{}, nil
}

func checkShard(index, count int, what string) (shardSpec, error) {
	switch {
	case count < 1:
		return shardSpec{}, usageErrorf("%s: the shard count must be at least 1", what)
	case count > maxShards:
		return shardSpec{}, usageErrorf("%s: at most %d shards", what, maxShards)
	case index < 0 || index >= count:
		return shardSpec{}, usageErrorf("%s: the shard index must be in 0..%d", what, count-1)
	}
	if count == 1 {
		return shardSpec{}, nil // the whole run
	}
	return shardSpec{Index: index, Count: count}, nil
}

// maxShards bounds --shard's count: each shard generates the whole stream, so beyond a
// few hundred processes generation, not sending, is the cost.
const maxShards = 1024

// parseStartAt reads --start-at: an RFC 3339 time (2026-11-28T10:00:00Z), the wall-clock
// instant every shard's schedule starts at.
func parseStartAt(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}, usageErrorf("--start-at %q: want an RFC 3339 time such as 2026-11-28T10:00:00Z (every shard gets the same one)", s)
	}
	return t, nil
}

// engineShard is the engine's view of this process's shard.
func (s shardSpec) engineShard(m *workloads.Model) engine.Shard {
	if s.Count < 2 {
		return engine.Shard{}
	}
	n := s.Count
	return engine.Shard{Index: s.Index, Count: n, Of: func(op *workloads.Op) int { return m.Shard(op, n) }}
}

// runDigest identifies what a run drives, for merge to tell runs of one scenario from
// runs of different ones: the scenario as run (every override and default applied) with
// the seed left out (repeats may differ in it; shards are checked for it apart), and
// every variant's design as compiled.
func runDigest(in *runInput) (string, error) {
	sc := *in.Scenario
	sc.Seed = 0
	asRun, err := sc.AsRun()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write(asRun)
	for _, v := range in.Variants {
		fmt.Fprintf(h, "\nvariant %q", v.Name)
		if v.Compiled != nil {
			fmt.Fprintf(h, " design %s", v.Compiled.Signature())
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// startAtNote warns when this shard is ready after the common start: what is already due
// goes out at once, late.
func startAtNote(at time.Time) string {
	if at.IsZero() {
		return ""
	}
	if late := time.Since(at); late > 0 {
		return fmt.Sprintf("--start-at %s passed %s ago: the operations already due go out at once, counted late from their intended times", at.UTC().Format(time.RFC3339), late.Round(time.Millisecond))
	}
	return ""
}
