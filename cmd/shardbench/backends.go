package main

import (
	"context"
	"fmt"
	"sort"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/engine"
	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/workloads"
)

// backendOpener opens the backend for one variant: it sets v.Backend (real time) or
// v.Virtual (simulators), and may fill info (simulated, redacted target, server version,
// details) for the summary. Errors in the scenario's backends.<name> section or the flags are
// usage errors (exit 2); unreachable servers are run errors (exit 1) naming the host.
type backendOpener func(ctx context.Context, cfg backend.Config, v *engine.VariantBackend, info *results.BackendInfo) error

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
	registerBackend("null", func(_ context.Context, _ backend.Config, v *engine.VariantBackend, _ *results.BackendInfo) error {
		v.Backend = backend.Null()
		return nil
	})
	registerBackend("delay", func(_ context.Context, cfg backend.Config, v *engine.VariantBackend, info *results.BackendInfo) error {
		o, err := backend.ParseDelayOptions(cfg.Scenario.Backends["delay"])
		if err != nil {
			return usageError(err)
		}
		v.Backend = backend.NewDelay(o)
		info.Details = map[string]string{"latency": o.Latency.String(), "distribution": o.Distribution}
		return nil
	})
}

// realBackend is what the real database backends give the run command.
type realBackend interface {
	backend.Backend
	backend.Describer
	Notes() []string
}

// realDatabase describes one real database backend for registerReal.
type realDatabase struct {
	name, database string // --backend name; the design section it drives ("cassandra", "mongodb")
	db             design.Database
	other          string // the backend to suggest for designs without that section
	// perVariant is the Describe detail that differs per variant (the keyspace or
	// database), recorded under "<key>.<variant>".
	perVariant string
	has        func(*design.Design) bool
	open       func(context.Context, backend.Config) (realBackend, error)
	// usage reports whether an Open error is the user's input (exit 2).
	usage func(error) bool
}

// registerReal registers a real database backend. A scenario comparing designs for both
// databases (smoke.yaml) still runs on either: an operation whose steps run on the other
// database is not served by this backend (backend.Unserved), and a variant whose design
// has no section for this database serves none; the results show that as coverage and
// say why.
func registerReal(r realDatabase) {
	registerBackend(r.name, func(ctx context.Context, cfg backend.Config, v *engine.VariantBackend, info *results.BackendInfo) error {
		if cfg.Compiled != nil && !r.has(cfg.Compiled.Design) {
			why := fmt.Sprintf("design %s has no %s section: the %s backend serves none of its operations; run it with --backend %s or sim", cfg.Compiled.Design.Name, r.database, r.name, r.other)
			fmt.Fprintf(cfg.Log, "%s: variant %s: %s\n", r.name, v.Name, why)
			v.Notes = append(v.Notes, why)
			v.Unserved = backend.Unserved(cfg.Compiled, r.db, r.name)
			for t := range v.Unserved {
				if ok, _ := cfg.Compiled.Served(t); ok {
					v.Unserved[t] = why
				}
			}
			errBug := fmt.Errorf("internal error (please report): an operation of design %s was dispatched to the %s backend, which serves none", cfg.Compiled.Design.Name, r.name)
			v.Backend = backend.Func(func(context.Context, *workloads.Op) backend.Outcome {
				return backend.Outcome{Class: metrics.Client, Err: errBug}
			})
			return nil
		}
		v.Unserved = backend.Unserved(cfg.Compiled, r.db, r.name)
		b, err := r.open(ctx, cfg)
		if err != nil {
			if r.usage(err) {
				return usageError(err)
			}
			return err
		}
		v.Backend = b
		v.Notes = append(v.Notes, b.Notes()...)
		d := b.Describe()
		info.Target, info.Server = d.Target, d.Server
		if info.Details == nil {
			info.Details = map[string]string{}
		}
		for k, val := range d.Details {
			if k == r.perVariant {
				k += "." + v.Name
			}
			info.Details[k] = val
		}
		return nil
	})
}
