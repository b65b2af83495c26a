package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// hotspots is the merged hot-partition analysis. Every shard of a run analyses the whole
// run's stream (a simulator simulates all of it; a real run places all of it), so the
// shards' analyses are one and the same: the lowest shard's is the run's, exactly, and a
// shard that differs is noted. Repeats merge their analyses (mergeHotspots).
func (m *merger) hotspots(sum *Summary) *Hotspots {
	if !m.plan.shards() {
		hs := m.mergeHotspots()
		if hs == nil && m.hadAny(func(in *mergeInput) bool { return in.hs != nil }) {
			noteAll(sum, "no hot-partition analysis could be merged")
		}
		if len(m.plan.missing) > 0 && hs != nil {
			for i := range hs.Variants {
				hs.Variants[i].Notes = appendUnique(hs.Variants[i].Notes, "partial merge: covers only the runs with a hot-partition analysis")
			}
		}
		return hs
	}
	var base *mergeInput
	for _, in := range m.ins {
		if in.hs != nil {
			base = in
			break
		}
	}
	if base == nil {
		return nil // the run has none (no designs, or interrupted before placing)
	}
	out := *base.hs
	out.Variants = slices.Clone(base.hs.Variants)
	for _, in := range m.ins {
		if in == base || in.hs == nil {
			continue
		}
		for i := range out.Variants {
			v := &out.Variants[i]
			if o := in.hs.Variant(v.Variant); o == nil || !sameAnalysis(v, o) {
				v.Notes = appendUnique(v.Notes, fmt.Sprintf("the shards' analyses of the whole run differ (%s and %s); this is %s's", base.dir, in.dir, base.dir))
			}
		}
	}
	return &out
}

// sameAnalysis compares two shards' analyses of one variant, notes aside (they name
// what each shard did).
func sameAnalysis(a, b *HotspotsVariant) bool {
	x, y := *a, *b
	x.Notes, y.Notes = nil, nil
	ja, err1 := json.Marshal(x)
	jb, err2 := json.Marshal(y)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

func (m *merger) hadAny(f func(*mergeInput) bool) bool {
	return slices.ContainsFunc(m.ins, f)
}

// noteAll adds a note to every variant of the summary.
func noteAll(sum *Summary, note string) {
	for i := range sum.Variants {
		sum.Variants[i].Notes = appendUnique(sum.Variants[i].Notes, note)
	}
}

// server writes the merged server.json where one means something: a simulated run's
// shards each modelled the whole cluster, so their server.json is the run's. Real
// servers' figures are each shard's own view over its own window, and repeats' are of
// different runs: they stay in the inputs, and the merged summary says so.
func (m *merger) server(dir *Dir, sum *Summary) error {
	if !m.hadAny(func(in *mergeInput) bool { return in.sv != nil }) {
		return nil
	}
	if m.plan.shards() && sum.Backend.Simulated {
		for _, in := range m.ins {
			if in.sv != nil {
				return dir.WriteServer(in.sv)
			}
		}
	}
	noteAll(sum, "server-side figures (server.json) are not merged: each input's are its own view; see "+strings.Join(sum.MergedFrom, ", "))
	return nil
}

// mergeHotspots merges the inputs' hot-partition analyses.
func (m *merger) mergeHotspots() *Hotspots {
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
		mv.Nodes, mv.Balance, mv.Balances = mergeNodes(vs)
		out.Variants = append(out.Variants, mv)
	}
	return out
}

// mergeNodes sums the nodes' loads over the runs and measures them again (NodeBalances).
func mergeNodes(vs []*HotspotsVariant) ([]NodeLoad, Imbalance, []Imbalance) {
	var nodes []NodeLoad
	idx := map[string]int{}
	for _, v := range vs {
		for _, n := range v.Nodes {
			i, ok := idx[n.Node]
			if !ok {
				i = len(nodes)
				idx[n.Node] = i
				nodes = append(nodes, NodeLoad{Node: n.Node, Database: n.Database, DC: n.DC, Rack: n.Rack})
			}
			nodes[i].Ops += n.Ops
			nodes[i].Reads += n.Reads
			nodes[i].Writes += n.Writes
			nodes[i].Bytes += n.Bytes
		}
	}
	if len(nodes) == 0 {
		return nil, Imbalance{}, nil
	}
	b, all := NodeBalances(nodes)
	return nodes, b, all
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
					a = &acc{p: PartitionLoad{Key: p.Key, Token: p.Token, Hashed: p.Hashed, Range: p.Range, Replicas: p.Replicas, Shard: p.Shard, Chunks: p.Chunks}, listed: make([]bool, len(ts))}
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
			mp.Exceeds = false
			mp.Exceeds = mp.Over()
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
