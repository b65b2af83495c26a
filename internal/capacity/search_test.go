package capacity

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/results"
)

// fakeCluster answers probes from known thresholds: a variant passes at a multiple below
// its threshold for that kind of probe (window, full or step).
type fakeCluster struct {
	names     []string
	threshold map[string]map[string]float64 // kind → variant → first failing multiple
	mu        sync.Mutex
	ran       []ProbeSpec
}

func (f *fakeCluster) run(_ context.Context, p ProbeSpec) (Ran, error) {
	f.mu.Lock()
	f.ran = append(f.ran, p)
	f.mu.Unlock()
	return Ran{Dir: p.Step + "|" + p.Kind + "|" + fmt.Sprint(p.Multiple) + "|" + joinIdx(f.names, p.Variants)}, nil
}

func joinIdx(names []string, idx []int) string {
	var s []string
	for _, i := range idx {
		s = append(s, names[i])
	}
	return strings.Join(s, ",")
}

func (f *fakeCluster) judge(r Ran) (map[string]Verdict, error) {
	parts := strings.Split(r.Dir, "|")
	var m float64
	fmt.Sscan(parts[2], &m)
	out := map[string]Verdict{}
	for _, v := range strings.Split(parts[3], ",") {
		th := f.threshold[parts[1]][v]
		out[v] = Verdict{Pass: m < th, WorstP99Ms: 10 * m / th, WorstOp: "op"}
	}
	return out, nil
}

func newFake(names []string, window, full map[string]float64) *fakeCluster {
	return &fakeCluster{names: names, threshold: map[string]map[string]float64{
		results.ProbeWindow: window, results.ProbeFull: full, results.ProbeStep: full}}
}

func (f *fakeCluster) search(window bool) *Search {
	return &Search{Variants: f.names, PeakRate: 1000, Start: 1, Growth: 2, Precision: 0.05, Min: 1.0 / 64, Max: 64,
		Window: window, Run: f.run, Judge: f.judge, Concurrency: 2}
}

func checkBracket(t *testing.T, a Answer, threshold, precision float64) {
	t.Helper()
	if a.Outcome != results.CapacityFound || !(a.Sustains < threshold && threshold <= a.Breaks) || a.Breaks > a.Sustains*(1+precision)*(1+1e-9) {
		t.Errorf("%s: %s sustains %g breaks %g; the threshold is %g, precision %g", a.Variant, a.Outcome, a.Sustains, a.Breaks, threshold, precision)
	}
	if a.Pass == nil || a.Fail == nil || a.Pass.Multiple != a.Sustains || a.Fail.Multiple != a.Breaks || !a.Pass.Verdict.Pass || a.Fail.Verdict.Pass {
		t.Errorf("%s: evidence probes %+v / %+v", a.Variant, a.Pass, a.Fail)
	}
}

// Each variant is bracketed to the precision around its threshold, confirmed on the whole
// schedule; variants due at the same multiple share a probe, and a bracketed variant leaves
// the probes.
func TestSearchBracketsEachVariant(t *testing.T) {
	names := []string{"a", "b", "c", "d"}
	th := map[string]float64{"a": 3.3, "b": 0.37, "c": 3.1, "d": 17}
	f := newFake(names, th, th)
	ans, probes, err := f.search(true).Do(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range ans {
		checkBracket(t, a, th[a.Variant], 0.05)
		if !a.Confirmed || a.Confirmation != "the schedule from its start, judged over the peak window, gives the window's answer" {
			t.Errorf("%s: confirmation %q", a.Variant, a.Confirmation)
		}
		if last := a.Curve[len(a.Curve)-1]; last.Kind != results.ProbeFull || last.OfferedRate != 1000*last.Multiple {
			t.Errorf("%s: the last point of the curve is %+v, want the confirming full-schedule probe", a.Variant, last)
		}
	}
	// The first probe holds every variant; a and c share their bracket [2, 4] and the
	// probes that bisect it until they part.
	if got := f.ran[0]; got.Multiple != 1 || len(got.Variants) != 4 || got.Kind != results.ProbeWindow {
		t.Errorf("first probe %+v", got)
	}
	shared := 0
	for _, p := range f.ran {
		if joinIdx(names, p.Variants) == "a,c" {
			shared++
		}
		if p.Kind == results.ProbeFull && len(p.Variants) > 0 && p.Multiple > 4 && strings.Contains(joinIdx(names, p.Variants), "b") {
			t.Errorf("b (bracketed below 0.5) probed at %g", p.Multiple)
		}
	}
	if shared < 3 {
		t.Errorf("a and c shared %d probes, want the bracket and its first bisections", shared)
	}
	if len(probes) != len(f.ran) {
		t.Errorf("%d probes recorded for %d run", len(probes), len(f.ran))
	}
	for i, p := range probes {
		if !strings.HasPrefix(p.Step, fmt.Sprintf("%02d-%s-x", i+1, p.Kind)) {
			t.Errorf("probe %d named %s", i, p.Step)
		}
	}
}

// The same thresholds give the same probes and answers every time, whatever order the
// concurrent probes finish in.
func TestSearchIsDeterministic(t *testing.T) {
	names := []string{"a", "b", "c", "d", "e"}
	w := map[string]float64{"a": 3.3, "b": 0.37, "c": 3.1, "d": 17, "e": 5.5}
	full := map[string]float64{"a": 3.6, "b": 0.37, "c": 2.8, "d": 17, "e": 5.5}
	var first []Answer
	var firstRan []ProbeSpec
	for i := 0; i < 3; i++ {
		f := newFake(names, w, full)
		ans, _, err := f.search(true).Do(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first, firstRan = ans, f.ran
			continue
		}
		if !reflect.DeepEqual(ans, first) {
			t.Fatalf("run %d answered differently", i)
		}
		// Concurrent probes of a round may start in any order; the probes are the same.
		if a, b := specs(f.ran), specs(firstRan); !reflect.DeepEqual(a, b) {
			t.Fatalf("run %d ran %v, the first %v", i, a, b)
		}
	}
}

func specs(ps []ProbeSpec) []string {
	var out []string
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%s %s %g %v", p.Step, p.Kind, p.Multiple, p.Variants))
	}
	sort.Strings(out)
	return out
}

// When the schedule from its start disagrees with the window, the search goes on there
// until it brackets the answer.
func TestSearchConfirmsOnTheWholeSchedule(t *testing.T) {
	names := []string{"optimistic", "pessimistic"}
	w := map[string]float64{"optimistic": 5, "pessimistic": 2}
	full := map[string]float64{"optimistic": 3.7, "pessimistic": 2.9}
	f := newFake(names, w, full)
	ans, _, err := f.search(true).Do(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range ans {
		checkBracket(t, a, full[a.Variant], 0.05)
		if a.Pass.Kind != results.ProbeFull || a.Fail.Kind != results.ProbeFull {
			t.Errorf("%s: answer from %s/%s probes, want the whole schedule's", a.Variant, a.Pass.Kind, a.Fail.Kind)
		}
		if !strings.Contains(a.Confirmation, "did not hold on the schedule from its start") {
			t.Errorf("%s: confirmation %q", a.Variant, a.Confirmation)
		}
	}
}

func TestSearchRangeLimits(t *testing.T) {
	names := []string{"tiny", "huge"}
	th := map[string]float64{"tiny": 0.001, "huge": 1000}
	f := newFake(names, th, th)
	ans, _, err := f.search(true).Do(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if a := ans[0]; a.Outcome != results.CapacityBelowRange || a.Sustains != 0 || a.Breaks != 1.0/64 || a.Fail.Kind != results.ProbeFull {
		t.Errorf("tiny: %+v", a)
	}
	if a := ans[1]; a.Outcome != results.CapacityAboveRange || a.Sustains != 64 || a.Breaks != 0 || a.Pass.Kind != results.ProbeFull {
		t.Errorf("huge: %+v", a)
	}
}

// On a real database each variant is stepped on its own, one after another, upward from
// the start until the first breach, then bisected.
func TestSearchStepsOneVariantAtATime(t *testing.T) {
	names := []string{"x", "y"}
	th := map[string]float64{"x": 0.7, "y": 0.3}
	f := newFake(names, nil, th)
	s := f.search(false)
	s.OnePerProbe, s.Start, s.Growth, s.Precision = true, 0.1, 1.5, 0.1
	ans, _, err := s.Do(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range ans {
		checkBracket(t, a, th[a.Variant], 0.1)
		// The failing end is run once more and fails again: two probes at Breaks.
		var at []string
		for _, c := range a.Curve {
			if c.Multiple == a.Breaks {
				at = append(at, c.Step)
			}
		}
		if want := fmt.Sprintf("×%s failed in %s and again in %s", MultipleText(a.Breaks), at[0], at[len(at)-1]); len(at) != 2 || a.Confirmation != want || a.Fail.Step != at[1] {
			t.Errorf("%s: %q, probes at ×%g %v, evidence %s", a.Variant, a.Confirmation, a.Breaks, at, a.Fail.Step)
		}
	}
	seenY := false
	var up []float64
	for _, p := range f.ran {
		if len(p.Variants) != 1 || p.Kind != results.ProbeStep {
			t.Fatalf("probe %+v", p)
		}
		if names[p.Variants[0]] == "y" {
			seenY = true
		} else if seenY {
			t.Fatalf("x probed after y started")
		} else if len(up) == 0 || p.Multiple > up[len(up)-1] {
			up = append(up, p.Multiple)
		}
	}
	// x steps 0.1, 0.15, 0.225, 0.3375, 0.5063, 0.7594 (first breach), then bisects.
	if want := []float64{0.1, 0.15, 0.225, 0.3375, 0.5062}; len(up) < 6 || !reflect.DeepEqual(up[:5], want) && !reflect.DeepEqual(up[:5], []float64{0.1, 0.15, 0.225, 0.3375, 0.5063}) {
		t.Errorf("x stepped %v", up)
	}
}

// On a real database a failure that does not repeat is set aside: the first step on a
// cluster just started and loaded fails far below its capacity (the project's test cluster
// failed ×0.5 of 1,000 ops/s cold and held ×4 warm), and the search must not stop there.
func TestSearchStepsSetAsideAFailureThatDoesNotRepeat(t *testing.T) {
	names := []string{"x"}
	f := newFake(names, nil, map[string]float64{"x": 4.5})
	s := f.search(false)
	s.OnePerProbe, s.Start, s.Growth, s.Precision = true, 0.5, 2, 0.3
	judge := s.Judge
	s.Judge = func(r Ran) (map[string]Verdict, error) {
		vd, err := judge(r)
		if strings.HasPrefix(r.Dir, "01-") { // cold: the first step fails whatever its rate
			vd["x"] = Verdict{Pass: false, WorstP99Ms: 300}
		}
		return vd, err
	}
	ans, _, err := s.Do(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	a := ans[0]
	checkBracket(t, a, 4.5, 0.3)
	if !strings.Contains(a.Confirmation, "set aside because they did not repeat: ×0.5 failed in 01-step-x0.5 and held in ") {
		t.Errorf("confirmation %q", a.Confirmation)
	}
	for _, c := range a.Curve {
		if c.SetAside != (c.Step == "01-step-x0.5") {
			t.Errorf("curve point %s (pass %v): set aside %v", c.Step, c.Pass, c.SetAside)
		}
	}
	// A steady failure stands after its repeat: without the cold step the answer is the same.
	g := newFake(names, nil, map[string]float64{"x": 4.5})
	s2 := g.search(false)
	s2.OnePerProbe, s2.Start, s2.Growth, s2.Precision = true, 0.5, 2, 0.3
	ans2, _, err := s2.Do(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if ans2[0].Sustains != a.Sustains || ans2[0].Breaks != a.Breaks || strings.Contains(ans2[0].Confirmation, "set aside") {
		t.Errorf("warm: %+v; cold: ×%g..×%g", ans2[0], a.Sustains, a.Breaks)
	}
}

// probesTakeAMinute runs s on a fake clock on which every probe takes a minute, with a
// deadline after the given number of minutes.
func probesTakeAMinute(s *Search, minutes int) {
	clock := time.Unix(0, 0)
	s.now = func() time.Time { return clock }
	s.Deadline = clock.Add(time.Duration(minutes) * time.Minute)
	run := s.Run
	s.Run = func(ctx context.Context, p ProbeSpec) (Ran, error) {
		clock = clock.Add(time.Minute)
		return run(ctx, p)
	}
}

// A deadline between a step's failure and its repeat leaves the answer unconfirmed.
func TestSearchStepsDeadlineBeforeTheRepeat(t *testing.T) {
	names := []string{"x"}
	f := newFake(names, nil, map[string]float64{"x": 1.5})
	s := f.search(false)
	s.OnePerProbe, s.Start, s.Growth, s.Precision = true, 1, 2, 1
	probesTakeAMinute(s, 2)
	ans, probes, err := s.Do(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// ×1 holds, ×2 fails: bracketed to the precision, its repeat not run.
	if a := ans[0]; len(probes) != 2 || a.Outcome != results.CapacityUnconfirmed || a.Sustains != 1 || a.Breaks != 2 ||
		a.Confirmation != "×2 failed in 02-step-x2 and was not run again" {
		t.Errorf("%d probes: %+v", len(probes), a)
	}
}

// A deadline stops the search; variants not yet bracketed say so and keep what is known.
func TestSearchDeadline(t *testing.T) {
	names := []string{"a"}
	th := map[string]float64{"a": 3.3}
	f := newFake(names, th, th)
	s := f.search(false)
	probesTakeAMinute(s, 3)
	ans, probes, err := s.Do(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(probes) != 3 {
		t.Errorf("%d probes in 3 minutes of 1 minute each", len(probes))
	}
	if a := ans[0]; a.Outcome != results.CapacityIncomplete || a.Sustains != 2 || a.Breaks != 4 {
		t.Errorf("after 1, 2, 4: %+v", a)
	}
}

func TestSearchStopsOnProbeError(t *testing.T) {
	names := []string{"a", "b"}
	th := map[string]float64{"a": 3.3, "b": 2}
	f := newFake(names, th, th)
	s := f.search(false)
	boom := errors.New("connection refused")
	s.Run = func(ctx context.Context, p ProbeSpec) (Ran, error) {
		if p.Multiple >= 4 {
			return Ran{}, boom
		}
		return f.run(ctx, p)
	}
	ans, probes, err := s.Do(context.Background())
	if !errors.Is(err, boom) {
		t.Fatalf("error %v", err)
	}
	failed := 0
	for _, p := range probes {
		if p.Error != "" {
			failed++
		}
	}
	if failed != 1 || ans[0].Outcome != results.CapacityIncomplete || ans[0].Sustains != 2 {
		t.Errorf("probes %+v answers %+v", probes, ans)
	}
}

func TestSearchRejectsBadSettings(t *testing.T) {
	f := newFake([]string{"a"}, nil, nil)
	for _, mod := range []func(*Search){
		func(s *Search) { s.Growth = 1 },
		func(s *Search) { s.Precision = 0 },
		func(s *Search) { s.Start = 100 },
		func(s *Search) { s.Min = 0 },
	} {
		s := f.search(false)
		mod(s)
		if _, _, err := s.Do(context.Background()); err == nil {
			t.Errorf("%+v accepted", s)
		}
	}
}

// Probes of a round run Concurrency at a time, with at most VariantBudget variants among
// them (a larger probe alone).
func TestSearchBoundsVariantsRunningAtOnce(t *testing.T) {
	names := []string{"a", "b", "c", "d"}
	th := map[string]float64{"a": 3, "b": 0.7, "c": 20, "d": 0.3}
	f := newFake(names, th, th)
	s := f.search(false)
	s.Concurrency, s.VariantBudget = 2, 2
	var mu sync.Mutex
	running, peak, peakProbes := 0, 0, 0
	probes := 0
	s.Run = func(ctx context.Context, p ProbeSpec) (Ran, error) {
		mu.Lock()
		running += len(p.Variants)
		probes++
		if float64(len(p.Variants)) <= s.VariantBudget {
			peak = max(peak, running)
		}
		peakProbes = max(peakProbes, probes)
		mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		mu.Lock()
		running -= len(p.Variants)
		probes--
		mu.Unlock()
		return f.run(ctx, p)
	}
	if _, _, err := s.Do(context.Background()); err != nil {
		t.Fatal(err)
	}
	if peak > 2 || peakProbes != 2 {
		t.Errorf("at most %d variants in %d probes ran at once; want ≤ 2 variants in 2 probes", peak, peakProbes)
	}
}

// A schedule that is all peak is searched on the whole schedule directly.
func TestSearchWholeSchedule(t *testing.T) {
	names := []string{"a"}
	th := map[string]float64{"a": 3.3}
	f := newFake(names, map[string]float64{"a": 100}, th) // a window would say otherwise
	s := f.search(false)
	s.Whole = true
	ans, _, err := s.Do(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	checkBracket(t, ans[0], 3.3, 0.05)
	for _, p := range f.ran {
		if p.Kind != results.ProbeFull {
			t.Fatalf("probe %+v", p)
		}
	}
	if ans[0].Confirmation != "the whole schedule, probed throughout" {
		t.Errorf("confirmation %q", ans[0].Confirmation)
	}
}

// With a variant budget, probes at high multiples hold fewer variants.
func TestSearchSplitsProbesAtHighMultiples(t *testing.T) {
	names := []string{"a", "b", "c", "d", "e", "f"}
	th := map[string]float64{"a": 30, "b": 30, "c": 30, "d": 30, "e": 30, "f": 30}
	f := newFake(names, th, th)
	s := f.search(false)
	s.VariantBudget = 8
	if _, _, err := s.Do(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, p := range f.ran {
		if n := len(p.Variants); n > 1 && float64(n)*p.Multiple > 8 {
			t.Errorf("probe at ×%g holds %d variants", p.Multiple, n)
		}
	}
	if f.ran[0].Multiple != 1 || len(f.ran[0].Variants) != 6 {
		t.Errorf("first probe %+v", f.ran[0])
	}
}

// A round starts its costliest probes first: a confirming probe of several variants
// before a window probe of one, so that the round ends on short probes.
func TestRoundStartsCostliestProbesFirst(t *testing.T) {
	s := &Search{ConfirmCost: 5}
	mk := func(idx int, mode string, m float64) *track {
		return &track{idx: idx, mode: mode, next: m}
	}
	gs := s.groups([]*track{
		mk(0, results.ProbeWindow, 1.2), mk(1, results.ProbeWindow, 2), mk(2, results.ProbeWindow, 2),
		mk(3, results.ProbeFull, 1.1), mk(4, results.ProbeFull, 0.5),
	})
	var got []string
	for _, g := range gs {
		got = append(got, fmt.Sprintf("%s@%g×%d", g.spec.Kind, g.spec.Multiple, len(g.spec.Variants)))
	}
	want := []string{"full@1.1×1", "window@2×2", "full@0.5×1", "window@1.2×1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("probe order %v, want %v (cost: variants × multiple, × 5 when confirming)", got, want)
	}
}

// A confirmation that disagrees with the window by the two runs' sampling at the edge is
// settled one step of the precision away; a large disagreement takes steps each the
// square of the last.
func TestConfirmationGallops(t *testing.T) {
	names := []string{"edge", "far"}
	w := map[string]float64{"edge": 2.05, "far": 2.05}
	full := map[string]float64{"edge": 2.15, "far": 4.5}
	f := newFake(names, w, full)
	ans, probes, err := f.search(true).Do(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, p := range probes {
		if p.Kind == results.ProbeFull {
			for _, v := range p.Variants {
				count[v]++
			}
		}
	}
	for _, a := range ans {
		checkBracket(t, a, full[a.Variant], 0.05)
	}
	// edge: the window's ×2 holds, its ×2.1 (hint) holds too, ×2.205 fails: three.
	if count["edge"] != 3 {
		t.Errorf("edge: %d confirming probes, want 3 (window's pass, its fail, one step of 5%%)", count["edge"])
	}
	// far: ×2 and ×2.1, then steps of 1.05, 1.1025, 1.2155, 1.4775 and 2.183 pass 4.5
	// (×9.53 fails), then four bisections: eleven, where steps of a fixed 1.05 would take
	// seventeen before bisecting.
	if count["far"] > 11 {
		t.Errorf("far: %d confirming probes for a disagreement of 2.2×", count["far"])
	}
}
