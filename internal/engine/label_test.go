package engine

import (
	"context"
	"runtime/pprof"
	"sync"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/workloads"
)

// labelSim is a simulator that notes the profiler label "variant" it simulates under.
type labelSim struct {
	fakeSim
	label string
}

func (f *labelSim) Simulate(ctx context.Context, next func() *workloads.Op, record func(*metrics.Sample)) error {
	f.label, _ = pprof.Label(ctx, "variant")
	return f.fakeSim.Simulate(ctx, next, record)
}

// Every variant, real-time or simulated, runs under the profiler label "variant" with its
// name, and a real-time variant's operations are sent with a context that carries it: a
// CPU profile of the run tells the variants apart.
func TestVariantsRunUnderTheirProfilerLabel(t *testing.T) {
	sc := testScenario("uniform", 4, scenario.Phase{Name: "c", Type: "constant", Rate: 200, Duration: time.Second})
	var mu sync.Mutex
	seen := map[string]int{}
	real := backend.Func(func(ctx context.Context, _ *workloads.Op) backend.Outcome {
		l, _ := pprof.Label(ctx, "variant")
		mu.Lock()
		seen[l]++
		mu.Unlock()
		return backend.Outcome{}
	})
	sims := []*labelSim{{}, {}}
	cfg := testConfig(t, sc, 1,
		VariantBackend{Name: "real", Backend: real},
		VariantBackend{Name: "sim-a", Virtual: sims[0]},
		VariantBackend{Name: "sim-b", Virtual: sims[1]})
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || seen["real"] == 0 {
		t.Errorf("the real-time variant's operations ran under the labels %v, want only \"real\"", seen)
	}
	for i, want := range []string{"sim-a", "sim-b"} {
		if sims[i].label != want {
			t.Errorf("simulated variant %s ran under the label %q", want, sims[i].label)
		}
		if sims[i].n == 0 {
			t.Errorf("simulated variant %s saw no operations", want)
		}
	}
}
