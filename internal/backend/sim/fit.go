package sim

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/schedule"
	"github.com/shardbench/shardbench/workloads"
)

// Measured is one operation's service time in a real run: what calibration fits to.
type Measured struct {
	Variant string
	Op      string
	Count   int64
	Mean    time.Duration
	// P50 is needed only to fit the shape (FitInput.Shape).
	P50 time.Duration
	P99 time.Duration
}

// FitInput is a real run to fit the simulator to: its scenario as run (same schedule,
// same designs), the variants' measured service times, and how much of the stream each
// trial simulation may use.
type FitInput struct {
	Scenario *scenario.Scenario
	Prepared *design.Prepared
	Measured []Measured
	// Limit caps the operations of each trial simulation per variant (0: the whole
	// schedule); the fit simulates about a dozen trials.
	Limit int64
	// Progress, when set, hears one line per trial.
	Progress func(string)
	// Adjust, when set, changes each variant's options before every trial simulation
	// (after the candidate service times are set), and with variant "" the options the
	// fit starts from: `shardbench fidelity` fits on the live cluster's ring and
	// replication with the measured round trip. It must leave service times alone.
	Adjust func(variant string, o *Options)
	// Shape also fits Options.ServiceSpread: the σ of log-normal service times with which
	// the simulated ratio of p99 to p50 is the measured one (count-weighted geometric
	// mean over the operations), so that a fit to a heavy-tailed server predicts its
	// medians and tails, not only its means.
	Shape bool
}

// minFitCount is the fewest measured operations an operation type needs to be fitted: a
// mean of fewer is noise.
const minFitCount = 20

// Fit finds node-model service times and per-operation scales with which the simulator,
// running the real run's scenario, reproduces each operation's measured mean service
// time. It starts from the scenario's backends.sim (with defaults), then:
//
//  1. scales the read-side and write-side service times of each database (Cassandra
//     read/row/sstable/scan and write; MongoDB find/doc/scan and write/update/apply, each side's
//     fields keeping their ratios) until the count-weighted mean service of its read and
//     write operations match: a secant search, since simulated service is about affine in
//     them (the network round trip is the constant part and is not fitted);
//  2. fits a scale per operation for what remains (an operation reading more rows or a
//     bigger document than the model charges);
//  3. runs the calibrated simulation once more and records, per operation, measured
//     against simulated mean and p99 service time.
//
// The simulation runs at the real run's rates, so queueing in the servers is modelled,
// not fitted away; a run near saturation fits less well (the fit rows show it).
func Fit(ctx context.Context, in FitInput) (*Calibration, error) {
	base, err := LoadOptions(in.Scenario)
	if err != nil {
		return nil, err
	}
	if in.Adjust != nil {
		in.Adjust("", &base)
	}
	f := &fitter{in: in, opt: base, kind: map[string]workloads.Kind{}}
	for _, op := range in.Prepared.Model.Ops {
		f.kind[op.Name] = op.Kind
	}
	cal := &Calibration{Schema: CalibrationSchema, Network: base.Network}
	if err := f.pick(cal); err != nil {
		return nil, err
	}
	// Per-operation scales start at the scenario's (1 unless set) and stay put in step 1.
	scales := map[string]float64{}
	for _, m := range f.used {
		k := ScaleKey(m.Op, m.Variant)
		scales[k] = 1
		if s, ok := base.OperationScale[m.Op]; ok {
			scales[k] = s
		}
		if s, ok := base.OperationScale[k]; ok {
			scales[k] = s
		}
	}
	f.opt.OperationScale = scales

	// 1. Node-model service times, all groups at once (they barely interact).
	groups := f.groups()
	for trial := 0; trial < 6 && len(groups) > 0; trial++ {
		got, err := f.simulate(ctx, false)
		if err != nil {
			return nil, err
		}
		done := true
		for _, g := range groups {
			done = g.step(f.groupMean(g, got)) && done
		}
		if done {
			break
		}
	}
	// 1b. The shape, when asked: σ changes the mean of the slowest of several replicas'
	// responses, so the per-operation scales are fitted after it.
	if in.Shape {
		if err := f.fitSpread(ctx, cal); err != nil {
			return nil, err
		}
	}
	// 2. Per-operation scales, each by its own secant search.
	secs := map[string]*secant{}
	for _, m := range f.used {
		secs[ScaleKey(m.Op, m.Variant)] = &secant{want: float64(m.Mean)}
	}
	for round := 0; round < 5; round++ {
		got, err := f.simulate(ctx, false)
		if err != nil {
			return nil, err
		}
		done := true
		for _, m := range f.used {
			s := got[key{m.Variant, m.Op}]
			if s == nil || s.n == 0 {
				continue
			}
			k := ScaleKey(m.Op, m.Variant)
			x, ok := secs[k].next(scales[k], s.sum/float64(s.n))
			if !ok {
				scales[k] = clamp(x, max(scales[k]/10, 0.02), min(scales[k]*10, 50))
				done = false
			}
		}
		if done {
			break
		}
	}
	// 3. The calibrated simulation, against the measurements.
	got, err := f.simulate(ctx, true)
	if err != nil {
		return nil, err
	}
	for _, m := range f.used {
		row := FitRow{Variant: m.Variant, Op: m.Op, Count: m.Count, MeasuredMean: m.Mean, MeasuredP99: m.P99}
		if s := got[key{m.Variant, m.Op}]; s != nil && s.n > 0 {
			row.SimulatedMean = time.Duration(s.sum / float64(s.n))
			row.SimulatedP99 = time.Duration(s.h.ValueAtQuantile(99))
			row.Error = round3((float64(row.SimulatedMean) - float64(m.Mean)) / float64(m.Mean))
		}
		cal.Fit = append(cal.Fit, row)
	}
	sortFit(cal.Fit)
	cal.ServiceSpread = round3(f.opt.ServiceSpread)
	cal.OperationScale = map[string]float64{}
	for name, s := range scales {
		cal.OperationScale[name] = round3(s)
	}
	if f.dbs["cassandra"] {
		c := f.opt.Cassandra
		cal.Cassandra = &CassandraModel{Read: c.Read.Round(100 * time.Nanosecond), Row: c.Row.Round(10 * time.Nanosecond),
			SSTable: c.SSTable.Round(100 * time.Nanosecond), Scan: c.Scan.Round(time.Microsecond), ScanRow: c.ScanRow.Round(10 * time.Nanosecond), Write: c.Write.Round(100 * time.Nanosecond)}
	}
	if f.dbs["mongodb"] {
		m := f.opt.MongoDB
		cal.MongoDB = &MongoModel{
			Find:    m.Find.Round(100 * time.Nanosecond),
			Doc:     m.Doc.Round(10 * time.Nanosecond),
			Scan:    m.Scan.Round(time.Microsecond),
			Examine: m.Examine.Round(10 * time.Nanosecond),
			Write:   m.Write.Round(100 * time.Nanosecond),
			Update:  m.Update.Round(100 * time.Nanosecond),
			Apply:   m.Apply.Round(100 * time.Nanosecond),
		}
	}
	cal.Notes = append(cal.Notes, fmt.Sprintf("%d trial simulations of up to %d operations per variant; network round trip %s kept (not fitted)", f.trials, f.in.Limit, base.Network))
	return cal, nil
}

// fitSpread searches σ (Options.ServiceSpread) so that the count-weighted mean of
// ln(p99/p50) over the operations simulated matches the measured one: a secant search on
// an increasing function, from the σ a single log-normal draw would need.
func (f *fitter) fitSpread(ctx context.Context, cal *Calibration) error {
	want, n := 0.0, 0.0
	for _, m := range f.used {
		if m.P50 > 0 && m.P99 > m.P50 {
			want += math.Log(float64(m.P99)/float64(m.P50)) * float64(m.Count)
			n += float64(m.Count)
		}
	}
	if n == 0 {
		cal.Notes = append(cal.Notes, "service-time shape not fitted: no operation has a measured p50 below its p99")
		return nil
	}
	want /= n
	const z99 = 2.326 // the 99th percentile of a standard normal
	x := clamp(want/z99, 0.05, 4)
	var px, py float64
	for trial := 0; trial < 6; trial++ {
		f.opt.ServiceSpread = x
		got, err := f.simulate(ctx, true)
		if err != nil {
			return err
		}
		y, w := 0.0, 0.0
		for _, m := range f.used {
			s := got[key{m.Variant, m.Op}]
			if m.P50 <= 0 || m.P99 <= m.P50 || s == nil || s.n == 0 {
				continue
			}
			p50, p99 := float64(s.h.ValueAtQuantile(50)), float64(s.h.ValueAtQuantile(99))
			if p50 > 0 && p99 > 0 {
				y += math.Log(p99/p50) * float64(m.Count)
				w += float64(m.Count)
			}
		}
		if w == 0 {
			break
		}
		y /= w
		if math.Abs(y-want) <= 0.02*want {
			break
		}
		next := x * want / y
		if trial > 0 && y != py && x != px {
			next = x + (want-y)*(x-px)/(y-py)
		}
		px, py = x, y
		x = clamp(next, 0.02, 4)
	}
	cal.Notes = append(cal.Notes, fmt.Sprintf("service times log-normal with σ %.3f, fitted to the measured ln(p99/p50) of %.2f (count-weighted)", f.opt.ServiceSpread, want))
	return nil
}

type key struct{ variant, op string }

type fitter struct {
	in     FitInput
	opt    Options
	kind   map[string]workloads.Kind
	used   []Measured        // the measurements fitted to
	vars   []int             // indexes of the variants fitted
	dbOf   map[string]string // variant → its design's database (cassandra, mongodb, cassandra+mongodb)
	dbs    map[string]bool   // single databases whose node model is fitted
	trials int
}

// pick keeps the measurements the fit can use and notes why it leaves others out.
func (f *fitter) pick(cal *Calibration) error {
	index := map[string]int{}
	for i, v := range f.in.Prepared.Variants {
		index[v.Name] = i
	}
	f.dbOf, f.dbs = map[string]string{}, map[string]bool{}
	unknown := map[string]bool{} // variants noted as not in the scenario
	for _, m := range f.in.Measured {
		vi, ok := index[m.Variant]
		if !ok {
			if !unknown[m.Variant] {
				unknown[m.Variant] = true
				cal.Notes = append(cal.Notes, fmt.Sprintf("variant %s is not among the scenario's designs: not fitted", m.Variant))
			}
			continue
		}
		if _, ok := f.kind[m.Op]; !ok {
			continue
		}
		if ok, _ := f.in.Prepared.Compiled[vi].Served(f.in.Prepared.Model.OpIndex(m.Op)); !ok {
			continue // the design does not serve it: its "service time" is an instant refusal
		}
		if m.Count < minFitCount || m.Mean <= 0 {
			cal.Notes = append(cal.Notes, fmt.Sprintf("%s %s: %d measured operations (fewer than %d): not fitted", m.Variant, m.Op, m.Count, minFitCount))
			continue
		}
		f.used = append(f.used, m)
		if _, seen := f.dbOf[m.Variant]; !seen {
			db := f.in.Prepared.Variants[vi].Design.DatabaseName()
			f.dbOf[m.Variant] = db
			f.vars = append(f.vars, vi)
			if db == "cassandra" || db == "mongodb" {
				f.dbs[db] = true
			} else {
				cal.Notes = append(cal.Notes, fmt.Sprintf("variant %s uses %s: only its per-operation scales are fitted", m.Variant, db))
			}
		}
	}
	if len(f.used) == 0 {
		return fmt.Errorf("no operation of a variant of the scenario's designs has %d or more measured service times: nothing to fit", minFitCount)
	}
	return nil
}

// group is node-model fields fitted together against the operations of one kind on one
// database: the first field is searched, the others keep their ratio to it.
type group struct {
	db     string
	kind   workloads.Kind
	fields []*time.Duration
	ratios []float64
	sec    secant // towards the count-weighted mean measured service
}

func (g *group) x() float64 { return float64(*g.fields[0]) }

func (g *group) set(x float64) {
	for i, p := range g.fields {
		*p = time.Duration(x * g.ratios[i])
	}
}

// step moves the group's parameter towards its target given the simulated group mean y;
// it reports whether y is already within 0.5% of the target.
func (g *group) step(y float64) bool {
	x := g.x()
	next, done := g.sec.next(x, y)
	if !done {
		g.set(clamp(next, max(x/10, 100), x*10)) // at least 100 ns: a zero would stop every later step
	}
	return done
}

// secant searches x with f(x) = want for an f that is about affine and increasing
// (simulated service against a service-time parameter: the network round trip is the
// constant part). The first step is multiplicative, which is exact when the constant
// part is nil; later ones go through the last two points.
type secant struct {
	want   float64
	px, py float64
	primed bool
}

// next is the x to try after f(x) = y, and whether y is already within 0.5% of want.
func (s *secant) next(x, y float64) (float64, bool) {
	if y <= 0 || math.Abs(y-s.want) <= 0.005*s.want {
		return x, true
	}
	n := x * s.want / y
	if s.primed && y != s.py && x != s.px {
		n = x + (s.want-y)*(x-s.px)/(y-s.py)
	}
	s.px, s.py, s.primed = x, y, true
	return n, false
}

func (f *fitter) groups() []*group {
	var gs []*group
	add := func(db string, kind workloads.Kind, fields ...*time.Duration) {
		want, n := 0.0, int64(0)
		for _, m := range f.used {
			if f.kind[m.Op] == kind && f.dbOf[m.Variant] == db {
				want += float64(m.Mean) * float64(m.Count)
				n += m.Count
			}
		}
		if n == 0 || *fields[0] <= 0 {
			return
		}
		g := &group{db: db, kind: kind, fields: fields, sec: secant{want: want / float64(n)}}
		for _, p := range fields {
			g.ratios = append(g.ratios, float64(*p)/float64(*fields[0]))
		}
		gs = append(gs, g)
	}
	c, m := &f.opt.Cassandra, &f.opt.MongoDB
	if f.dbs["cassandra"] {
		add("cassandra", workloads.Read, &c.Read, &c.Row, &c.SSTable, &c.Scan, &c.ScanRow)
		add("cassandra", workloads.Write, &c.Write)
	}
	if f.dbs["mongodb"] {
		add("mongodb", workloads.Read, &m.Find, &m.Doc, &m.Scan, &m.Examine)
		add("mongodb", workloads.Write, &m.Write, &m.Update, &m.Apply)
	}
	return gs
}

// groupMean is the count-weighted (by the measured counts) mean simulated service of a
// group's operations, so that it compares with the group's target.
func (f *fitter) groupMean(g *group, got map[key]*simStat) float64 {
	sum, n := 0.0, 0.0
	for _, m := range f.used {
		if f.kind[m.Op] != g.kind || f.dbOf[m.Variant] != g.db {
			continue
		}
		if s := got[key{m.Variant, m.Op}]; s != nil && s.n > 0 {
			sum += s.sum / float64(s.n) * float64(m.Count)
			n += float64(m.Count)
		}
	}
	if n == 0 {
		return 0
	}
	return sum / n
}

// simStat is one operation's simulated service times in a trial; h, for the p99, only in
// the final one (the search needs only means).
type simStat struct {
	n   int64
	sum float64
	h   *hdrhistogram.Histogram
}

// simulate runs every fitted variant with the current options and returns each
// operation's service times (successful operations only, as the measured ones are
// mostly successes; end minus actual start, as a real run's service time).
func (f *fitter) simulate(ctx context.Context, withP99 bool) (map[key]*simStat, error) {
	f.trials++
	out := map[key]*simStat{}
	names := make([]string, len(f.in.Prepared.Model.Ops))
	for i, op := range f.in.Prepared.Model.Ops {
		names[i] = op.Name
	}
	sched := schedule.New(f.in.Scenario)
	for _, vi := range f.vars {
		v := f.in.Prepared.Variants[vi]
		cfg := backend.Config{Scenario: f.in.Scenario, Model: f.in.Prepared.Model, Variant: v, Compiled: f.in.Prepared.Compiled[vi], VariantIndex: vi}
		o := f.opt
		if f.in.Adjust != nil {
			f.in.Adjust(v.Name, &o)
		}
		s, err := open(cfg, o)
		if err != nil {
			return nil, err
		}
		stats := make([]*simStat, len(names))
		for i, n := range names {
			st := &simStat{}
			if withP99 {
				st.h = hdrhistogram.New(1, int64(time.Hour), 3)
			}
			stats[i] = st
			out[key{v.Name, n}] = st
		}
		pull := workloads.Pull(f.in.Prepared.Model.NewStream(sched))
		var count int64
		next := func() *workloads.Op {
			count++
			if f.in.Limit > 0 && count > f.in.Limit || count&0xffff == 0 && ctx.Err() != nil {
				return nil
			}
			return pull()
		}
		record := func(smp *metrics.Sample) {
			if metrics.Class(smp.Class) != metrics.OK {
				return
			}
			st := stats[smp.Op]
			d := smp.End - smp.Start
			st.n++
			st.sum += float64(d)
			if st.h != nil {
				_ = st.h.RecordValue(max(d, 1))
			}
		}
		if err := s.Simulate(ctx, next, record); err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	if f.in.Progress != nil {
		f.in.Progress(fmt.Sprintf("trial %d simulated", f.trials))
	}
	return out, nil
}

func clamp(x, lo, hi float64) float64 { return math.Min(math.Max(x, lo), hi) }

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// sortFit orders fit rows by variant, then by measured count (the operations that
// matter most first).
func sortFit(rows []FitRow) {
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].Variant != rows[j].Variant {
			return rows[i].Variant < rows[j].Variant
		}
		return rows[i].Count > rows[j].Count
	})
}
