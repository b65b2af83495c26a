package gate

import (
	"strings"
	"testing"

	"github.com/shardbench/shardbench/internal/yamlx"
)

func TestParseRules(t *testing.T) {
	rs := mustRules(t, `
- carts.add_item p99 < 15ms
- "carts.* service.p99.9 <= 40ms"
- "*@cassandra-* error_rate < 0.1%"
- all achieved_ratio>=0.99
- all lag.max < 1 s
- orders.place error_rate.timeout == 0
- table:orders_by_period hottest_share < 30%
- table:* partition_size < 100MB
- table:* partition_rows <= 100k
- nodes imbalance < 1.3
- variant: mongo-*
  checks:
    - nodes over_30pct == 0
    - table:* partition_size < 64MiB
`)
	want := []struct {
		variant, kind, target, metric, cmp string
		threshold                          float64
	}{
		{"*", SubjectOp, "carts.add_item", "p99", "<", 15e6},
		{"*", SubjectOp, "carts.*", "service.p99.9", "<=", 40e6},
		{"cassandra-*", SubjectOp, "*", "error_rate", "<", 0.001},
		{"*", SubjectOp, "all", "achieved_ratio", ">=", 0.99},
		{"*", SubjectOp, "all", "lag.max", "<", 1e9},
		{"*", SubjectOp, "orders.place", "error_rate.timeout", "==", 0},
		{"*", SubjectTable, "orders_by_period", "hottest_share", "<", 0.3},
		{"*", SubjectTable, "*", "partition_size", "<", 1e8},
		{"*", SubjectTable, "*", "partition_rows", "<=", 1e5},
		{"*", SubjectNodes, "", "imbalance", "<", 1.3},
		{"mongo-*", SubjectNodes, "", "over_30pct", "==", 0},
		{"mongo-*", SubjectTable, "*", "partition_size", "<", 64 << 20},
	}
	if len(rs.Rules) != len(want) {
		t.Fatalf("got %d rules, want %d", len(rs.Rules), len(want))
	}
	for i, w := range want {
		r := rs.Rules[i]
		if r.Variant != w.variant || r.Kind != w.kind || r.Target != w.target || r.Metric.Name != w.metric || r.Cmp != w.cmp || r.Threshold != w.threshold {
			t.Errorf("rule %d %q: got variant=%s kind=%s target=%s metric=%s cmp=%s threshold=%g", i, r.Text, r.Variant, r.Kind, r.Target, r.Metric.Name, r.Cmp, r.Threshold)
		}
	}
	if p := rs.Rules[0].Pos; p.Line != 2 || p.Col != 3 {
		t.Errorf("first rule at %s, want gate.yaml:2:3", p)
	}
	if rs.Rules[1].Metric.Hist != "service" || rs.Rules[1].Metric.Pct != 99.9 {
		t.Errorf("service.p99.9 parsed as %+v", rs.Rules[1].Metric)
	}
}

// Every parse error names file:line:col (the column of the offending word) and the field.
func TestParseErrorsNamePositions(t *testing.T) {
	cases := []struct {
		name, text, want string
	}{
		{"unknown metric with a suggestion", "- carts.add_item p99 < 15ms\n- carts.add_item erorr_rate < 1%\n",
			`gate.yaml:2:18: slo[1]: unknown metric "erorr_rate" (did you mean "error_rate"?)`},
		{"latency needs a unit", "- carts.add_item p99 < 15\n",
			`gate.yaml:1:24: slo[0]: p99: expected a duration such as 15ms or 1.5s: duration "15" needs a unit`},
		{"quoted rule: columns count from inside the quotes", "- \"carts.add_item p99 < fast\"\n",
			`gate.yaml:1:25: slo[0]: p99: expected a duration`},
		{"no comparator", "- carts.add_item p99 15ms\n", `gate.yaml:1:3: slo[0]: rule "carts.add_item p99 15ms" has no comparator`},
		{"bad percentile", "- x p100 < 1s\n", `gate.yaml:1:5: slo[0]: percentile "p100" must be above p0 and below p100`},
		{"table metric on an operation", "- x hottest_share < 1%\n", `gate.yaml:1:5: slo[0]: unknown metric "hottest_share"`},
		{"unknown error class", "- x error_rate.timeot < 1%\n", `gate.yaml:1:5: slo[0]: unknown error class "timeot"`},
		{"bad size", "- table:t partition_size < lots\n", `gate.yaml:1:28: slo[0]: partition_size: expected a size such as 100MB`},
		{"group with its own variant", "- variant: a\n  checks:\n    - x@b p99 < 1ms\n", `gate.yaml:3:8: slo[0].checks[0]: the group already names the variants`},
		{"group field typo", "- variant: a\n  chekcs: []\n", `gate.yaml:2:3: slo[0].chekcs: unknown field (did you mean "checks"?)`},
		{"not a list", "slo: {a: 1}\n", `gate.yaml:1:6: slo: expected a list of rules`},
		{"a number is not a rule", "- 42\n", `gate.yaml:1:3: slo[0]: expected a rule`},
		{"unquoted leading star is a YAML alias", "- a p99 < 1ms\n- * p99 < 1ms\n", `gate.yaml:2:3: a rule starting with * must be quoted ("* p99 < 1ms"): YAML reads * as an alias`},
		{"mapping without slo", "name: x\n", "gate.yaml:1:1: a gate file is a list of rules, or a mapping with an slo: list"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseBytes("gate.yaml", []byte(c.text))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error:\n  %v\nwant it to contain\n  %s", err, c.want)
			}
		})
	}
}

func TestParseReportsEveryError(t *testing.T) {
	_, err := ParseBytes("g.yaml", []byte("- a p99 < 1\n- b p99 < 1ms\n- c nope < 1\n"))
	var es yamlx.Errors
	if e, ok := err.(yamlx.Errors); ok {
		es = e
	}
	if len(es) != 2 || es[0].Pos.Line != 1 || es[1].Pos.Line != 3 {
		t.Errorf("want two errors on lines 1 and 3, got %v", err)
	}
}

// A scenario's slo section keeps its own file and positions.
func TestParseScenarioSection(t *testing.T) {
	rs, err := ParseBytes("scenario.yaml", []byte("name: s\nmix: {a: 1}\nslo:\n  - a p99 < 2ms\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.Rules) != 1 || rs.Rules[0].Pos.String() != "scenario.yaml:4:5" || rs.Rules[0].Path != "slo[0]" {
		t.Errorf("rules %+v", rs.Rules)
	}
	root, _ := yamlx.Parse("s.yaml", []byte("slo:\n  - a p99 < 2ms\n  - a p99 < 2\n"))
	_, err = ParseRaw(yamlx.Raw{Node: root.Content[1], File: "s.yaml", Path: "slo"})
	if err == nil || !strings.Contains(err.Error(), "s.yaml:3:13: slo[1]: p99") {
		t.Errorf("raw section error: %v", err)
	}
	if rs, err := ParseRaw(yamlx.Raw{}); err != nil || len(rs.Rules) != 0 {
		t.Errorf("absent section: %v %v", rs, err)
	}
}

func TestCheckOperationsCatchesTypos(t *testing.T) {
	rs := mustRules(t, "- carts.add_itme p99 < 15ms\n- orders.* p99 < 1s\n- all p99 < 1s\n- carts.* p99 < 1s\n")
	err := rs.CheckOperations([]string{"carts.add_item", "carts.view"})
	if err == nil {
		t.Fatal("typo not caught")
	}
	msg := err.Error()
	if !strings.Contains(msg, `gate.yaml:1:3: slo[0]: operation "carts.add_itme" is not in this scenario (did you mean "carts.add_item"?)`) ||
		!strings.Contains(msg, `gate.yaml:2:3: slo[1]: pattern "orders.*" matches no operation`) || strings.Count(msg, "\n") != 1 {
		t.Errorf("errors:\n%s", msg)
	}
}

func TestMatch(t *testing.T) {
	cases := []struct {
		p, s string
		ok   bool
	}{
		{"*", "carts.add_item", true},
		{"carts.*", "carts.add_item", true},
		{"carts.*", "cart.add_item", false},
		{"*.add_*", "carts.add_item", true},
		{"v?", "v1", true},
		{"v?", "v10", false},
		{"seed000[buckets=*]", "seed000[buckets=10]", true},
		{"a/*", "a/b/c", true},
		{"carts.add_item", "carts.add_item", true},
		{"carts.add_item", "carts.add_items", false},
		{"**x", "abx", true},
		{"", "", true},
		{"", "a", false},
	}
	for _, c := range cases {
		if got := Match(c.p, c.s); got != c.ok {
			t.Errorf("Match(%q, %q) = %v", c.p, c.s, got)
		}
	}
}

func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"- a p99 < 1ms\n", "- variant: x\n  checks: [\"a p50 <= 2ms\"]\n", "slo:\n - table:* partition_size < 1GB\n", "- nodes imbalance<1.3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rs, err := ParseBytes("f.yaml", []byte(s))
		if err == nil {
			for _, r := range rs.Rules {
				if r.Metric.Unit == "" || r.Cmp == "" {
					t.Fatalf("accepted an incomplete rule %+v", r)
				}
			}
		}
	})
}
