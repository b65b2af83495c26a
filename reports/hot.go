package reports

import (
	"cmp"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/units"
)

// A top-partitions table shows topRows rows, and up to maxTopRows behind a <details>.
const (
	topRows    = 10
	maxTopRows = 50
)

// chartedSides picks the variants that get their own hot-partition charts: the worst node
// imbalance first (then the largest hottest-partition share), at most max of them.
func chartedSides(sides []*side, limit int) (picked map[*side]bool, total int) {
	var hs []*side
	for _, s := range sides {
		if s.Hot != nil {
			hs = append(hs, s)
		}
	}
	sort.SliceStable(hs, func(i, j int) bool {
		a, b := maxOverMean(hs[i].Hot), maxOverMean(hs[j].Hot)
		if math.IsNaN(a) {
			a = 0
		}
		if math.IsNaN(b) {
			b = 0
		}
		if a != b {
			return a > b
		}
		pa, _ := hottest(hs[i].Hot)
		pb, _ := hottest(hs[j].Hot)
		return pa != nil && (pb == nil || pa.Share > pb.Share)
	})
	picked = map[*side]bool{}
	for i, s := range hs {
		if i < limit {
			picked[s] = true
		}
	}
	return picked, len(hs)
}

func (r *renderer) hot() (*hotView, error) {
	var hs []*side
	for _, s := range r.sides {
		if s.Hot != nil {
			hs = append(hs, s)
		}
	}
	if len(hs) == 0 {
		return nil, nil
	}
	hv := &hotView{Intro: "Where the keys went: the heaviest partitions of every table, how much " +
		"of the traffic the top partitions take, each node's or shard's share against the " +
		"mean (the seed's rule flags a node more than 30% off the mean), and partition sizes " +
		"projected to each design's horizon against the database's guidance."}
	hv.Glance = r.hotGlance(hs)
	// Overlays: node load of every variant; cumulative share per entity.
	if len(hs) > 1 {
		f, err := nodeOverlayChart(hs)
		if err != nil {
			return nil, err
		}
		cv, err := r.draw("hot-node-load",
			"Each variant's nodes or shards sorted by load, as multiples of its own mean: a flat "+
				"line at 1 is an even spread; points above the green band break the 30% rule.",
			f)
		if err != nil {
			return nil, err
		}
		if cv != nil {
			hv.Charts = append(hv.Charts, cv)
		}
	}
	ents := entities(hs)
	var notes []string
	shownEnts := ents
	if len(shownEnts) > r.opts.MaxOpCharts {
		shownEnts = shownEnts[:r.opts.MaxOpCharts]
		notes = append(notes, fmt.Sprintf("Cumulative-share charts for the %d busiest of %d entities.", len(shownEnts), len(ents)))
	}
	for _, e := range shownEnts {
		f, omitted, err := cumulativeChart(e, hs, 12)
		if err != nil {
			return nil, err
		}
		cv, err := r.draw("hot-cumulative-"+e,
			fmt.Sprintf("%s: the share of operations taken by the top x of partitions; the "+
				"dashed diagonal is a perfectly even spread. A curve hugging the top-left means "+
				"a few partitions take most of the traffic.",
				e), f)
		if err != nil {
			return nil, err
		}
		if cv != nil {
			hv.Charts = append(hv.Charts, cv)
		}
		if omitted > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d table curves left out of the chart (12 at most).", e, omitted))
		}
	}
	picked, total := chartedSides(hs, r.opts.MaxVariantCharts)
	if total > len(picked) {
		notes = append(notes, fmt.Sprintf("Per-variant hot-partition charts for the %d variants with the worst node imbalance (of %d); every variant's tables follow.", len(picked), total))
	}
	hv.Note = strings.Join(notes, " ")
	for _, s := range hs {
		sv, err := r.hotSide(s, picked[s])
		if err != nil {
			return nil, err
		}
		hv.Sides = append(hv.Sides, sv)
	}
	return hv, nil
}

func (r *renderer) hotGlance(hs []*side) *table {
	t := &table{Head: heads("variant", "database", "topology", "hottest partition", "share", "top 1%", "max/mean", "CV", "Gini", "over 30%", "largest projected", "over limit")}
	for _, s := range hs {
		h := s.Hot
		p, tb := hottest(h)
		c := []cell{sideCell(s), {Text: h.Database}, {Text: h.Topology, Class: "wrap"}}
		if p != nil {
			c = append(c, cell{Text: shortTable(tb.Table) + " " + Truncate(p.Key, 48), Class: "wrap"}, shareCell(p.Share), shareCell(topShare(tb, 0.01)))
		} else {
			c = append(c, cell{Text: "—"}, num("—"), num("—"))
		}
		if len(h.Nodes) > 0 {
			c = append(c, ratioCell(maxOverMean(h)), num(FormatFloat(h.Balance.CV)), num(FormatFloat(h.Balance.Gini)), overCell(h))
		} else {
			c = append(c, num("—"), num("—"), num("—"), cell{Text: "—"})
		}
		big, over := largestProjection(h)
		if big != nil {
			bc := num(units.Bytes(float64(big.ProjectedBytes)))
			if over > 0 {
				bc.Class += " bad"
			}
			oc := num(fmt.Sprint(over))
			if over > 0 {
				oc.Class += " bad"
			}
			c = append(c, bc, oc)
		} else {
			c = append(c, num("—"), num("—"))
		}
		t.Rows = append(t.Rows, row{Cells: c})
	}
	return t
}

// largestProjection returns the largest projected partition and how many projections
// exceed their limit.
func largestProjection(h *results.HotspotsVariant) (*results.SizeProjection, int) {
	var big *results.SizeProjection
	over := 0
	for i := range h.Tables {
		for j := range h.Tables[i].Projections {
			pr := &h.Tables[i].Projections[j]
			if exceeds(pr) {
				over++
			}
			if big == nil || pr.ProjectedBytes > big.ProjectedBytes {
				big = pr
			}
		}
	}
	return big, over
}

func exceeds(pr *results.SizeProjection) bool {
	return pr.Over()
}

func (r *renderer) hotSide(s *side, charts bool) (hotSideView, error) {
	h := s.Hot
	sv := hotSideView{ID: s.ID, Label: s.Label, Color: s.Index % 10, NodeWord: "node", Notes: h.Notes}
	if h.Database == "mongodb" {
		sv.NodeWord = "shard"
	}
	var parts []string
	if h.Database != "" {
		parts = append(parts, h.Database)
	}
	if h.Topology != "" {
		parts = append(parts, h.Topology)
	}
	switch h.Source {
	case "server":
		parts = append(parts, "placement read from the live cluster")
	case "computed", "":
		parts = append(parts, "placement computed client-side")
	default:
		parts = append(parts, "placement: "+h.Source)
	}
	if len(h.Nodes) > 0 {
		parts = append(parts, fmt.Sprintf("max/mean %s, CV %s, Gini %s", FormatRatio(maxOverMean(h)), FormatFloat(h.Balance.CV), FormatFloat(h.Balance.Gini)))
		if b := h.Balance; b.Measure != "" && b.Busiest != "" {
			// Say what the headline measures: the busiest node or shard and its share of
			// the most unbalanced measure (the inserts a monotonic key piles onto one shard
			// are not diluted by broadcast reads).
			what := b.Database
			if b.DC != "" {
				what += " " + b.DC
			}
			parts = append(parts, fmt.Sprintf("most unbalanced: %s %s, %s takes %s of them", what, b.Measure, b.Busiest, units.Pct(b.BusiestShare)))
		}
		if o := overList(h); len(o) > 0 {
			parts = append(parts, fmt.Sprintf("%d %s(s) more than 30%% off the mean: %s", len(o), sv.NodeWord, strings.Join(o, ", ")))
		} else {
			parts = append(parts, "every "+sv.NodeWord+" within 30% of the mean")
		}
	}
	sv.Summary = strings.Join(parts, " · ")
	if charts {
		for _, c := range []struct {
			id, caption string
			build       func() (*figure, error)
		}{
			{"hot-top-" + s.ID,
				"The heaviest partitions over all tables of the variant, as shares of their own " +
					"table's operations (colour = table).",
				func() (*figure, error) { return topPartitionsChart(s, 12) }},
			{"hot-nodes-" + s.ID,
				"Load per " + sv.NodeWord + " with the mean (dashed) and the ±30% band (green); " +
					"red bars break the rule upwards, blue downwards. Labels give the deviation " +
					"from the mean.",
				func() (*figure, error) { return nodeLoadChart(s) }},
			{"hot-sizes-" + s.ID,
				"The largest partitions' projected size at the design's horizon (TTL, bucket end " +
					"or a set period) against the limit line; red bars exceed it.",
				func() (*figure, error) { return sizeChart(s, 12) }},
		} {
			f, err := c.build()
			if err != nil {
				return sv, err
			}
			cv, err := r.draw(c.id, c.caption, f)
			if err != nil {
				return sv, err
			}
			if cv != nil {
				sv.Charts = append(sv.Charts, cv)
			}
		}
	}
	if len(h.Nodes) > 0 {
		t := &table{Head: heads(sv.NodeWord, "dc", "rack", "ops", "reads", "writes", "bytes written", "share", "deviation")}
		if h.Database == "mongodb" {
			t.Head[1].Text, t.Head[2].Text = "", ""
		}
		for _, n := range h.Nodes {
			dev := num(FormatDeviation(n.Deviation))
			if n.Over30 || math.Abs(n.Deviation) > 0.3 {
				dev.Class += " bad"
			}
			t.Rows = append(t.Rows, row{Cells: []cell{{Text: n.Node}, {Text: n.DC}, {Text: n.Rack},
				num(units.Count(float64(n.Ops))), num(units.Count(float64(n.Reads))),
				num(units.Count(float64(n.Writes))), num(units.Bytes(float64(n.Bytes))),
				num(units.Pct(n.Share)), dev}})
		}
		dropEmptyColumns(t)
		t.Caption = "Operations as " + opsWhat(h.Database) + " (client-side placement)."
		sv.Nodes = t
	}
	if s.Server != nil {
		for _, st := range s.Server.Tables {
			if st.Subject == "nodes" {
				sv.ServerNodes = append(sv.ServerNodes, serverTable(st))
			}
		}
	}
	tables := append([]results.TableHotspots(nil), h.Tables...)
	sort.SliceStable(tables, func(i, j int) bool { return tables[i].Ops > tables[j].Ops })
	for _, tb := range tables {
		sv.Tables = append(sv.Tables, hotTable(tb, h.Database))
	}
	return sv, nil
}

func hotTable(tb results.TableHotspots, db string) hotTableView {
	v := hotTableView{Name: tb.Table, Key: tb.Key}
	var parts []string
	if tb.Entity != "" {
		parts = append(parts, "entity "+tb.Entity)
	}
	parts = append(parts, fmt.Sprintf("%s ops (%s reads, %s writes)", units.Count(float64(tb.Ops)), units.Count(float64(tb.Reads)), units.Count(float64(tb.Writes))))
	if tb.Rows > 0 || tb.Bytes > 0 {
		parts = append(parts, fmt.Sprintf("%s rows, %s written", units.Count(float64(tb.Rows)), units.Bytes(float64(tb.Bytes))))
	}
	if tb.Partitions > 0 {
		pw := "partitions"
		if db == "mongodb" {
			pw = "distinct shard-key values"
		}
		s := fmt.Sprintf("%s %s", units.Count(float64(tb.Partitions)), pw)
		if !tb.PartitionsExact {
			s += fmt.Sprintf(" (estimate ±%s)", units.Pct(tb.PartitionsError))
		}
		parts = append(parts, s)
	}
	if p := tb.Hottest(); tb.Partitions > 0 && tb.Partitions < 100 && p != nil {
		parts = append(parts, fmt.Sprintf("the hottest partition takes %s", units.Pct(p.Share)))
	} else if t1 := topShare(&tb, 0.01); !math.IsNaN(t1) {
		parts = append(parts, fmt.Sprintf("top 1%% of partitions take %s, top 10%% take %s", units.Pct(t1), units.Pct(topShare(&tb, 0.1))))
	}
	if rd := tb.SinglePartitionReads + tb.MultiPartitionReads + tb.BroadcastReads; rd > 0 {
		parts = append(parts,
			fmt.Sprintf("reads: %s single-partition, %s multi-partition, %s broadcast",
				units.Pct(float64(tb.SinglePartitionReads)/float64(rd)),
				units.Pct(float64(tb.MultiPartitionReads)/float64(rd)),
				units.Pct(float64(tb.BroadcastReads)/float64(rd))))
	}
	v.Summary = strings.Join(parts, " · ")
	if len(tb.Top) > 0 {
		where := "replicas"
		pos := "token"
		if db == "mongodb" {
			where, pos = "shard", "hashed"
		}
		t := &table{Head: heads("#", "partition key", pos, "range", where, "ops", "share", "reads", "writes", "rows written", "bytes written", "projected size", "± bound")}
		t.Head[0].Class = "num"
		top := tb.Top
		if len(top) > maxTopRows {
			top = top[:maxTopRows]
		}
		for i, p := range top {
			loc := p.Token
			if db == "mongodb" || loc == "" {
				loc = firstNonEmpty(p.Hashed, p.Token)
			}
			owner := strings.Join(p.Replicas, ", ")
			if owner == "" {
				owner = p.Shard
			}
			rng := p.Range
			if p.Chunks > 1 {
				// A shard-key prefix over several chunks: no partition of its own.
				rng = fmt.Sprintf("%d chunks", p.Chunks)
				owner = cmp.Or(owner, "several")
			}
			proj := "—"
			if p.ProjectedBytes > 0 {
				proj = units.Bytes(float64(p.ProjectedBytes))
			}
			bound := "exact"
			if p.ErrorBound > 0 {
				bound = "±" + units.Count(float64(p.ErrorBound))
			}
			t.Rows = append(t.Rows, row{Cells: []cell{num(fmt.Sprint(i + 1)), {Text: p.Key,
				Class: "mono wrap"}, {Text: loc, Class: "mono"}, {Text: rng, Class: "mono"},
				{Text: owner}, num(units.Count(float64(p.Ops))), shareCell(p.Share),
				num(units.Count(float64(p.Reads))), num(units.Count(float64(p.Writes))),
				num(units.Count(float64(p.Rows))), num(units.Bytes(float64(p.Bytes))), num(proj),
				num(bound)}})
		}
		// The first column is a rank, the key is the row's name: swap so the sticky column is
		// the key on a phone.
		for i := range t.Rows {
			c := t.Rows[i].Cells
			c[0], c[1] = c[1], c[0]
		}
		t.Head[0], t.Head[1] = t.Head[1], t.Head[0]
		dropEmptyColumns(t)
		if len(t.Rows) > topRows {
			more := &table{Head: t.Head, Rows: t.Rows[topRows:]}
			t.Rows = t.Rows[:topRows]
			v.TopMore = more
			v.MoreLabel = fmt.Sprintf("%d more of the %d tracked partitions", len(more.Rows), len(tb.Top))
			if len(tb.Top) > maxTopRows {
				v.MoreLabel = fmt.Sprintf("%d more (of %d tracked; the rest are in hotspots.json)", len(more.Rows), len(tb.Top))
			}
		}
		v.Top = t
	}
	if len(tb.Projections) > 0 {
		t := &table{Caption: "Partition size projections.", Head: heads("partition key", "observed", "over", "horizon", "projected size", "projected rows", "limit", "verdict", "note")}
		for _, pr := range tb.Projections {
			verdict := cell{Text: "within", Class: "good"}
			if exceeds(&pr) {
				verdict = cell{Text: "exceeds", Class: "bad"}
			}
			limit := units.Bytes(float64(pr.LimitBytes))
			if pr.LimitRows > 0 {
				limit += " / " + units.Count(float64(pr.LimitRows)) + " rows"
			}
			obs := units.Bytes(float64(pr.ObservedBytes))
			if pr.ObservedRows > 0 {
				obs += " / " + units.Count(float64(pr.ObservedRows)) + " rows"
			}
			t.Rows = append(t.Rows, row{Cells: []cell{{Text: pr.Key, Class: "mono wrap"}, num(obs),
				num(units.Seconds(pr.ObservedS)), {Text: pr.Horizon},
				num(units.Bytes(float64(pr.ProjectedBytes))),
				num(units.Count(float64(pr.ProjectedRows))), num(limit), verdict, {Text: pr.Note,
					Class: "wrap"}}})
		}
		dropEmptyColumns(t)
		v.Projections = t
	}
	return v
}

// dropEmptyColumns removes columns (other than the first) whose cells are all empty.
func dropEmptyColumns(t *table) {
	n := len(t.Head)
	keep := make([]bool, n)
	keep[0] = true
	for _, r := range t.Rows {
		col := 0
		for _, c := range r.Cells {
			if c.Span <= 1 && col < n && c.Text != "" && c.Text != "—" && c.Text != "0" && c.Text != "0 B" {
				keep[col] = true
			}
			col += max(c.Span, 1)
		}
	}
	var head []cell
	for i, h := range t.Head {
		if keep[i] {
			head = append(head, h)
		}
	}
	t.Head = head
	for ri := range t.Rows {
		if t.Rows[ri].Group != "" {
			continue
		}
		var cells []cell
		col := 0
		for _, c := range t.Rows[ri].Cells {
			span := max(c.Span, 1)
			if c.Span > 1 {
				// A cell across columns stays, across those of them kept.
				kept := 0
				for i := col; i < min(col+span, n); i++ {
					if keep[i] {
						kept++
					}
				}
				c.Span = max(kept, 1)
				cells = append(cells, c)
			} else if col < n && keep[col] {
				cells = append(cells, c)
			}
			col += span
		}
		t.Rows[ri].Cells = cells
	}
}

// serverTable turns a server.json table into a page table.
func serverTable(st results.ServerTable) *table {
	t := &table{Caption: st.Title}
	if st.Note != "" {
		t.Caption += " — " + st.Note
	}
	for i, c := range st.Columns {
		h := cell{Text: c}
		if i > 0 && i < len(st.Numeric) && st.Numeric[i] {
			h.Class = "num"
		}
		t.Head = append(t.Head, h)
	}
	for _, r := range st.Rows {
		var cells []cell
		for i, v := range r {
			c := cell{Text: v}
			if i > 0 && i < len(st.Numeric) && st.Numeric[i] {
				c.Class = "num"
			}
			cells = append(cells, c)
		}
		// Pad short rows so the table stays rectangular.
		for len(cells) < len(st.Columns) {
			cells = append(cells, cell{})
		}
		t.Rows = append(t.Rows, row{Cells: cells})
	}
	return t
}
