package sim

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/plan"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/schedule"
	"github.com/shardbench/shardbench/workloads"
)

// Simulator runs one design variant's operation stream through a simulated cluster in
// virtual time. The client side is the same open model as the real engine: operations
// are released at their intended times onto load.max_in_flight client slots (late when
// every slot is busy, dropped with on_full: drop); each operation's accesses are placed
// exactly (package plan) and served by the stations of the nodes or shard members they
// reach.
type Simulator struct {
	cfg     backend.Config
	opt     Options
	seed    uint64
	placer  *plan.Placer
	obs     *plan.Observer
	cass    *cassCluster
	mongo   *mongoCluster
	events  []scenario.Event
	applied []results.Event
	notes   []string

	client slots // the load.max_in_flight client slots
	drop   bool
	// endAt is the schedule's end (virtual ns): a queued operation that would start at
	// or after it never starts (dropped), as the real engine's dispatcher starts none
	// after the schedule.
	endAt   int64
	timeout int64

	latest  int64 // the latest time an operation simulated completed (dropped: was due)
	accs    []design.Access
	sizes   partitionSizes
	loaded  []int8 // by Step.ID: whether its table held rows before the run (1), not (-1), unknown (0)
	prepErr error  // from prepare: the layout could not be built

	// Tables shared with the other variants of the stream (share.go): shares holds, by
	// Step.ID, the group's shared table that places the step (-1: this variant places
	// it); block is the group's placements being read, nth the accesses of operation
	// nthOp read so far per shared table.
	group    *cohort
	member   int
	shares   []int16
	block    *blockPlacements
	blockEnd uint64 // Seq after block's last operation
	nth      []uint32
	nthOp    uint64
	one      [1]int
	shareErr error
	r        reach // the access being simulated

	tick      int64
	nextTick  int64
	due       int64 // the earliest time advance has work: a tick, an event, a migration
	nodes     map[string]*nodeSeries
	nodeOrder []string
	stages    stageLog
	rng       *rand.Rand

	// unserved is, by operation type, whether the design does not serve it: such an
	// operation is counted at its intended time and never simulated (backend.Virtual).
	unserved []bool
	// out is the sample being reported: through a field, since the address of a local
	// would move it to the heap on every step.
	out metrics.Sample

	// own, when set, says which operations this shard of a distributed run records; the
	// others are simulated alike and reported with metrics.FlagForeign.
	own func(*workloads.Op) bool
	// count, when set, counts an own operation the design does not serve, in place of
	// its Sample (backend.UnservedCounter).
	count func(op uint16, intended int64)

	// opScale is backends.sim.operation_scale by operation type (nil: all 1); scale is
	// the current operation's, applied to every service time drawn for it.
	opScale []float64
	scale   float64

	// Contention on one partition or document: LWTs' Paxos rounds (paxos.go) and
	// MongoDB write conflicts (conflict.go).
	paxos     paxosStats
	conflicts conflictStats

	// now is the simulator's clock: when the operation being simulated starts (its
	// intended time, or later when every client slot was busy), before which no request
	// submitted from now on arrives. Stations follow it.
	now int64
}

// Open builds the simulator for one variant. The cluster is laid out when the stream
// starts (Simulate), because ranged MongoDB shard keys need a sample of the data.
func Open(_ context.Context, cfg backend.Config) (*Simulator, error) {
	o, err := LoadOptions(cfg.Scenario)
	if err != nil {
		return nil, &UsageError{err}
	}
	return open(cfg, o)
}

// OpenWith is Open with the scenario's options (its calibration applied) then changed by
// adjust: `shardbench fidelity` simulates a live cluster this way, on the ring, racks and
// replication read from it and with the service times fitted to it.
func OpenWith(_ context.Context, cfg backend.Config, adjust func(*Options)) (*Simulator, error) {
	o, err := LoadOptions(cfg.Scenario)
	if err != nil {
		return nil, &UsageError{err}
	}
	adjust(&o)
	return open(cfg, o)
}

// open builds the simulator with the given options (calibrate tries candidates).
func open(cfg backend.Config, o Options) (*Simulator, error) {
	if cfg.Compiled == nil {
		return nil, &UsageError{fmt.Errorf("%s: the sim backend needs designs to simulate: list them under designs", cfg.Scenario.File)}
	}
	names := make([]string, len(cfg.Model.Ops))
	for i := range cfg.Model.Ops {
		names[i] = cfg.Model.Ops[i].Name
	}
	scales, err := o.opScales(names, cfg.Variant.Name)
	if err != nil {
		return nil, &UsageError{err}
	}
	o.Cluster = o.layout(cfg.Scenario)
	s := &Simulator{cfg: cfg, opt: o, seed: uint64(cfg.Scenario.Seed)*0x9e3779b97f4a7c15 + uint64(cfg.VariantIndex), tick: int64(o.Tick)}
	s.opScale, s.scale = scales, 1
	s.rng = rand.New(rand.NewPCG(s.seed, 0x5eed))
	s.client = slots{size: max(cfg.Scenario.Load.MaxInFlight, 1)}
	s.drop = cfg.Scenario.Load.OnFull == scenario.OnFullDrop
	if s.endAt = int64(schedule.New(cfg.Scenario).Duration()); s.endAt <= 0 {
		s.endAt = math.MaxInt64 // no schedule to end with
	}
	s.timeout = int64(cfg.Scenario.Load.Timeout)
	s.events = slices.Clone(cfg.Scenario.Events)
	sort.SliceStable(s.events, func(i, j int) bool { return s.events[i].At < s.events[j].At })
	s.sizes = newPartitionSizes(16)
	s.nodes = map[string]*nodeSeries{}
	s.unserved = make([]bool, len(cfg.Model.Ops))
	for t := range s.unserved {
		ok, _ := cfg.Compiled.Served(t)
		s.unserved[t] = !ok
	}
	return s, nil
}

// UsageError is bad input in the scenario's backends.sim section (exit code 2).
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Describe says what is simulated: the layout, the network and the capacity of the
// servers the model assumes.
func (s *Simulator) Describe() backend.Info {
	d := map[string]string{"network_rtt": s.opt.Network.String(), "inter_dc_rtt": s.opt.InterDCNetwork.String()}
	if s.placer != nil {
		d["topology"] = s.placer.Topology()
	}
	caps := s.opt.Capacities()
	if s.cfg.Compiled != nil {
		for _, db := range s.cfg.Compiled.Design.Databases() {
			if db == design.Cassandra {
				d["cassandra_node_capacity"] = caps[0].Summary()
			} else {
				d["mongodb_member_capacity"] = caps[1].Summary()
			}
		}
	}
	return backend.Info{Name: "sim", Simulated: true, Server: "simulated cluster (virtual time)", Details: d}
}

// Notes are the model's assumptions the reader must know.
func (s *Simulator) Notes() []string { return s.notes }

// Close does nothing: the simulator holds no resources.
func (s *Simulator) Close() error { return nil }

// RecordOnly makes the simulator one shard of a distributed run (backend.Sharded): it
// simulates the whole stream and flags the operations own rejects as another shard's.
func (s *Simulator) RecordOnly(own func(*workloads.Op) bool) { s.own = own }

// CountUnserved makes the simulator report its own unserved operations through count
// (backend.UnservedCounter).
func (s *Simulator) CountUnserved(count func(op uint16, intended int64)) { s.count = count }

// Simulate consumes the stream and reports every operation in completion order.
func (s *Simulator) Simulate(ctx context.Context, next func() *workloads.Op, record func(*metrics.Sample)) error {
	if s.group != nil {
		defer s.group.done(s.member)
	}
	if s.placer == nil && s.prepErr == nil {
		s.prepare() // Share laid it out already for a group's members
	}
	if s.prepErr != nil {
		return s.prepErr
	}
	// step neither modifies op nor keeps it: the operation is the shared stream's own.
	for op := next(); op != nil; op = next() {
		s.step(op, record)
	}
	// Drain: time runs on until the last operation completes (and its tick is sampled).
	end := max(s.nextTick, s.latest)
	s.now = max(s.now, end)
	s.advance(end)
	return s.shareErr
}

// prepare lays out the cluster over the data that exists before the run: ranged MongoDB
// shard keys are split and balanced over it, and the Cassandra partitions it makes large
// start at their loaded size.
func (s *Simulator) prepare() {
	pl, err := plan.NewPlacer(s.cfg.Compiled, &s.opt.Cluster)
	if err != nil {
		s.prepErr = err
		return
	}
	s.placer, s.obs = pl, plan.NewObserver(pl)
	if pl.Ring != nil {
		s.cass = newCassCluster(s, pl)
		s.loadSizes()
	}
	if pl.Shards != nil {
		s.mongo = newMongoCluster(s, pl)
	}
	s.loadVolumes()
	s.nextTick = s.tick
}

// loadSizes starts the partition sizes of the Cassandra tables from their loaded data:
// the large partitions (plan.TableLoad.Partitions, 64 KiB and up: smaller ones cost a
// read nothing more) hold their loaded bytes at the run's start, counted in the epoch of
// their table's TTL as the run's writes are.
func (s *Simulator) loadSizes() {
	ls, err := s.cfg.Compiled.Loaders()
	if err != nil {
		return // NewPlacer met the same error
	}
	for _, l := range ls {
		t := s.placer.Loaded[l.Target]
		if l.Database != design.Cassandra || t == nil {
			continue
		}
		for _, p := range t.Partitions {
			s.sizes.add(p.FP, p.Bytes, p.Rows, s.cfg.Model.Start, l.Step.TTL)
		}
	}
}

func (s *Simulator) step(op *workloads.Op, record func(*metrics.Sample)) {
	t := int64(op.Intended)
	s.now = max(s.now, t)
	s.advance(t)
	if s.group != nil && op.Seq >= s.blockEnd {
		s.follow(op.Seq)
	}
	foreign := s.own != nil && !s.own(op)
	if s.unserved[op.Type] && s.count != nil && !foreign {
		s.count(op.Type, t) // never simulated
		return
	}
	smp := &s.out
	*smp = metrics.Sample{Intended: t, Start: t, End: t, Op: op.Type}
	if foreign {
		smp.Flags = metrics.FlagForeign
	}
	if s.unserved[op.Type] {
		// Never simulated: time need not run on until its intended time (latest).
		smp.Flags |= metrics.FlagUnserved
		record(smp)
		return
	}
	if s.client.full(t) {
		// With on_full: queue it waits for the earliest slot to free, unless that is
		// after the schedule has ended: the run ends with its schedule, and an operation
		// still waiting then never starts.
		if s.drop || s.client.earliest() >= s.endAt {
			smp.Flags |= metrics.FlagDropped
			s.report(record)
			s.offer(op, 0)
			return
		}
		smp.Start = s.client.take()
		// Late operations start in order too (each takes the earliest slot to free):
		// nothing submitted from now on arrives before this start.
		s.now = max(s.now, smp.Start)
	}
	end, class := s.execute(op, smp.Start)
	if s.timeout > 0 && end-smp.Start > s.timeout {
		// The client gives up at its timeout, as a real backend's context does.
		end, class = smp.Start+s.timeout, metrics.Timeout
	}
	smp.End, smp.Class = end, uint8(class)
	s.client.push(end)
	s.report(record)
}

// report reports the operation just stepped (s.out) as soon as its outcome is known, in
// stream order: the backend.Virtual contract lets it complete ahead of virtual time.
func (s *Simulator) report(record func(*metrics.Sample)) {
	if s.out.Flags&metrics.FlagDropped != 0 {
		s.latest = max(s.latest, s.out.Intended)
	} else {
		s.latest = max(s.latest, s.out.End)
	}
	record(&s.out)
}

// advance moves virtual time to t: it applies due events and samples the nodes on every
// tick. Most operations come before the next tick, event and migration: that check is
// inlined into the step, the work is not.
func (s *Simulator) advance(t int64) {
	if t >= s.due {
		s.advanceTo(t)
	}
}

// advanceTo is advance's work when something is due by t; it sets the next due time.
func (s *Simulator) advanceTo(t int64) {
	for len(s.events) > 0 && int64(s.events[0].At) <= t {
		e := s.events[0]
		s.events = s.events[1:]
		s.sampleUntil(int64(e.At))
		s.apply(e)
	}
	if s.mongo != nil {
		s.mongo.migrate(t)
	}
	s.sampleUntil(t)
	s.due = s.nextTick
	if len(s.events) > 0 {
		s.due = min(s.due, int64(s.events[0].At))
	}
	if s.mongo != nil {
		s.due = min(s.due, s.mongo.due())
	}
}

// execute runs one operation from start: its steps one after another, the partitions of
// a multi-partition step and the statements of a batch in parallel. The first failing
// step ends the operation with its class.
func (s *Simulator) execute(op *workloads.Op, start int64) (int64, metrics.Class) {
	s.accs = s.cfg.Compiled.Accesses(op, s.accs[:0])
	if s.opScale != nil {
		s.scale = s.opScale[op.Type]
	}
	cur := start
	for i := 0; i < len(s.accs); {
		j := i + 1
		for j < len(s.accs) && sameGroup(&s.accs[i], &s.accs[j]) {
			j++
		}
		end, class := cur, metrics.OK
		for k := i; k < j; k++ {
			a := &s.accs[k]
			r := s.reach(a, op)
			var e int64
			var c metrics.Class
			if a.Step.Database == design.Cassandra {
				e, c = s.cass.access(a, op, r, cur)
			} else {
				e, c = s.mongo.access(a, op, r, cur)
			}
			end = max(end, e)
			if c != metrics.OK && class == metrics.OK {
				class = c
			}
		}
		cur = end
		if class != metrics.OK {
			s.offerRest(op, j)
			return cur, class
		}
		i = j
	}
	return cur, metrics.OK
}

// reach places access a of op: from the group's shared placements when a shared table
// places its step, else with the variant's placer, its observer analysing it. The reach
// is valid until the next call.
func (s *Simulator) reach(a *design.Access, op *workloads.Op) *reach {
	if s.shares != nil && s.shares[a.Step.ID] >= 0 {
		if !s.shared(s.shares[a.Step.ID], a, op) {
			s.r.set(s.placer.Place(a, op)) // the shared table analysed it
		}
		return &s.r
	}
	w := s.placer.Place(a, op)
	s.obs.Access(a, op, w)
	s.r.set(w)
	return &s.r
}

// The hot-partition analysis (hotspots.json) is of the operations the stream offers, as
// `plan` makes it: every access of every operation, also one the client dropped or whose
// earlier step failed. What the simulated nodes served is in server.json. A table shared
// with other variants is analysed once for all of them, which only the offered stream
// allows: their simulated failures differ.

// offer analyses the accesses of op the simulation does not serve: a dropped operation's
// (from 0), or those after a failed step.
func (s *Simulator) offer(op *workloads.Op, from int) {
	if from == 0 {
		s.accs = s.cfg.Compiled.Accesses(op, s.accs[:0])
	}
	s.offerRest(op, from)
}

// offerRest analyses s.accs[from:] of op, which the simulation does not serve.
func (s *Simulator) offerRest(op *workloads.Op, from int) {
	for k := from; k < len(s.accs); k++ {
		a := &s.accs[k]
		if s.shares != nil && s.shares[a.Step.ID] >= 0 {
			continue // the shared table analysed it
		}
		s.obs.Access(a, op, s.placer.Place(a, op))
	}
}

// sameGroup: accesses that travel together — the partitions of one step, or the
// statements of one batch.
func sameGroup(a, b *design.Access) bool {
	if a.Step == b.Step {
		return true
	}
	return a.Step.Batch != design.NoBatch && b.Step.Batch == a.Step.Batch && a.Step.BatchGroup == b.Step.BatchGroup
}

// draw is a service time with the given mean and a coefficient of variation of 0.5 (a
// shifted exponential: mean/2 + Exp(mean/2)): real service times are neither constant
// nor memoryless. The generator is the variant's own, seeded from the scenario, and the
// simulation consumes it in one fixed order, so runs are reproducible.
func (s *Simulator) draw(mean time.Duration) int64 {
	if mean <= 0 {
		return 0
	}
	if σ := s.opt.ServiceSpread; σ > 0 {
		return int64(float64(mean) * s.scale * math.Exp(σ*s.rng.NormFloat64()-σ*σ/2))
	}
	h := float64(mean) * s.scale / 2
	return int64(h + h*s.rng.ExpFloat64())
}

func unit(x uint64) float64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11) / (1 << 53)
}

// apply carries out a scenario event at its time.
func (s *Simulator) apply(e scenario.Event) {
	at := int64(e.At)
	rec := results.Event{AtS: e.At.Seconds(), Action: e.Action, Target: e.Node + e.Shard, Note: e.Note}
	var err error
	switch e.Action {
	case scenario.EventNodeDown, scenario.EventNodeUp:
		up := e.Action == scenario.EventNodeUp
		switch {
		case s.cass != nil && s.cass.find(e.Node) >= 0:
			s.cass.setUp(s.cass.find(e.Node), up, at)
		case s.mongo != nil:
			err = s.mongo.setUp(e.Node, up, at)
		default:
			err = fmt.Errorf("no node %q (nodes: %v)", e.Node, s.placer.NodeNames())
		}
	case scenario.EventAddNode:
		if s.cass == nil {
			err = fmt.Errorf("add_node: the design has no Cassandra part")
			break
		}
		var name string
		name, err = s.cass.addNode(e.DC, e.Rack, at)
		rec.Target = name
	case scenario.EventAddShard:
		if s.mongo == nil {
			err = fmt.Errorf("add_shard: the design has no MongoDB part")
			break
		}
		rec.Target = s.mongo.addShard(e.Shard, at)
	case scenario.EventExec:
		err = fmt.Errorf("exec events run commands against real servers; the simulator skips them")
	}
	if err != nil {
		rec.Error = err.Error()
	}
	s.applied = append(s.applied, rec)
}

// nodeSeries is one node's (or shard member's) figures over the run, a point per tick:
// utilisation (busy core time over capacity, reads and writes together: the cores are
// shared) and mean queue length; and the peak share of the cores each stage took.
type nodeSeries struct {
	name       string
	util       [][2]float64
	queue      [][2]float64
	jobs       [stages]int64
	drops      int64
	down       int // ticks spent down
	busy, capa float64
	stage      [stages]float64 // this tick's busy core time by stage
	peakStage  [stages]float64 // the highest share of the cores a stage took in a tick
	q          float64
}

func (s *Simulator) sampleUntil(t int64) {
	for s.nextTick <= t {
		ts := float64(s.nextTick) / 1e9
		if s.cass != nil {
			s.cass.sample(s)
		}
		if s.mongo != nil {
			s.mongo.sample(s)
		}
		s.closeTick(ts)
		s.nextTick += s.tick
	}
}

// observe folds one station's tick into its node's point.
func (s *Simulator) observe(node string, up bool, st *Station) {
	ns := s.nodes[node]
	if ns == nil {
		ns = &nodeSeries{name: node}
		s.nodes[node] = ns
		s.nodeOrder = append(s.nodeOrder, node)
	}
	x := st.Take(s.tick)
	s.stages.add(s, node, st, x)
	w := float64(st.Workers())
	ns.busy += x.Utilisation * w
	ns.capa += w
	for i, u := range x.Stage {
		ns.stage[i] += u * w
	}
	ns.q += x.MeanQueue
	for i, n := range x.Jobs {
		ns.jobs[i] += n
	}
	ns.drops += x.Drops
	if !up {
		ns.down++
	}
}

// closeTick turns the stations observed at ts into each node's point.
func (s *Simulator) closeTick(ts float64) {
	for _, name := range s.nodeOrder {
		ns := s.nodes[name]
		if ns.capa == 0 {
			continue
		}
		ns.util = append(ns.util, [2]float64{ts, ns.busy / ns.capa})
		ns.queue = append(ns.queue, [2]float64{ts, ns.q})
		for i := range ns.stage {
			ns.peakStage[i] = max(ns.peakStage[i], ns.stage[i]/ns.capa)
			ns.stage[i] = 0
		}
		ns.busy, ns.capa, ns.q = 0, 0, 0
	}
}

// serverView is the simulator's model of the servers, in server.json's format.
func (s *Simulator) serverView() results.ServerVariant {
	sv := results.ServerVariant{Variant: s.cfg.Variant.Name, Source: "simulator model (per-node service stations)"}
	tbl := results.ServerTable{
		Title: "per node: simulated requests", Subject: "nodes",
		Columns: []string{"node", "reads", "writes", "dropped (waited past timeout)", "mean utilisation", "peak utilisation", "peak read stage", "peak write stage", "peak queue", "down (s)"},
		Numeric: []bool{false, true, true, true, true, true, true, true, true, true},
	}
	for _, name := range s.nodeOrder {
		ns := s.nodes[name]
		var sum, peak, peakQ float64
		for i, p := range ns.util {
			sum += p[1]
			peak = max(peak, p[1])
			peakQ = max(peakQ, ns.queue[i][1])
		}
		mean := 0.0
		if len(ns.util) > 0 {
			mean = sum / float64(len(ns.util))
		}
		tbl.Rows = append(tbl.Rows, []string{name, strconv.FormatInt(ns.jobs[StageRead], 10), strconv.FormatInt(ns.jobs[StageWrite], 10), strconv.FormatInt(ns.drops, 10),
			pct(mean), pct(peak), pct(ns.peakStage[StageRead]), pct(ns.peakStage[StageWrite]), fmt.Sprintf("%.1f", peakQ),
			strconv.FormatFloat(float64(ns.down)*s.opt.Tick.Seconds(), 'f', -1, 64)})
		sv.Series = append(sv.Series,
			results.ServerSeries{Metric: "utilisation", Unit: "ratio", Node: name, Points: ns.util},
			results.ServerSeries{Metric: "queue length", Unit: "count", Node: name, Points: ns.queue})
	}
	sv.Tables = append(sv.Tables, tbl)
	sv.Contention = s.contention()
	if t, ok := contentionTable(sv.Contention); ok {
		sv.Tables = append(sv.Tables, t)
	}
	sv.Nodes = s.stages.nodes(s)
	if s.cass != nil {
		sv.Tables = append(sv.Tables, servedTable(s.Served()))
	}
	if s.mongo != nil {
		sv.Tables = append(sv.Tables, s.mongo.chunkTable())
	}
	caps := s.opt.Capacities()
	if s.cass != nil {
		sv.Tables = append(sv.Tables, caps[0].table())
	}
	if s.mongo != nil {
		sv.Tables = append(sv.Tables, caps[1].table())
	}
	sv.Notes = append(sv.Notes,
		fmt.Sprintf("Utilisation is busy core time over capacity per %s tick (a Cassandra node's "+
			"%d cores serve its read and write stages alike; a MongoDB member's %d cores); the "+
			"peak read and write stage columns are the highest share of the cores each stage "+
			"took in a tick. Queue length is the mean number of requests waiting.",
			s.opt.Tick, s.opt.Cassandra.Cores, s.opt.MongoDB.Cores))
	return sv
}

// contention is the run's LWT contention and MongoDB write conflicts, of the kinds it had.
func (s *Simulator) contention() []results.ServerContention {
	var out []results.ServerContention
	if p := s.paxos; p.lwts > 0 {
		out = append(out, results.ServerContention{Kind: results.ContentionLWT, Requests: p.lwts, Contended: p.contended, Retries: p.rounds - p.lwts, TimedOut: p.timeouts})
	}
	if c := s.conflicts; c.writes > 0 {
		out = append(out, results.ServerContention{Kind: results.ContentionWriteConflict, Requests: c.writes, Contended: c.conflicted, Retries: c.retries, TimedOut: -1})
	}
	return out
}

// contentionTable shows the contention, when the run had any LWT or checked update.
func contentionTable(cs []results.ServerContention) (results.ServerTable, bool) {
	t := results.ServerTable{
		Title:   "contention on one partition or document",
		Columns: []string{"requests", "count", "contended", "retries", "timed out"},
		Numeric: []bool{false, true, true, true, true},
	}
	what := map[string]string{
		results.ContentionLWT:           "Cassandra LWTs (a Paxos round lost to another proposer on the partition; rounds retried; CAS write timeouts)",
		results.ContentionWriteConflict: "MongoDB updates of one document (WiredTiger write conflicts, retried by mongod)",
	}
	for _, c := range cs {
		timedOut := "–"
		if c.TimedOut >= 0 {
			timedOut = strconv.FormatInt(c.TimedOut, 10)
		}
		t.Rows = append(t.Rows, []string{what[c.Kind], strconv.FormatInt(c.Requests, 10), strconv.FormatInt(c.Contended, 10), strconv.FormatInt(c.Retries, 10), timedOut})
	}
	return t, len(t.Rows) > 0
}

func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// Report adds what only the simulator knows to the results: per-node operation counts,
// the events as applied, the hot-partition analysis (hotspots.json) and the per-node
// utilisation and queue length over time (server.json).
func (s *Simulator) Report(_ context.Context, v *results.SummaryVariant, dir *results.Dir) error {
	if s.placer == nil {
		return nil
	}
	var hv results.HotspotsVariant
	if s.group != nil {
		s.group.analysis.Lock() // the shared tables' analysis is the group's
		hv = s.obs.Result(v.Name, "computed", s.placer.Topology())
		s.group.analysis.Unlock()
	} else {
		hv = s.obs.Result(v.Name, "computed", s.placer.Topology())
	}
	hv.Notes = append(hv.Notes, "simulated: placement is exact; load per node is what the simulated requests did")
	for _, n := range hv.Nodes {
		v.Nodes = append(v.Nodes, results.NodeCount{Node: n.Node, Ops: n.Ops})
	}
	v.Events = append(v.Events, s.applied...)
	v.Notes = append(v.Notes, s.notes...)
	v.Notes = append(v.Notes, "simulated in virtual time: "+s.placer.Topology()+"; model and defaults in docs/simulator.md")
	if err := dir.AddHotspots(hv); err != nil {
		return err
	}
	return dir.AddServer(s.serverView())
}

// kth is the k-th smallest of xs (1-based), which it sorts: the time the k-th of a few
// replica responses arrives. An insertion sort, as a handful of values needs.
func kth(xs []int64, k int) int64 {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && xs[j] < xs[j-1]; j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
	return xs[k-1]
}

// nodeIndex resolves an event's node: a name, or a 1-based index.
func nodeIndex(names []string, node string) int {
	for i, n := range names {
		if n == node {
			return i
		}
	}
	if i, err := strconv.Atoi(node); err == nil && i >= 1 && i <= len(names) {
		return i - 1
	}
	return -1
}
