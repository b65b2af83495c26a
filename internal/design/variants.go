package design

import (
	"path/filepath"
	"sort"
	"strings"

	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/yamlx"
	"github.com/shardbench/shardbench/workloads"
)

// Variant is one design variant a scenario drives: a design loaded with its parameter
// values.
type Variant struct {
	// Name is the spec's name (or the design's), with the swept values appended:
	// "seed000[sessions.buckets=10]".
	Name   string
	Design *Design
	// Params are the values the scenario set or swept, as compact YAML.
	Params map[string]string
	Spec   *scenario.VariantSpec
}

// Expand loads the designs a scenario lists and crosses each one's sweep: every
// combination becomes a variant (the last swept parameter varies fastest), all driven with
// the same operation stream. Every problem is reported, with positions in the scenario and
// the design files.
func Expand(sc *scenario.Scenario) ([]*Variant, error) {

	var errs yamlx.Errors
	reported := map[string]bool{}
	var out []*Variant
	seen := map[string]yamlx.Pos{}
	total := 0
	for i := range sc.Designs {
		spec := &sc.Designs[i]
		path := spec.Design
		if !filepath.IsAbs(path) {
			path = filepath.Join(sc.Dir(), path)
		}
		var set []Override
		names := map[string]bool{}
		for _, p := range spec.SetParams {
			set = append(set, Override{Name: p.Name, Node: p.Node, Pos: p.Pos})
			names[p.Name] = true
		}
		for _, sp := range spec.SweepParams {
			if names[sp.Name] {
				errs.Add(sp.Pos, "sweep."+sp.Name, "is also under set")
			}
		}
		// Count the combinations before building them: a sweep of a few long lists would
		// otherwise build billions.
		count := 1
		for _, sp := range spec.SweepParams {
			count = min(count*max(len(sp.Values), 1), maxCombinations+1)
		}
		if count > maxCombinations {
			errs.AddAt(spec.Loc, "sweep", "more than %d combinations: at most %d", maxCombinations, maxCombinations)
			continue
		}
		if total += count; total > maxCombinations {
			errs.AddAt(spec.Loc, "sweep", "the scenario's designs and sweeps make more than %d variants, the most one scenario may have", maxCombinations)
			break
		}
		combos := [][]Override{nil}
		for _, sp := range spec.SweepParams {
			var next [][]Override
			for _, c := range combos {
				for _, v := range sp.Values {
					o := Override{Name: sp.Name, Node: v, Pos: yamlx.Pos{File: sp.Pos.File, Line: v.Line, Col: v.Column}}
					next = append(next, append(append([]Override(nil), c...), o))
				}
			}
			combos = next
		}
		for _, combo := range combos {
			ov := append(append([]Override(nil), set...), combo...)
			d, err := Load(path, ov...)
			if err != nil {
				var list yamlx.Errors
				if e, ok := err.(yamlx.Errors); ok {
					list = e
				} else {
					pos, p := spec.Loc.At("design")
					list = yamlx.Errors{{Pos: pos, Path: p, Msg: err.Error()}}
				}
				for _, e := range list {
					// Combinations repeat the problems they share: report each once.
					if !reported[e.Error()] {
						reported[e.Error()] = true
						errs = append(errs, e)
					}
				}
				continue
			}
			v := &Variant{Design: d, Spec: spec, Params: map[string]string{}}
			var labels []string
			base := spec.Name
			if base == "" {
				base = d.Name
				for _, o := range set {
					labels = append(labels, o.Name+"="+flowYAML(o.Node))
				}
			}
			for _, o := range ov {
				v.Params[o.Name] = flowYAML(o.Node)
			}
			for _, o := range combo {
				labels = append(labels, o.Name+"="+flowYAML(o.Node))
			}
			v.Name = base
			if len(labels) > 0 {
				v.Name += "[" + strings.Join(labels, ",") + "]"
			}
			pos, _ := spec.Loc.At("design")
			if prev, dup := seen[v.Name]; dup {
				errs.Add(pos, yamlx.JoinPath(spec.Loc.Path, "name"), "variant %q is already defined at %s: give the variants different names", v.Name, prev)
				continue
			}
			seen[v.Name] = pos
			out = append(out, v)
		}
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// maxCombinations bounds a scenario's variants (and one design's sweep): each variant
// runs the whole schedule and keeps its own results.
const maxCombinations = 1000

// ParamNames lists the parameters of a design, sorted.
func (d *Design) ParamNames() []string {
	out := make([]string, len(d.Params))
	for i, p := range d.Params {
		out[i] = p.Name
	}
	sort.Strings(out)
	return out
}

// Prepared is everything a run needs from a scenario besides the schedule: the workload
// model (operation table, population) and each design variant compiled against it.
type Prepared struct {
	Model    *workloads.Model
	Variants []*Variant
	// Compiled[i] maps operations for Variants[i].
	Compiled []*Compiled
}

// Prepare compiles a scenario's workload and its design variants, reporting every problem
// (unknown operations or knobs in the scenario, design errors, operations a design neither
// maps nor declares not served) at once, with positions.
func Prepare(sc *scenario.Scenario) (*Prepared, error) {
	var errs yamlx.Errors
	m, err := workloads.New(sc)
	errs.Append(err)
	vs, err := Expand(sc)
	errs.Append(err)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	p := &Prepared{Model: m, Variants: vs}
	for _, v := range vs {
		plan, err := Compile(v.Design, m)
		if err != nil {
			errs.Append(err)
			continue
		}
		p.Compiled = append(p.Compiled, plan)
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return p, nil
}
