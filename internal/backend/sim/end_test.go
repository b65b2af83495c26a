package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/metrics"
)

const saturatedClientScenario = `
name: saturated-client
seed: 5
load:
  arrival: poisson
  max_in_flight: 8
  on_full: queue
  timeout: 2s
  phases:
    - {name: steady, type: constant, rate: RATE, duration: 4s}
population:
  users: 100000
  sessions: 200000
mix:
  sessions.read: 1
backends:
  sim:
    cluster:
      dcs: [{name: dc1, nodes: 3, racks: 1}]
designs:
  - design: DESIGNS/seed000.yaml
`

// The run ends with its schedule: a client with on_full: queue that falls behind starts
// no operation after the schedule's end; the ones still waiting then are dropped, each
// counted. A client that keeps up drops none.
func TestQueuedOperationsEndWithTheSchedule(t *testing.T) {
	end := int64(4 * time.Second)
	for _, c := range []struct {
		rate      string
		saturated bool
	}{{"40000", true}, {"500", false}} {
		sc := writeScenario(t, strings.ReplaceAll(saturatedClientScenario, "RATE", c.rate))
		_, samples := simulate(t, sc, "seed000", 1<<30)
		var dropped, late, started int
		lastStart := int64(0)
		for i, smp := range samples {
			if smp.Flags&metrics.FlagDropped != 0 {
				dropped++
				continue
			}
			if dropped > 0 {
				t.Fatalf("rate %s: sample %d started at %v after an earlier one was dropped", c.rate, i, time.Duration(smp.Start))
			}
			started++
			lastStart = max(lastStart, smp.Start)
			if smp.Start > smp.Intended {
				late++
			}
		}
		if lastStart >= end {
			t.Errorf("rate %s: an operation started at %v, at or after the schedule's end %v", c.rate, time.Duration(lastStart), time.Duration(end))
		}
		if c.saturated && (dropped == 0 || late == 0) {
			t.Errorf("rate %s: %d dropped, %d late of %d: want a backlog dropped at the end", c.rate, dropped, late, len(samples))
		}
		if !c.saturated && dropped != 0 {
			t.Errorf("rate %s: %d of %d dropped by a client that keeps up", c.rate, dropped, len(samples))
		}
		t.Logf("rate %s: %d operations, %d started (%d late, the last at %v), %d dropped", c.rate, len(samples), started, late, time.Duration(lastStart), dropped)
	}
}
