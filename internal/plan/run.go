package plan

import (
	"context"
	"fmt"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/workloads"
)

// Stream is where operations come from, in intended-time order (workloads.Stream).
type Stream interface{ Next(*workloads.Op) bool }

// Topology describes a placer's layout in words for the report.
func (pl *Placer) Topology() string {
	var parts []string
	if pl.Ring != nil {
		dcs := map[string]int{}
		for _, n := range pl.Ring.Nodes {
			dcs[n.DC]++
		}
		parts = append(parts, fmt.Sprintf("%d nodes in %d DC, %d vnodes, %s", len(pl.Ring.Nodes), len(dcs), len(pl.Ring.Tokens), pl.Replicas.Replication))
	}
	if pl.Shards != nil {
		chunks := 0
		for _, t := range pl.Tables {
			chunks += len(t.Chunks)
		}
		parts = append(parts, fmt.Sprintf("%d shards, %d sharded collections, %d chunks", len(pl.Shards), len(pl.Tables), chunks))
	}
	if len(parts) == 2 {
		return parts[0] + "; " + parts[1]
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return ""
}

// PlaceVariant runs a whole operation stream through one variant's placement and returns its
// analysis. limit > 0 stops after that many operations. ctx is checked every 64K
// operations.
func PlaceVariant(ctx context.Context, name string, p *design.Compiled, c *Cluster, newStream func() Stream, limit int64) (results.HotspotsVariant, int64, error) {
	pl, err := NewPlacer(p, c)
	if err != nil {
		return results.HotspotsVariant{}, 0, err
	}
	obs := NewObserver(pl)
	s := newStream()
	var op workloads.Op
	var n int64
	for s.Next(&op) {
		obs.Op(&op)
		if n++; limit > 0 && n >= limit {
			break
		}
		if n&0xffff == 0 && ctx.Err() != nil {
			hv := obs.Result(name, "computed", pl.Topology())
			hv.Notes = append(hv.Notes, fmt.Sprintf("interrupted after %d operations", n))
			return hv, n, ctx.Err()
		}
	}
	return obs.Result(name, "computed", pl.Topology()), n, nil
}
