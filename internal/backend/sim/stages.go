package sim

import (
	"slices"
	"strings"

	"github.com/shardbench/shardbench/internal/results"
)

// stageLog keeps each station's figures per request stage over the run, in numbers for
// server.json's nodes list: what `capacity` reads to say which node or shard saturated
// first. The per-node series of server.json fold a Cassandra node's read and write stages
// into one utilisation, where a saturated read stage beside an idle write stage shows
// about 50%; here each stage is its own.
type stageLog struct {
	byStation map[*Station]*stageSeries
	order     []*stageSeries
}

type stageSeries struct {
	node, stage string
	workers     int
	jobs, drops int64
	ticks       int
	sum, peak   float64 // utilisation
	peakQueue   float64
	saturated   int     // ticks at results.SaturatedAt or more
	first       float64 // end of the first saturated tick, seconds (-1: never)
}

// add folds one station's tick (x, ending at the simulator's current tick) into its stage.
func (l *stageLog) add(s *Simulator, node string, st *Station, x Stats) {
	ss := l.byStation[st]
	if ss == nil {
		if l.byStation == nil {
			l.byStation = map[*Station]*stageSeries{}
		}
		ss = &stageSeries{node: node, stage: s.stageName(st), workers: st.Workers(), first: -1}
		l.byStation[st] = ss
		l.order = append(l.order, ss)
	}
	ss.jobs += x.Jobs
	ss.drops += x.Drops
	ss.ticks++
	ss.sum += x.Utilisation
	ss.peak = max(ss.peak, x.Utilisation)
	ss.peakQueue = max(ss.peakQueue, x.MeanQueue)
	if x.Utilisation >= results.SaturatedAt {
		ss.saturated++
		if ss.first < 0 {
			ss.first = float64(s.nextTick) / 1e9
		}
	}
}

// stageName says which of a node's stages a station is.
func (s *Simulator) stageName(st *Station) string {
	if s.cass != nil {
		if slices.Contains(s.cass.reads, st) {
			return "read"
		}
		if slices.Contains(s.cass.writes, st) {
			return "write"
		}
	}
	return "member"
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
