package workloads_test

import (
	"fmt"
	"testing"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/schedule"
	"github.com/shardbench/shardbench/workloads"
)

// chiSquare1pct99 is the 99th percentile of the chi-square distribution with 99 degrees
// of freedom (100 buckets): a uniform distribution exceeds it one time in a hundred.
const chiSquare1pct99 = 134.642

// The short run: mostly creates, so that a run-created session is read about once (the
// accesses of one session are not independent draws: with many reads per session the
// bucket counts spread wider than a multinomial's, and the chi-square test would reject a
// correct stream). Over 40 seeds this gives a mean chi-square of 104 (99 expected), none
// beyond the 1% critical value; the stream before the fix gave 643, all beyond it.
const (
	shortRate = "4k"
	shortMix  = "  sessions.create: 70\n  sessions.read: 15\n  sessions.touch: 15\n"
)

// A short run keeps the declared distribution: with uniform user activity and no bots,
// the accesses of a 10-second run to seed 000's user_sessions spread uniformly over its
// 100 buckets (abs(UUID.hashCode()) % 100). A session picked "recently created" used to
// be the oldest one the run had created whenever the age drawn reached further back, so
// the first session of the run took a large share of every short run.
func TestShortRunKeepsSessionBucketsUniform(t *testing.T) {
	for _, seed := range []int64{1, 2, 3} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			counts, n, top := sessionBuckets(t, seed, "  user_activity: {distribution: uniform}\n  bots: {count: 0}\n", shortRate, shortMix)
			exp := float64(n) / 100
			chi := 0.0
			for _, c := range counts {
				chi += (float64(c) - exp) * (float64(c) - exp) / exp
			}
			if chi > chiSquare1pct99 {
				t.Errorf("chi-square %.1f over 100 buckets (%d accesses) exceeds %.1f, the 1%% critical value: not uniform", chi, n, chiSquare1pct99)
			}
			if share := float64(top) / float64(n); share > 0.005 {
				t.Errorf("one session took %.2f%% of the accesses", 100*share)
			}
		})
	}
}

// sessionBuckets runs 10 seconds of session creates, reads and touches and counts the
// user_sessions accesses per bucket of seed 000's design; top is the accesses of the
// busiest session.
func sessionBuckets(t *testing.T, seed int64, population, rate, mix string) (counts [100]int, n, top int) {
	t.Helper()
	text := fmt.Sprintf(`name: short
seed: %d
load:
  arrival: poisson
  phases:
    - {type: constant, rate: %s, duration: 10s}
population:
  users: 100000
  sessions: 200000
%smix:
%s`, seed, rate, population, mix)
	sc, err := scenario.Parse("short.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	m := newModel(t, sc)
	d, err := design.Load("../scenarios/designs/seed000.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := design.Compile(d, m)
	if err != nil {
		t.Fatal(err)
	}
	s := m.NewStream(schedule.New(sc))
	var op workloads.Op
	var acc []design.Access
	var vals []workloads.Value
	per := map[int64]int{}
	for s.Next(&op) {
		if m.Ops[op.Type].Name == "sessions.create" {
			continue
		}
		acc = p.Accesses(&op, acc[:0])
		for i := range acc {
			if acc[i].Step.Target != "user_sessions" {
				continue
			}
			vals, _ = acc[i].ShardKey(&op, vals[:0], nil)
			counts[vals[0].Int]++
			n++
			per[op.Session]++
		}
	}
	for _, c := range per {
		top = max(top, c)
	}
	return counts, n, top
}
