package sim

import (
	"slices"
	"strings"

	"github.com/shardbench/shardbench/internal/results"
)

// stageLog keeps each node's figures per request stage over the run, in numbers for
// server.json's nodes list: what `capacity` reads to say which node or shard saturated
// first, and with what. A Cassandra node's cores serve its read and write stages alike,
// so a stage's utilisation is the share of the node's cores it took; the node saturates
// as a whole, and a saturated tick is counted to the stage that took the larger share of
// it (with its drops): "dc1-n4's read stage saturated first" names the node and the work
// that filled it. A MongoDB replica set member is one stage, "member".
type stageLog struct {
	byStation map[*Station]*[stages]*stageSeries
	order     []*stageSeries
}

type stageSeries struct {
	node, stage string
	workers     int
	jobs, drops int64
	ticks       int
	sum, peak   float64 // utilisation (a stage's share of the node's cores)
	peakQueue   float64
	saturated   int     // ticks at results.SaturatedAt or more that this stage dominated
	first       float64 // end of the first such tick, seconds (-1: never)
}

// add folds one station's tick (x, ending at the simulator's current tick) into its
// stages.
func (l *stageLog) add(s *Simulator, node string, st *Station, x Stats) {
	ser := l.byStation[st]
	cass := s.isCassandra(st)
	if ser == nil {
		if l.byStation == nil {
			l.byStation = map[*Station]*[stages]*stageSeries{}
		}
		ser = &[stages]*stageSeries{}
		names := [stages]string{"read", "write"}
		for i := range ser {
			if !cass && i > 0 {
				break
			}
			name := names[i]
			if !cass {
				name = "member"
			}
			ser[i] = &stageSeries{node: node, stage: name, workers: st.Workers(), first: -1}
			l.order = append(l.order, ser[i])
		}
		l.byStation[st] = ser
	}
	dominant := 0
	if cass && x.Stage[StageWrite] > x.Stage[StageRead] {
		dominant = StageWrite
	}
	for i, ss := range ser {
		if ss == nil {
			continue
		}
		u, jobs := x.Stage[i], x.Jobs[i]
		if !cass {
			u, jobs = x.Utilisation, x.Jobs[StageRead]+x.Jobs[StageWrite]
		}
		ss.jobs += jobs
		ss.ticks++
		ss.sum += u
		ss.peak = max(ss.peak, u)
		ss.peakQueue = max(ss.peakQueue, x.MeanQueue)
		if i != dominant {
			continue
		}
		ss.drops += x.Drops
		if x.Utilisation >= results.SaturatedAt {
			ss.saturated++
			if ss.first < 0 {
				ss.first = float64(s.nextTick) / 1e9
			}
		}
	}
}

// isCassandra says whether a station is a Cassandra node (else a MongoDB member).
func (s *Simulator) isCassandra(st *Station) bool {
	return s.cass != nil && slices.Contains(s.cass.nodes, st)
}

// nodes lists every node's stages, in the order the nodes were first sampled.
func (l *stageLog) nodes(s *Simulator) []results.ServerNode {
	tick := s.opt.Tick.Seconds()
	var out []results.ServerNode
	at := map[string]int{}
	for _, ss := range l.order {
		i, ok := at[ss.node]
		if !ok {
			i = len(out)
			at[ss.node] = i
			n := results.ServerNode{Node: ss.node}
			if ns := s.nodes[ss.node]; ns != nil {
				n.DownS = float64(ns.down) * tick
			}
			if k := strings.LastIndex(ss.node, "-m"); s.mongo != nil && ss.stage == "member" && k > 0 {
				n.Shard = ss.node[:k] // replicaSet.memberName
			}
			out = append(out, n)
		}
		n := &out[i]
		st := results.ServerStage{Stage: ss.stage, Workers: ss.workers, Requests: ss.jobs, Dropped: ss.drops,
			PeakUtilisation: ss.peak, PeakQueue: ss.peakQueue, SaturatedS: float64(ss.saturated) * tick, TickS: tick}
		if ss.ticks > 0 {
			st.MeanUtilisation = ss.sum / float64(ss.ticks)
		}
		if ss.first >= 0 {
			f := ss.first
			st.FirstSaturatedS = &f
		}
		n.Requests += ss.jobs
		n.Dropped += ss.drops
		n.Stages = append(n.Stages, st)
	}
	return out
}
