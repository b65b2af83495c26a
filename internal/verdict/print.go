package verdict

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/shardbench/shardbench/internal/results"
)

// Print writes the verdict for a terminal: the overall ranking with each variant's
// status and reason, the best of each entity, and the claims.
func Print(w io.Writer, v *results.Verdict) {
	if v == nil || len(v.Overall) == 0 {
		return
	}
	fmt.Fprintf(w, "\nVerdict for %s (rules: docs/verdict.md)\n", v.Scenario)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  #\tvariant\tstatus\tcapacity\thottest\timbalance\tsize/limit\tkeys\tcoverage\treason")
	for _, r := range v.Overall {
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Rank, r.Variant, StatusWord(r.Status),
			text(&r, results.CriterionCapacity), text(&r, results.CriterionHotShare), text(&r, results.CriterionImbalance),
			text(&r, results.CriterionSize), text(&r, results.CriterionKeys), text(&r, results.CriterionCoverage), clip(r.Reason, 110))
	}
	tw.Flush()
	if len(v.Entities) > 0 {
		fmt.Fprintln(w, "  best per entity:")
		for _, e := range v.Entities {
			if len(e.Ranks) == 0 {
				fmt.Fprintf(w, "    %-9s no variant serves it\n", e.Entity)
				continue
			}
			best := e.Ranks[0]
			fmt.Fprintf(w, "    %-9s %s (%s): %s\n", e.Entity, best.Variant, StatusWord(best.Status), clip(best.Reason, 100))
		}
	}
	if len(v.Claims) > 0 {
		fmt.Fprintln(w, "  seed claims:")
		for _, c := range v.Claims {
			fmt.Fprintf(w, "    %-9s seed %s: %s — %s\n", strings.ToUpper(c.Status), c.Seed, c.Claim, clip(c.Measured, 120))
		}
	}
	for _, m := range v.Missing {
		fmt.Fprintf(w, "  not measured: %s\n", m)
	}
}

// StatusWord is how a page and a terminal say a status.
func StatusWord(status string) string {
	switch status {
	case results.VerdictPass:
		return "HOLDS"
	case results.VerdictWarn:
		return "CAUTION"
	case results.VerdictFail:
		return "FAILS"
	}
	return "UNKNOWN"
}

func text(r *results.VerdictRank, name string) string {
	if c := r.Criterion(name); c != nil {
		return c.Text
	}
	return "—"
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
