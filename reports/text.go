package reports

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/units"
)

// WriteText prints the end-of-run summary for a terminal: per variant the operations it
// serves (coverage), the achieved and target rate, response-time percentiles and errors
// of the served operations; then, when the hot-partition analysis is there, each
// variant's hottest partition with its share and its most loaded node or shard against
// the mean. hot may be nil.
func WriteText(w io.Writer, sum *results.Summary, hot *results.Hotspots) error {
	if sum == nil {
		return nil
	}
	anyLat := false
	for _, v := range sum.Variants {
		anyLat = anyLat || v.Totals.Response.Count > 0 || v.Totals.Completed > 0
	}
	if anyLat || hot == nil {
		// Numbers right-aligned; names padded to one width so they read left-aligned.
		names := make([]string, len(sum.Variants))
		width := len("variant")
		for i, v := range sum.Variants {
			names[i] = v.Name
			if v.Interrupted {
				names[i] += " (partial)"
			}
			width = max(width, len([]rune(names[i])))
		}
		pad := func(s string) string { return s + strings.Repeat(" ", width-len([]rune(s))) }
		if t := measuredText(sum); t != "" {
			fmt.Fprintf(w, "figures %s (--measure-from/--measure-to); the time series keep every operation\n", t)
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, pad("variant")+"\tserves\tachieved/s\ttarget/s\tp50\tp99\tp99.9\tmax\terrors\tlate\tdropped\t")
		for i, v := range sum.Variants {
			t := v.Totals
			name := pad(names[i])
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", name, CoverageShort(v.Coverage),
				units.Count(t.AchievedRate), units.Count(t.TargetRate),
				textMs(t.Response.P50, t.Response.Count), textMs(t.Response.P99, t.Response.Count), textMs(t.Response.P999, t.Response.Count), textMs(t.Response.Max, t.Response.Count),
				textErrors(t), units.Count(float64(t.Late)), units.Count(float64(t.Dropped)))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		partial := false
		for _, v := range sum.Variants {
			if !v.Coverage.Full() {
				partial = true
				fmt.Fprintf(w, "%s %s; not served: %s\n", v.Name, CoverageText(v.Coverage), strings.Join(v.Coverage.UnservedOps, ", "))
			}
		}
		if partial {
			fmt.Fprintln(w, "rates, latencies and errors are of the operations a variant serves; those it does not serve were never sent")
		}
	}
	if hot != nil && len(hot.Variants) > 0 {
		fmt.Fprintln(w, "hot spots:")
		for i := range hot.Variants {
			hv := &hot.Variants[i]
			fmt.Fprintf(w, "  %s: %s\n", hv.Variant, hotLine(hv))
		}
	}
	for _, v := range sum.Variants {
		for _, cls := range sortedKeys(v.ErrorExamples) {
			if msgs := v.ErrorExamples[cls]; len(msgs) > 0 {
				fmt.Fprintf(w, "%s: %s errors (%s), e.g. %s\n", v.Name, cls, units.Count(float64(v.Totals.Errors[cls])), Truncate(msgs[0], 200))
			}
		}
	}
	return nil
}

func textMs(ms float64, count int64) string {
	if count == 0 {
		return "-"
	}
	return units.Ms(ms)
}

// textErrors counts the failed operations, with their share of the completed ones.
func textErrors(t results.OpStats) string {
	var n int64
	for _, k := range t.Errors {
		n += k
	}
	if n == 0 {
		return "0"
	}
	return fmt.Sprintf("%s (%s)", units.Count(float64(n)), units.Pct(float64(n)/float64(max(t.Completed, 1))))
}

// CoverageText says how much of the offered traffic a variant serves: "serves 17 of 25
// operations, 62.3% of the offered traffic".
func CoverageText(c results.Coverage) string {
	if c.Ops == 0 {
		return "was offered no operation"
	}
	return fmt.Sprintf("serves %d of %d operations, %s of the offered traffic", c.ServedOps, c.Ops, units.Pct(c.ServedShare))
}

// CoverageShort is CoverageText for a table cell: "17/25 · 62.3%", or "all 25".
func CoverageShort(c results.Coverage) string {
	switch {
	case c.Ops == 0:
		return "-"
	case c.Full():
		return fmt.Sprintf("all %d", c.Ops)
	}
	return fmt.Sprintf("%d/%d · %s", c.ServedOps, c.Ops, units.Pct(c.ServedShare))
}

// hotLine is one variant's hot-partition verdict in words.
func hotLine(hv *results.HotspotsVariant) string {
	var parts []string
	if p, t := hottest(hv); p != nil {
		parts = append(parts, fmt.Sprintf("hottest partition %s %s takes %s of its table (%s ops)", shortTable(t.Table), Truncate(p.Key, 60), units.Pct(p.Share), units.Count(float64(p.Ops))))
	} else {
		parts = append(parts, "no partition data")
	}
	if n := busiestNode(hv); n != nil {
		word := "node"
		if hv.Database == "mongodb" {
			word = "shard"
		}
		mm := maxOverMean(hv)
		if n.Database == "mongodb" {
			word = "shard"
		}
		s := fmt.Sprintf("busiest %s %s at %s the mean", word, n.Node, FormatRatio(mm))
		if !math.IsNaN(mm) {
			s += fmt.Sprintf(" (%s)", FormatDeviation(mm-1))
		}
		if b := hv.Balance; b.Measure != "" && b.Measure != results.MeasureOps {
			s += " by " + b.Measure
			if b.DC != "" {
				s += " in " + b.DC
			}
			s += fmt.Sprintf(" (%s of them)", units.Pct(b.BusiestShare))
		}
		if over := overList(hv); len(over) > 0 {
			s += fmt.Sprintf("; %d %s(s) break the 30%% rule", len(over), word)
		} else {
			s += "; all within 30%"
		}
		parts = append(parts, s)
	}
	if big, over := largestProjection(hv); big != nil && over > 0 {
		parts = append(parts, fmt.Sprintf("%d partition(s) projected over the size limit (largest %s)", over, units.Bytes(float64(big.ProjectedBytes))))
	}
	return strings.Join(parts, "; ")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
