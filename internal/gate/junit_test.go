package gate

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardbench/shardbench/internal/results"
)

// The JUnit schema as CI systems read it (Jenkins' junit.xsd subset), written here
// independently of the writer's types.
type xTestSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []xTestSuite `xml:"testsuite"`
}

type xTestSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []xTestCase `xml:"testcase"`
}

type xTestCase struct {
	Name      string    `xml:"name,attr"`
	ClassName string    `xml:"classname,attr"`
	Time      string    `xml:"time,attr"`
	Failure   *xMessage `xml:"failure"`
	Skipped   *xMessage `xml:"skipped"`
	Error     *xMessage `xml:"error"`
}

type xMessage struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// ParseJUnit reads and checks a JUnit file against the schema's invariants.
func parseJUnit(t *testing.T, path string) *xTestSuites {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte(`<?xml version="1.0" encoding="UTF-8"?>`)) {
		t.Errorf("missing XML declaration: %.60s", b)
	}
	var s xTestSuites
	dec := xml.NewDecoder(bytes.NewReader(b))
	dec.Strict = true
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("not valid JUnit XML: %v\n%s", err, b)
	}
	var tests, failures, skipped int
	for _, su := range s.Suites {
		var f, sk int
		for _, c := range su.Cases {
			if c.Name == "" || c.ClassName == "" || c.Time == "" {
				t.Errorf("test case without name/classname/time: %+v", c)
			}
			if c.Failure != nil && c.Skipped != nil {
				t.Errorf("test case both failed and skipped: %s", c.Name)
			}
			if c.Failure != nil {
				f++
				if c.Failure.Message == "" {
					t.Errorf("failure without message: %s", c.Name)
				}
			}
			if c.Skipped != nil {
				sk++
			}
		}
		if su.Tests != len(su.Cases) || su.Failures != f || su.Skipped != sk || su.Errors != 0 {
			t.Errorf("suite %s counts tests=%d failures=%d skipped=%d, cases say %d/%d/%d", su.Name, su.Tests, su.Failures, su.Skipped, len(su.Cases), f, sk)
		}
		tests, failures, skipped = tests+len(su.Cases), failures+f, skipped+sk
	}
	if s.Tests != tests || s.Failures != failures || s.Skipped != skipped {
		t.Errorf("root counts %d/%d/%d, suites add to %d/%d/%d", s.Tests, s.Failures, s.Skipped, tests, failures, skipped)
	}
	return &s
}

func TestJUnitOutput(t *testing.T) {
	run := sampleRun(t)
	run.Summary.Variants = append(run.Summary.Variants, results.SummaryVariant{Name: `odd <&"> name`, Ops: run.Summary.Variants[1].Ops, Totals: run.Summary.Variants[1].Totals})
	checks := Evaluate(mustRules(t, `
- carts.add_item p50 < 10ms
- carts.add_item p99.99 < 1s
- carts.add_item error_rate < 1%
`), run)
	old := sampleRun(t)
	checks = append(checks, CompareBaseline(run, old, BaselineOptions{Tolerance: 0.1})...)
	rep := NewReport("results/x", checks, false)
	rep.Baseline = "results/old"
	path := filepath.Join(t.TempDir(), "sub", "gate.xml")
	if err := WriteJUnit(path, rep); err != nil {
		t.Fatal(err)
	}
	s := parseJUnit(t, path)
	if s.Tests != len(checks) || s.Failures != rep.Failed || s.Skipped != rep.Skipped || rep.Failed == 0 || rep.Skipped == 0 || rep.Passed == 0 {
		t.Fatalf("JUnit %d tests %d failures %d skipped; report %d checks %d failed %d skipped %d passed", s.Tests, s.Failures, s.Skipped, len(checks), rep.Failed, rep.Skipped, rep.Passed)
	}
	// One case per check, same names, failing exactly where the gate failed.
	status := map[string]string{}
	for _, c := range rep.Checks {
		status[c.Name] = c.Status
	}
	seen := map[string]bool{}
	suites := map[string]bool{}
	for _, su := range s.Suites {
		suites[su.Name] = true
		for _, c := range su.Cases {
			if seen[c.Name] {
				t.Errorf("duplicate test case name %q", c.Name)
			}
			seen[c.Name] = true
			want := status[c.Name]
			got := results.GatePass
			if c.Failure != nil {
				got = results.GateFail
			} else if c.Skipped != nil {
				got = results.GateSkip
			}
			if got != want {
				t.Errorf("%s: JUnit says %s, gate says %q", c.Name, got, want)
			}
		}
	}
	if len(seen) != len(checks) {
		t.Errorf("%d distinct cases for %d checks", len(seen), len(checks))
	}
	for _, want := range []string{"shardbench.threshold.v1", "shardbench.threshold.v2", `shardbench.threshold.odd <&"> name`, "shardbench.baseline.v1"} {
		if !suites[want] {
			t.Errorf("missing suite %q (have %v)", want, suites)
		}
	}
	// The skipped p99.99 check says why.
	for _, su := range s.Suites {
		for _, c := range su.Cases {
			if strings.Contains(c.Name, "p99.99 < 1s") && (c.Skipped == nil || !strings.Contains(c.Skipped.Message, "insufficient sample")) {
				t.Errorf("%s: %+v", c.Name, c.Skipped)
			}
		}
	}
}

func TestReportTallyAndStrict(t *testing.T) {
	cs := []results.GateCheck{{Name: "a", Status: results.GatePass}, {Name: "a", Status: results.GateSkip}}
	r := NewReport("d", cs, false)
	if r.Verdict != results.GatePass || r.Passed != 1 || r.Skipped != 1 || r.Checks[1].Name != "a #2" {
		t.Errorf("report %+v", r)
	}
	if r := NewReport("d", []results.GateCheck{{Name: "a", Status: results.GateSkip}}, true); r.Verdict != results.GateFail {
		t.Error("strict: a skip must fail")
	}
	var buf bytes.Buffer
	Print(&buf, NewReport("d", []results.GateCheck{{Name: "x", Status: results.GateFail, ValueText: "3ms", ThresholdText: "< 2ms", Source: "g.yaml:1:3"}}, false))
	if got := buf.String(); got != "FAIL  x: 3ms (threshold < 2ms) [g.yaml:1:3]\ngate: 0 passed, 1 failed, 0 skipped: FAIL\n" {
		t.Errorf("printed:\n%s", got)
	}
}
