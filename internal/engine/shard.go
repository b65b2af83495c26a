package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/workloads"
)

// Shard makes this process one of Count that together send the operation stream (run
// --shard I/N). Every process generates the whole stream; a real-time variant sends only
// the operations Of assigns to Index, at their own intended times; a simulated variant
// simulates every operation, since the servers see the whole run's load, and records only
// those. A zero Shard (Count < 2) is the whole stream.
type Shard struct {
	Index, Count int
	// Of returns the shard that owns an operation (workloads.Model.Shard).
	Of func(op *workloads.Op) int
}

// On says whether the run is one shard of several.
func (s Shard) On() bool { return s.Count > 1 }

func (s Shard) owns(op *workloads.Op) bool { return s.Of(op) == s.Index }

func (s Shard) check() error {
	if !s.On() {
		return nil
	}
	if s.Of == nil {
		return fmt.Errorf("shard %d/%d: no ownership function", s.Index, s.Count)
	}
	if s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("shard index %d is outside 0..%d", s.Index, s.Count-1)
	}
	return nil
}

// ownSource yields only the operations the shard owns.
type ownSource struct {
	src Source
	sh  Shard
}

func (o *ownSource) Next(op *workloads.Op) bool {
	for o.src.Next(op) {
		if o.sh.owns(op) {
			return true
		}
	}
	return false
}

// VariantGap separates real-time variants on the shards' common clock: variant k of a run
// with StartAt starts at StartAt + k × (schedule + drain_timeout + VariantGap), so that
// every shard starts it at the same instant. The gap leaves time for the previous
// variant's backend report (server-side figures) and checkpoint.
const VariantGap = 10 * time.Second

// applyShard returns the configuration real-time variants run with: for a shard, scenario
// events only on shard 0 (the servers must see each event once, not once per shard);
// runRealtime sends only the shard's own operations (ownSource). Simulated variants are
// told which operations to record. It fails when a simulated backend cannot run a shard.
func applyShard(cfg *Config) (*Config, error) {
	if err := cfg.Shard.check(); err != nil {
		return nil, err
	}
	if !cfg.Shard.On() {
		return cfg, nil
	}
	out := *cfg
	sh := cfg.Shard
	if sh.Index != 0 && len(cfg.Scenario.Events) > 0 {
		sc := *cfg.Scenario
		sc.Events = nil
		out.Scenario = &sc
	}
	for _, v := range cfg.Variants {
		if v.Virtual == nil {
			continue
		}
		s, ok := v.Virtual.(backend.Sharded)
		if !ok {
			return nil, fmt.Errorf("variant %s: this simulated backend cannot run one shard of a distributed run", v.Name)
		}
		s.RecordOnly(sh.owns)
	}
	return &out, nil
}

// share is the fraction of the schedule's expected operations this process states as its
// target: its even share of the run (a shard's actual share differs by its hottest
// entities; every shard's together make the whole schedule).
func (cfg *Config) share() float64 {
	if cfg.Shard.On() {
		return 1 / float64(cfg.Shard.Count)
	}
	return 1
}

// shardInfo is the summary's record of the shard, nil for a whole run.
func (cfg *Config) shardInfo() *results.ShardInfo {
	if !cfg.Shard.On() {
		return nil
	}
	si := &results.ShardInfo{Index: cfg.Shard.Index, Count: cfg.Shard.Count}
	if !cfg.StartAt.IsZero() {
		si.StartAt = cfg.StartAt.UTC().Format(time.RFC3339Nano)
	}
	return si
}

// startLead is how long before a variant's start on the common clock its workers are set
// up, so that its first operation is not late for the set-up.
const startLead = time.Second

// variantStart is when real-time variant vi's schedule starts: on the common clock
// (StartAt), StartAt plus the earlier real-time variants' strides, after waiting until
// just before it (false: interrupted while waiting); without StartAt, now.
func (cfg *Config) variantStart(ctx context.Context, vi int) (time.Time, bool) {
	if cfg.StartAt.IsZero() {
		return time.Now(), true
	}
	k := 0
	for i := range vi {
		if cfg.Variants[i].Virtual == nil {
			k++
		}
	}
	stride := cfg.Schedule.Duration() + cfg.Scenario.Load.DrainTimeout + VariantGap
	at := cfg.StartAt.Add(time.Duration(k) * stride)
	if wait := time.Until(at) - startLead; wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return at, false
		}
	}
	return at, true
}

// variantOrigin is the instant a real-time variant's intended times count from: its start
// on the common clock, or, without one, now (its workers being ready).
func (cfg *Config) variantOrigin(start time.Time) time.Time {
	if cfg.StartAt.IsZero() {
		return time.Now()
	}
	return start
}

// lateStartNote says how late a variant started on the common clock ("" when on time):
// the operations due before then went out at once, counted late from their intended
// times, never shifted.
func (cfg *Config) lateStartNote(origin time.Time, ready time.Time) string {
	if cfg.StartAt.IsZero() {
		return ""
	}
	late := ready.Sub(origin)
	if late <= cfg.Scenario.Load.LateAfter {
		return ""
	}
	return fmt.Sprintf("this process was ready %s after the variant's start on the common clock (%s): the operations due before then went out at once, counted late from their intended times",
		late.Round(time.Millisecond), origin.UTC().Format(time.RFC3339Nano))
}

// alignedIntervals says whether a real-time variant's intervals end on whole ticks since
// its origin: on a common clock, and for every shard of a distributed run, whose
// intervals merge second by second.
func (cfg *Config) alignedIntervals() bool { return !cfg.StartAt.IsZero() || cfg.Shard.On() }

// intervalClock tells a real-time variant's ticker when to close an interval. Aligned,
// every interval ends on a whole tick since the origin, also for a shard that started
// late, so the shards' intervals line up for merge; otherwise an interval ends when its
// tick fires.
type intervalClock struct {
	origin  time.Time
	tick    time.Duration
	aligned bool
	ticker  *time.Ticker
	timer   *time.Timer
	next    time.Duration // aligned: the end of the interval being collected
}

func newIntervalClock(origin time.Time, tick time.Duration, aligned bool) *intervalClock {
	c := &intervalClock{origin: origin, tick: tick, aligned: aligned}
	if !aligned {
		c.ticker = time.NewTicker(tick)
		return c
	}
	c.next = tick
	if now := time.Since(origin); now > 0 {
		c.next = (now/tick + 1) * tick
	}
	c.timer = time.NewTimer(time.Until(origin.Add(c.next)))
	return c
}

// C fires when an interval is due to close.
func (c *intervalClock) C() <-chan time.Time {
	if c.ticker != nil {
		return c.ticker.C
	}
	return c.timer.C
}

// End returns the end of the interval that just became due (time since the origin) and
// arms the clock for the next one. A wake-up that missed boundaries closes at the latest.
func (c *intervalClock) End() time.Duration {
	now := time.Since(c.origin)
	if !c.aligned {
		return now
	}
	end := max(c.next, now/c.tick*c.tick)
	c.next = end + c.tick
	c.timer.Reset(time.Until(c.origin.Add(c.next)))
	return end
}

func (c *intervalClock) Stop() {
	if c.ticker != nil {
		c.ticker.Stop()
	} else {
		c.timer.Stop()
	}
}
