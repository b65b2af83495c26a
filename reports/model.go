package reports

import (
	"errors"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/shardbench/shardbench/internal/results"
)

// Kinds of results directories.
const (
	KindPlan      = "plan"      // placement only: hot partitions, no operation was executed
	KindSimulated = "simulated" // the sim backend (virtual time) or null/delay test backends
	KindReal      = "real"      // a real Cassandra or MongoDB cluster
)

// run is one results directory as read from disk.
type run struct {
	Dir   string
	Label string
	// Sum is summary.json; for a directory with only hotspots.json (a plan that wrote no
	// summary) it is synthesised from the hotspots' variants and NoSummary is set.
	Sum       *results.Summary
	NoSummary bool
	Points    map[string][]results.Point // timeseries.jsonl by variant
	Hot       *results.Hotspots
	Gate      *results.GateReport
	Server    *results.ServerReport
	// Analysis is analysis.json (shardbench analyze): the predicted key analysis.
	Analysis *results.Analysis
	// Verdict ranks the run's variants (judgeRun); nil for a plan, a comparison or when
	// it could not be built (then Warnings says why).
	Verdict *results.Verdict
	// Fidelity is fidelity.json (shardbench fidelity): this run beside its simulation.
	Fidelity *results.Fidelity
	Kind     string
	Scenario bool // scenario.yaml is present
	// Warnings are files that could not be read; the report renders without them and says so.
	Warnings []string
	// Notes say how what was read is shown (a long time series at a coarser step).
	Notes []string
}

// loadRun reads everything a report uses from one results directory; checkLogs reads its
// interval logs back to check them (results.CheckHistogramLogs).
func loadRun(dir string, checkLogs bool) (*run, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	r := &run{Dir: dir, Points: map[string][]results.Point{}}
	hot, herr := results.ReadHotspots(dir)
	if herr != nil {
		r.Warnings = append(r.Warnings, herr.Error())
	}
	r.Hot = hot
	an, aerr := results.ReadAnalysis(dir)
	if aerr != nil {
		r.Warnings = append(r.Warnings, aerr.Error())
	}
	r.Analysis = an
	sum, serr := results.Read(dir)
	switch {
	case serr == nil:
		r.Sum = sum
		if checkLogs {
			r.Warnings = append(r.Warnings, results.CheckHistogramLogs(dir, sum)...)
		}
	case errors.Is(serr, os.ErrNotExist) && results.CheckRunTraces(dir) != nil:
		return nil, results.CheckRunTraces(dir)
	case (hot != nil || an != nil) && errors.Is(statErr(filepath.Join(dir, results.SummaryFile)), os.ErrNotExist):
		// A plan directory may hold only the hot-partition analysis; an analyze directory
		// only the key analysis.
		r.NoSummary = true
		r.Sum = &results.Summary{Backend: results.BackendInfo{Name: results.BackendPlan}, Complete: true}
		r.Sum.Scenario.Name = filepath.Base(filepath.Clean(dir))
		if an != nil && an.Scenario != "" {
			r.Sum.Scenario.Name = an.Scenario
		}
	default:
		return nil, serr
	}
	// Charts need no more points than a page has pixels: a long run's time series is read
	// at a coarser step, so the report's memory stays bounded (maxSeriesPoints in all).
	perVariant := min(maxVariantPoints, maxSeriesPoints/max(1, len(r.Sum.Variants)))
	if sr, err := results.ReadSeries(dir, perVariant); err != nil {
		r.Warnings = append(r.Warnings, err.Error())
	} else {
		r.Points = sr.Points
		r.Warnings = append(r.Warnings, sr.Warnings...)
		for _, v := range sortedKeys(sr.Step) {
			r.Notes = append(r.Notes,
				fmt.Sprintf("Variant %s ran longer than its time line can show second by second: "+
					"each point of its time charts covers %d intervals (counts and rates add up "+
					"over them; each latency line shows the highest of them).",
					v, sr.Step[v]))
		}
	}
	if g, err := results.ReadGate(dir); err != nil {
		r.Warnings = append(r.Warnings, err.Error())
	} else {
		r.Gate = g
	}
	if s, err := results.ReadServer(dir); err != nil {
		r.Warnings = append(r.Warnings, err.Error())
	} else {
		r.Server = s
	}
	loadFidelity(r)
	_, err = os.Stat(filepath.Join(dir, results.ScenarioFile))
	r.Scenario = err == nil
	r.Kind = r.kind()
	return r, nil
}

// maxVariantPoints bounds one variant's time series points in a report (5.5 hours at
// one point per second; a chart is about a thousand pixels wide), and maxSeriesPoints
// all variants' together (fewer per variant beyond 25 variants).
const (
	maxVariantPoints = 20_000
	maxSeriesPoints  = 500_000
)

func statErr(path string) error {
	_, err := os.Stat(path)
	return err
}

// kind tells a plan, a simulated run and a real run apart.
func (r *run) kind() string {
	if r.NoSummary || r.Sum.Backend.Name == results.BackendPlan {
		return KindPlan
	}
	if r.Sum.Backend.Simulated {
		return KindSimulated
	}
	switch r.Sum.Backend.Name {
	case "null", "delay", "sim":
		return KindSimulated
	}
	// Nothing was executed: no latency and no time series anywhere.
	executed := len(r.Points) > 0
	for _, v := range r.Sum.Variants {
		if v.Totals.Completed > 0 || v.Totals.Response.Count > 0 {
			executed = true
		}
	}
	if !executed && r.Hot != nil {
		return KindPlan
	}
	return KindReal
}

// status is "complete", "interrupted" or "incomplete" (a run still going or killed hard).
func (r *run) status() string {
	switch {
	case r.Sum.Interrupted != "":
		return "interrupted"
	case !r.Sum.Complete:
		return "incomplete"
	}
	for _, v := range r.Sum.Variants {
		if v.Interrupted {
			return "interrupted"
		}
	}
	return "complete"
}

// side is one thing being compared: a variant of a run.
type side struct {
	ID     string // unique, for file names and anchors
	Label  string
	Run    *run
	V      *results.SummaryVariant // never nil (synthesised for hotspots-only variants)
	Hot    *results.HotspotsVariant
	Keys   *results.AnalysisVariant
	Server *results.ServerVariant
	Points []results.Point
	Color  color.RGBA
	Index  int
}

// hasLatency reports whether any operation of the side recorded a response time.
func (s *side) hasLatency() bool { return s.V.Totals.Response.Count > 0 }

// sidesOf lists the variants of the runs in order: each run's summary variants, then any
// variant only its hotspots.json knows, then any only its analysis.json knows.
func sidesOf(runs []*run) []*side {
	var out []*side
	for _, r := range runs {
		seen := map[string]bool{}
		for i := range r.Sum.Variants {
			v := &r.Sum.Variants[i]
			seen[v.Name] = true
			out = append(out, &side{Run: r, V: v, Hot: r.Hot.Variant(v.Name), Keys: r.Analysis.Variant(v.Name), Server: r.Server.Variant(v.Name), Points: r.Points[v.Name]})
		}
		if r.Hot != nil {
			for i := range r.Hot.Variants {
				hv := &r.Hot.Variants[i]
				if seen[hv.Variant] {
					continue
				}
				seen[hv.Variant] = true
				v := &results.SummaryVariant{Name: hv.Variant, Database: hv.Database}
				out = append(out, &side{Run: r, V: v, Hot: hv, Keys: r.Analysis.Variant(hv.Variant), Server: r.Server.Variant(hv.Variant), Points: r.Points[hv.Variant]})
			}
		}
		if r.Analysis != nil {
			for i := range r.Analysis.Variants {
				av := &r.Analysis.Variants[i]
				if seen[av.Variant] {
					continue
				}
				seen[av.Variant] = true
				v := &results.SummaryVariant{Name: av.Variant, Database: av.Database}
				out = append(out, &side{Run: r, V: v, Keys: av, Server: r.Server.Variant(av.Variant), Points: r.Points[av.Variant]})
			}
		}
	}
	// Labels: variant names when they are unique, else "run/variant".
	count := map[string]int{}
	for _, s := range out {
		count[s.V.Name]++
	}
	ids := newNamer()
	for i, s := range out {
		s.Index = i
		s.Color = palette(i)
		s.Label = s.V.Name
		if count[s.V.Name] > 1 {
			if len(s.Run.Sum.Variants) <= 1 && s.V.Name == "default" {
				s.Label = s.Run.Label
			} else {
				s.Label = s.Run.Label + "/" + s.V.Name
			}
		}
		s.ID = ids.name(s.Label)
	}
	return out
}

// labelRuns gives each run a short distinct label: the directory's base name, with parent
// directories added while two runs would read the same.
func labelRuns(runs []*run) {
	parts := make([][]string, len(runs))
	for i, r := range runs {
		abs, err := filepath.Abs(r.Dir)
		if err != nil {
			abs = r.Dir
		}
		parts[i] = strings.Split(filepath.ToSlash(filepath.Clean(abs)), "/")
	}
	depth := 1
	for {
		seen := map[string]int{}
		for i, r := range runs {
			p := parts[i]
			n := min(depth, len(p))
			r.Label = strings.Join(p[len(p)-n:], "/")
			seen[r.Label]++
		}
		dup := false
		for _, c := range seen {
			dup = dup || c > 1
		}
		if !dup || depth > 8 {
			return
		}
		depth++
	}
}

// namer hands out unique slugs.
type namer struct{ used map[string]int }

func newNamer() *namer { return &namer{used: map[string]int{}} }

func (n *namer) name(s string) string {
	base := slug(s)
	n.used[base]++
	if c := n.used[base]; c > 1 {
		return fmt.Sprintf("%s-%d", base, c)
	}
	return base
}

// opNames lists the operations of the sides, busiest first (by scheduled operations over
// all sides), ties by name.
func opNames(sides []*side) []string {
	total := map[string]int64{}
	for _, s := range sides {
		for _, op := range s.V.Ops {
			total[op.Op] += max(op.Scheduled, op.Completed, op.Response.Count)
		}
	}
	names := make([]string, 0, len(total))
	for n := range total {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if total[names[i]] != total[names[j]] {
			return total[names[i]] > total[names[j]]
		}
		return names[i] < names[j]
	})
	return names
}

// entities lists the logical entities of the sides' hot-partition tables, busiest first.
func entities(sides []*side) []string {
	total := map[string]int64{}
	for _, s := range sides {
		if s.Hot == nil {
			continue
		}
		for _, t := range s.Hot.Tables {
			total[entityOf(t)] += t.Ops
		}
	}
	names := make([]string, 0, len(total))
	for n := range total {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if total[names[i]] != total[names[j]] {
			return total[names[i]] > total[names[j]]
		}
		return names[i] < names[j]
	})
	return names
}

func entityOf(t results.TableHotspots) string {
	if t.Entity != "" {
		return t.Entity
	}
	return t.Table
}

// hottest returns the side's partition with the most operations (over all its tables)
// and its table, or nils.
func hottest(h *results.HotspotsVariant) (*results.PartitionLoad, *results.TableHotspots) {
	if h == nil {
		return nil, nil
	}
	var bp *results.PartitionLoad
	var bt *results.TableHotspots
	for i := range h.Tables {
		t := &h.Tables[i]
		if p := t.Hottest(); p != nil && (bp == nil || p.Ops > bp.Ops || (p.Ops == bp.Ops && p.Share > bp.Share)) {
			bp, bt = p, t
		}
	}
	return bp, bt
}

// busiestNode returns the node with the largest load, or nil.
func busiestNode(h *results.HotspotsVariant) *results.NodeLoad {
	if h == nil {
		return nil
	}
	if name := h.Balance.Busiest; name != "" {
		// The headline imbalance's busiest node (by its measure, within its database).
		for i := range h.Nodes {
			if h.Nodes[i].Node == name {
				return &h.Nodes[i]
			}
		}
	}
	var b *results.NodeLoad
	for i := range h.Nodes {
		n := &h.Nodes[i]
		if b == nil || n.Ops > b.Ops {
			b = n
		}
	}
	return b
}

// topShare returns the share of a table's operations taken by the top fraction of its
// partitions, interpolating its cumulative curve (or the top list); NaN when unknown.
func topShare(t *results.TableHotspots, fraction float64) float64 {
	pts := cumulative(t)
	if len(pts) == 0 {
		return nan
	}
	if fraction <= pts[0].Fraction {
		// Below the first point: at least the first point's share scaled down (a
		// partition cannot be split), so report the first point honestly.
		return pts[0].Share
	}
	for i := 1; i < len(pts); i++ {
		if fraction <= pts[i].Fraction {
			a, b := pts[i-1], pts[i]
			return a.Share + (b.Share-a.Share)*(fraction-a.Fraction)/(b.Fraction-a.Fraction)
		}
	}
	return pts[len(pts)-1].Share
}

// cumulative is a table's cumulative share curve, sorted by fraction: the stored curve,
// or one derived from the top partitions and the partition count.
func cumulative(t *results.TableHotspots) []results.SharePoint {
	if len(t.Cumulative) > 0 {
		pts := append([]results.SharePoint(nil), t.Cumulative...)
		sort.Slice(pts, func(i, j int) bool { return pts[i].Fraction < pts[j].Fraction })
		return pts
	}
	if t.Partitions <= 0 || len(t.Top) == 0 || t.Ops <= 0 {
		return nil
	}
	var pts []results.SharePoint
	var ops int64
	for i, p := range t.Top {
		ops += p.Ops
		pts = append(pts, results.SharePoint{Fraction: float64(i+1) / float64(t.Partitions), Share: min(1, float64(ops)/float64(t.Ops))})
	}
	return pts
}
