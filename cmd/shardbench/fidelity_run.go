package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/backend/cassandra"
	"github.com/shardbench/shardbench/internal/backend/sim"
	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/engine"
	"github.com/shardbench/shardbench/internal/fidelity"
	pc "github.com/shardbench/shardbench/internal/placement/cassandra"
	"github.com/shardbench/shardbench/internal/results"
)

// realSide is the real run and what the cluster said about it, per variant with a
// Cassandra part: its ring, its keyspace's replication as the cluster holds it, and each
// node's counters for the keyspace's tables during the run.
type realSide struct {
	sum       *results.Summary
	rings     map[string]*pc.Ring
	reps      map[string]pc.Replication
	served    map[string][]cassandra.Served
	missing   map[string][]string
	roundTrip time.Duration
}

// fidelityRoundTrips is how many trivial requests per node measure the round trip.
const fidelityRoundTrips = 50

// fidelityReal runs the scenario on the real cluster into dir (as `run --backend
// cassandra` does, hot-partition placement included) and reads the cluster's side of it
// before the sessions close.
func fidelityReal(ctx context.Context, opts *FidelityOptions, in *runInput, dir *results.Dir, hardStop <-chan struct{}) (*realSide, error) {
	// Not driveRun: the backends stay open after the run, to read the servers' counters.
	variants, info, err := openBackends(ctx, drive{IO: opts.IO, Backend: "cassandra", Target: opts.Target, Recreate: opts.Recreate, Quiet: opts.Quiet}, in)
	if err != nil {
		return nil, err
	}
	defer closeVariants(variants)
	prog := newProgress(opts.IO, opts.Quiet)
	sum, err := engine.Run(ctx, engine.Config{
		Scenario: in.Scenario, Schedule: in.Schedule, Ops: in.Ops, NewSource: in.NewSource,
		Variants: variants, Dir: dir, Backend: info,
		Tool:      results.Tool{Name: "shardbench", Version: version, GoVersion: runtime.Version()},
		Progress:  prog.update,
		HardStop:  hardStop,
		SpinBelow: spinBelow(&RunOptions{Spin: opts.Spin}),
	})
	prog.done()
	if err != nil {
		return nil, err
	}
	if err := placeRealRun(ctx, in, sum, dir, variants, shardSpec{}); err != nil {
		fmt.Fprintf(opts.IO.ErrOut, "shardbench: hot-partition placement: %v\n", err)
	}
	side := &realSide{sum: sum, rings: map[string]*pc.Ring{}, reps: map[string]pc.Replication{},
		served: map[string][]cassandra.Served{}, missing: map[string][]string{}}
	for _, v := range variants {
		b, ok := v.Backend.(*cassandra.Backend)
		if !ok {
			continue // no Cassandra part: the backend served none of it
		}
		side.served[v.Name], side.missing[v.Name] = b.ServedSince(ctx)
		if side.reps[v.Name], err = b.Replication(ctx); err != nil {
			return nil, err
		}
		side.rings[v.Name] = b.Ring()
		if side.roundTrip == 0 {
			if side.roundTrip, err = b.RoundTrip(ctx, fidelityRoundTrips); err != nil {
				return nil, err
			}
		}
	}
	return side, nil
}

// adjust makes a variant's simulation the cluster's: its ring and racks, the keyspace's
// replication, the round trip. Variant "" (a fit's starting point) gets any variant's
// ring: they are all the same cluster's.
func (r *realSide) adjust(network time.Duration) func(string, *sim.Options) {
	return func(variant string, o *sim.Options) {
		o.Network = network
		ring := r.rings[variant]
		for _, name := range slices.Sorted(maps.Keys(r.rings)) {
			if ring == nil {
				ring = r.rings[name]
			}
		}
		o.Cluster.Live = ring
		if rep, ok := r.reps[variant]; ok {
			o.Cluster.Replication = &rep
		}
	}
}

// fitFidelity fits the simulator's service times to one variant's real run, simulated on
// the cluster's model.
func fitFidelity(ctx context.Context, in *runInput, real *realSide, variant string, network time.Duration, limit int64) (*sim.Calibration, error) {
	var measured []sim.Measured
	for _, v := range real.sum.Variants {
		if v.Name != variant {
			continue
		}
		for _, op := range v.Ops {
			if op.Served() {
				measured = append(measured, sim.Measured{Variant: v.Name, Op: op.Op, Count: op.Service.Count,
					Mean: msDuration(op.Service.Mean), P50: msDuration(op.Service.P50), P99: msDuration(op.Service.P99)})
			}
		}
	}
	return sim.Fit(ctx, sim.FitInput{Scenario: in.Scenario, Prepared: in.Prepared, Measured: measured, Limit: limit, Adjust: real.adjust(network), Shape: true})
}

// fidelityTwin is the simulation of the real run: the cluster's model and the service
// times it was calibrated with.
type fidelityTwin struct {
	real    *realSide
	cal     *sim.Calibration
	network time.Duration
}

// simSide is the simulated run and, per variant, what its nodes did.
type simSide struct {
	sum         *results.Summary
	served      map[string][]sim.Served
	utilisation map[string]map[string]float64
}

// run simulates the scenario on the cluster's model into out: the variants the real run
// drove, serving what the real backend served.
func (t *fidelityTwin) run(ctx context.Context, opts *FidelityOptions, in *runInput, out string) (*simSide, error) {
	dir, err := results.Create(out)
	if err != nil {
		return nil, usageError(err)
	}
	defer dir.Close()
	if asRun, err := in.Scenario.AsRun(); err != nil {
		return nil, err
	} else if err := dir.WriteFile(results.ScenarioFile, asRun); err != nil {
		return nil, err
	}
	adjust := t.real.adjust(t.network)
	info := results.BackendInfo{Name: "sim", Simulated: true, Details: map[string]string{"network_rtt": t.network.String(), "model_of": t.real.sum.Backend.Target}}
	side := &simSide{served: map[string][]sim.Served{}, utilisation: map[string]map[string]float64{}}
	sims := map[string]*sim.Simulator{}
	var variants []engine.VariantBackend
	defer func() { closeVariants(variants) }()
	for i, spec := range in.Variants {
		if _, ok := t.real.reps[spec.Name]; !ok {
			continue // the real run served none of it
		}
		unserved := backend.Unserved(spec.Compiled, design.Cassandra, "cassandra")
		v := engine.VariantBackend{Name: spec.Name, Design: spec.Design, Database: spec.Database, Params: spec.Params, Unserved: unserved}
		cfg := backend.Config{Scenario: in.Scenario, Model: in.Prepared.Model, Variant: spec.Variant, Compiled: spec.Compiled,
			VariantIndex: i, Options: in.Scenario.Backends["sim"], Log: opts.IO.ErrOut}
		s, err := sim.OpenWith(ctx, cfg, func(o *sim.Options) {
			t.cal.ApplyTo(o)
			adjust(spec.Name, o)
		})
		if err != nil {
			return nil, err
		}
		s.Unserve(unserved)
		v.Virtual = s
		v.Notes = append(v.Notes, fmt.Sprintf("the simulated twin of a real run on %s: its ring, racks and replication %s, round trip %s, service times from %s",
			t.real.sum.Backend.Target, t.real.reps[spec.Name], t.network.Round(time.Microsecond), calibrationModel(t.cal)))
		sims[spec.Name] = s
		variants = append(variants, v)
		info.Server = s.Describe().Server
	}
	prog := newProgress(opts.IO, opts.Quiet)
	sum, err := engine.Run(ctx, engine.Config{
		Scenario: in.Scenario, Schedule: in.Schedule, Ops: in.Ops, NewSource: in.NewSource,
		Variants: variants, Dir: dir, Backend: info,
		Tool:     results.Tool{Name: "shardbench", Version: version, GoVersion: runtime.Version()},
		Progress: prog.update,
	})
	prog.done()
	if err != nil {
		return nil, err
	}
	side.sum = sum
	for name, s := range sims {
		side.served[name], side.utilisation[name] = s.Served(), s.Utilisation()
	}
	return side, nil
}

// compareFidelity puts every variant the real run drove beside its simulation.
func compareFidelity(in *runInput, real *realSide, simmed *simSide, calOn string, tol results.FidelityTolerance) *results.Fidelity {
	find := func(s *results.Summary, name string) *results.SummaryVariant {
		for i := range s.Variants {
			if s.Variants[i].Name == name {
				return &s.Variants[i]
			}
		}
		return nil
	}
	var vs []fidelity.Pair
	for _, spec := range in.Variants {
		rv, sv := find(real.sum, spec.Name), find(simmed.sum, spec.Name)
		if _, ok := real.reps[spec.Name]; !ok || rv == nil || sv == nil {
			continue
		}
		v := fidelity.Pair{Name: spec.Name, Design: spec.Variant.Design.Name, Calibrated: spec.Name == calOn}
		v.Real.Ops, v.Real.All = fidelity.FromSummary(rv)
		v.Sim.Ops, v.Sim.All = fidelity.FromSummary(sv)
		for _, c := range real.served[spec.Name] {
			v.Real.Counts = append(v.Real.Counts, fidelity.Count(c))
		}
		for _, c := range simmed.served[spec.Name] {
			v.Sim.Counts = append(v.Sim.Counts, fidelity.Count(c))
		}
		for _, n := range real.rings[spec.Name].Nodes {
			v.Utilisation = max(v.Utilisation, simmed.utilisation[spec.Name][n.Name])
		}
		if m := real.missing[spec.Name]; len(m) > 0 {
			v.Notes = append(v.Notes, "nodes whose counters could not be read, left out: "+strings.Join(m, "; "))
		}
		vs = append(vs, v)
	}
	f := &results.Fidelity{Tolerance: tol}
	f.Variants, f.Rankings, f.Verdict = fidelity.Compare(vs, tol)
	if len(in.Variants) > len(vs) {
		f.Notes = append(f.Notes, fmt.Sprintf("%d variant(s) without a Cassandra part were not compared", len(in.Variants)-len(vs)))
	}
	return f
}

// calibrationModel is the fitted node model in words.
func calibrationModel(c *sim.Calibration) string {
	if c == nil || c.Cassandra == nil {
		return "the scenario's service times"
	}
	m := c.Cassandra
	us := func(d time.Duration) string { return d.Round(100 * time.Nanosecond).String() }
	s := fmt.Sprintf("read %s, row %s, sstable %s, scan %s, write %s", us(m.Read), us(m.Row), us(m.SSTable), us(m.Scan), us(m.Write))
	if c.ServiceSpread > 0 {
		s += fmt.Sprintf("; log-normal σ %.2f", c.ServiceSpread)
	}
	if n := len(c.OperationScale); n > 0 {
		s += fmt.Sprintf("; %d per-operation scale(s) of the calibration variant", n)
	}
	return s
}

// printFidelity writes the comparison as tables: placement, latency, rankings, verdict.
func printFidelity(w io.Writer, f *results.Fidelity) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "placement: each node's share of the replica requests (servers' counters | simulated)\n")
	fmt.Fprintf(tw, "variant\tnode\treal\tsimulated\tdifference\treal requests\tsimulated requests\t\n")
	for _, v := range f.Variants {
		for _, n := range v.Nodes {
			fmt.Fprintf(tw, "%s\t%s\t%.1f%%\t%.1f%%\t%+.2f pp\t%d\t%d\t\n", v.Name, n.Node, 100*n.Real, 100*n.Sim, n.DiffPP, n.RealCount, n.SimCount)
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "\nlatency: service time in ms, measured | predicted (error)\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "variant\toperation\tcount\tmean\tp50\tp99\tjudged\t\n")
	for _, v := range f.Variants {
		for _, l := range append(slices.Clone(v.Ops), v.All) {
			judged := "ok"
			switch {
			case !l.Judged:
				judged = "not judged: " + l.Why
			case !l.Within:
				judged = "MISS"
			}
			cell := func(real, sim, err float64) string {
				return fmt.Sprintf("%.2f | %.2f (%+.0f%%)", real, sim, 100*err)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t\n", v.Name, l.Op, l.Count, cell(l.Real.Mean, l.Sim.Mean, l.Error.Mean),
				cell(l.Real.P50, l.Sim.P50, l.Error.P50), cell(l.Real.P99, l.Sim.P99, l.Error.P99), judged)
		}
	}
	tw.Flush()
	if len(f.Rankings) > 0 {
		fmt.Fprintf(w, "\nrankings, best first\n")
		for _, r := range f.Rankings {
			word := "same order"
			if !r.Agree {
				word = "DIFFERENT"
			}
			fmt.Fprintf(w, "  by %s, %s: real %s; simulated %s: %s\n", r.By, r.Group, strings.Join(r.Real, " < "), strings.Join(r.Sim, " < "), word)
		}
	}
	fmt.Fprintf(w, "\n")
	for _, l := range f.Verdict.Lines {
		fmt.Fprintf(w, "%s\n", l)
	}
	for _, n := range f.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}
