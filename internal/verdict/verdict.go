// Package verdict ranks a scenario's designs from what a run measured: overall and per
// entity, on capacity at the SLO, projected partition size against its limit, the
// hottest partition's share, node or shard imbalance, the key analysis's verdict and
// coverage, each criterion judged by a fixed rule with a one-line reason; and it checks
// the seed claims the scenario exercises. It reads only results (summary.json,
// hotspots.json, the scenario as run for its SLO, and when given analysis.json and
// capacity.json), so any run can be judged again. The rules are in docs/verdict.md;
// the tests hold them.
package verdict

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/shardbench/shardbench/internal/results"
)

// Inputs are the results a verdict reads. Summary is required; the others may be nil
// (their criteria are then unknown).
type Inputs struct {
	Summary  *results.Summary
	Hotspots *results.Hotspots
	Analysis *results.Analysis
	Capacity *results.Capacity
	// Run is the run judged by its SLO: the capacity criterion's evidence when no
	// capacity search is given (nil: none).
	Run *RunSLO
	// Sources name the files read, for verdict.json (e.g. "summary.json",
	// "../bf-capacity/capacity.json").
	Sources []string
}

// Judge builds the verdict.
func Judge(in Inputs) *results.Verdict {
	v := &results.Verdict{Schema: results.VerdictSchema, Version: results.VerdictVersion, Sources: in.Sources}
	if in.Summary == nil {
		return v
	}
	v.Scenario = in.Summary.Scenario.Name
	if in.Hotspots == nil {
		v.Missing = append(v.Missing, "hotspots.json (hot partitions, imbalance, partition sizes: the simulator, a real run or shardbench plan writes it)")
	}
	if in.Capacity == nil {
		v.Missing = append(v.Missing, "capacity.json (capacity at the SLO: shardbench capacity SCENARIO, then shardbench report RUN --capacity DIR)")
	}
	if in.Analysis == nil {
		v.Missing = append(v.Missing, "analysis.json (the key analysis's verdict: shardbench analyze SCENARIO, then shardbench report RUN --analysis DIR)")
	}
	var ranks []results.VerdictRank
	for i := range in.Summary.Variants {
		ranks = append(ranks, judgeVariant(in, &in.Summary.Variants[i], ""))
	}
	v.Overall = rank(ranks)
	for _, e := range entities(in) {
		ev := results.EntityVerdict{Entity: e}
		var er []results.VerdictRank
		for i := range in.Summary.Variants {
			sv := &in.Summary.Variants[i]
			if !servesEntity(sv, e) {
				ev.NotServed = append(ev.NotServed, sv.Name)
				continue
			}
			er = append(er, judgeVariant(in, sv, e))
		}
		ev.Ranks = rank(er)
		v.Entities = append(v.Entities, ev)
	}
	v.Claims = judgeClaims(in, Catalog())
	return v
}

// judgeVariant judges one variant on every criterion, for the whole design (entity "")
// or one entity's operations and tables.
func judgeVariant(in Inputs, sv *results.SummaryVariant, entity string) results.VerdictRank {
	r := results.VerdictRank{Variant: sv.Name}
	capacity := capacityCriterion(in.Capacity, sv.Name, entity)
	if in.Capacity == nil && in.Run != nil {
		capacity = runCapacityCriterion(in.Run, sv, entity)
	}
	r.Criteria = append(r.Criteria,
		capacity,
		sizeCriterion(tablesOf(in.Hotspots, sv.Name, entity)),
		hotShareCriterion(tablesOf(in.Hotspots, sv.Name, entity), nodesOf(in.Hotspots, sv.Name)),
	)
	if entity == "" {
		// Node load is the variant's, every table together: it ranks designs, not
		// entities.
		r.Criteria = append(r.Criteria, imbalanceCriterion(in.Hotspots.Variant(sv.Name)))
	}
	r.Criteria = append(r.Criteria, keysCriterion(in.Analysis, sv.Name, entity), coverageCriterion(sv, entity))
	r.Status, r.Reason = overall(r.Criteria)
	return r
}

// severity orders statuses: the worst is the highest; unknown counts as nothing.
var severity = map[string]int{results.VerdictUnknown: 0, results.VerdictPass: 1, results.VerdictWarn: 2, results.VerdictFail: 3}

// statusOrder is the order ranks go in by status.
var statusOrder = map[string]int{results.VerdictPass: 0, results.VerdictWarn: 1, results.VerdictFail: 2, results.VerdictUnknown: 3}

// overall is a rank's status (its worst criterion's) and its reason (the first
// criterion, in the order they are weighed, with that status).
func overall(cs []results.Criterion) (string, string) {
	worst := results.VerdictUnknown
	for _, c := range cs {
		if severity[c.Status] > severity[worst] {
			worst = c.Status
		}
	}
	if worst == results.VerdictUnknown {
		return worst, "nothing this verdict weighs was measured"
	}
	if worst == results.VerdictPass {
		var unk []string
		for _, c := range cs {
			if c.Status == results.VerdictUnknown {
				unk = append(unk, c.Name)
			}
		}
		if len(unk) > 0 {
			return worst, "holds on every criterion measured (not measured: " + strings.Join(unk, ", ") + ")"
		}
		return worst, "holds on every criterion"
	}
	for _, c := range cs {
		if c.Status == worst {
			return worst, c.Name + ": " + c.Reason
		}
	}
	return worst, ""
}

// rank orders judged variants: by status (holds, caution, fails, unknown), then the
// fewest failed criteria, the fewest cautions, the most capacity, the most coverage and
// the smallest hottest-partition share; ties keep the scenario's order. Ranks are
// numbered from 1; equal keys share a rank.
func rank(rs []results.VerdictRank) []results.VerdictRank {
	type key struct {
		status, fails, warns int
		capacity, cov, heat  float64
	}
	keyOf := func(r *results.VerdictRank) key {
		k := key{capacity: -1, cov: -1, heat: 2, status: statusOrder[r.Status]}
		for _, c := range r.Criteria {
			switch c.Status {
			case results.VerdictFail:
				k.fails++
			case results.VerdictWarn:
				k.warns++
			}
			if c.Status == results.VerdictUnknown && (c.Name != results.CriterionCapacity || c.Value == 0) {
				continue // a run that held says ×1 at least (runCapacityCriterion)
			}
			switch c.Name {
			case results.CriterionCapacity:
				k.capacity = c.Value
			case results.CriterionCoverage:
				k.cov = c.Value
			case results.CriterionHotShare:
				k.heat = c.Value
			}
		}
		return k
	}
	less := func(a, b key) bool {
		switch {
		case a.status != b.status:
			return a.status < b.status
		case a.fails != b.fails:
			return a.fails < b.fails
		case a.warns != b.warns:
			return a.warns < b.warns
		case a.capacity != b.capacity:
			return a.capacity > b.capacity
		case a.cov != b.cov:
			return a.cov > b.cov
		}
		return a.heat < b.heat
	}
	keys := make([]key, len(rs))
	idx := make([]int, len(rs))
	for i := range rs {
		keys[i], idx[i] = keyOf(&rs[i]), i
	}
	sort.SliceStable(idx, func(a, b int) bool { return less(keys[idx[a]], keys[idx[b]]) })
	out := make([]results.VerdictRank, len(rs))
	for pos, i := range idx {
		out[pos] = rs[i]
		out[pos].Rank = pos + 1
		if pos > 0 && keys[i] == keys[idx[pos-1]] {
			out[pos].Rank = out[pos-1].Rank
		}
	}
	return out
}

// entities lists the entities of the run in a fixed order: those of the workloads'
// usual order first, then any other in order of appearance.
func entities(in Inputs) []string {
	seen := map[string]bool{}
	var found []string
	add := func(e string) {
		if e != "" && !seen[e] {
			seen[e] = true
			found = append(found, e)
		}
	}
	for _, v := range in.Summary.Variants {
		for _, op := range v.Ops {
			add(entityOfOp(op.Op))
		}
	}
	order := map[string]int{"sessions": 0, "carts": 1, "views": 2, "orders": 3, "products": 4}
	sort.SliceStable(found, func(i, j int) bool {
		oi, iok := order[found[i]]
		oj, jok := order[found[j]]
		if iok != jok {
			return iok
		}
		return iok && oi < oj
	})
	return found
}

// servesEntity reports whether a variant serves any operation of the entity.
func servesEntity(v *results.SummaryVariant, entity string) bool {
	for _, op := range v.Ops {
		if entityOfOp(op.Op) == entity && op.UnservedReason == "" && op.Unserved == 0 {
			return true
		}
	}
	return false
}

// tablesOf returns a variant's tables, all of them or one entity's.
func tablesOf(h *results.Hotspots, variant, entity string) []results.TableHotspots {
	hv := h.Variant(variant)
	if hv == nil {
		return nil
	}
	if entity == "" {
		return hv.Tables
	}
	var out []results.TableHotspots
	for _, t := range hv.Tables {
		if t.Entity == entity {
			out = append(out, t)
		}
	}
	return out
}

// nodesOf is how many nodes or shards a variant's load spreads over.
func nodesOf(h *results.Hotspots, variant string) int {
	if hv := h.Variant(variant); hv != nil {
		return len(hv.Nodes)
	}
	return 0
}

// FromDirs judges a results directory: its summary.json and hotspots.json, and the
// analysis.json and capacity.json of the directory itself or of analysisDir and
// capacityDir when given (a key analysis and a capacity search write their own
// directories).
func FromDirs(dir, analysisDir, capacityDir string) (*results.Verdict, error) {
	in := Inputs{}
	var err error
	if in.Summary, err = results.Read(dir); err != nil {
		return nil, err
	}
	in.Sources = append(in.Sources, results.SummaryFile)
	if in.Hotspots, err = results.ReadHotspots(dir); err != nil {
		return nil, err
	}
	if in.Hotspots != nil {
		in.Sources = append(in.Sources, results.HotspotsFile)
	}
	src := func(d, file string) string {
		if d == dir {
			return file
		}
		return filepath.Join(d, file)
	}
	if analysisDir == "" {
		analysisDir = dir
	}
	if in.Analysis, err = results.ReadAnalysis(analysisDir); err != nil {
		return nil, err
	}
	if in.Analysis == nil && analysisDir != dir {
		return nil, fmt.Errorf("%s holds no %s", analysisDir, results.AnalysisFile)
	}
	if in.Analysis != nil {
		in.Sources = append(in.Sources, src(analysisDir, results.AnalysisFile))
	}
	if capacityDir == "" {
		capacityDir = dir
	}
	if in.Capacity, err = results.ReadCapacity(capacityDir); err != nil {
		return nil, err
	}
	if in.Capacity == nil && capacityDir != dir {
		return nil, fmt.Errorf("%s holds no %s", capacityDir, results.CapacityFile)
	}
	if in.Capacity != nil {
		in.Sources = append(in.Sources, src(capacityDir, results.CapacityFile))
		if in.Capacity.Scenario.Name != in.Summary.Scenario.Name {
			return nil, fmt.Errorf("%s is a capacity search of %s, not of %s", capacityDir, in.Capacity.Scenario.Name, in.Summary.Scenario.Name)
		}
	} else if in.Summary.Backend.Name != results.BackendPlan { // a plan timed nothing
		if in.Run, err = JudgeRun(dir, in.Summary, in.Hotspots); err != nil {
			return nil, fmt.Errorf("judging the run by its SLO: %w", err)
		}
		if in.Run.Unfinished == "" {
			in.Sources = append(in.Sources, "the run's own SLO checks ("+in.Run.Source+")")
		}
	}
	return Judge(in), nil
}
