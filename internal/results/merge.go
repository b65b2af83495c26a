package results

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/shardbench/shardbench/internal/inputfile"
	"github.com/shardbench/shardbench/internal/metrics"
)

// ErrMergeInput marks a merge that failed because of its inputs (not a results
// directory, histograms that cannot be merged exactly): bad input, not a failed run.
var ErrMergeInput = errors.New("cannot merge")

// MergeOptions tune Merge.
type MergeOptions struct {
	// Tool is the harness writing the merged directory.
	Tool Tool
	// Partial merges an incomplete set (shards missing from a run, runs without a
	// hot-partition analysis among runs with one) instead of refusing it; the merged
	// summary then lists what is missing and is not complete.
	Partial bool
}

// Merge combines results directories into one directory at out, exactly. The inputs must
// be the shards of one distributed run or repeated runs of one scenario (see checkMerge);
// anything else is refused with ErrMergeInput.
//
//   - counters add; latency histograms merge bucket by bucket, and every percentile of
//     the merged summary is recomputed from the merged histograms (never averaged);
//   - interval logs merge interval by interval, aligned on each run's schedule start;
//   - the time series sums counts per second, and recomputes each second's percentiles
//     from the merged interval histograms; rates add for shards (they ran at once) and
//     are the runs' mean for repeats;
//   - shards: hotspots.json is the whole run's in every shard (each one places or
//     simulates the whole stream), so it is taken as it is, as is a simulator's
//     server.json; repeats: per-node and per-table counts add (exact) and the top-K
//     partition lists merge with their Space-Saving error bounds widened to stay true
//     bounds.
func Merge(inputs []string, out string, opts MergeOptions) (*Summary, error) {
	if len(inputs) == 0 {
		return nil, fmt.Errorf("%w: no input directories", ErrMergeInput)
	}
	seen := map[string]bool{}
	var ins []*mergeInput
	for _, d := range inputs {
		abs, _ := filepath.Abs(d)
		if seen[abs] {
			return nil, fmt.Errorf("%w: %s is given twice (its operations would count twice)", ErrMergeInput, d)
		}
		seen[abs] = true
		in, err := readMergeInput(d)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrMergeInput, err)
		}
		ins = append(ins, in)
	}
	if abs, _ := filepath.Abs(out); seen[abs] {
		return nil, fmt.Errorf("%w: --out %s is one of the inputs", ErrMergeInput, out)
	}
	plan, err := checkMerge(ins, opts.Partial)
	if err != nil {
		return nil, err
	}
	m := &merger{ins: ins, tool: opts.Tool, plan: plan}
	sum, err := m.summary()
	if err != nil {
		return nil, err
	}
	for _, in := range ins {
		for i := range sum.Variants {
			sum.Variants[i].Notes = append(sum.Variants[i].Notes, in.warnings...)
		}
	}
	dir, err := Create(out)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMergeInput, err)
	}
	defer dir.Close()
	if b := ins[0].asRun; b != nil {
		if err := dir.WriteFile(ScenarioFile, b); err != nil {
			return nil, err
		}
	}
	if err := m.logs(dir, sum); err != nil {
		return nil, err
	}
	if err := m.timeseries(dir, sum); err != nil {
		return nil, err
	}
	if hs := m.hotspots(sum); hs != nil {
		if err := dir.WriteHotspots(hs); err != nil {
			return nil, err
		}
	}
	if err := m.server(dir, sum); err != nil {
		return nil, err
	}
	if err := dir.WriteSummary(sum); err != nil {
		return nil, err
	}
	return sum, dir.Close()
}

type mergeInput struct {
	dir    string
	asRun  []byte // scenario.yaml, nil when absent
	sum    *Summary
	hs     *Hotspots
	sv     *ServerReport
	points []Point
	// warnings are what reading the input left out (a torn last time series line); the
	// merged variants carry them as notes.
	warnings []string
}

func readMergeInput(dir string) (*mergeInput, error) {
	sum, err := Read(dir)
	if err != nil {
		return nil, err
	}
	hs, err := ReadHotspots(dir)
	if err != nil {
		return nil, err
	}
	sv, err := ReadServer(dir)
	if err != nil {
		return nil, err
	}
	pts, warnings, err := ReadTimeseriesChecked(dir)
	if err != nil {
		return nil, err
	}
	asRun, err := inputfile.ReadFile(filepath.Join(dir, ScenarioFile), inputfile.YAML)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return &mergeInput{dir: dir, asRun: asRun, sum: sum, hs: hs, sv: sv, points: pts, warnings: warnings}, nil
}

type merger struct {
	ins  []*mergeInput
	tool Tool
	plan *mergePlan
	// all[variant][startMs] is every operation's interval histograms merged, for the
	// time series percentiles.
	all map[string]map[int64]*metrics.Set
}

func newSet() *metrics.Set {
	return &metrics.Set{Response: metrics.NewHistogram(), Service: metrics.NewHistogram(), Lag: metrics.NewHistogram()}
}

// addSet merges o into s, failing if any value would be lost.
func addSet(s, o *metrics.Set) error {
	for _, p := range [][2]*hdr.Histogram{{s.Response, o.Response}, {s.Service, o.Service}, {s.Lag, o.Lag}} {
		if dropped := p[0].Merge(p[1]); dropped > 0 {
			return fmt.Errorf("%w: %d values outside the histogram range", ErrMergeInput, dropped)
		}
	}
	s.Counters.Add(&o.Counters)
	return nil
}

func (m *merger) summary() (*Summary, error) {
	first := m.ins[0].sum
	p := m.plan
	sum := &Summary{
		Tool: m.tool, Scenario: first.Scenario, Backend: first.Backend,
		StartedAt: first.StartedAt, EndedAt: first.EndedAt, Complete: true, Phases: first.Phases,
		Merge: &MergeInfo{Kind: p.kind, Runs: p.runs, Missing: p.missing},
	}
	var interrupted []string
	for _, in := range m.ins {
		s := in.sum
		sum.MergedFrom = append(sum.MergedFrom, in.dir)
		if s.StartedAt.Before(sum.StartedAt) {
			sum.StartedAt = s.StartedAt
		}
		if s.EndedAt.After(sum.EndedAt) {
			sum.EndedAt = s.EndedAt
		}
		sum.Complete = sum.Complete && s.Complete
		if s.Interrupted != "" {
			interrupted = append(interrupted, in.dir+": "+s.Interrupted)
		}
	}
	if len(p.missing) > 0 {
		sum.Complete = false
		interrupted = append(interrupted, "partial merge: missing "+strings.Join(p.missing, "; "))
	}
	sum.Interrupted = strings.Join(interrupted, "; ")
	sum.Scenario.ExpectedOps = 0
	for _, in := range m.ins {
		sum.Scenario.ExpectedOps += in.sum.Scenario.ExpectedOps
	}
	sum.Phases = slices.Clone(first.Phases)
	for i := range sum.Phases {
		sum.Phases[i].ExpectedOps = 0
		for _, in := range m.ins {
			if i < len(in.sum.Phases) {
				sum.Phases[i].ExpectedOps += in.sum.Phases[i].ExpectedOps
			}
		}
	}

	// Variants in order of first appearance.
	var order []string
	byName := map[string][]weighted{}
	for k, in := range m.ins {
		for i := range in.sum.Variants {
			v := &in.sum.Variants[i]
			if _, ok := byName[v.Name]; !ok {
				order = append(order, v.Name)
			}
			byName[v.Name] = append(byName[v.Name], weighted{v, p.weight[k]})
		}
	}
	for _, name := range order {
		mv, err := m.variant(byName[name])
		if err != nil {
			return nil, fmt.Errorf("variant %s: %w", name, err)
		}
		mv.Notes = appendUnique(mv.Notes, p.notes...)
		sum.Variants = append(sum.Variants, mv)
	}
	return sum, nil
}

// weighted is one input's variant and the number of runs it stands for.
type weighted struct {
	v *SummaryVariant
	w int
}

func appendUnique(list []string, more ...string) []string {
	for _, s := range more {
		found := false
		for _, x := range list {
			if x == s {
				found = true
				break
			}
		}
		if !found {
			list = append(list, s)
		}
	}
	return list
}

// variant merges one variant's results. Shards ran at once, each a part of the whole:
// the measured span is the longest, rates add. Repeats ran one after another: their spans
// add, so rates come out as the runs' mean.
func (m *merger) variant(vs []weighted) (SummaryVariant, error) {
	f := vs[0].v
	shards := m.plan.shards()
	out := SummaryVariant{Name: f.Name, Design: f.Design, Database: f.Database, Params: f.Params, StartedAt: f.StartedAt}
	var span, due, runs float64
	var opOrder []string
	opKind := map[string]string{}
	opReason := map[string]string{} // why an input did not serve the operation
	opSets := map[string]*metrics.Set{}
	total := newSet()
	nodes := map[string]int64{}
	var nodeOrder []string
	// A simulated shard simulates the whole cluster: its node counts are the whole run's.
	wholeNodes := shards && m.ins[0].sum.Backend.Simulated
	for k, wv := range vs {
		v, w := wv.v, float64(wv.w)
		if v.StartedAt.Before(out.StartedAt) {
			out.StartedAt = v.StartedAt
		}
		vdue := dueSeconds(v) / w // a pooled input's scheduled operations span its runs
		if shards {
			span, due = math.Max(span, v.DurationS), math.Max(due, vdue)
		} else {
			span, due, runs = span+v.DurationS*w, due+vdue*w, runs+w
		}
		out.Interrupted = out.Interrupted || v.Interrupted
		out.Notes = appendUnique(out.Notes, v.Notes...)
		if shards {
			out.Events = appendUniqueEvents(out.Events, v.Events...)
		} else {
			out.Events = append(out.Events, v.Events...)
		}
		if v.Design != f.Design || v.Database != f.Database {
			out.Notes = appendUnique(out.Notes, fmt.Sprintf("merged inputs disagree on this variant's design: %s/%s and %s/%s", f.Database, f.Design, v.Database, v.Design))
		}
		for class, ex := range v.ErrorExamples {
			if out.ErrorExamples == nil {
				out.ErrorExamples = map[string][]string{}
			}
			for _, e := range ex {
				if len(out.ErrorExamples[class]) < 5 {
					out.ErrorExamples[class] = appendUnique(out.ErrorExamples[class], e)
				}
			}
		}
		for _, n := range v.Nodes {
			if _, ok := nodes[n.Node]; !ok {
				nodeOrder = append(nodeOrder, n.Node)
			}
			if !wholeNodes || k == 0 {
				nodes[n.Node] += n.Ops
			}
		}
		for i := range v.Ops {
			st := &v.Ops[i]
			set, err := st.ToSet()
			if err != nil {
				return out, fmt.Errorf("%w: %v", ErrMergeInput, err)
			}
			acc, ok := opSets[st.Op]
			if !ok {
				acc = newSet()
				opSets[st.Op] = acc
				opOrder = append(opOrder, st.Op)
				opKind[st.Op] = st.Kind
			}
			if st.UnservedReason != "" && opReason[st.Op] == "" {
				opReason[st.Op] = st.UnservedReason
			}
			if ok && (acc.Scheduled() > 0) != st.Served() {
				out.Notes = appendUnique(out.Notes, fmt.Sprintf("merged inputs disagree on whether this variant serves %s: figures are of the inputs that served it", st.Op))
			}
			if err := addSet(acc, set); err != nil {
				return out, fmt.Errorf("%s: %w", st.Op, err)
			}
		}
		tset, err := v.Totals.ToSet()
		if err != nil {
			return out, fmt.Errorf("%w: totals: %v", ErrMergeInput, err)
		}
		if err := addSet(total, tset); err != nil {
			return out, fmt.Errorf("totals: %w", err)
		}
	}
	if len(vs) < len(m.ins) {
		out.Notes = appendUnique(out.Notes, fmt.Sprintf("this variant is in %d of the %d merged inputs", len(vs), len(m.ins)))
	}
	sort.SliceStable(out.Events, func(i, j int) bool { return out.Events[i].AtS < out.Events[j].AtS })
	out.DurationS = span
	if !shards && runs > 0 {
		out.DurationS = span / runs // the mean run's span; rates below are over every run's
	}
	for _, op := range opOrder {
		st := FromSet(op, opKind[op], opSets[op], span, due)
		if st.Unserved > 0 {
			st.UnservedReason = opReason[op]
		}
		if st.Scheduled > 0 {
			st.HistogramLog = HistogramLogPath(out.Name, op)
		}
		out.Ops = append(out.Ops, st)
	}
	out.Totals = FromSet("all", "", total, span, due)
	out.Coverage = CoverageOf(out.Ops)
	for _, n := range nodeOrder {
		out.Nodes = append(out.Nodes, NodeCount{Node: n, Ops: nodes[n]})
	}
	return out, nil
}

// appendUniqueEvents adds the events not already listed: every simulated shard applies
// the scenario's events to its whole simulated cluster, so each lists them.
func appendUniqueEvents(list []Event, more ...Event) []Event {
	for _, e := range more {
		if !slices.Contains(list, e) {
			list = append(list, e)
		}
	}
	return list
}

// intervalKey aligns intervals of different runs: the tag and the start in ms since
// each run's schedule start.
type intervalKey struct {
	tag     string
	startMs int64
}

var tagOrder = map[string]int{"": 0, "service": 1, "lag": 2}

// logs merges every operation's interval log.
func (m *merger) logs(dir *Dir, sum *Summary) error {
	m.all = map[string]map[int64]*metrics.Set{}
	for vi := range sum.Variants {
		v := &sum.Variants[vi]
		all := map[int64]*metrics.Set{}
		m.all[v.Name] = all
		for _, st := range v.Ops {
			merged := map[intervalKey]*hdr.Histogram{}
			ends := map[intervalKey]int64{}
			found := false
			for _, in := range m.ins {
				iv := in.sum.Variant(v.Name)
				if iv == nil {
					continue
				}
				ist := iv.Op(st.Op)
				if ist == nil || ist.HistogramLog == "" {
					continue
				}
				lines, err := ReadHistogramLog(filepath.Join(in.dir, filepath.FromSlash(ist.HistogramLog)))
				if err != nil {
					if errors.Is(err, os.ErrNotExist) {
						continue
					}
					return fmt.Errorf("%w: %v", ErrMergeInput, err)
				}
				found = true
				for _, l := range lines {
					k := intervalKey{l.Tag, int64(math.Round(l.StartS * 1000))}
					h, ok := merged[k]
					if !ok {
						h = metrics.NewHistogram()
						merged[k] = h
					}
					if dropped := h.Merge(l.Hist); dropped > 0 {
						return fmt.Errorf("%w: %s: %d values outside the histogram range", ErrMergeInput, ist.HistogramLog, dropped)
					}
					ends[k] = max(ends[k], int64(math.Round(l.EndS*1000)))
					set, ok := all[k.startMs]
					if !ok {
						set = newSet()
						all[k.startMs] = set
					}
					switch l.Tag {
					case "":
						set.Response.Merge(l.Hist)
					case "service":
						set.Service.Merge(l.Hist)
					case "lag":
						set.Lag.Merge(l.Hist)
					}
				}
			}
			if !found {
				continue
			}
			keys := make([]intervalKey, 0, len(merged))
			for k := range merged {
				keys = append(keys, k)
			}
			sort.Slice(keys, func(i, j int) bool {
				if keys[i].startMs != keys[j].startMs {
					return keys[i].startMs < keys[j].startMs
				}
				return tagOrder[keys[i].tag] < tagOrder[keys[j].tag]
			})
			if err := writeLog(dir, v, st.Op, keys, merged, ends); err != nil {
				return err
			}
		}
	}
	return nil
}

func writeLog(dir *Dir, v *SummaryVariant, op string, keys []intervalKey, hs map[intervalKey]*hdr.Histogram, ends map[intervalKey]int64) error {
	path := filepath.Join(dir.Path, HistogramLogPath(v.Name, op))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	l := hdr.NewHistogramLogWriter(bw)
	errs := []error{
		l.OutputLogFormatVersion(),
		l.OutputComment(fmt.Sprintf("[shardbench variant=%s op=%s values=nanoseconds untagged=response-time Tag=service Tag=lag merged]", SafeName(v.Name), SafeName(op))),
		l.OutputStartTime(v.StartedAt.UnixMilli()),
		l.OutputLegend(),
	}
	for _, k := range keys {
		h := hs[k]
		h.SetStartTimeMs(k.startMs)
		h.SetEndTimeMs(ends[k])
		h.SetTag(k.tag)
		errs = append(errs, l.OutputIntervalHistogram(h))
	}
	errs = append(errs, bw.Flush(), f.Close())
	return errors.Join(errs...)
}

// timeseries sums the inputs' points per variant and second.
func (m *merger) timeseries(dir *Dir, sum *Summary) error {
	type key struct {
		variant string
		startMs int64
	}
	agg := map[key]*Point{}
	var keys []key
	for i, in := range m.ins {
		w := float64(m.plan.weight[i])
		for _, p := range in.points {
			k := key{p.Variant, int64(math.Round(p.StartS * 1000))}
			a, ok := agg[k]
			if !ok {
				cp := p
				cp.Errors = nil
				a = &cp
				a.Completed, a.OK, a.Late, a.Dropped, a.Abandoned, a.Unserved, a.InFlight = 0, 0, 0, 0, 0, 0, 0
				a.TargetRate, a.AchievedRate = 0, 0
				agg[k] = a
				keys = append(keys, k)
			}
			a.EndS = math.Max(a.EndS, p.EndS)
			a.TargetRate += p.TargetRate * w
			a.AchievedRate += p.AchievedRate * w
			a.Completed += p.Completed
			a.OK += p.OK
			a.Late += p.Late
			a.Dropped += p.Dropped
			a.Abandoned += p.Abandoned
			a.Unserved += p.Unserved
			a.InFlight += p.InFlight * int64(m.plan.weight[i])
			for c, n := range p.Errors {
				if a.Errors == nil {
					a.Errors = map[string]int64{}
				}
				a.Errors[c] += n
			}
		}
	}
	vorder := map[string]int{}
	for i, v := range sum.Variants {
		vorder[v.Name] = i
	}
	sort.SliceStable(keys, func(i, j int) bool {
		if keys[i].variant != keys[j].variant {
			return vorder[keys[i].variant] < vorder[keys[j].variant]
		}
		return keys[i].startMs < keys[j].startMs
	})
	incomplete := 0
	for _, k := range keys {
		p := agg[k]
		if !m.plan.shards() {
			// Repeats ran one after another: a second's rates are the runs' mean.
			r := float64(m.plan.runs)
			p.TargetRate, p.AchievedRate = p.TargetRate/r, p.AchievedRate/r
			p.InFlight = int64(math.Round(float64(p.InFlight) / r))
		}
		p.P50, p.P90, p.P99, p.P999, p.Max, p.ServiceP99, p.LagP99 = 0, 0, 0, 0, 0, 0, 0
		if set := m.all[k.variant][k.startMs]; set != nil && set.Response.TotalCount() == p.Completed && p.Completed > 0 {
			q := set.Response.ValueAtPercentiles([]float64{50, 90, 99, 99.9})
			p.P50, p.P90, p.P99, p.P999 = ms(q[50]), ms(q[90]), ms(q[99]), ms(q[99.9])
			p.Max = ms(set.Response.Max())
			p.ServiceP99 = ms(set.Service.ValueAtPercentile(99))
			p.LagP99 = ms(set.Lag.ValueAtPercentile(99))
		} else if p.Completed > 0 {
			incomplete++
		}
		if err := dir.writePoint(p); err != nil {
			return err
		}
	}
	if incomplete > 0 {
		for i := range sum.Variants {
			sum.Variants[i].Notes = appendUnique(sum.Variants[i].Notes,
				fmt.Sprintf("%d merged time-series points have no percentiles: some inputs lack their interval logs", incomplete))
		}
	}
	return nil
}
