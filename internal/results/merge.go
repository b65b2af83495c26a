package results

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/shardbench/shardbench/internal/inputfile"
	"github.com/shardbench/shardbench/internal/metrics"
)

// ErrMergeInput marks a merge that failed because of its inputs (not a results
// directory, histograms that cannot be merged exactly): bad input, not a failed run.
var ErrMergeInput = errors.New("cannot merge")

// Merge combines results directories written concurrently by several load generators
// (each driving its share of the traffic over the same schedule) into one directory at
// out, exactly:
//
//   - counters add; latency histograms merge bucket by bucket, and every percentile of
//     the merged summary is recomputed from the merged histograms (never averaged);
//   - interval logs merge interval by interval, aligned on each run's schedule start;
//   - the time series sums counts and rates per second, and recomputes each second's
//     percentiles from the merged interval histograms;
//   - hotspots.json sums per-node and per-table counts (exact) and merges the top-K
//     partition lists with their Space-Saving error bounds widened to stay true bounds.
//
// Rates assume the inputs ran at the same time: target and achieved rates add up.
func Merge(inputs []string, out string, tool Tool) (*Summary, error) {
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
	m := &merger{ins: ins, tool: tool}
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
	if b, err := inputfile.ReadFile(filepath.Join(ins[0].dir, ScenarioFile), inputfile.YAML); err == nil {
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
	if hs := m.hotspots(); hs != nil {
		if err := dir.WriteHotspots(hs); err != nil {
			return nil, err
		}
	}
	if err := dir.WriteSummary(sum); err != nil {
		return nil, err
	}
	return sum, dir.Close()
}

type mergeInput struct {
	dir    string
	sum    *Summary
	hs     *Hotspots
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
	pts, warnings, err := ReadTimeseriesChecked(dir)
	if err != nil {
		return nil, err
	}
	return &mergeInput{dir: dir, sum: sum, hs: hs, points: pts, warnings: warnings}, nil
}

type merger struct {
	ins  []*mergeInput
	tool Tool
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
	sum := &Summary{
		Tool: m.tool, Scenario: first.Scenario, Backend: first.Backend,
		StartedAt: first.StartedAt, EndedAt: first.EndedAt, Complete: true, Phases: first.Phases,
	}
	var interrupted []string
	var notes []string
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
		if s.Scenario.Name != first.Scenario.Name {
			notes = append(notes, fmt.Sprintf("merged runs of different scenarios: %s (%s) and %s (%s)", first.Scenario.Name, m.ins[0].dir, s.Scenario.Name, in.dir))
		}
		if s.Backend.Name != first.Backend.Name {
			notes = append(notes, fmt.Sprintf("merged runs on different backends: %s and %s", first.Backend.Name, s.Backend.Name))
		}
	}
	sum.Interrupted = strings.Join(interrupted, "; ")
	sum.Scenario.ExpectedOps = 0
	for _, in := range m.ins {
		sum.Scenario.ExpectedOps += in.sum.Scenario.ExpectedOps
	}
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
	byName := map[string][]*Variant{}
	for _, in := range m.ins {
		for i := range in.sum.Variants {
			v := &in.sum.Variants[i]
			if _, ok := byName[v.Name]; !ok {
				order = append(order, v.Name)
			}
			byName[v.Name] = append(byName[v.Name], v)
		}
	}
	for _, name := range order {
		mv, err := mergeVariant(byName[name], len(m.ins))
		if err != nil {
			return nil, fmt.Errorf("variant %s: %w", name, err)
		}
		mv.Notes = appendUnique(mv.Notes, notes...)
		sum.Variants = append(sum.Variants, mv)
	}
	return sum, nil
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

func mergeVariant(vs []*Variant, inputs int) (Variant, error) {
	f := vs[0]
	out := Variant{Name: f.Name, Design: f.Design, Database: f.Database, Params: f.Params, StartedAt: f.StartedAt}
	var span, due float64
	var opOrder []string
	opKind := map[string]string{}
	opReason := map[string]string{} // why an input did not serve the operation
	opSets := map[string]*metrics.Set{}
	total := newSet()
	nodes := map[string]int64{}
	var nodeOrder []string
	for _, v := range vs {
		if v.StartedAt.Before(out.StartedAt) {
			out.StartedAt = v.StartedAt
		}
		span = math.Max(span, v.DurationS)
		due = math.Max(due, dueSeconds(v))
		out.Interrupted = out.Interrupted || v.Interrupted
		out.Notes = appendUnique(out.Notes, v.Notes...)
		out.Events = append(out.Events, v.Events...)
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
			nodes[n.Node] += n.Ops
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
	if len(vs) < inputs {
		out.Notes = appendUnique(out.Notes, fmt.Sprintf("this variant is in %d of the %d merged runs", len(vs), inputs))
	}
	sort.SliceStable(out.Events, func(i, j int) bool { return out.Events[i].AtS < out.Events[j].AtS })
	out.DurationS = span
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

func writeLog(dir *Dir, v *Variant, op string, keys []intervalKey, hs map[intervalKey]*hdr.Histogram, ends map[intervalKey]int64) error {
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
	for _, in := range m.ins {
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
			a.TargetRate += p.TargetRate
			a.AchievedRate += p.AchievedRate
			a.Completed += p.Completed
			a.OK += p.OK
			a.Late += p.Late
			a.Dropped += p.Dropped
			a.Abandoned += p.Abandoned
			a.Unserved += p.Unserved
			a.InFlight += p.InFlight
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

// hotspots merges the inputs' hot-partition analyses.
func (m *merger) hotspots() *Hotspots {
	var order []string
	byName := map[string][]*HotspotsVariant{}
	for _, in := range m.ins {
		if in.hs == nil {
			continue
		}
		for i := range in.hs.Variants {
			v := &in.hs.Variants[i]
			if _, ok := byName[v.Variant]; !ok {
				order = append(order, v.Variant)
			}
			byName[v.Variant] = append(byName[v.Variant], v)
		}
	}
	if len(order) == 0 {
		return nil
	}
	out := &Hotspots{}
	for _, name := range order {
		vs := byName[name]
		mv := HotspotsVariant{Variant: name, Database: vs[0].Database, Source: vs[0].Source, Topology: vs[0].Topology}
		if len(vs) < len(m.ins) {
			mv.Notes = append(mv.Notes, fmt.Sprintf("only %d of the %d merged runs have a hot-partition analysis for this variant: figures cover those runs", len(vs), len(m.ins)))
		}
		for _, v := range vs {
			mv.Notes = appendUnique(mv.Notes, v.Notes...)
			if v.Topology != mv.Topology {
				mv.Notes = appendUnique(mv.Notes, fmt.Sprintf("merged runs saw different topologies: %q and %q", mv.Topology, v.Topology))
			}
		}
		mv.Tables = mergeTables(vs)
		mv.Nodes, mv.Balance = mergeNodes(vs)
		out.Variants = append(out.Variants, mv)
	}
	return out
}

func mergeNodes(vs []*HotspotsVariant) ([]NodeLoad, Imbalance) {
	var nodes []NodeLoad
	idx := map[string]int{}
	for _, v := range vs {
		for _, n := range v.Nodes {
			i, ok := idx[n.Node]
			if !ok {
				i = len(nodes)
				idx[n.Node] = i
				nodes = append(nodes, NodeLoad{Node: n.Node, DC: n.DC, Rack: n.Rack})
			}
			nodes[i].Ops += n.Ops
			nodes[i].Reads += n.Reads
			nodes[i].Writes += n.Writes
			nodes[i].Bytes += n.Bytes
		}
	}
	var b Imbalance
	if len(nodes) == 0 {
		return nil, b
	}
	var total int64
	var mx float64
	for _, n := range nodes {
		total += n.Ops
		mx = math.Max(mx, float64(n.Ops))
	}
	mean := float64(total) / float64(len(nodes))
	var ss float64
	loads := make([]float64, len(nodes))
	for i := range nodes {
		n := &nodes[i]
		loads[i] = float64(n.Ops)
		if total > 0 {
			n.Share = float64(n.Ops) / float64(total)
		}
		if mean > 0 {
			n.Deviation = float64(n.Ops)/mean - 1
			n.Over30 = math.Abs(n.Deviation) > 0.30
			if n.Over30 {
				b.Over30 = append(b.Over30, n.Node)
			}
		}
		ss += (float64(n.Ops) - mean) * (float64(n.Ops) - mean)
	}
	if mean > 0 {
		b.MaxOverMean = mx / mean
		b.CV = math.Sqrt(ss/float64(len(nodes))) / mean
		sort.Float64s(loads)
		var g float64
		for i, l := range loads {
			g += float64(2*(i+1)-len(loads)-1) * l
		}
		b.Gini = g / (float64(len(loads)) * float64(total))
	}
	return nodes, b
}

// mergeTables sums table counts and merges top-K lists. For a partition missing from
// one run's list, that run's contribution is unknown but at most the smallest count the
// list holds (or zero when the list holds every partition the run touched): the merged
// estimate adds that bound, and the error bound grows by it, so the true count always
// lies in [Ops − ErrorBound, Ops]. Reads, writes, rows and bytes of a merged partition
// add only the runs that listed it (lower bounds when some did not).
func mergeTables(vs []*HotspotsVariant) []TableHotspots {
	var order []string
	byName := map[string][]*TableHotspots{}
	for _, v := range vs {
		for i := range v.Tables {
			t := &v.Tables[i]
			if _, ok := byName[t.Table]; !ok {
				order = append(order, t.Table)
			}
			byName[t.Table] = append(byName[t.Table], t)
		}
	}
	var out []TableHotspots
	for _, name := range order {
		ts := byName[name]
		f := ts[0]
		mt := TableHotspots{Table: f.Table, Entity: f.Entity, Key: f.Key, PartitionsExact: false}
		var maxParts, sumParts int64
		for _, t := range ts {
			mt.Ops += t.Ops
			mt.Reads += t.Reads
			mt.Writes += t.Writes
			mt.Rows += t.Rows
			mt.Bytes += t.Bytes
			mt.SinglePartitionReads += t.SinglePartitionReads
			mt.MultiPartitionReads += t.MultiPartitionReads
			mt.BroadcastReads += t.BroadcastReads
			maxParts = max(maxParts, t.Partitions)
			sumParts += t.Partitions
		}
		if len(ts) == 1 {
			mt.Partitions, mt.PartitionsExact, mt.PartitionsError = f.Partitions, f.PartitionsExact, f.PartitionsError
		} else {
			// Runs may touch the same partitions: the distinct count lies in [max, sum].
			mt.Partitions = maxParts
			if maxParts > 0 {
				mt.PartitionsError = float64(sumParts-maxParts) / float64(maxParts)
			}
		}
		// Top-K.
		type acc struct {
			p      PartitionLoad
			listed []bool
		}
		keys := map[string]*acc{}
		var korder []string
		for i, t := range ts {
			for _, p := range t.Top {
				a, ok := keys[p.Key]
				if !ok {
					a = &acc{p: PartitionLoad{Key: p.Key, Token: p.Token, Hashed: p.Hashed, Range: p.Range, Replicas: p.Replicas, Shard: p.Shard}, listed: make([]bool, len(ts))}
					keys[p.Key] = a
					korder = append(korder, p.Key)
				}
				a.listed[i] = true
				a.p.Ops += p.Ops
				a.p.ErrorBound += p.ErrorBound
				a.p.Reads += p.Reads
				a.p.Writes += p.Writes
				a.p.Rows += p.Rows
				a.p.Bytes += p.Bytes
				a.p.ProjectedBytes += p.ProjectedBytes
				a.p.ProjectedRows += p.ProjectedRows
			}
		}
		floor := make([]int64, len(ts)) // most an unlisted partition can have had in run i
		for i, t := range ts {
			exhaustive := t.PartitionsExact && int64(len(t.Top)) >= t.Partitions
			if exhaustive || len(t.Top) == 0 {
				continue
			}
			floor[i] = t.Top[0].Ops
			for _, p := range t.Top {
				floor[i] = min(floor[i], p.Ops)
			}
		}
		for _, k := range korder {
			a := keys[k]
			for i := range ts {
				if !a.listed[i] && floor[i] > 0 {
					a.p.Ops += floor[i]
					a.p.ErrorBound += floor[i]
				}
			}
			if mt.Ops > 0 {
				a.p.Share = float64(a.p.Ops) / float64(mt.Ops)
			}
			mt.Top = append(mt.Top, a.p)
		}
		sort.SliceStable(mt.Top, func(i, j int) bool { return mt.Top[i].Ops > mt.Top[j].Ops })
		if n := maxTopLen(ts); len(mt.Top) > n {
			mt.Top = mt.Top[:n]
		}
		// Projections: sums where a partition is projected in every run; a lower bound
		// otherwise (noted).
		pidx := map[string]int{}
		for _, t := range ts {
			for _, p := range t.Projections {
				i, ok := pidx[p.Key]
				if !ok {
					i = len(mt.Projections)
					pidx[p.Key] = i
					np := p
					np.ObservedBytes, np.ObservedRows, np.ProjectedBytes, np.ProjectedRows = 0, 0, 0, 0
					np.Note = ""
					mt.Projections = append(mt.Projections, np)
				}
				mp := &mt.Projections[i]
				mp.ObservedBytes += p.ObservedBytes
				mp.ObservedRows += p.ObservedRows
				mp.ProjectedBytes += p.ProjectedBytes
				mp.ProjectedRows += p.ProjectedRows
				mp.ObservedS = math.Max(mp.ObservedS, p.ObservedS)
			}
		}
		for i := range mt.Projections {
			mp := &mt.Projections[i]
			count := 0
			for _, t := range ts {
				for _, p := range t.Projections {
					if p.Key == mp.Key {
						count++
						break
					}
				}
			}
			mp.Exceeds = (mp.LimitBytes > 0 && mp.ProjectedBytes > mp.LimitBytes) || (mp.LimitRows > 0 && mp.ProjectedRows > mp.LimitRows)
			if count < len(ts) {
				mp.Note = fmt.Sprintf("projected in %d of %d merged runs: a lower bound", count, len(ts))
			}
		}
		if len(ts) > 1 {
			mt.Cumulative = nil // a cumulative share curve cannot be merged from top-K lists
		} else {
			mt.Cumulative = f.Cumulative
		}
		out = append(out, mt)
	}
	return out
}

func maxTopLen(ts []*TableHotspots) int {
	n := 0
	for _, t := range ts {
		n = max(n, len(t.Top))
	}
	return n
}
