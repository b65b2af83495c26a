package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/shardbench/shardbench/internal/engine"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/units"
	"github.com/shardbench/shardbench/internal/verdict"
	"github.com/shardbench/shardbench/reports"
)

// progress prints the running figures: one redrawn line on a terminal, a plain line every
// tenth of the run (at least every 10 s) otherwise, nothing when quiet. It is called
// concurrently by simulated variants running in parallel.
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	raw      io.Writer // for the line's own "return, erase line" sequence
	tty      bool
	quiet    bool
	lastDraw time.Time
	nextLine map[string]time.Duration
	drawn    bool
}

func newProgress(io *IO, quiet bool) *progress {
	return &progress{w: io.ErrOut, raw: io.rawErr(), tty: io.ErrTTY, quiet: quiet, nextLine: map[string]time.Duration{}}
}

func (p *progress) update(u engine.Progress) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	line := formatProgress(u)
	if p.tty {
		// Simulations close intervals far faster than a terminal can show them.
		if time.Since(p.lastDraw) < 100*time.Millisecond && u.Elapsed < u.Total {
			return
		}
		p.lastDraw = time.Now()
		fmt.Fprint(p.raw, "\r\x1b[K")
		fmt.Fprint(p.w, line)
		p.drawn = true
		return
	}
	step := max(10*time.Second, u.Total/10)
	if u.Elapsed < p.nextLine[u.Variant] {
		return
	}
	p.nextLine[u.Variant] = (u.Elapsed/step + 1) * step
	fmt.Fprintln(p.w, line)
}

func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.drawn {
		fmt.Fprint(p.raw, "\r\x1b[K")
	}
}

func formatProgress(u engine.Progress) string {
	var b strings.Builder
	if u.Variants > 1 {
		fmt.Fprintf(&b, "[%s %d/%d] ", u.Variant, u.VariantIndex+1, u.Variants)
	}
	clock := "wall"
	if u.Virtual {
		clock = "sim"
	}
	fmt.Fprintf(&b, "%s/%s %s %-10s target %s/s achieved %s/s p99 %s errors %s/s late %d dropped %d",
		mmss(u.Elapsed), mmss(u.Total), clock, u.Phase, units.Count(u.TargetRate), units.Count(u.AchievedRate),
		fmtDur(u.P99), units.Count(u.ErrorsPerSec), u.Late, u.Dropped)
	if !u.Virtual {
		fmt.Fprintf(&b, " in-flight %d", u.InFlight)
	}
	return b.String()
}

func mmss(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	return fmt.Sprintf("%02d:%02d", s/60, s%60)
}

func fmtDur(d time.Duration) string { return units.Ms(float64(d) / 1e6) }

// printRunSummary prints the end-of-run summary: per variant the achieved and target
// rate, p50/p99/p99.9/max, errors, late and dropped operations; then, when the results
// directory has the hot-partition analysis, each variant's hottest partition with its
// share and its most loaded node or shard against the mean (reports.WriteText).
func printRunSummary(w io.Writer, s *results.Summary, dir string) {
	hot, err := results.ReadHotspots(dir)
	if err != nil {
		fmt.Fprintf(w, "(hot-partition figures unreadable: %v)\n", err)
		hot = nil
	}
	reports.WriteText(w, s, hot)
}

// writeVerdict judges a run's results directory, writes verdict.json into it and, unless
// quiet, prints the ranking. A verdict that cannot be built is reported, never fatal: the
// results are intact.
func writeVerdict(io *IO, dir string, quiet bool) {
	v, err := verdict.FromDirs(dir, "", "")
	if err == nil {
		err = results.At(dir).WriteVerdict(v)
	}
	if err != nil {
		fmt.Fprintf(io.ErrOut, "shardbench: no verdict: %v (the results are intact)\n", err)
		return
	}
	if !quiet {
		verdict.Print(io.Out, v)
	}
}
