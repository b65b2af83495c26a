package capacity

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shardbench/shardbench/internal/results"
)

// ProbeSpec is one run the search asks for: some variants at one multiple of the
// scenario's load, on the window around the peak, the schedule from its start, or a step.
type ProbeSpec struct {
	Kind     string // results.ProbeWindow, ProbeFull or ProbeStep
	Multiple float64
	Variants []int // indices into Search.Variants
	// Step names the probe's results directory (relative to the capacity directory).
	Step string
}

// weight is what a probe holds in memory, in variants at multiple 1: a variant past its
// capacity holds a backlog that grows with the rate.
func (p ProbeSpec) weight() float64 { return float64(len(p.Variants)) * max(1, p.Multiple) }

// cost is what a probe takes to run, in window probes of one variant at multiple 1.
func (p ProbeSpec) cost(confirm float64) float64 {
	c := float64(len(p.Variants)) * p.Multiple
	if p.Kind == results.ProbeFull {
		c *= max(1, confirm)
	}
	return c
}

// Ran is what a probe left: its results directory and where the peak is on its time line
// (for the served rate at the peak).
type Ran struct {
	Dir              string
	PeakFrom, PeakTo time.Duration
}

// Runner runs one probe. Its error ends the search (what was found so far is kept).
type Runner func(ctx context.Context, p ProbeSpec) (Ran, error)

// JudgeFunc evaluates a probe's results: a verdict per variant name.
type JudgeFunc func(r Ran) (map[string]Verdict, error)

// Search finds, for each variant, the largest multiple of the scenario's load at which
// its SLO holds.
//
// Each variant brackets from Start, multiplying by Growth while the SLO holds (dividing
// while it fails), within [Min, Max]; then bisects (geometric midpoint) until the
// smallest failing multiple is at most (1 + Precision) times the largest passing one.
// Variants due at the same multiple run in one probe, so a sweep's variants share runs
// while they agree, and a variant leaves the probes as soon as it is bracketed.
//
// With Window (the simulator), probes run the window around the peak; a variant's answer
// is then confirmed on the schedule from its start (ProbeFull: the runner runs it to the
// window's end and measures only the operations intended in the window, so the hours
// before the peak do not dilute it, while their history — backlogs, grown partitions —
// leads into it): its multiple must pass and the next step up fail. When the schedule
// from its start disagrees the search goes on there, from the window's answer, with
// steps of ConfirmGrowth, until it brackets the answer.
//
// With OnePerProbe (real databases), each probe holds one variant and the variants are
// searched one after another, each stepping up from Start until its first breach and then
// bisecting with further steps.
type Search struct {
	Variants  []string
	PeakRate  float64 // offered peak rate at multiple 1, for the curve
	Start     float64
	Growth    float64
	Precision float64
	Min, Max  float64
	Window    bool
	// Whole (without Window): every probe runs the whole schedule (a schedule whose peak
	// window is all of it).
	Whole       bool
	OnePerProbe bool
	// ConfirmGrowth is the first step of a search from the schedule's start after the
	// window's answer did not hold there (default 1 + Precision): most such disagreements
	// are the two runs' sampling at the edge, one step away. Each further step in the same
	// direction squares it (1.05, 1.1025, 1.2155, ...), so a large disagreement is
	// bracketed in a few probes all the same.
	ConfirmGrowth float64
	// Concurrency is how many probes run at once (default 1), VariantBudget how many
	// variants they may hold together, each counted as its multiple (at least 1), and how
	// many one probe may hold (0: no bound): a simulated variant holds its cluster and
	// hot-partition state while it runs, and past its capacity a backlog of operations
	// that grows with the rate.
	Concurrency   int
	VariantBudget float64
	// ConfirmCost is how much longer a confirming probe runs than a window probe (the
	// schedule up to the window's end over the window; default 1): a round starts its
	// costliest probes first, so that its last probes to finish are short ones and no core
	// waits idle at its end.
	ConfirmCost float64
	// Deadline, when set, is when no further probe starts; variants not yet bracketed to
	// the precision are reported incomplete with what is known.
	Deadline time.Time
	Run      Runner
	Judge    JudgeFunc
	// Progress, when set, is called after every probe with the probe and the answers so far.
	Progress func(results.CapacityProbe, []Answer)

	now    func() time.Time
	probes []results.CapacityProbe
	seq    int
}

// Answer is one variant's result.
type Answer struct {
	Variant  string
	Outcome  string
	Sustains float64 // largest passing multiple (0: none)
	Breaks   float64 // smallest failing multiple (0: none)
	// Pass and Fail are the probes at Sustains and Breaks, with their verdicts.
	Pass, Fail   *Probed
	Confirmed    bool
	Confirmation string
	Curve        []results.CapacityPoint
}

// Probed is one variant's verdict at one probe.
type Probed struct {
	Kind     string
	Multiple float64
	Step     string
	Ran      Ran
	Verdict  Verdict
}

// track is the search's state for one variant.
type track struct {
	Answer
	idx    int
	mode   string  // the probe kind being searched with
	lo, hi float64 // in this mode: largest pass, smallest fail (0: none yet)
	lop    *Probed
	hip    *Probed
	next   float64
	hint   float64 // full-schedule confirmation: the window's failing multiple, tried next
	gallop float64 // full-schedule confirmation: the step of the next probe outside the bracket
	done   bool
	// window's answer, kept to say how the schedule from its start confirmed it
	wOutcome string
	wLo, wHi float64
	// Steps (real databases): the failing probes, so that when the bracket's failing end
	// is overturned the next one up takes its place; the failure being run again (nil
	// when none is); and the failures that did not repeat.
	fails      []*Probed
	repeating  *Probed
	overturned []string
}

func (s *Search) defaults() error {
	if s.Start <= 0 || s.Growth <= 1 || s.Precision <= 0 || s.Min <= 0 || s.Max < s.Min || s.Start < s.Min || s.Start > s.Max {
		return fmt.Errorf("capacity search: need 0 < min ≤ start ≤ max, growth > 1 and precision > 0 (min %g, start %g, max %g, growth %g, precision %g)",
			s.Min, s.Start, s.Max, s.Growth, s.Precision)
	}
	if s.ConfirmGrowth <= 1 {
		s.ConfirmGrowth = 1 + s.Precision
	}
	if s.Concurrency < 1 {
		s.Concurrency = 1
	}
	if s.now == nil {
		s.now = time.Now
	}
	return nil
}

// Do runs the search. It returns every variant's answer (incomplete ones included when it
// stops early), the probes it ran, and the error that stopped it, if one did.
func (s *Search) Do(ctx context.Context) ([]Answer, []results.CapacityProbe, error) {
	if err := s.defaults(); err != nil {
		return nil, nil, err
	}
	mode := results.ProbeStep
	switch {
	case s.Window:
		mode = results.ProbeWindow
	case s.Whole:
		mode = results.ProbeFull
	}
	tracks := make([]*track, len(s.Variants))
	for i, v := range s.Variants {
		tracks[i] = &track{Answer: Answer{Variant: v}, idx: i, mode: mode, next: s.Start}
	}
	var err error
	if s.OnePerProbe {
		for _, t := range tracks {
			if err = s.loop(ctx, []*track{t}, tracks); err != nil {
				break
			}
		}
	} else {
		err = s.loop(ctx, tracks, tracks)
	}
	out := make([]Answer, len(tracks))
	for i, t := range tracks {
		if !t.done {
			t.finishIncomplete()
		}
		out[i] = t.Answer
	}
	return out, s.probes, err
}

// loop probes the tracks until each is done.
func (s *Search) loop(ctx context.Context, active, all []*track) error {
	for {
		groups := s.groups(active)
		if len(groups) == 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !s.Deadline.IsZero() && !s.now().Before(s.Deadline) {
			return nil // the rest are reported incomplete
		}
		n := len(s.probes)
		err := s.round(ctx, groups)
		if s.Progress != nil {
			ans := make([]Answer, len(all))
			for i, t := range all {
				ans[i] = t.Answer
			}
			for _, p := range s.probes[n:] {
				s.Progress(p, ans)
			}
		}
		if err != nil {
			return err
		}
	}
}

type group struct {
	spec   ProbeSpec
	tracks []*track
}

// groups puts the tracks due at the same kind and multiple into one probe each, in a
// fixed order (cost, kind, multiple): the search is the same every time. With a
// VariantBudget, a probe at multiple m holds at most budget/m variants (at least one): a
// simulated variant past its capacity holds its growing backlog of operations in memory,
// in proportion to the rate.
func (s *Search) groups(active []*track) []*group {
	byKey := map[string]*group{}
	var out []*group
	for _, t := range active {
		if t.done {
			continue
		}
		key := t.mode + "@" + strconv.FormatFloat(t.next, 'g', -1, 64)
		g := byKey[key]
		if g == nil || s.OnePerProbe || (s.VariantBudget > 0 && float64(len(g.tracks)+1)*max(1, t.next) > s.VariantBudget) {
			g = &group{spec: ProbeSpec{Kind: t.mode, Multiple: t.next}}
			byKey[key] = g
			out = append(out, g)
		}
		g.spec.Variants = append(g.spec.Variants, t.idx)
		g.tracks = append(g.tracks, t)
	}
	// Costliest first (longest processing time first): the round ends with its short
	// probes, not with one long probe on one core while the other idles.
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].spec, out[j].spec
		if ca, cb := a.cost(s.ConfirmCost), b.cost(s.ConfirmCost); ca != cb {
			return ca > cb
		}
		if a.Kind != b.Kind {
			return a.Kind > b.Kind // window before full
		}
		return a.Multiple < b.Multiple
	})
	return out
}

// round runs the groups' probes (Concurrency at a time) and moves each track on.
func (s *Search) round(ctx context.Context, groups []*group) error {
	type done struct {
		ran  Ran
		vd   map[string]Verdict
		wall time.Duration
		err  error
	}
	res := make([]done, len(groups))
	for _, g := range groups {
		s.seq++
		g.spec.Step = fmt.Sprintf("%02d-%s-x%s", s.seq, g.spec.Kind, MultipleText(g.spec.Multiple))
	}
	// Probes start in order while fewer than Concurrency run and their variants stay
	// within VariantBudget (a probe larger than the budget runs alone).
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	running, weight := 0, 0.0
	var wg sync.WaitGroup
	for i, g := range groups {
		w := g.spec.weight()
		mu.Lock()
		for running > 0 && (running >= s.Concurrency || (s.VariantBudget > 0 && weight+w > s.VariantBudget)) {
			cond.Wait()
		}
		running, weight = running+1, weight+w
		mu.Unlock()
		wg.Add(1)
		go func(i int, g *group) {
			defer wg.Done()
			defer func() {
				mu.Lock()
				running, weight = running-1, weight-w
				cond.Broadcast()
				mu.Unlock()
			}()
			start := s.now()
			r := &res[i]
			r.ran, r.err = s.Run(ctx, g.spec)
			if r.err == nil {
				r.vd, r.err = s.Judge(r.ran)
			}
			r.wall = s.now().Sub(start)
		}(i, g)
	}
	wg.Wait()
	var firstErr error
	for i, g := range groups {
		r := res[i]
		pr := results.CapacityProbe{Step: g.spec.Step, Kind: g.spec.Kind, Multiple: g.spec.Multiple, WallS: r.wall.Seconds()}
		for _, t := range g.tracks {
			pr.Variants = append(pr.Variants, t.Variant)
		}
		if r.err != nil {
			pr.Error = r.err.Error()
			s.probes = append(s.probes, pr)
			if firstErr == nil {
				firstErr = fmt.Errorf("probe %s: %w", g.spec.Step, r.err)
			}
			continue
		}
		for _, t := range g.tracks {
			vd, ok := r.vd[t.Variant]
			if !ok {
				firstErr = fmt.Errorf("probe %s: no results for variant %s", g.spec.Step, t.Variant)
				continue
			}
			if !vd.Pass {
				pr.Failed = append(pr.Failed, t.Variant)
			}
			p := &Probed{Kind: g.spec.Kind, Multiple: g.spec.Multiple, Step: g.spec.Step, Ran: r.ran, Verdict: vd}
			t.Curve = append(t.Curve, results.CapacityPoint{Multiple: p.Multiple, OfferedRate: p.Multiple * s.PeakRate, Kind: p.Kind,
				Pass: vd.Pass, P99Ms: vd.WorstP99Ms, Op: vd.WorstOp, Step: p.Step, Workloads: vd.Workloads})
			t.update(p, s)
		}
		s.probes = append(s.probes, pr)
	}
	return firstErr
}

// update folds one verdict into the track and plans its next probe.
func (t *track) update(p *Probed, s *Search) {
	m := p.Multiple
	switch {
	case t.repeating != nil && m == t.hi:
		first := t.repeating
		t.repeating = nil
		if !p.Verdict.Pass {
			t.hip = p // the later failure: its results are what breaks first
			t.finishMode(results.CapacityFound, s)
			t.Confirmation = fmt.Sprintf("×%s failed in %s and again in %s", MultipleText(m), first.Step, p.Step) + t.overturnedText()
			return
		}
		t.overturned = append(t.overturned, fmt.Sprintf("×%s failed in %s and held in %s", MultipleText(m), first.Step, p.Step))
		for i := range t.Curve {
			if t.Curve[i].Step == first.Step {
				t.Curve[i].SetAside = true
			}
		}
		t.lo, t.lop, t.hi, t.hip = m, p, 0, nil
		for _, f := range t.fails {
			if f.Multiple > t.lo && (t.hi == 0 || f.Multiple < t.hi) {
				t.hi, t.hip = f.Multiple, f
			}
		}
	case p.Verdict.Pass:
		if m > t.lo {
			t.lo, t.lop = m, p
		}
	default:
		t.fails = append(t.fails, p)
		if t.hi == 0 || m < t.hi {
			t.hi, t.hip = m, p
		}
	}
	t.plan(s)
}

// overturnedText names the failures that did not repeat, for the confirmation.
func (t *track) overturnedText() string {
	if len(t.overturned) == 0 {
		return ""
	}
	return "; set aside because they did not repeat: " + strings.Join(t.overturned, ", ")
}

func (t *track) plan(s *Search) {
	switch {
	case t.hi == 0: // nothing failed yet
		if t.lo >= s.Max {
			t.finishMode(results.CapacityAboveRange, s)
			return
		}
		if t.hint > t.lo {
			t.next, t.hint = t.hint, 0
			return
		}
		t.next = min(roundMultiple(t.lo*t.step(s)), s.Max)
	case t.lo == 0: // nothing passed yet
		if t.hi <= s.Min {
			t.finishMode(results.CapacityBelowRange, s)
			return
		}
		t.next = max(roundMultiple(t.hi/t.step(s)), s.Min)
	case t.hi <= t.lo*(1+s.Precision)*(1+1e-9):
		if t.mode == results.ProbeStep {
			// On a real database one failing step is not yet the answer: a cluster just
			// started or loaded, a GC pause or a neighbour's burst fails a step below the
			// capacity. The failing end runs once more; it must fail again.
			t.repeating, t.next = t.hip, t.hi
			return
		}
		t.finishMode(results.CapacityFound, s)
	default:
		mid := math.Sqrt(t.lo * t.hi)
		if r := roundMultiple(mid); r > t.lo && r < t.hi {
			mid = r
		}
		t.next = mid
	}
}

// step is the factor of the next probe outside the bracket: Growth, or on the schedule
// from its start ConfirmGrowth, squared at every further step.
func (t *track) step(s *Search) float64 {
	if t.mode != results.ProbeFull || t.wOutcome == "" {
		return s.Growth // bracketing, not confirming a window's answer
	}
	if t.gallop == 0 {
		t.gallop = s.ConfirmGrowth
	} else {
		t.gallop *= t.gallop
	}
	return t.gallop
}

// finishMode ends the search in the current mode: a window's answer goes on to be
// confirmed on the schedule from its start; otherwise the variant is done.
func (t *track) finishMode(outcome string, s *Search) {
	if t.mode == results.ProbeWindow {
		t.wOutcome, t.wLo, t.wHi = outcome, t.lo, t.hi
		t.mode, t.lo, t.hi, t.lop, t.hip = results.ProbeFull, 0, 0, nil, nil
		switch outcome {
		case results.CapacityFound:
			t.next, t.hint = t.wLo, t.wHi
		case results.CapacityAboveRange:
			t.next = s.Max
		default:
			t.next = s.Min
		}
		return
	}
	t.done = true
	t.Outcome = outcome
	t.Sustains, t.Breaks, t.Pass, t.Fail = t.lo, t.hi, t.lop, t.hip
	t.Confirmed = true
	switch {
	case t.mode == results.ProbeStep:
		t.Confirmation = "measured steps" + t.overturnedText()
	case t.wOutcome == "":
		t.Confirmation = "the whole schedule, probed throughout"
	case t.wOutcome == outcome && t.wLo == t.lo && t.wHi == t.hi:
		t.Confirmation = "the schedule from its start, judged over the peak window, gives the window's answer"
	default:
		t.Confirmation = fmt.Sprintf("the window's answer (%s) did not hold on the schedule from its start judged over the peak window, which was searched on: %s", rangeText(t.wOutcome, t.wLo, t.wHi), rangeText(outcome, t.lo, t.hi))
	}
}

// finishIncomplete ends a track the search stopped before it was bracketed.
func (t *track) finishIncomplete() {
	t.done = true
	t.Outcome = results.CapacityIncomplete
	t.Sustains, t.Breaks, t.Pass, t.Fail = t.lo, t.hi, t.lop, t.hip
	if t.mode == results.ProbeFull && t.lo == 0 && t.hi == 0 {
		// Only the window bracketed it: report that, unconfirmed.
		t.Outcome = results.CapacityUnconfirmed
		t.Confirmation = "the window gave " + rangeText(t.wOutcome, t.wLo, t.wHi) + "; the schedule from its start was not run"
	}
	if t.repeating != nil {
		t.Outcome = results.CapacityUnconfirmed
		t.Confirmation = fmt.Sprintf("×%s failed in %s and was not run again", MultipleText(t.hi), t.repeating.Step) + t.overturnedText()
	}
}

// rangeText says what a bracket is, e.g. "×2.40 holds, ×2.52 fails".
func rangeText(outcome string, lo, hi float64) string {
	switch outcome {
	case results.CapacityAboveRange:
		return "holds at ×" + MultipleText(lo) + ", the largest multiple tried"
	case results.CapacityBelowRange:
		return "fails at ×" + MultipleText(hi) + ", the smallest multiple tried"
	}
	return "×" + MultipleText(lo) + " holds, ×" + MultipleText(hi) + " fails"
}

// MultipleText prints a multiple with up to 4 significant digits.
func MultipleText(m float64) string {
	return strconv.FormatFloat(roundMultiple(m), 'g', 4, 64)
}
