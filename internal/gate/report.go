package gate

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/shardbench/shardbench/internal/results"
)

// NewReport assembles a report from checks and tallies it.
func NewReport(dir string, checks []results.GateCheck, strict bool) *results.GateReport {
	r := &results.GateReport{Results: dir, EvaluatedAt: time.Now().UTC(), Strict: strict, Checks: uniqueNames(checks)}
	r.Tally()
	return r
}

// uniqueNames suffixes repeated check names (#2, #3) so every JUnit test case is distinct.
func uniqueNames(checks []results.GateCheck) []results.GateCheck {
	seen := map[string]int{}
	for i := range checks {
		seen[checks[i].Name]++
		if n := seen[checks[i].Name]; n > 1 {
			checks[i].Name = fmt.Sprintf("%s #%d", checks[i].Name, n)
		}
	}
	return checks
}

// Print writes one line per check and a closing tally:
//
//	PASS  [v1] carts.add_item p99 < 15ms: 12.3ms
//	FAIL  [v1] carts.add_item p99.9 < 40ms: 52.1ms (threshold < 40ms) — 12,000 values
//	SKIP  [v1] carts.add_item p99.99 < 60ms: 58ms — insufficient sample: ...
func Print(w io.Writer, r *results.GateReport) {
	for _, c := range r.Checks {
		fmt.Fprintln(w, Line(c))
	}
	verdict := "PASS"
	if r.Verdict != results.GatePass {
		verdict = "FAIL"
	}
	extra := ""
	if r.Strict && r.Skipped > 0 {
		extra = " (--strict: skipped checks fail)"
	}
	fmt.Fprintf(w, "gate: %d passed, %d failed, %d skipped: %s%s\n", r.Passed, r.Failed, r.Skipped, verdict, extra)
}

// Line formats one check: status, name, value, threshold and why.
func Line(c results.GateCheck) string {
	var b strings.Builder
	b.WriteString(strings.ToUpper(c.Status))
	b.WriteString("  ")
	b.WriteString(c.Name)
	b.WriteString(": ")
	if c.ValueText == "" {
		b.WriteString("-")
	} else {
		b.WriteString(c.ValueText)
	}
	if c.ThresholdText != "" && c.ThresholdText != "-" {
		fmt.Fprintf(&b, " (threshold %s)", c.ThresholdText)
	}
	if c.Detail != "" {
		b.WriteString(" — ")
		b.WriteString(c.Detail)
	}
	if c.Source != "" && c.Status != results.GatePass {
		fmt.Fprintf(&b, " [%s]", c.Source)
	}
	return b.String()
}

// JUnit XML, the subset CI systems read (Jenkins, GitLab, GitHub test reporters).

// JUnitSuites is <testsuites>.
type JUnitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []JUnitSuite `xml:"testsuite"`
}

// JUnitSuite is one <testsuite>: one per variant and kind of check.
type JUnitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []JUnitProperty `xml:"properties>property,omitempty"`
	Cases      []JUnitCase     `xml:"testcase"`
}

// JUnitProperty is a <property name= value=>.
type JUnitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// JUnitCase is one <testcase>: one check.
type JUnitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *JUnitMessage `xml:"failure,omitempty"`
	Skipped   *JUnitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

// JUnitMessage is a <failure> or <skipped> element.
type JUnitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// ToJUnit converts a report: a test suite per (kind, variant), a test case per check.
func ToJUnit(r *results.GateReport) *JUnitSuites {
	out := &JUnitSuites{Name: "shardbench gate " + r.Results, Time: "0"}
	index := map[string]int{}
	for _, c := range r.Checks {
		suite := fmt.Sprintf("shardbench.%s.%s", c.Kind, c.Variant)
		if c.Variant == "" {
			suite = "shardbench." + c.Kind
		}
		i, ok := index[suite]
		if !ok {
			i = len(out.Suites)
			index[suite] = i
			s := JUnitSuite{Name: suite, Time: "0", Timestamp: r.EvaluatedAt.Format("2006-01-02T15:04:05")}
			s.Properties = append(s.Properties, JUnitProperty{Name: "results", Value: r.Results})
			if r.Baseline != "" {
				s.Properties = append(s.Properties, JUnitProperty{Name: "baseline", Value: r.Baseline})
			}
			out.Suites = append(out.Suites, s)
		}
		s := &out.Suites[i]
		tc := JUnitCase{Name: c.Name, ClassName: suite, Time: "0", SystemOut: Line(c)}
		switch c.Status {
		case results.GateFail:
			tc.Failure = &JUnitMessage{Message: failureMessage(c), Type: c.Kind, Text: Line(c)}
			s.Failures++
		case results.GateSkip:
			msg := c.Detail
			if msg == "" {
				msg = "not judged"
			}
			tc.Skipped = &JUnitMessage{Message: msg}
			s.Skipped++
		}
		s.Tests++
		s.Cases = append(s.Cases, tc)
	}
	for _, s := range out.Suites {
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Skipped += s.Skipped
	}
	return out
}

func failureMessage(c results.GateCheck) string {
	msg := c.ValueText
	if c.ThresholdText != "" && c.ThresholdText != "-" {
		msg += ", threshold " + c.ThresholdText
	}
	if c.Detail != "" {
		msg += ": " + c.Detail
	}
	return msg
}

// WriteJUnit writes a report as JUnit XML.
func WriteJUnit(path string, r *results.GateReport) error {
	b, err := xml.MarshalIndent(ToJUnit(r), "", "  ")
	if err != nil {
		return err
	}
	data := append([]byte(xml.Header), b...)
	data = append(data, '\n')
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return results.WriteFileAtomic(path, data)
}
