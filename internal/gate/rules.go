package gate

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/textdist"
	"github.com/shardbench/shardbench/internal/yamlx"
)

// Subject kinds.
const (
	SubjectOp    = "op"    // an operation, a pattern of them, or "all" (the totals)
	SubjectTable = "table" // table:PATTERN, from hotspots.json
	SubjectNodes = "nodes" // per-node / per-shard load, from hotspots.json
)

// Units of metric values. Thresholds are held in these units.
const (
	UnitNanos  = "ns"    // latencies (printed in ms)
	UnitRatio  = "ratio" // fractions: error_rate, shares (printed as %)
	UnitFactor = "x"     // dimensionless factors: achieved_ratio, imbalance, cv, gini
	UnitBytes  = "bytes"
	UnitCount  = "count"
	UnitRate   = "ops/s"
)

// Metric is what a rule measures.
type Metric struct {
	Name string // canonical name, e.g. "p99", "service.p99.9", "error_rate.timeout"
	Unit string
	// Latency metrics: which histogram (response, service, lag) and which statistic
	// (p = percentile Pct, max, min, mean).
	Hist string
	Stat string
	Pct  float64
	// Class is the error class of error_rate.<class>.
	Class string
}

// Rule is one parsed threshold rule.
type Rule struct {
	Text string    // as written
	Pos  yamlx.Pos // where it was written
	Path string    // field path, e.g. slo[3]
	// Variant is a pattern of variant names ("*" = all).
	Variant string
	// Kind is SubjectOp, SubjectTable or SubjectNodes; Target the operation name or
	// pattern ("all" = the totals) or the table pattern.
	Kind   string
	Target string
	Metric Metric
	Cmp    string
	// Threshold is in Metric.Unit; ThresholdText as written.
	Threshold     float64
	ThresholdText string
}

// Subject is the rule's subject as written, without the variant.
func (r *Rule) Subject() string {
	switch r.Kind {
	case SubjectTable:
		return "table:" + r.Target
	case SubjectNodes:
		return "nodes"
	}
	return r.Target
}

// Rules is a parsed slo section or gate file.
type Rules struct {
	Source string // "scenario.yaml (slo)" or the gate file's path
	Rules  []Rule
}

var opMetrics = map[string]string{
	"error_rate":      UnitRatio,
	"achieved_ratio":  UnitFactor,
	"achieved_rate":   UnitRate,
	"target_rate":     UnitRate,
	"dropped_share":   UnitRatio,
	"late_share":      UnitRatio,
	"abandoned_share": UnitRatio,
	"count":           UnitCount,
	"scheduled":       UnitCount,
	"served_share":    UnitRatio,
}

var tableMetrics = map[string]string{
	"hottest_share":  UnitRatio,
	"partition_size": UnitBytes,
	"partition_rows": UnitCount,
	"over_limit":     UnitCount,
	"ops":            UnitCount,
}

var nodeMetrics = map[string]string{
	"imbalance":  UnitFactor,
	"cv":         UnitFactor,
	"gini":       UnitFactor,
	"max_share":  UnitRatio,
	"over_30pct": UnitCount,
}

func metricNames(kind string) []string {
	var out []string
	switch kind {
	case SubjectOp:
		out = append(out, "p50", "p99", "p99.9", "max", "mean", "min", "service.p99", "lag.p99")
		for k := range opMetrics {
			out = append(out, k)
		}
		for _, c := range metrics.ClassNames() {
			out = append(out, "error_rate."+c)
		}
	case SubjectTable:
		for k := range tableMetrics {
			out = append(out, k)
		}
	case SubjectNodes:
		for k := range nodeMetrics {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// unquotedStar finds a list item starting with a bare *, which YAML reads as an alias.
var unquotedStar = regexp.MustCompile(`(?m)^[ \t]*-[ \t]+\*`)

var pctRe = regexp.MustCompile(`^p(\d+(?:\.\d+)?)$`)

// parseMetric resolves a metric name for a subject kind.
func parseMetric(kind, name string) (Metric, error) {
	m := Metric{Name: name}
	switch kind {
	case SubjectTable:
		if u, ok := tableMetrics[name]; ok {
			m.Unit = u
			return m, nil
		}
		return m, fmt.Errorf("unknown table metric %q%s", name, suggestName(name, metricNames(kind)))
	case SubjectNodes:
		if u, ok := nodeMetrics[name]; ok {
			m.Unit = u
			return m, nil
		}
		return m, fmt.Errorf("unknown nodes metric %q%s", name, suggestName(name, metricNames(kind)))
	}
	if u, ok := opMetrics[name]; ok {
		m.Unit = u
		return m, nil
	}
	if c, ok := strings.CutPrefix(name, "error_rate."); ok {
		if _, known := metrics.ParseClass(c); !known || c == "ok" {
			return m, fmt.Errorf("unknown error class %q (classes: %s)", c, strings.Join(metrics.ClassNames(), ", "))
		}
		m.Unit, m.Class = UnitRatio, c
		return m, nil
	}
	hist, stat := "response", name
	for _, h := range []string{"response", "service", "lag"} {
		if s, ok := strings.CutPrefix(name, h+"."); ok {
			hist, stat = h, s
			break
		}
	}
	m.Unit, m.Hist = UnitNanos, hist
	switch stat {
	case "max", "min", "mean":
		m.Stat = stat
	default:
		sm := pctRe.FindStringSubmatch(stat)
		if sm == nil {
			return m, fmt.Errorf("unknown metric %q%s", name, suggestName(name, metricNames(kind)))
		}
		p, err := strconv.ParseFloat(sm[1], 64)
		if err != nil || p <= 0 || p >= 100 {
			return m, fmt.Errorf("percentile %q must be above p0 and below p100 (use max for the largest value)", stat)
		}
		m.Stat, m.Pct = "p", p
	}
	// Canonical: response time is the default histogram.
	if hist == "response" {
		m.Name = stat
	} else {
		m.Name = hist + "." + stat
	}
	return m, nil
}

// ruleRe splits "SUBJECT METRIC CMP VALUE"; spaces around the comparator are optional.
var ruleRe = regexp.MustCompile(`^(\s*)(\S+)(\s+)([^\s<>=!]+)(\s*)(<=|>=|==|<|>)(\s*)(.+?)\s*$`)

// parseRule parses one rule written at node n; col0 is the column of the text's first
// character.
func parseRule(text string, pos yamlx.Pos, path, groupVariant string) (Rule, error) {
	r := Rule{Text: strings.TrimSpace(text), Pos: pos, Path: path, Variant: "*"}
	at := func(off int) yamlx.Pos {
		p := pos
		if p.Col > 0 {
			p.Col += off
		}
		return p
	}
	fail := func(off int, format string, args ...any) (Rule, error) {
		return r, yamlx.Error{Pos: at(off), Path: path, Msg: fmt.Sprintf(format, args...)}
	}
	m := ruleRe.FindStringSubmatchIndex(text)
	if m == nil {
		if strings.ContainsAny(text, "<>=") {
			return fail(0, "cannot read rule %q: write SUBJECT METRIC COMPARATOR THRESHOLD, e.g. \"carts.add_item p99 < 15ms\" (comparators: < <= > >= ==)", r.Text)
		}
		return fail(0, "rule %q has no comparator: write SUBJECT METRIC COMPARATOR THRESHOLD, e.g. \"carts.add_item p99 < 15ms\"", r.Text)
	}
	subj, subjOff := text[m[4]:m[5]], m[4]
	metric, metricOff := text[m[8]:m[9]], m[8]
	r.Cmp = text[m[12]:m[13]]
	value, valueOff := text[m[16]:m[17]], m[16]

	if s, v, ok := strings.Cut(subj, "@"); ok {
		if v == "" {
			return fail(subjOff+len(s), "empty variant pattern after @")
		}
		if groupVariant != "" {
			return fail(subjOff+len(s), "the group already names the variants (%q); drop @%s", groupVariant, v)
		}
		subj, r.Variant = s, v
	} else if groupVariant != "" {
		r.Variant = groupVariant
	}
	switch {
	case subj == "nodes":
		r.Kind = SubjectNodes
	case strings.HasPrefix(subj, "table:"):
		r.Kind, r.Target = SubjectTable, strings.TrimPrefix(subj, "table:")
		if r.Target == "" {
			return fail(subjOff, "table: needs a table name or pattern, e.g. table:orders_by_period or table:*")
		}
	case subj == "":
		return fail(subjOff, "missing subject")
	default:
		r.Kind, r.Target = SubjectOp, subj
	}
	mt, err := parseMetric(r.Kind, metric)
	if err != nil {
		return fail(metricOff, "%v", err)
	}
	r.Metric = mt
	th, err := parseThreshold(mt.Unit, value)
	if err != nil {
		return fail(valueOff, "%s: %v", mt.Name, err)
	}
	r.Threshold, r.ThresholdText = th, strings.Join(strings.Fields(value), "")
	return r, nil
}

// parseThreshold reads a threshold in the unit of its metric.
func parseThreshold(unit, s string) (float64, error) {
	s = strings.Join(strings.Fields(s), "")
	switch unit {
	case UnitNanos:
		d, err := yamlx.ParseDuration(strings.ReplaceAll(s, "µs", "us"))
		if err != nil {
			return 0, fmt.Errorf("expected a duration such as 15ms or 1.5s: %v", err)
		}
		if d < 0 {
			return 0, fmt.Errorf("a latency threshold must not be negative")
		}
		return float64(d), nil
	case UnitRatio, UnitFactor:
		if p, ok := strings.CutSuffix(s, "%"); ok {
			f, err := finite(p)
			if err != nil {
				return 0, fmt.Errorf("expected a percentage such as 0.1%% or a fraction such as 0.001, got %q", s)
			}
			return f / 100, nil
		}
		f, err := finite(s)
		if err != nil {
			return 0, fmt.Errorf("expected a fraction such as 0.001 or a percentage such as 0.1%%, got %q", s)
		}
		return f, nil
	case UnitBytes:
		return parseScaled(s, []suffix{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
			{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"kB", 1e3}, {"B", 1}}, "a size such as 100MB or 64MiB")
	case UnitCount, UnitRate:
		s = strings.TrimSuffix(s, "/s")
		return parseScaled(s, []suffix{{"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}}, "a number such as 100000 or 100k")
	}
	return 0, fmt.Errorf("unknown unit %s", unit)
}

type suffix struct {
	s string
	f float64
}

func parseScaled(s string, sfx []suffix, what string) (float64, error) {
	mult := 1.0
	num := s
	for _, x := range sfx {
		if n, ok := strings.CutSuffix(s, x.s); ok {
			num, mult = n, x.f
			break
		}
	}
	f, err := finite(num)
	if err != nil {
		return 0, fmt.Errorf("expected %s, got %q", what, s)
	}
	return f * mult, nil
}

func finite(s string) (float64, error) {
	f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("not a finite number")
	}
	return f, nil
}

// ParseRaw decodes a scenario's slo section. An absent section gives no rules.
func ParseRaw(raw yamlx.Raw) (*Rules, error) {
	rs := &Rules{Source: raw.File + " (slo)"}
	if raw.IsZero() {
		return rs, nil
	}
	path := raw.Path
	if path == "" {
		path = "slo"
	}
	var errs yamlx.Errors
	rs.Rules = parseList(&errs, raw.File, path, raw.Node)
	return rs, errs.Err()
}

// ParseFile reads a --gate file: a list of rules (the same format as a scenario's slo
// section), or a mapping whose slo key holds that list (so a scenario file can be used as
// a gate file; its other keys are ignored).
func ParseFile(path string) (*Rules, error) {
	data, err := yamlx.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseBytes(path, data)
}

// ParseBytes parses the contents of a gate file.
func ParseBytes(file string, data []byte) (*Rules, error) {
	root, err := yamlx.Parse(file, data)
	if err != nil {
		if m := unquotedStar.FindIndex(data); m != nil {
			line := 1 + strings.Count(string(data[:m[0]]), "\n")
			start := strings.LastIndexByte(string(data[:m[1]]), '\n') + 1
			text := strings.TrimSpace(strings.SplitN(string(data[m[1]-1:]), "\n", 2)[0])
			return nil, yamlx.Errors{{Pos: yamlx.Pos{File: file, Line: line, Col: m[1] - start}, Msg: fmt.Sprintf("a rule starting with * must be quoted (%q): YAML reads * as an alias", text)}}
		}
		return nil, err
	}
	rs := &Rules{Source: file}
	var errs yamlx.Errors
	switch root.Kind {
	case yaml.MappingNode:
		var slo *yaml.Node
		for i := 0; i+1 < len(root.Content); i += 2 {
			if root.Content[i].Value == "slo" {
				slo = root.Content[i+1]
			}
		}
		if slo == nil {
			errs.Add(yamlx.Pos{File: file, Line: root.Line, Col: root.Column}, "", "a gate file is a list of rules, or a mapping with an slo: list (no slo key here)")
			break
		}
		rs.Rules = parseList(&errs, file, "slo", slo)
	default:
		rs.Rules = parseList(&errs, file, "slo", root)
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return rs, nil
}

func posOf(file string, n *yaml.Node) yamlx.Pos {
	return yamlx.Pos{File: file, Line: n.Line, Col: n.Column}
}

// textPos is where the text of a scalar starts (after an opening quote).
func textPos(file string, n *yaml.Node) yamlx.Pos {
	p := posOf(file, n)
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		p.Col++
	}
	if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		p.Col = 0 // the text starts on a later line; point at the line only
		p.Line++
	}
	return p
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func parseList(errs *yamlx.Errors, file, path string, n *yaml.Node) []Rule {
	n = deref(n)
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		errs.Add(posOf(file, n), path, "expected a list of rules such as - \"carts.add_item p99 < 15ms\"")
		return nil
	}
	var out []Rule
	for i, item := range n.Content {
		ipath := fmt.Sprintf("%s[%d]", path, i)
		item = deref(item)
		switch item.Kind {
		case yaml.ScalarNode:
			out = append(out, parseScalarRule(errs, file, ipath, item, "")...)
		case yaml.MappingNode:
			out = append(out, parseGroup(errs, file, ipath, item)...)
		default:
			errs.Add(posOf(file, item), ipath, "expected a rule (a string) or a group {variant: PATTERN, checks: [...]}")
		}
	}
	return out
}

func parseScalarRule(errs *yamlx.Errors, file, path string, n *yaml.Node, variant string) []Rule {
	if n.ShortTag() != "!!str" {
		errs.Add(posOf(file, n), path, "expected a rule such as \"carts.add_item p99 < 15ms\", got %q", n.Value)
		return nil
	}
	r, err := parseRule(n.Value, textPos(file, n), path, variant)
	if err != nil {
		errs.Append(err)
		return nil
	}
	return []Rule{r}
}

// parseGroup reads {variant: PATTERN, checks: [rules]}.
func parseGroup(errs *yamlx.Errors, file, path string, n *yaml.Node) []Rule {
	var variant string
	var checks *yaml.Node
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], deref(n.Content[i+1])
		kpath := yamlx.JoinPath(path, k.Value)
		if seen[k.Value] {
			errs.Add(posOf(file, k), kpath, "duplicate key")
			continue
		}
		seen[k.Value] = true
		switch k.Value {
		case "variant":
			if v.Kind != yaml.ScalarNode || v.Value == "" || v.ShortTag() == "!!null" {
				errs.Add(posOf(file, v), kpath, "expected a variant name or pattern")
				continue
			}
			variant = v.Value
		case "checks":
			checks = v
		default:
			errs.Add(posOf(file, k), kpath, "unknown field%s", suggestName(k.Value, []string{"variant", "checks"}))
		}
	}
	if variant == "" || checks == nil {
		errs.Add(posOf(file, n), path, "a group needs both variant: and checks:")
		return nil
	}
	if checks.Kind != yaml.SequenceNode {
		errs.Add(posOf(file, checks), yamlx.JoinPath(path, "checks"), "expected a list of rules")
		return nil
	}
	var out []Rule
	for i, item := range checks.Content {
		ipath := fmt.Sprintf("%s.checks[%d]", path, i)
		item = deref(item)
		if item.Kind != yaml.ScalarNode {
			errs.Add(posOf(file, item), ipath, "expected a rule such as \"carts.add_item p99 < 15ms\"")
			continue
		}
		out = append(out, parseScalarRule(errs, file, ipath, item, variant)...)
	}
	return out
}

// CheckOperations reports rules naming an operation the run cannot produce (known is
// the run's operation list), and operation patterns that match none of them, before a
// run starts.
func (rs *Rules) CheckOperations(known []string) error {
	var errs yamlx.Errors
	for _, r := range rs.Rules {
		if r.Kind != SubjectOp || r.Target == "all" {
			continue
		}
		found := false
		for _, k := range known {
			if Match(r.Target, k) {
				found = true
				break
			}
		}
		if found {
			continue
		}
		if IsPattern(r.Target) {
			errs.Add(r.Pos, r.Path, "pattern %q matches no operation of this scenario (operations: %s)", r.Target, strings.Join(known, ", "))
		} else {
			errs.Add(r.Pos, r.Path, "operation %q is not in this scenario%s", r.Target, suggestName(r.Target, known))
		}
	}
	return errs.Err()
}

// IsPattern reports whether s holds a wildcard.
func IsPattern(s string) bool { return strings.ContainsAny(s, "*?") }

// Match reports whether name matches a glob pattern: * matches any run of characters
// (including dots and slashes), ? one character; everything else matches itself.
func Match(pattern, name string) bool {
	// Iterative glob with backtracking on the last star.
	p, n := 0, 0
	star, mark := -1, 0
	for n < len(name) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == name[n]):
			p++
			n++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, n
			p++
		case star >= 0:
			p = star + 1
			mark++
			n = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// suggestName returns ` (did you mean "x"?)` for a close known name, else a list of
// known names when short.
func suggestName(s string, known []string) string {
	if best, ok := textdist.Closest(s, known); ok {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	if len(known) > 0 && len(known) <= 16 {
		return " (known: " + strings.Join(known, ", ") + ")"
	}
	return ""
}

// ScenarioRules reads the slo section of the scenario as run in a results directory
// (nil when there is none).
func ScenarioRules(dir string) (*Rules, error) {
	path := filepath.Join(dir, results.ScenarioFile)
	data, err := yamlx.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	root, err := yamlx.Parse(path, data)
	if err != nil {
		return nil, err
	}
	if root.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "slo" {
			return ParseRaw(yamlx.Raw{Node: root.Content[i+1], File: path, Path: "slo"})
		}
	}
	return nil, nil
}
