package backend

import (
	"context"
	"errors"
	"math"
	"sync"
	"time"

	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/yamlx"
	"github.com/shardbench/shardbench/workloads"
)

// DelayOptions configure the delay backend (scenario section backends.delay). It exists to
// test the harness: known latencies, stalls and errors with no database in the way.
type DelayOptions struct {
	Loc yamlx.Loc
	// Latency is the fixed latency, or the mean for exponential and uniform.
	Latency time.Duration `yaml:"latency"`
	// Distribution: fixed (default), exponential, or uniform on [0, 2×latency].
	Distribution string `yaml:"distribution"`
	// Stalls make every operation that runs during [at, at+for) wait until the stall ends,
	// as a server pausing (GC, compaction, a failover) would. Times count from the first
	// operation the backend sees.
	Stalls []Stall `yaml:"stalls,omitempty"`
	// ErrorRate fails this share of operations with the "server" class.
	ErrorRate float64 `yaml:"error_rate,omitempty"`
	Seed      uint64  `yaml:"seed,omitempty"`
}

// Stall is a window during which the delay backend serves nothing.
type Stall struct {
	Loc yamlx.Loc
	At  time.Duration `yaml:"at"`
	For time.Duration `yaml:"for"`
}

// ParseDelayOptions decodes and checks backends.delay.
func ParseDelayOptions(raw yamlx.Raw) (DelayOptions, error) {
	o := DelayOptions{Distribution: "fixed"}
	var errs yamlx.Errors
	errs.Append(raw.Decode(&o))
	switch o.Distribution {
	case "fixed", "exponential", "uniform":
	default:
		errs.AddAt(o.Loc, "distribution", "must be fixed, exponential or uniform, got %q", o.Distribution)
	}
	if o.Latency < 0 {
		errs.AddAt(o.Loc, "latency", "must not be negative")
	}
	if o.ErrorRate < 0 || o.ErrorRate > 1 {
		errs.AddAt(o.Loc, "error_rate", "must be between 0 and 1")
	}
	for _, s := range o.Stalls {
		if s.At < 0 || s.For <= 0 {
			errs.AddAt(s.Loc, "for", "a stall needs at >= 0 and for > 0")
		}
	}
	return o, errs.Err()
}

var errInjected = errors.New("injected error (delay backend error_rate)")

// NewDelay returns a delay backend.
func NewDelay(o DelayOptions) Backend {
	var once sync.Once
	var origin time.Time
	return Func(func(ctx context.Context, op *workloads.Op) Outcome {
		once.Do(func() { origin = time.Now() })
		u := unitFloat(op.Seq ^ o.Seed)
		d := o.Latency
		switch o.Distribution {
		case "exponential":
			d = time.Duration(-math.Log(1-u) * float64(o.Latency))
		case "uniform":
			d = time.Duration(2 * u * float64(o.Latency))
		}
		now := time.Since(origin)
		for _, s := range o.Stalls {
			if end := s.At + s.For; now+d > s.At && now < end {
				d = max(d, end-now)
			}
		}
		if d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return Outcome{Class: metrics.Canceled, Err: ctx.Err()}
			}
		}
		if o.ErrorRate > 0 && unitFloat(op.Seq^o.Seed^0x9e3779b97f4a7c15) < o.ErrorRate {
			return Outcome{Class: metrics.Server, Err: errInjected}
		}
		return Outcome{}
	})
}

// unitFloat maps x to [0, 1) with SplitMix64, so latencies depend only on the operation.
func unitFloat(x uint64) float64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11) / (1 << 53)
}
