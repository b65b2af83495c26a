package results

import (
	"slices"

	"github.com/shardbench/shardbench/internal/hotspot"
)

// What a node's or shard's load is counted in.
const (
	MeasureOps    = "ops"           // every request it served
	MeasureReads  = "reads"         // read requests
	MeasureWrites = "writes"        // write requests (replica writes for Cassandra)
	MeasureBytes  = "bytes written" // bytes inserted
)

// minPerNode is the load a measure needs per node, on average, to be the headline: below
// it the counts are noise (100 requests per node: about ±10%).
const minPerNode = 100

// NodeBalances measures how evenly nodes and shards share the work, each database apart
// (a mixed design's idle MongoDB shards say nothing about its Cassandra nodes), each of a
// Cassandra ring's data centers apart (each holds its own replicas, and clients in one
// data center read from it alone), and by measure: every request, reads, writes, bytes
// written (broadcast reads spread evenly and can hide that one shard takes every insert).
// It sets each node's Share, Deviation and Over30 within its group by operations, and
// returns every measure's imbalance and the headline: the most unbalanced measure with
// enough load to judge (on average at least 100 requests per node; bytes written when its
// writes qualify).
func NodeBalances(nodes []NodeLoad) (headline Imbalance, all []Imbalance) {
	type group struct{ db, dc string }
	var groups []group
	for _, n := range nodes {
		if g := (group{n.Database, n.DC}); !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
	}
	for _, g := range groups {
		db := g.db
		var idx []int
		for i := range nodes {
			if nodes[i].Database == db && nodes[i].DC == g.dc {
				idx = append(idx, i)
			}
		}
		writesQualify := false
		for _, m := range []string{MeasureOps, MeasureReads, MeasureWrites, MeasureBytes} {
			loads := make([]float64, len(idx))
			var total float64
			for k, i := range idx {
				loads[k] = nodeMeasure(&nodes[i], m)
				total += loads[k]
			}
			if total <= 0 {
				continue
			}
			im := hotspot.Measure(loads)
			b := Imbalance{MaxOverMean: im.MaxOverMean, CV: im.CV, Gini: im.Gini, Database: db, DC: g.dc, Measure: m}
			busiest := 0
			for k := range loads {
				if loads[k] > loads[busiest] {
					busiest = k
				}
			}
			b.Busiest, b.BusiestShare = nodes[idx[busiest]].Node, loads[busiest]/total
			for _, k := range im.Over30 {
				b.Over30 = append(b.Over30, nodes[idx[k]].Node)
			}
			if m == MeasureOps {
				for k, i := range idx {
					n := &nodes[i]
					n.Share, n.Deviation = loads[k]/total, im.Deviation[k]
					n.Over30 = slices.Contains(im.Over30, k)
				}
			}
			enough := total >= minPerNode*float64(len(idx))
			switch m {
			case MeasureWrites:
				writesQualify = enough
			case MeasureBytes:
				enough = writesQualify
			}
			all = append(all, b)
			if enough && (headline.Measure == "" || b.MaxOverMean > headline.MaxOverMean) {
				headline = b
			}
		}
	}
	if headline.Measure == "" && len(all) > 0 {
		headline = all[0] // too little load anywhere to judge: the first database's operations
	}
	return headline, all
}

func nodeMeasure(n *NodeLoad, m string) float64 {
	switch m {
	case MeasureReads:
		return float64(n.Reads)
	case MeasureWrites:
		return float64(n.Writes)
	case MeasureBytes:
		return float64(n.Bytes)
	}
	return float64(n.Ops)
}
