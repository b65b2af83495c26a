package main

import (
	"context"
	"sort"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/engine"
	"github.com/shardbench/shardbench/internal/results"
)

// backendOpener opens the backend for one variant: it sets v.Backend (real time) or
// v.Virtual (simulators), and may fill info (simulated, redacted target, server version,
// details) for the summary. Errors in the scenario's backends.<name> section or the flags are
// usage errors (exit 2); unreachable servers are run errors (exit 1) naming the host.
type backendOpener func(ctx context.Context, cfg backend.Config, v *engine.Variant, info *results.BackendInfo) error

// backendOpeners maps --backend names to their opener. Each backend registers itself from
// its own file (backend_<name>.go) so backends never touch each other's code.
var backendOpeners = map[string]backendOpener{}

func registerBackend(name string, open backendOpener) { backendOpeners[name] = open }

// backendNames lists the backends `--backend` accepts, sorted.
func backendNames() []string {
	names := make([]string, 0, len(backendOpeners))
	for n := range backendOpeners {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func init() {
	registerBackend("null", func(_ context.Context, _ backend.Config, v *engine.Variant, _ *results.BackendInfo) error {
		v.Backend = backend.Null()
		return nil
	})
	registerBackend("delay", func(_ context.Context, cfg backend.Config, v *engine.Variant, info *results.BackendInfo) error {
		o, err := backend.ParseDelayOptions(cfg.Scenario.Backends["delay"])
		if err != nil {
			return usageError(err)
		}
		v.Backend = backend.NewDelay(o)
		info.Details = map[string]string{"latency": o.Latency.String(), "distribution": o.Distribution}
		return nil
	})
}
