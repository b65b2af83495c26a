package reports

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/units"
)

// The Run section: what ran, where, with what, and its phases.

func (r *renderer) metaTable() *table {
	type field struct {
		name string
		get  func(*run) string
	}
	fields := []field{
		{"scenario", func(x *run) string { return x.Sum.Scenario.Name }},
		{"description", func(x *run) string {
			if len(r.runs) == 1 {
				return ""
			}
			return x.Sum.Scenario.Description
		}},
		{"scenario file", func(x *run) string { return x.Sum.Scenario.Source }},
		{"seed", func(x *run) string {
			if x.NoSummary {
				return ""
			}
			return fmt.Sprint(x.Sum.Scenario.Seed)
		}},
		{"kind", func(x *run) string {
			switch x.Kind {
			case KindPlan:
				return "plan (placement only, nothing executed)"
			case KindSimulated:
				return "simulated"
			}
			return "real cluster"
		}},
		{"backend", func(x *run) string { return x.Sum.Backend.Name }},
		{"target", func(x *run) string { return x.Sum.Backend.Target }},
		{"server version", func(x *run) string { return x.Sum.Backend.Server }},
		{"backend settings", func(x *run) string { return joinMap(x.Sum.Backend.Details) }},
		{"status", func(x *run) string {
			switch x.status() {
			case "interrupted":
				if x.Sum.Interrupted != "" {
					return "interrupted: " + x.Sum.Interrupted
				}
				return "interrupted"
			case "incomplete":
				return "incomplete (not finished when written)"
			}
			return "complete"
		}},
		{"started", func(x *run) string { return fmtTime(x.Sum.StartedAt) }},
		{"ended", func(x *run) string { return fmtTime(x.Sum.EndedAt) }},
		{"wall time", func(x *run) string {
			if x.Sum.StartedAt.IsZero() || x.Sum.EndedAt.IsZero() {
				return ""
			}
			return units.Seconds(x.Sum.EndedAt.Sub(x.Sum.StartedAt).Seconds())
		}},
		{"schedule", func(x *run) string {
			sc := x.Sum.Scenario
			if sc.DurationS == 0 {
				return ""
			}
			s := fmt.Sprintf("%s, about %s operations per variant", units.Seconds(sc.DurationS), units.Count(sc.ExpectedOps))
			if sc.Arrival != "" {
				s += ", " + sc.Arrival + " arrivals"
			}
			if sc.MaxInFlight > 0 {
				s += fmt.Sprintf(", at most %d in flight", sc.MaxInFlight)
			}
			return s
		}},
		{"variants", func(x *run) string {
			var names []string
			for _, s := range r.sides {
				if s.Run == x {
					names = append(names, s.V.Name)
				}
			}
			return fmt.Sprintf("%d: %s", len(names), strings.Join(names, ", "))
		}},
		{"merged from", func(x *run) string { return strings.Join(x.Sum.MergedFrom, ", ") }},
		{"written by", func(x *run) string {
			t := x.Sum.Tool
			if t.Name == "" {
				return ""
			}
			s := t.Name + " " + t.Version
			if t.GoVersion != "" {
				s += " (" + t.GoVersion + ")"
			}
			if t.Host != "" {
				s += " on " + t.Host
			}
			return s
		}},
		{"directory", func(x *run) string { return x.Dir }},
		{"files", func(x *run) string { return filesPresent(x) }},
	}
	if len(r.runs) == 1 {
		var rows [][2]string
		for _, f := range fields {
			rows = append(rows, [2]string{f.name, f.get(r.runs[0])})
		}
		return kv(rows...)
	}
	t := &table{Head: []cell{{Text: ""}}}
	for _, x := range r.runs {
		t.Head = append(t.Head, cell{Text: x.Label})
	}
	for _, f := range fields {
		rw := row{Cells: []cell{{Text: f.name}}}
		any := false
		for _, x := range r.runs {
			v := f.get(x)
			any = any || v != ""
			rw.Cells = append(rw.Cells, cell{Text: v, Class: "wrap"})
		}
		if any {
			t.Rows = append(t.Rows, rw)
		}
	}
	return t
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func joinMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ", ")
}

func filesPresent(x *run) string {
	var parts []string
	add := func(name string, ok bool, extra string) {
		if ok {
			parts = append(parts, name+extra)
		}
	}
	add(results.SummaryFile, !x.NoSummary, "")
	n := 0
	for _, p := range x.Points {
		n += len(p)
	}
	add(results.TimeseriesFile, n > 0, fmt.Sprintf(" (%d points)", n))
	add(results.HotspotsFile, x.Hot != nil, "")
	add(results.GateFile, x.Gate != nil, "")
	add(results.ServerFile, x.Server != nil, "")
	add(results.AnalysisFile, x.Analysis != nil, "")
	add(results.ScenarioFile, x.Scenario, "")
	return strings.Join(parts, ", ")
}

func (r *renderer) phasesTable() *table {
	var t *table
	for _, x := range r.runs {
		if len(x.Sum.Phases) == 0 {
			continue
		}
		if t == nil {
			t = &table{Head: heads("phase", "type", "start", "end", "duration", "expected ops")}
		}
		if len(r.runs) > 1 {
			t.Rows = append(t.Rows, row{Group: x.Label})
		}
		for _, p := range x.Sum.Phases {
			t.Rows = append(t.Rows, row{Cells: []cell{{Text: p.Name}, {Text: p.Type},
				num(units.Seconds(p.StartS)), num(units.Seconds(p.EndS)),
				num(units.Seconds(p.EndS - p.StartS)), num(units.Count(p.ExpectedOps))}})
		}
	}
	return t
}
