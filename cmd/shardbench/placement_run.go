package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/backend/sim"
	"github.com/shardbench/shardbench/internal/engine"
	"github.com/shardbench/shardbench/internal/placement/cassandra"
	"github.com/shardbench/shardbench/internal/plan"
	"github.com/shardbench/shardbench/internal/results"
)

// PlacementOptions are the flags `plan` and `analyze` share.
type PlacementOptions struct {
	Out       string
	Duration  time.Duration
	RateScale float64
	Seed      int64
	SeedSet   bool
	// Limit stops each variant after this many operations (0: the whole schedule).
	Limit int64
	Quiet bool
	// CPUProfile, when set, is where a Go CPU profile of the command goes.
	CPUProfile string

	durationSet, rateScaleSet bool
}

// bind registers the shared flags; kind names the command in the default directory.
func (o *PlacementOptions) bind(f *pflag.FlagSet, kind string) {
	f.StringVarP(&o.Out, "out", "o", "", "results directory (default results/<scenario>-"+kind+"-<time>)")
	f.DurationVar(&o.Duration, "duration", 0, "scale every phase so the schedule lasts this long")
	f.Float64Var(&o.RateScale, "rate-scale", 0, "multiply every rate")
	f.Int64Var(&o.Seed, "seed", 0, "override the scenario's seed")
	f.Int64Var(&o.Limit, "limit", 0, "stop each variant after this many operations (0: the whole schedule)")
	f.BoolVarP(&o.Quiet, "quiet", "q", false, "print nothing but errors")
	f.StringVar(&o.CPUProfile, "cpuprofile", "", "write a Go CPU profile to this file (go tool pprof reads it)")
}

// check completes the options once flags are parsed.
func (o *PlacementOptions) check(f *pflag.FlagSet) error {
	o.SeedSet = f.Changed("seed")
	o.durationSet, o.rateScaleSet = f.Changed("duration"), f.Changed("rate-scale")
	if o.Limit < 0 {
		return usageErrorf("--limit must not be negative")
	}
	return nil
}

func (o *PlacementOptions) overrides() runOverrides {
	ov := runOverrides{Duration: o.Duration, DurationSet: o.durationSet, RateScale: o.RateScale, RateScaleSet: o.rateScaleSet}
	if o.SeedSet {
		ov.Seed = &o.Seed
	}
	return ov
}

// placementRun is what `plan` and `analyze` share: the scenario loaded with the run
// overrides, its designs' variants, the cluster layout keys are placed on (the scenario's
// backends.sim.cluster, so plan, analyze and the simulator place keys alike), and a
// results directory holding the scenario as run.
type placementRun struct {
	in      *runInput
	cluster plan.Cluster
	dir     *results.Dir
	out     string
}

// startPlacementRun loads the scenario, checks it drives design variants (why names the
// command's purpose for the error) and creates the results directory (default
// results/<scenario>-<kind>-<time>). The caller closes run.dir.
func startPlacementRun(path, out, kind, why string, ov runOverrides) (*placementRun, error) {
	in, err := loadRun(path, ov)
	if err != nil {
		return nil, err
	}
	sc := in.Scenario
	if in.Variants[0].Compiled == nil {
		return nil, usageErrorf("%s lists no designs: %s", sc.File, why)
	}
	cluster, err := sim.Layout(sc)
	if err != nil {
		return nil, usageError(fmt.Errorf("%s: backends.sim: %w", sc.File, err))
	}
	if out == "" {
		out = filepath.Join("results", results.SafeName(sc.Name)+"-"+kind+"-"+time.Now().Format("20060102-150405"))
	}
	dir, err := results.Create(out)
	if err != nil {
		return nil, usageError(err)
	}
	dir.SetVariantOrder(in.VariantNames())
	asRun, err := sc.AsRun()
	if err == nil {
		err = dir.WriteFile(results.ScenarioFile, asRun)
	}
	if err != nil {
		dir.Close()
		return nil, err
	}
	return &placementRun{in: in, cluster: cluster, dir: dir, out: out}, nil
}

// newStream starts the scenario's operation stream from the beginning.
func (r *placementRun) newStream() plan.Stream {
	return r.in.Prepared.Model.NewStream(r.in.Schedule)
}

// eachInParallel calls f(i) for i in [0, n), at most one call per CPU at a time: variants
// are independent and each is single-threaded.
func eachInParallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			f(i)
		}()
	}
	wg.Wait()
}

// keyspaceReplication is implemented by a real backend that reads its keyspace's
// replication from the cluster (the cassandra backend).
type keyspaceReplication interface {
	Replication(ctx context.Context) (cassandra.Replication, error)
}

// placeRealRun writes hotspots.json for a run against a real database: the operation
// stream is deterministic, so the first Scheduled operations of each variant's stream are
// exactly the operations the run sent, and placing them client-side gives the run's hot
// partitions with their exact tokens and hashed values. A Cassandra variant is placed on
// the live cluster's ring (read at the run's start), so its replicas are the cluster's
// own; MongoDB shards are those of the synthetic layout (backends.sim.cluster), the
// target's own chunk counts being in server.json. The notes say which.
//
// A shard of a distributed run that completed places the whole run's stream, every
// shard's operations: every shard's analysis is then the run's, exactly, and merge takes
// it as it is (hot-partition counts of parts cannot be merged exactly from top-K lists).
func placeRealRun(ctx context.Context, in *runInput, sum *results.Summary, dir *results.Dir, opened []engine.VariantBackend, shard shardSpec) error {
	layout, err := sim.Layout(in.Scenario)
	if err != nil {
		return err
	}
	r := &placementRun{in: in, cluster: layout}
	sent := map[string]int64{}
	for _, v := range sum.Variants {
		sent[v.Name] = v.Totals.Scheduled
	}
	rings := map[string]*cassandra.Ring{}
	reps := map[string]*cassandra.Replication{}
	for _, v := range opened {
		if tr, ok := v.Backend.(backend.TokenRinger); ok && tr.Ring() != nil {
			rings[v.Name] = tr.Ring()
		}
		// The keyspace's replication as the cluster holds it: the run may have replaced
		// the design's (backends.cassandra.replication).
		if kr, ok := v.Backend.(keyspaceReplication); ok {
			if rep, err := kr.Replication(ctx); err == nil {
				reps[v.Name] = &rep
			}
		}
	}
	errs := make([]error, len(in.Variants))
	eachInParallel(len(in.Variants), func(i int) {
		v := in.Variants[i]
		n := sent[v.Name]
		if v.Compiled == nil || n == 0 {
			return
		}
		limit := n
		if shard.Count > 1 {
			limit = 0 // the whole run's stream
		}
		cluster := r.cluster
		cluster.Live, cluster.Replication = rings[v.Name], reps[v.Name]
		hv, placed, err := plan.PlaceVariant(ctx, v.Name, v.Compiled, &cluster, r.newStream, limit)
		fellBack := ""
		if err != nil && cluster.Live != nil {
			// The live ring does not fit the design (e.g. a data center it lacks): fall
			// back to the synthetic layout, and say why.
			fellBack = fmt.Sprintf("the live ring could not be used (%v), so ", err)
			cluster.Live, cluster.Replication = nil, nil
			hv, placed, err = plan.PlaceVariant(ctx, v.Name, v.Compiled, &cluster, r.newStream, limit)
		}
		if err != nil {
			errs[i] = fmt.Errorf("variant %s: %w", v.Name, err)
			return
		}
		where := fellBack + fmt.Sprintf("replicas and shards are those of the synthetic layout (%s, backends.sim.cluster), not of the target cluster, whose own figures are in server.json", hv.Topology)
		if cluster.Live != nil {
			hv.Source = "server"
			where = fmt.Sprintf("replicas are the live cluster's (%s, read from system.local and system.peers_v2 at the run's start)", hv.Topology)
			if v.Variant != nil && v.Variant.Design.MongoDB != nil {
				where += "; MongoDB shards are those of the synthetic layout (backends.sim.cluster)"
			}
		}
		what := fmt.Sprintf("the %d operations this run sent", n)
		if shard.Count > 1 {
			what = fmt.Sprintf("the whole run's %d operations, as all %d shards together sent them (this shard, %d, sent %d; every shard places the whole run)", placed, shard.Count, shard.Index, n)
		}
		hv.Notes = append(hv.Notes, fmt.Sprintf("client-side placement of %s: partitions, tokens, hashed values and shares are exact; %s", what, where))
		errs[i] = dir.AddHotspots(hv)
	})
	return errors.Join(errs...)
}
