package capacity

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/units"
)

// Step kinds of a design's requests, as the diagnosis reads them (design.Kind's names).
const (
	KindLWT = "lwt"
)

// StepInfo is one request an operation makes in a variant's design.
type StepInfo struct {
	Table    string // keyspace.table or database.collection, as hotspots.json names it
	Kind     string // write, read, multi_read, scan, lwt, broadcast_write
	Database string // cassandra | mongodb
}

// VariantInfo is what the diagnosis knows of a variant besides its results: the requests
// each served operation makes, and the client's limits.
type VariantInfo struct {
	Name        string
	Ops         map[string][]StepInfo
	MaxInFlight int
	P99Bound    time.Duration // the SLO's p99 bound, if it has one
}

// evidence is everything the diagnosis reads from a failing step's results directory.
type evidence struct {
	info   VariantInfo
	sum    *results.Summary
	v      *results.SummaryVariant
	server *results.ServerVariant // nil: the backend reported no per-node figures
	// contention: the server's figures of contention on one partition or document, if it
	// counted any (the simulator does).
	contention []results.ServerContention
	hot        *results.HotspotsVariant
	points     []results.Point
	failed     []results.GateCheck
}

// Diagnose says what breaks first at a failing step, with the figures it rests on: a
// saturated node or shard and the hot partition that put it there, LWT contention, a
// partition past its size limit, the client (the harness, not the design), errors
// without saturation, or, failing all of those, the SLO checks that failed.
func Diagnose(dir string, info VariantInfo, failed []results.GateCheck) (*results.CapacityCause, error) {
	e := &evidence{info: info, failed: failed}
	var err error
	if e.sum, err = results.Read(dir); err != nil {
		return nil, err
	}
	if e.v = e.sum.Variant(info.Name); e.v == nil {
		return nil, fmt.Errorf("%s holds no variant %s", dir, info.Name)
	}
	srv, err := results.ReadServer(dir)
	if err != nil {
		return nil, err
	}
	if sv := srv.Variant(info.Name); sv != nil {
		e.contention = sv.Contention
		if len(sv.Nodes) > 0 {
			e.server = sv
		}
	}
	hot, err := results.ReadHotspots(dir)
	if err != nil {
		return nil, err
	}
	e.hot = hot.Variant(info.Name)
	if e.points, err = results.ReadTimeseries(dir); err != nil {
		return nil, err
	}
	for _, rule := range []func() *results.CapacityCause{e.partitionSize, e.client, e.lwt, e.saturated, e.servers, e.errorsOnly} {
		if c := rule(); c != nil {
			if c.Kind != results.CausePartitionSize {
				c.Evidence = append(c.Evidence, e.oversized()...)
			}
			c.Evidence = append(c.Evidence, e.failedEvidence()...)
			return c, nil
		}
	}
	c := &results.CapacityCause{Kind: results.CauseSLO, Subject: e.worstCheck().Subject,
		Summary: "the SLO failed (" + checkText(e.worstCheck()) + "), and none of the causes looked for fits it " +
			"(a saturated server stage, the client's backlog, failed operations, a partition past its size limit): see the step's results"}
	c.Evidence = e.failedEvidence()
	return c, nil
}

// failedEvidence lists the failed checks.
func (e *evidence) failedEvidence() []results.CapacityEvidence {
	var out []results.CapacityEvidence
	for _, c := range e.failed {
		out = append(out, results.CapacityEvidence{Source: results.GateFile, Figure: "failed: " + c.Name, Value: c.ValueText, Detail: c.Detail})
	}
	return out
}

// worstCheck is the failed check furthest past its threshold.
func (e *evidence) worstCheck() results.GateCheck {
	var best results.GateCheck
	score := -1.0
	for _, c := range e.failed {
		s := 1.0
		if c.Threshold > 0 && c.Value > 0 {
			s = math.Max(c.Value/c.Threshold, c.Threshold/c.Value)
		}
		if s > score {
			best, score = c, s
		}
	}
	return best
}

func checkText(c results.GateCheck) string {
	if c.Name == "" {
		return "no check"
	}
	return strings.TrimSpace(fmt.Sprintf("%s %s %s: %s", c.Subject, c.Metric, c.ThresholdText, c.ValueText))
}

// failedOps are the operations whose checks failed ("all": every served one).
func (e *evidence) failedOps() []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range e.failed {
		if c.Subject == "all" || c.Subject == "" {
			for op := range e.info.Ops {
				if !seen[op] {
					seen[op] = true
					out = append(out, op)
				}
			}
			continue
		}
		if _, ok := e.info.Ops[c.Subject]; ok && !seen[c.Subject] {
			seen[c.Subject] = true
			out = append(out, c.Subject)
		}
	}
	sort.Strings(out)
	return out
}

// tablesOf lists the tables the failed operations use.
func (e *evidence) tablesOf(ops []string) map[string]bool {
	out := map[string]bool{}
	for _, op := range ops {
		for _, s := range e.info.Ops[op] {
			out[s.Table] = true
		}
	}
	return out
}

// partitionSize: a rule on projected partition size failed.
func (e *evidence) partitionSize() *results.CapacityCause {
	for _, c := range e.failed {
		if !strings.HasPrefix(c.Subject, "table:") || (c.Metric != "partition_size" && c.Metric != "partition_rows" && c.Metric != "over_limit") {
			continue
		}
		cause := &results.CapacityCause{Kind: results.CausePartitionSize, Subject: strings.TrimPrefix(c.Subject, "table:")}
		cause.Summary = fmt.Sprintf("a partition of %s grows past its limit: %s %s", cause.Subject, c.Metric, c.ValueText)
		if pr, tb := e.largestProjection(cause.Subject); pr != nil {
			cause.Subject = shortTable(tb.Table) + " " + pr.Key
			cause.Summary = fmt.Sprintf("partition %s is projected to %s (%s rows) by %s, past the %s limit", cause.Subject,
				units.Bytes(float64(pr.ProjectedBytes)), units.Count(float64(pr.ProjectedRows)), pr.Horizon, units.Bytes(float64(pr.LimitBytes)))
			cause.Evidence = append(cause.Evidence, results.CapacityEvidence{Source: results.HotspotsFile, Figure: "projected size of " + cause.Subject,
				Value: units.Bytes(float64(pr.ProjectedBytes)), Detail: fmt.Sprintf("%s observed over %.0f s of store time; horizon %s", units.Bytes(float64(pr.ObservedBytes)), pr.ObservedS, pr.Horizon)})
		}
		return cause
	}
	return nil
}

// oversized lists the partitions of the failed operations' tables projected past their
// size limit: not what broke (no rule on size failed), but what a reader must know.
func (e *evidence) oversized() []results.CapacityEvidence {
	if e.hot == nil {
		return nil
	}
	tables := e.tablesOf(e.failedOps())
	var out []results.CapacityEvidence
	for _, tb := range e.hot.Tables {
		if !tables[tb.Table] {
			continue
		}
		for _, pr := range tb.Projections {
			if pr.Exceeds {
				out = append(out, results.CapacityEvidence{Source: results.HotspotsFile, Figure: "projected size of " + shortTable(tb.Table) + " " + pr.Key,
					Value: units.Bytes(float64(pr.ProjectedBytes)), Detail: fmt.Sprintf("past the %s limit by %s (no SLO rule on size)", units.Bytes(float64(pr.LimitBytes)), pr.Horizon)})
				break // the largest of the table is enough
			}
		}
	}
	return out
}

// largestProjection is the largest projected partition of the tables matching name.
func (e *evidence) largestProjection(name string) (*results.SizeProjection, *results.TableHotspots) {
	if e.hot == nil {
		return nil, nil
	}
	var best *results.SizeProjection
	var bt *results.TableHotspots
	for i := range e.hot.Tables {
		tb := &e.hot.Tables[i]
		if name != "*" && tb.Table != name && shortTable(tb.Table) != name && tb.Entity != name {
			continue
		}
		for j := range tb.Projections {
			if p := &tb.Projections[j]; best == nil || p.ProjectedBytes > best.ProjectedBytes {
				best, bt = p, tb
			}
		}
	}
	return best, bt
}

// peakStage is the stage that saturated first (then longest), or, when none did, the one
// with the highest utilisation.
func (e *evidence) peakStage() (*results.ServerNode, *results.ServerStage, bool) {
	if e.server == nil {
		return nil, nil, false
	}
	var bn *results.ServerNode
	var bs *results.ServerStage
	better := func(s *results.ServerStage) bool {
		if bs == nil {
			return true
		}
		a, b := s.FirstSaturatedS, bs.FirstSaturatedS
		switch {
		case a != nil && b == nil:
			return true
		case a == nil && b != nil:
			return false
		case a != nil && *a != *b:
			return *a < *b
		case s.SaturatedS != bs.SaturatedS:
			return s.SaturatedS > bs.SaturatedS
		case s.PeakUtilisation != bs.PeakUtilisation:
			return s.PeakUtilisation > bs.PeakUtilisation
		}
		return s.PeakQueue > bs.PeakQueue
	}
	for i := range e.server.Nodes {
		n := &e.server.Nodes[i]
		for j := range n.Stages {
			if s := &n.Stages[j]; better(s) {
				bn, bs = n, s
			}
		}
	}
	return bn, bs, bs != nil && bs.FirstSaturatedS != nil
}

// client: operations waited for the client (schedule lag) while no server stage
// saturated: the harness, not the design, is the limit.
func (e *evidence) client() *results.CapacityCause {
	t := e.servedTotals()
	// Operations waited for a client slot (late, their lag a large part of the response
	// time) or found none (dropped: with on_full: drop, or still waiting when the
	// schedule ended).
	if t.dropped == 0 && (t.late == 0 || t.lagP99 < 0.5*t.respP99) {
		return nil
	}
	maxIF := e.peakInFlight()
	if _, st, sat := e.peakStage(); sat {
		return nil // a saturated server filled the client's slots
	} else if st == nil && e.serversSlow(t) && (t.svcP99 >= 0.5*t.respP99 || e.slotsHeld()) {
		// No server figures, the servers answered slowly, and either the wait was theirs
		// or requests waiting on them held every slot: servers() says so.
		return nil
	}
	c := &results.CapacityCause{Kind: results.CauseClient, Subject: "client"}
	what := "the client could not start operations on time"
	if e.sum.Backend.Simulated || (e.info.MaxInFlight > 0 && maxIF >= int64(e.info.MaxInFlight)) {
		what = fmt.Sprintf("the client's in-flight limit (load.max_in_flight %d) was reached", e.info.MaxInFlight)
	}
	c.Summary = fmt.Sprintf("%s: %s operations started late (schedule lag p99 %s) and %s were "+
		"dropped while the servers kept up: the harness, not the design, is the limit; raise "+
		"max_in_flight or add load generators",
		what, units.Count(float64(t.late)), units.Ms(t.lagP99), units.Count(float64(t.dropped)))
	c.Evidence = append(c.Evidence,
		results.CapacityEvidence{Source: results.SummaryFile, Figure: "late operations", Value: units.Count(float64(t.late)), Detail: fmt.Sprintf("of %s served", units.Count(float64(t.scheduled)))},
		results.CapacityEvidence{Source: results.SummaryFile, Figure: "schedule lag p99",
			Value: units.Ms(t.lagP99),
			Detail: fmt.Sprintf("service time p99 %s, response time p99 %s", units.Ms(t.svcP99),
				units.Ms(t.respP99))})
	if maxIF > 0 {
		c.Evidence = append(c.Evidence, results.CapacityEvidence{Source: results.TimeseriesFile, Figure: "most operations in flight", Value: units.Count(float64(maxIF))})
	}
	if _, st, _ := e.peakStage(); st != nil {
		n, _, _ := e.peakStage()
		c.Evidence = append(c.Evidence, results.CapacityEvidence{Source: results.ServerFile,
			Figure: "busiest server stage " + n.Node + " " + st.Stage,
			Value:  units.Pct(st.PeakUtilisation), Detail: "peak utilisation: below saturation"})
	}
	return c
}

// peakInFlight is the most operations the variant had in flight in any interval.
func (e *evidence) peakInFlight() int64 {
	var n int64
	for _, p := range e.points {
		if p.Variant == e.v.Name {
			n = max(n, p.InFlight)
		}
	}
	return n
}

// slotsHeld: at some point every one of the client's in-flight slots was taken.
func (e *evidence) slotsHeld() bool {
	return e.info.MaxInFlight > 0 && e.peakInFlight() >= int64(e.info.MaxInFlight)
}

// serversSlow: the servers' own time (service time) is what took long: half the SLO's p99
// bound or more, or (without a bound) more than operations waited for the client.
func (e *evidence) serversSlow(t totals) bool {
	if b := msOf(e.info.P99Bound); b > 0 {
		return t.svcP99 >= 0.5*b
	}
	return t.svcP99 >= t.lagP99
}

type totals struct {
	late, dropped, abandoned, scheduled int64
	lagP99, svcP99, respP99             float64 // ms, worst served operation
}

// servedTotals sums the served operations' late counts and takes their worst p99s.
func (e *evidence) servedTotals() totals {
	var t totals
	for _, op := range e.v.Ops {
		if _, ok := e.info.Ops[op.Op]; !ok {
			continue
		}
		t.late += op.Late
		t.dropped += op.Dropped
		t.abandoned += op.Abandoned
		t.scheduled += op.Scheduled
		t.lagP99 = math.Max(t.lagP99, op.Lag.P99)
		t.svcP99 = math.Max(t.svcP99, op.Service.P99)
		t.respP99 = math.Max(t.respP99, op.Response.P99)
	}
	return t
}

// lwt: a failed operation runs lightweight transactions that time out or conflict, or
// that the server saw lose Paxos rounds to each other and retry them while none failed:
// when 1% or more of them did, the retries are in the p99.
func (e *evidence) lwt() *results.CapacityCause {
	lost := e.lostRounds()
	for _, op := range e.failedOps() {
		var table string
		for _, s := range e.info.Ops[op] {
			if s.Kind == KindLWT {
				table = s.Table
			}
		}
		st := e.v.Op(op)
		if table == "" || st == nil {
			continue
		}
		// Contention shows as compare-and-sets that conflict, or that time out while no
		// server saturated (a saturated node times out every kind of request: that is the
		// node's doing, named by the saturation rule).
		conflicts, timeouts := st.Errors[metrics.Conflict.String()], st.Errors[metrics.Timeout.String()]
		if _, _, sat := e.peakStage(); conflicts == 0 && (sat || timeouts == 0 && lost == nil) {
			continue
		}
		c := &results.CapacityCause{Kind: results.CauseLWT, Subject: shortTable(table)}
		where := ""
		if p, _ := e.hottestIn(table); p != nil {
			c.Subject = shortTable(table) + " " + p.Key
			where = fmt.Sprintf(" on partition %s (%s of the table's operations%s)", c.Subject, units.Pct(p.Share), replicaText(p))
			c.Evidence = append(c.Evidence, partitionEvidence(table, p))
		}
		if conflicts == 0 && timeouts == 0 {
			c.Summary = fmt.Sprintf("LWT contention: %s's compare-and-set%s: %s of %s lost a Paxos round to another proposer and retried it (%s rounds), none failed; p99 %s",
				op, where, units.Count(float64(lost.Contended)), units.Count(float64(lost.Requests)), units.Count(float64(lost.Retries)), units.Ms(st.Response.P99))
		} else {
			c.Summary = fmt.Sprintf("LWT contention: %s's compare-and-set%s: %s timeouts and %s conflicts in %s operations, p99 %s",
				op, where, units.Count(float64(timeouts)), units.Count(float64(conflicts)), units.Count(float64(st.Scheduled)), units.Ms(st.Response.P99))
		}
		if lost != nil {
			c.Evidence = append(c.Evidence, results.CapacityEvidence{Source: results.ServerFile, Figure: "LWTs that lost a Paxos round", Value: fmt.Sprintf("%d of %d", lost.Contended, lost.Requests),
				Detail: fmt.Sprintf("%d rounds retried, %d timed out", lost.Retries, lost.TimedOut)})
		}
		c.Evidence = append(c.Evidence, results.CapacityEvidence{Source: results.SummaryFile, Figure: op + " errors", Value: fmt.Sprintf("%d timeout, %d conflict", timeouts, conflicts),
			Detail: fmt.Sprintf("of %d; response p99 %s, service p99 %s", st.Scheduled, units.Ms(st.Response.P99), units.Ms(st.Service.P99))})
		if n, s, sat := e.peakStage(); sat {
			c.Summary += fmt.Sprintf("; %s's %s stage saturated first", n.Node, s.Stage)
			c.Evidence = append(c.Evidence, stageEvidence(n, s))
		}
		return c
	}
	return nil
}

// lostRounds is the server's count of LWTs that lost a Paxos round, when at least 1% of
// them did.
func (e *evidence) lostRounds() *results.ServerContention {
	for i := range e.contention {
		if c := &e.contention[i]; c.Kind == results.ContentionLWT && c.Contended > 0 && c.Contended*100 >= c.Requests {
			return c
		}
	}
	return nil
}

// hottestIn is the heaviest partition of a table.
func (e *evidence) hottestIn(table string) (*results.PartitionLoad, *results.TableHotspots) {
	if e.hot == nil {
		return nil, nil
	}
	for i := range e.hot.Tables {
		if tb := &e.hot.Tables[i]; tb.Table == table {
			if p := tb.Hottest(); p != nil {
				return p, tb
			}
		}
	}
	return nil, nil
}

// saturated: a server stage saturated; name it and the partition that put it there.
func (e *evidence) saturated() *results.CapacityCause {
	n, s, sat := e.peakStage()
	if !sat {
		return nil
	}
	c := &results.CapacityCause{Kind: results.CauseNode, Subject: n.Node}
	who := "node " + n.Node
	if n.Shard != "" {
		c.Kind, c.Subject, who = results.CauseShard, n.Shard, "shard "+n.Shard+" (member "+n.Node+")"
	}
	c.Evidence = append(c.Evidence, stageEvidence(n, s))
	also := e.alsoSaturated(n, s)
	what := "its " + s.Stage + " stage"
	if s.Stage == "member" {
		what = "it"
	}
	p, tb := e.partitionOn(n, s.Stage)
	load, dev := e.nodeLoad(n)
	switch {
	case p != nil:
		c.Summary = fmt.Sprintf("%s: %s saturated first (utilisation %s from %s) because partition %s takes %s of the %s of %s%s",
			who, what, units.Pct(s.PeakUtilisation), units.Seconds(*s.FirstSaturatedS), shortTable(tb.Table)+" "+p.Key, units.Pct(partShare(p, s.Stage, tb)), opWord(s.Stage), shortTable(tb.Table), placeText(p, tb))
		c.Evidence = append(c.Evidence, partitionEvidence(tb.Table, p))
	case load != nil && dev < 0.3 && s.Stage == "read" && e.scanText() != "":
		c.Kind, c.Subject = results.CauseScan, e.scanOps()[0]
		c.Summary = fmt.Sprintf("%s: %s saturated first (utilisation %s from %s) with the load spread evenly (%.2f× the mean): %s",
			who, what, units.Pct(s.PeakUtilisation), units.Seconds(*s.FirstSaturatedS), 1+dev, e.scanText())
	case load != nil && dev < 0.3:
		c.Kind = results.CauseCluster
		c.Summary = fmt.Sprintf("%s: %s saturated first (utilisation %s from %s) with the load spread evenly (%.2f× the mean): the cluster as a whole is at capacity, not a hot spot",
			who, what, units.Pct(s.PeakUtilisation), units.Seconds(*s.FirstSaturatedS), 1+dev)
	default:
		c.Summary = fmt.Sprintf("%s: %s saturated first (utilisation %s from %s)", who, what, units.Pct(s.PeakUtilisation), units.Seconds(*s.FirstSaturatedS))
		if load != nil {
			c.Summary += fmt.Sprintf(", carrying %.2f× the mean node's load", 1+dev)
		}
	}
	if load != nil {
		c.Evidence = append(c.Evidence, results.CapacityEvidence{Source: results.HotspotsFile, Figure: load.Node + " load", Value: fmt.Sprintf("%.2f× the mean", 1+dev),
			Detail: fmt.Sprintf("%s requests, %s of the cluster's", units.Count(float64(load.Ops)), units.Pct(load.Share))})
	}
	if len(also) > 0 {
		c.Summary += "; then " + strings.Join(also, ", ")
	}
	return c
}

// scanOps are the served operations that scan a whole Cassandra table (a query the
// design has no table for), in name order. A MongoDB query without the shard key is
// answered by each shard from an index or its collection, at a cost the shard's own
// figures already show.
func (e *evidence) scanOps() []string {
	var out []string
	for op, steps := range e.info.Ops {
		for _, st := range steps {
			if fullScan(st) {
				out = append(out, op)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// scanText says which full scans keep every node busy and at what rate ("" when the
// design makes none): a few a second read every partition of a table on every node, so
// the cluster saturates whatever the rest of the load.
func (e *evidence) scanText() string {
	var parts []string
	for _, op := range e.scanOps() {
		st := e.v.Op(op)
		if st == nil || st.Completed == 0 {
			continue
		}
		var tables []string
		for _, s := range e.info.Ops[op] {
			if fullScan(s) && !contains(tables, shortTable(s.Table)) {
				tables = append(tables, shortTable(s.Table))
			}
		}
		parts = append(parts, fmt.Sprintf("%s scans all of %s (%s a second)", op, strings.Join(tables, ", "), units.Count(float64(st.Completed)/max(e.v.DurationS, 1))))
	}
	if len(parts) == 0 {
		return ""
	}
	return "full scans keep every node busy, not the offered rate: " + strings.Join(parts, "; ") + ", a query the design has no table for"
}

func fullScan(s StepInfo) bool { return s.Kind == "scan" && s.Database == "cassandra" }

// stageEvidence is a stage's figures.
func stageEvidence(n *results.ServerNode, s *results.ServerStage) results.CapacityEvidence {
	first := "never saturated"
	if s.FirstSaturatedS != nil {
		first = "saturated from " + units.Seconds(*s.FirstSaturatedS) + " for " + units.Seconds(s.SaturatedS)
	}
	return results.CapacityEvidence{Source: results.ServerFile, Figure: n.Node + " " + s.Stage + " stage utilisation", Value: units.Pct(s.PeakUtilisation),
		Detail: fmt.Sprintf("%s; peak queue %.0f, %s requests served by %d workers, %s dropped "+
			"after waiting past the timeout",
			first, s.PeakQueue, units.Count(float64(s.Requests)), s.Workers,
			units.Count(float64(s.Dropped)))}
}

// alsoSaturated names the other stages that saturated, in order, up to three.
func (e *evidence) alsoSaturated(first *results.ServerNode, fs *results.ServerStage) []string {
	type sat struct {
		name string
		at   float64
	}
	var all []sat
	for i := range e.server.Nodes {
		n := &e.server.Nodes[i]
		for j := range n.Stages {
			s := &n.Stages[j]
			if s == fs || s.FirstSaturatedS == nil {
				continue
			}
			all = append(all, sat{n.Node + " " + s.Stage, *s.FirstSaturatedS})
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].at < all[j].at })
	var out []string
	for i, s := range all {
		if i == 3 {
			out = append(out, fmt.Sprintf("%d more", len(all)-3))
			break
		}
		out = append(out, s.name+" at "+units.Seconds(s.at))
	}
	return out
}

// partitionOn is the heaviest hot partition placed on a node (a Cassandra replica, or the
// MongoDB shard's chunk), among the tables the failed operations use, weighted by the
// saturated stage's kind of request: its reads for a read stage, writes for a write stage.
// A partition is hot when it takes at least 5% of its table and more than its fair share.
func (e *evidence) partitionOn(n *results.ServerNode, stage string) (*results.PartitionLoad, *results.TableHotspots) {
	if e.hot == nil {
		return nil, nil
	}
	tables := e.tablesOf(e.failedOps())
	var best *results.PartitionLoad
	var bt *results.TableHotspots
	bestOps := int64(0)
	for i := range e.hot.Tables {
		tb := &e.hot.Tables[i]
		if len(tables) > 0 && !tables[tb.Table] {
			continue
		}
		for j := range tb.Top {
			p := &tb.Top[j]
			fair := 1.0
			if tb.Partitions > 0 {
				fair = 1 / float64(tb.Partitions)
			}
			if p.Share < 0.05 || p.Share <= fair || p.Chunks > 1 || !placedOn(p, n) {
				continue
			}
			ops := p.Ops
			switch stage {
			case "read":
				ops = p.Reads
			case "write":
				ops = p.Writes
			}
			if ops > bestOps {
				best, bt, bestOps = p, tb, ops
			}
		}
	}
	return best, bt
}

// partShare is the partition's share of its table's reads (a read stage), writes (a write
// stage) or operations.
func partShare(p *results.PartitionLoad, stage string, tb *results.TableHotspots) float64 {
	switch {
	case stage == "read" && tb.Reads > 0:
		return float64(p.Reads) / float64(tb.Reads)
	case stage == "write" && tb.Writes > 0:
		return float64(p.Writes) / float64(tb.Writes)
	}
	return p.Share
}

func placedOn(p *results.PartitionLoad, n *results.ServerNode) bool {
	if n.Shard != "" {
		return p.Shard == n.Shard
	}
	for _, r := range p.Replicas {
		if r == n.Node {
			return true
		}
	}
	return false
}

// nodeLoad is the node's (or its shard's) load in hotspots.json and its deviation from
// the mean.
func (e *evidence) nodeLoad(n *results.ServerNode) (*results.NodeLoad, float64) {
	if e.hot == nil {
		return nil, 0
	}
	name := n.Node
	if n.Shard != "" {
		name = n.Shard
	}
	for i := range e.hot.Nodes {
		if l := &e.hot.Nodes[i]; l.Node == name {
			return l, l.Deviation
		}
	}
	return nil, 0
}

func partitionEvidence(table string, p *results.PartitionLoad) results.CapacityEvidence {
	return results.CapacityEvidence{Source: results.HotspotsFile, Figure: "partition " + shortTable(table) + " " + p.Key, Value: units.Pct(p.Share) + " of the table",
		Detail: fmt.Sprintf("%s operations (%s reads, %s writes)%s", units.Count(float64(p.Ops)), units.Count(float64(p.Reads)), units.Count(float64(p.Writes)), replicaText(p))}
}

func replicaText(p *results.PartitionLoad) string {
	switch {
	case len(p.Replicas) > 0:
		return "; replicas " + strings.Join(p.Replicas, ", ")
	case p.Shard != "" && p.Range != "":
		return "; chunk " + p.Range + " on " + p.Shard
	case p.Shard != "":
		return "; on " + p.Shard
	}
	return ""
}

// placeText says where the partition lives, and, for one value of a ranged MongoDB shard
// key, that no split can divide it (chunks split between values only).
func placeText(p *results.PartitionLoad, tb *results.TableHotspots) string {
	if len(p.Replicas) > 0 {
		return " (replicas " + strings.Join(p.Replicas, ", ") + ")"
	}
	if p.Shard == "" {
		return ""
	}
	where := " (on " + p.Shard
	if p.Range != "" {
		where += ", chunk " + p.Range
	}
	if singleValue(p.Key, tb.Key) {
		where += "; one value of the ranged shard key " + tb.Key + ", which no chunk split can divide: it stays on one shard whatever the balancer does, a jumbo chunk once it outgrows the chunk size"
	}
	return where + ")"
}

// singleValue: the partition is one whole value of a ranged shard key (no hashed field,
// every field given), so no chunk split can divide it.
func singleValue(key, shardKey string) bool {
	if shardKey == "" || strings.Contains(shardKey, "hashed") {
		return false
	}
	return strings.Count(key, ":") == strings.Count(shardKey, ":")
}

func opWord(stage string) string {
	switch stage {
	case "read":
		return "reads"
	case "write":
		return "writes"
	}
	return "operations"
}

// servers: no per-node figures (a real database), but the servers' service time, not the
// client's wait, grew: the servers are the limit; the placement says whether one node
// took more than its share.
//
// An error_rate rule failed by operations dropped or abandoned (error_rate counts them)
// while the servers answered slowly is the same cause: the servers' queue filled the
// client's in-flight slots.
func (e *evidence) servers() *results.CapacityCause {
	t := e.servedTotals()
	m := e.worstCheck().Metric
	backlog := m == "error_rate" && t.dropped+t.abandoned > 0
	if e.server != nil || !(latencyMetric(m) || m == "achieved_ratio" || m == "dropped_share" || backlog) {
		return nil
	}
	// Requests waiting on slow servers can hold every one of the client's in-flight slots:
	// the operations due next then wait in the client (lag), but more slots would only
	// queue them on the servers.
	inClient := t.svcP99 < 0.5*t.respP99
	if !e.serversSlow(t) || t.svcP99 == 0 || (inClient && !e.slotsHeld()) {
		return nil
	}
	c := &results.CapacityCause{Kind: results.CauseCluster, Subject: "cluster"}
	if !inClient {
		c.Summary = fmt.Sprintf("the servers: service time p99 %s (response p99 %s, schedule lag p99 %s) grew with the rate, so requests queued on the servers, not in the client",
			units.Ms(t.svcP99), units.Ms(t.respP99), units.Ms(t.lagP99))
	} else {
		c.Summary = fmt.Sprintf("the servers: service time p99 %s grew with the rate until requests waiting on them held all %d of the client's in-flight slots (load.max_in_flight), "+
			"so the operations due next waited in the client (schedule lag p99 %s, response p99 %s); more slots would queue them on the servers",
			units.Ms(t.svcP99), e.info.MaxInFlight, units.Ms(t.lagP99), units.Ms(t.respP99))
	}
	c.Evidence = append(c.Evidence, results.CapacityEvidence{Source: results.SummaryFile, Figure: "service time p99 (worst served operation)", Value: units.Ms(t.svcP99),
		Detail: fmt.Sprintf("response p99 %s, lag p99 %s, %s late", units.Ms(t.respP99), units.Ms(t.lagP99), units.Count(float64(t.late)))})
	if t.dropped+t.abandoned > 0 {
		c.Summary += fmt.Sprintf("; %s operations were dropped and %s abandoned with the client's in-flight slots held by slow requests (error_rate counts them)",
			units.Count(float64(t.dropped)), units.Count(float64(t.abandoned)))
		c.Evidence = append(c.Evidence, results.CapacityEvidence{Source: results.SummaryFile, Figure: "dropped, abandoned",
			Value: units.Count(float64(t.dropped)) + ", " + units.Count(float64(t.abandoned)), Detail: fmt.Sprintf("of %s scheduled", units.Count(float64(t.scheduled)))})
	}
	if e.hot != nil && len(e.hot.Nodes) > 0 {
		busiest := e.hot.Nodes[0]
		for _, n := range e.hot.Nodes {
			if n.Ops > busiest.Ops {
				busiest = n
			}
		}
		if busiest.Deviation >= 0.3 {
			c.Kind, c.Subject = results.CauseNode, busiest.Node
			c.Summary += fmt.Sprintf("; node %s takes %.2f× the mean node's requests by placement", busiest.Node, 1+busiest.Deviation)
		} else {
			c.Summary += fmt.Sprintf("; the load is spread evenly (busiest node %s at %.2f× the mean): the cluster as a whole is at capacity", busiest.Node, 1+busiest.Deviation)
		}
		c.Evidence = append(c.Evidence, results.CapacityEvidence{Source: results.HotspotsFile, Figure: "busiest node " + busiest.Node, Value: fmt.Sprintf("%.2f× the mean", 1+busiest.Deviation),
			Detail: "the server reported no utilisation; node loads are the placement of the operations sent"})
	}
	return c
}

func msOf(d time.Duration) float64 { return float64(d) / 1e6 }

// latencyMetric: a response, service or lag time rule (p99, max, service.p99, ...).
func latencyMetric(m string) bool {
	m = strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(m, "service."), "lag."), "response.")
	return m == "max" || m == "min" || m == "mean" || (strings.HasPrefix(m, "p") && len(m) > 1 && m[1] >= '0' && m[1] <= '9')
}

// errorsOnly: operations failed (unavailable, timeouts, connection) with no server
// saturated: a node down, a consistency level the cluster cannot meet.
func (e *evidence) errorsOnly() *results.CapacityCause {
	var total int64
	var classes []string
	for _, op := range e.v.Ops {
		if _, ok := e.info.Ops[op.Op]; !ok {
			continue
		}
		for cl, n := range op.Errors {
			if cl == metrics.NotSupported.String() || n == 0 {
				continue
			}
			total += n
			if !contains(classes, cl) {
				classes = append(classes, cl)
			}
		}
	}
	if total == 0 {
		return nil
	}
	sort.Strings(classes)
	c := &results.CapacityCause{Kind: results.CauseErrors, Subject: strings.Join(classes, ", ")}
	c.Summary = fmt.Sprintf("%s operations failed (%s) with no server saturated", units.Count(float64(total)), strings.Join(classes, ", "))
	for _, ev := range e.v.Events {
		c.Summary += fmt.Sprintf("; %s %s at %s", ev.Action, ev.Target, units.Seconds(ev.AtS))
	}
	c.Evidence = append(c.Evidence, results.CapacityEvidence{Source: results.SummaryFile, Figure: "errors", Value: units.Count(float64(total)), Detail: strings.Join(classes, ", ")})
	return c
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// shortTable drops the keyspace or database.
func shortTable(t string) string {
	if i := strings.LastIndexByte(t, '.'); i >= 0 {
		return t[i+1:]
	}
	return t
}
