package engine

import (
	"context"
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/workloads"
)

// thirds splits the stream by sequence number into three shards.
func thirds(i int) Shard {
	return Shard{Index: i, Count: 3, Of: func(op *workloads.Op) int { return int(op.Seq % 3) }}
}

// A real-time shard sends exactly its own operations, each once at its intended time;
// the three shards together send the whole stream, and only shard 0 acts on the
// scenario's events (the servers must see each event once).
func TestRealtimeShardSendsItsOwnOperations(t *testing.T) {
	seen := map[uint64]int{}
	var mu sync.Mutex
	var total int64
	for i := range 3 {
		synctest.Test(t, func(t *testing.T) {
			be := backend.Func(func(_ context.Context, op *workloads.Op) backend.Outcome {
				mu.Lock()
				seen[op.Seq]++
				mu.Unlock()
				if int(op.Seq%3) != i {
					t.Errorf("shard %d sent operation %d", i, op.Seq)
				}
				return backend.Outcome{}
			})
			sc := testScenario("uniform", 16, scenario.Phase{Name: "c", Type: "constant", Rate: 900, Duration: 2 * time.Second})
			sc.Events = []scenario.Event{{At: time.Second, Action: "node_down", Node: "n1"}}
			cfg := testConfig(t, sc, 2, VariantBackend{Name: "v", Backend: be})
			cfg.Shard = thirds(i)
			sum, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			v := sum.Variants[0]
			if v.Totals.Scheduled != 600 || v.Totals.Completed != 600 || v.Totals.Late != 0 {
				t.Errorf("shard %d: %+v, want 600 operations on time", i, v.Totals)
			}
			total += v.Totals.Scheduled
			if sum.Shard == nil || sum.Shard.Index != i || sum.Shard.Count != 3 {
				t.Errorf("summary shard %+v", sum.Shard)
			}
			// The shard states its even share of the schedule as its target.
			if math.Abs(sum.Scenario.ExpectedOps-600) > 1e-6 || math.Abs(v.Totals.TargetRate-300) > 1 {
				t.Errorf("shard %d expects %g operations, target %g/s", i, sum.Scenario.ExpectedOps, v.Totals.TargetRate)
			}
			if got := len(v.Events); got != map[bool]int{true: 1, false: 0}[i == 0] {
				t.Errorf("shard %d acted on %d events", i, got)
			}
		})
	}
	if total != 1800 || len(seen) != 1800 {
		t.Fatalf("the shards sent %d operations, %d distinct, want 1800", total, len(seen))
	}
	for seq, n := range seen {
		if n != 1 {
			t.Errorf("operation %d sent %d times", seq, n)
		}
	}
}

// On the common clock a shard that is ready late does not shift its schedule: the
// operations already due go out at once, counted late with their response time from the
// intended start; its intervals still end on whole seconds since the common start, as
// every other shard's do; and the variant says how late it was.
func TestLateShardCountsMissedOperationsLate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := testScenario("uniform", 64, scenario.Phase{Name: "c", Type: "constant", Rate: 1000, Duration: 3 * time.Second})
		cfg := testConfig(t, sc, 1, VariantBackend{Name: "v", Backend: backend.Func(func(context.Context, *workloads.Op) backend.Outcome { return backend.Outcome{} })})
		cfg.Shard = Shard{Index: 0, Count: 2, Of: func(*workloads.Op) int { return 0 }} // this shard owns everything
		cfg.StartAt = time.Now().Add(-1500 * time.Millisecond)
		sum, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		v := sum.Variants[0]
		st := v.Totals
		if st.Scheduled != 3000 || st.Completed != 3000 {
			t.Fatalf("totals %+v: every operation is sent, none shifted away", st)
		}
		if st.Late < 1490 || st.Late > 1510 {
			t.Errorf("late %d, want the 1500 due before the shard was ready", st.Late)
		}
		if st.Response.Max < 1490 || st.Response.Max > 1510 {
			t.Errorf("response max %.1f ms, want about 1500 (the first operation, due at the start)", st.Response.Max)
		}
		if !v.StartedAt.Equal(cfg.StartAt) {
			t.Errorf("variant started at %s, want the common start %s", v.StartedAt, cfg.StartAt)
		}
		if len(v.Notes) == 0 {
			t.Error("no note says the shard started late")
		}
		pts, err := results.ReadTimeseries(cfg.Dir.Path)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pts[1:] {
			if p.StartS != math.Trunc(p.StartS) {
				t.Errorf("interval starts at %gs: not on a whole second of the common clock", p.StartS)
			}
		}
		if pts[0].StartS != 0 || pts[0].EndS != 2 {
			t.Errorf("first interval [%g, %g), want [0, 2): the late start's missed second and the next", pts[0].StartS, pts[0].EndS)
		}
	})
}

// On the common clock a shard ready early waits for the start: its first operation goes
// out at the common start, not when the process was ready.
func TestShardWaitsForTheCommonStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var first time.Time
		var once sync.Once
		be := backend.Func(func(context.Context, *workloads.Op) backend.Outcome {
			once.Do(func() { first = time.Now() })
			return backend.Outcome{}
		})
		sc := testScenario("uniform", 8, scenario.Phase{Name: "c", Type: "constant", Rate: 100, Duration: time.Second})
		cfg := testConfig(t, sc, 1, VariantBackend{Name: "v", Backend: be})
		start := time.Now().Add(5 * time.Second)
		cfg.StartAt = start
		sum, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if first.Before(start) || first.Sub(start) > 20*time.Millisecond {
			t.Errorf("first operation at %s, common start %s", first, start)
		}
		if sum.Variants[0].Totals.Late != 0 {
			t.Errorf("late %d", sum.Variants[0].Totals.Late)
		}
	})
}

// A simulated backend that cannot run a shard is refused, not run whole.
func TestShardNeedsAShardedSimulator(t *testing.T) {
	sc := testScenario("uniform", 8, scenario.Phase{Name: "c", Type: "constant", Rate: 100, Duration: time.Second})
	cfg := testConfig(t, sc, 1, VariantBackend{Name: "v", Virtual: plainVirtual{}})
	cfg.Shard = thirds(1)
	if _, err := Run(context.Background(), cfg); err == nil {
		t.Fatal("a simulator without RecordOnly ran a shard")
	}
}

type plainVirtual struct{}

func (plainVirtual) Simulate(context.Context, func() *workloads.Op, func(*metrics.Sample)) error {
	return nil
}
func (plainVirtual) Close() error { return nil }

// A shard's target is its share of the run's served schedule: every unserved operation of
// the run is left out before the share is taken, so the shards' targets add up to the
// whole run's second by second also when one shard owns every unserved operation (taking
// a shard's own unserved operations off its share would leave it a negative target, and
// clamping that at zero would add up to more than the run's).
func TestShardTargetsAddUpWithUnservedOperations(t *testing.T) {
	sc := testScenario("uniform", 16, scenario.Phase{Name: "c", Type: "constant", Rate: 900, Duration: 2 * time.Second})
	unserved := []string{"", "elsewhere", "elsewhere"} // two of three operation types
	// The unserved operations all on shard 0; the served ones spread by sequence.
	of := func(op *workloads.Op) int {
		if op.Type != 0 {
			return 0
		}
		return int(op.Seq % 3)
	}
	targets := func(sh Shard) (map[float64]float64, int64) {
		var out map[float64]float64
		var u int64
		synctest.Test(t, func(t *testing.T) {
			be := backend.Func(func(context.Context, *workloads.Op) backend.Outcome { return backend.Outcome{} })
			cfg := testConfig(t, sc, 3, VariantBackend{Name: "v", Backend: be, Unserved: unserved})
			cfg.Shard = sh
			sum, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			u = sum.Variants[0].Totals.Unserved
			cfg.Dir.Close()
			pts, err := results.ReadTimeseries(cfg.Dir.Path)
			if err != nil {
				t.Fatal(err)
			}
			out = map[float64]float64{}
			for _, p := range pts {
				out[p.StartS] += p.TargetRate
			}
		})
		return out, u
	}
	whole, wholeU := targets(Shard{})
	sum := map[float64]float64{}
	var shardsU int64
	for i := range 3 {
		got, u := targets(Shard{Index: i, Count: 3, Of: of})
		for s, r := range got {
			sum[s] += r
		}
		shardsU += u
	}
	if wholeU != 1200 || shardsU != wholeU {
		t.Errorf("unserved: whole run %d, shards %d; want 1200 each", wholeU, shardsU)
	}
	if whole[0] < 290 || whole[0] > 310 {
		t.Errorf("the whole run's target in its first second: %g/s, want 300 (900 less 600 unserved)", whole[0])
	}
	for s, r := range whole {
		if math.Abs(sum[s]-r) > 1e-6*max(r, 1) {
			t.Errorf("second %g: the shards' targets add up to %g/s, the whole run's is %g/s", s, sum[s], r)
		}
	}
}
