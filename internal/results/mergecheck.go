package results

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// What merge accepts. Two kinds of input make sense together, and nothing else:
//
//   - the shards of one distributed run (run --shard I/N): every shard of the run, each
//     once, of one scenario (the same digest: file, overrides, designs), one seed, one
//     shard count, one common clock (--start-at), one shardbench build and one backend
//     and target. Together they are the whole run, exactly.
//   - repeated runs of one scenario (one digest, any seeds), on one backend and target,
//     pooled for more samples: counts and histograms pool, rates are the runs' mean.
//
// A missing shard, or inputs of which only some carry a hot-partition analysis, make a
// partial merge: refused unless asked for (MergeOptions.Partial), and then said in the
// merged summary (Merge.Missing, Complete false) and its notes.

// mergePlan is what checkMerge decided about the inputs.
type mergePlan struct {
	kind string
	// runs: the shard count, or the number of runs pooled (an input that is itself a
	// pooled merge counts its runs).
	runs int
	// weight is each input's number of runs (repeats; 1 for shards).
	weight  []int
	missing []string
	notes   []string
}

func (p *mergePlan) shards() bool { return p.kind == MergeShards }

// checkMerge checks the inputs make one of the two meaningful merges and says which. For
// shards, it orders the inputs by shard index.
func checkMerge(ins []*mergeInput, partial bool) (*mergePlan, error) {
	first := ins[0]
	ids, old, err := identities(ins)
	if err != nil {
		return nil, err
	}
	for k, in := range ins[1:] {
		a, b := &first.sum.Scenario, &in.sum.Scenario
		if ids[0] != ids[k+1] {
			what := "the same scenario name with a different file, overrides (--duration, --rate-scale) or designs"
			if a.Name != b.Name {
				what = fmt.Sprintf("different scenarios, %q and %q", a.Name, b.Name)
			}
			return nil, fmt.Errorf("%w: %s and %s ran %s (digests %s and %s): merge combines the shards of one run or repeated runs of one scenario",
				ErrMergeInput, first.dir, in.dir, what, short(ids[0]), short(ids[k+1]))
		}
		if first.sum.Backend.Name != in.sum.Backend.Name || first.sum.Backend.Target != in.sum.Backend.Target {
			return nil, fmt.Errorf("%w: %s ran on %s and %s on %s: merged runs must share the backend and target", ErrMergeInput,
				first.dir, backendText(first.sum.Backend), in.dir, backendText(in.sum.Backend))
		}
	}
	sharded := 0
	for _, in := range ins {
		if in.sum.Shard != nil {
			sharded++
		}
	}
	switch sharded {
	case 0:
		p, err := checkRepeats(ins, partial)
		if err == nil && old {
			p.notes = append(p.notes, "some inputs predate scenario digests: they were matched by their scenario.yaml (seed aside), their designs unchecked")
		}
		return p, err
	case len(ins):
		return checkShards(ins, partial)
	}
	var shard, whole string
	for _, in := range ins {
		if in.sum.Shard != nil && shard == "" {
			shard = in.dir
		}
		if in.sum.Shard == nil && whole == "" {
			whole = in.dir
		}
	}
	return nil, fmt.Errorf("%w: %s is a shard of a distributed run and %s a whole run: merge the shards first, then pool the merged run with other runs", ErrMergeInput, shard, whole)
}

// identities names what each input ran, for comparing them: its scenario digest, or for
// a directory written before digests (old reports true), a digest of its scenario.yaml
// with the seed line left out (the designs it ran cannot be told).
func identities(ins []*mergeInput) (ids []string, old bool, err error) {
	for _, in := range ins {
		old = old || in.sum.Scenario.Digest == ""
	}
	for _, in := range ins {
		if !old {
			ids = append(ids, in.sum.Scenario.Digest)
			continue
		}
		if in.asRun == nil {
			return nil, false, fmt.Errorf("%w: %s has no scenario digest (written before "+
				"shardbench recorded one) and no %s: merge cannot check that it ran the same "+
				"scenario as the others",
				ErrMergeInput, in.dir, ScenarioFile)
		}
		var b strings.Builder
		for _, line := range strings.SplitAfter(string(in.asRun), "\n") {
			if !strings.HasPrefix(line, "seed:") {
				b.WriteString(line)
			}
		}
		sum := sha256.Sum256([]byte(b.String()))
		ids = append(ids, "scenario.yaml:"+hex.EncodeToString(sum[:]))
	}
	return ids, old, nil
}

func checkShards(ins []*mergeInput, partial bool) (*mergePlan, error) {
	sort.SliceStable(ins, func(i, j int) bool { return ins[i].sum.Shard.Index < ins[j].sum.Shard.Index })
	first := ins[0]
	f := first.sum
	n := f.Shard.Count
	byIndex := map[int]string{}
	for _, in := range ins {
		s := in.sum
		sh := s.Shard
		switch {
		case sh.Count != n:
			return nil, fmt.Errorf("%w: %s is shard %d of %d and %s shard %d of %d: shards of one run share their count", ErrMergeInput, first.dir, f.Shard.Index, n, in.dir, sh.Index, sh.Count)
		case sh.Index < 0 || sh.Index >= n:
			return nil, fmt.Errorf("%w: %s: shard index %d is outside 0..%d", ErrMergeInput, in.dir, sh.Index, n-1)
		case s.Scenario.Seed != f.Scenario.Seed:
			return nil, fmt.Errorf("%w: %s ran seed %d and %s seed %d: the shards of one run split one stream, so they share the seed", ErrMergeInput, first.dir, f.Scenario.Seed, in.dir, s.Scenario.Seed)
		case sh.StartAt != f.Shard.StartAt:
			return nil, fmt.Errorf("%w: %s started at %s and %s at %s: shards of one run share "+
				"--start-at (these look like shards of different runs)",
				ErrMergeInput, first.dir, orNone(f.Shard.StartAt), in.dir, orNone(sh.StartAt))
		case s.Tool.Version != f.Tool.Version:
			return nil, fmt.Errorf("%w: %s was written by shardbench %s and %s by %s: shards must run one build, or their streams may differ", ErrMergeInput, first.dir, f.Tool.Version, in.dir, s.Tool.Version)
		}
		if d, dup := byIndex[sh.Index]; dup {
			return nil, fmt.Errorf("%w: %s and %s are both shard %d of %d (its operations would count twice)", ErrMergeInput, d, in.dir, sh.Index, n)
		}
		byIndex[sh.Index] = in.dir
	}
	p := &mergePlan{kind: MergeShards, runs: n, weight: ones(len(ins))}
	var lack []string
	for i := range n {
		if _, ok := byIndex[i]; !ok {
			lack = append(lack, strconv.Itoa(i))
			p.missing = append(p.missing, fmt.Sprintf("shard %d of %d", i, n))
		}
	}
	if len(lack) > 0 && !partial {
		return nil, fmt.Errorf("%w: shard%s %s of %d missing: the inputs make only part of the run (merge every shard's directory, or --partial to merge these %d and mark the result incomplete)",
			ErrMergeInput, plural(len(lack)), strings.Join(lack, ", "), n, len(ins))
	}
	if f.Shard.StartAt == "" {
		p.notes = append(p.notes, "the shards ran without a common clock (--start-at): each one's schedule started when it was ready, so their seconds are aligned on each shard's own start")
	}
	return p, nil
}

func checkRepeats(ins []*mergeInput, partial bool) (*mergePlan, error) {
	p := &mergePlan{kind: MergeRepeats}
	seeds := map[int64][]string{}
	versions := map[string]bool{}
	var noHot, withHot []string
	for _, in := range ins {
		w := 1
		if m := in.sum.Merge; m != nil && m.Kind == MergeRepeats && m.Runs > 0 {
			w = m.Runs
		}
		p.weight = append(p.weight, w)
		p.runs += w
		seeds[in.sum.Scenario.Seed] = append(seeds[in.sum.Scenario.Seed], in.dir)
		versions[in.sum.Tool.Version] = true
		if in.hs == nil {
			noHot = append(noHot, in.dir)
		} else {
			withHot = append(withHot, in.dir)
		}
		if m := in.sum.Merge; m != nil && len(m.Missing) > 0 {
			p.missing = append(p.missing, fmt.Sprintf("%s lacks %s", in.dir, strings.Join(m.Missing, ", ")))
		}
	}
	if len(noHot) > 0 && len(withHot) > 0 {
		if !partial {
			return nil, fmt.Errorf("%w: %s ha%s no hot-partition analysis (hotspots.json) and %s "+
				"ha%s one: the merged analysis would cover only some runs (--partial merges "+
				"anyway and marks the result incomplete)",
				ErrMergeInput, strings.Join(noHot, ", "), has(len(noHot)), strings.Join(withHot, ", "), has(len(withHot)))
		}
		p.missing = append(p.missing, "the hot-partition analysis of "+strings.Join(noHot, ", "))
	}
	for seed, dirs := range seeds {
		if len(dirs) > 1 && ins[0].sum.Backend.Simulated {
			p.notes = append(p.notes, fmt.Sprintf("%s ran the same seed %d on the simulator: identical runs, so pooling them adds no samples", strings.Join(dirs, ", "), seed))
		}
	}
	if len(seeds) > 1 {
		var ns []int64
		for seed := range seeds {
			ns = append(ns, seed)
		}
		slices.Sort(ns)
		var list []string
		for _, n := range ns {
			list = append(list, strconv.FormatInt(n, 10))
		}
		p.notes = append(p.notes, fmt.Sprintf("pooled runs of seeds %s (scenario.seed is the first input's)", strings.Join(list, ", ")))
	}
	if len(versions) > 1 {
		p.notes = append(p.notes, "the pooled runs were written by different shardbench builds")
	}
	slices.Sort(p.notes)
	return p, nil
}

func ones(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

func short(digest string) string {
	d := strings.TrimPrefix(strings.TrimPrefix(digest, "sha256:"), "scenario.yaml:")
	if len(d) > 12 {
		d = d[:12]
	}
	return d
}

func backendText(b BackendInfo) string {
	if b.Target == "" {
		return b.Name
	}
	return b.Name + " " + b.Target
}

func orNone(s string) string {
	if s == "" {
		return "its own time (no --start-at)"
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func has(n int) string {
	if n == 1 {
		return "s"
	}
	return "ve"
}
