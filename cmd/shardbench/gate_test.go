package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/engine"
	"github.com/shardbench/shardbench/internal/gate"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/schedule"
	"github.com/shardbench/shardbench/workloads"
)

// ---- run --gate, in process ----

// The error rule names a class: error_rate also counts dropped operations, and a busy
// machine (CI runs this package beside three Cassandra nodes) may stall the client at the
// schedule's end, when an operation still waiting for a worker is dropped. The delay
// backend here injects no errors, so no class may have any.
const gatedScenario = smallScenario + `slo:
  - sessions.read p50 < 50ms
  - "* error_rate.timeout <= 0"
  - all achieved_ratio >= 0.5
`

func TestRunGatePasses(t *testing.T) {
	path := writeFile(t, "gated.yaml", gatedScenario)
	io, stdout, stderr := testIO()
	out := filepath.Join(t.TempDir(), "res")
	junit := filepath.Join(t.TempDir(), "gate.xml")
	err := runRun(context.Background(), &RunOptions{IO: io, ScenarioPath: path, Backend: "delay", Out: out, RateScale: 0.25, Quiet: true, Gate: gateScenario, JUnit: junit})
	if err != nil {
		t.Fatalf("run --gate: %v\n%s%s", err, stdout, stderr)
	}
	for _, want := range []string{"PASS  [default] sessions.read p50 < 50ms: ", "PASS  [default] carts.add_item error_rate.timeout <= 0: 0%", "PASS  [default] all achieved_ratio >= 0.5", "gate: 4 passed, 0 failed, 0 skipped: PASS"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	rep, err := results.ReadGate(out)
	if err != nil || rep == nil || rep.Verdict != "pass" || rep.Passed != 4 || rep.Sources[0] != path+" (slo)" {
		t.Errorf("gate.json: %+v %v", rep, err)
	}
	if _, err := os.Stat(junit); err != nil {
		t.Errorf("junit: %v", err)
	}
}

func TestRunGateFailsWithExitOne(t *testing.T) {
	path := writeFile(t, "gated.yaml", strings.Replace(gatedScenario, "sessions.read p50 < 50ms", "sessions.read p50 < 10us", 1))
	io, stdout, _ := testIO()
	out := filepath.Join(t.TempDir(), "res")
	err := runRun(context.Background(), &RunOptions{IO: io, ScenarioPath: path, Backend: "delay", Out: out, RateScale: 0.25, Quiet: true, Gate: gateScenario})
	if exitCode(err) != exitFailure || err.Error() != "gate: 1 check failed" {
		t.Fatalf("want exit 1 'gate: 1 check failed', got %d %v", exitCode(err), err)
	}
	if !strings.Contains(stdout.String(), "FAIL  [default] sessions.read p50 < 10us: ") || !strings.Contains(stdout.String(), "gated.yaml:13:5]") {
		t.Errorf("stdout:\n%s", stdout)
	}
	if _, err := results.Read(out); err != nil {
		t.Errorf("the results must be kept when the gate fails: %v", err)
	}
}

// Bad rules are bad input, reported before anything runs.
func TestRunGateBadInputExitsTwoBeforeRunning(t *testing.T) {
	cases := []struct {
		name, scenario, gateFile, gate, want string
	}{
		{"unparsable rule", strings.Replace(gatedScenario, "sessions.read p50 < 50ms", "sessions.read p50 < 50", 1), "", gateScenario, `gated.yaml:13:25: slo[0]: p50: expected a duration`},
		{"operation typo", strings.Replace(gatedScenario, "sessions.read p50", "sessions.raed p50", 1), "", gateScenario, `slo[0]: operation "sessions.raed" is not in this scenario (did you mean "sessions.read"?)`},
		{"no slo section", smallScenario, "", gateScenario, "has no slo section"},
		{"gate file typo", smallScenario, "- carts.add_ite p99 < 1s\n", "FILE", `rules.yaml:1:3: slo[0]: operation "carts.add_ite" is not in this scenario (did you mean "carts.add_item"?)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, "gated.yaml", c.scenario)
			gateArg := c.gate
			if c.gateFile != "" {
				gateArg = writeFile(t, "rules.yaml", c.gateFile)
			}
			io, _, _ := testIO()
			out := filepath.Join(t.TempDir(), "res")
			err := runRun(context.Background(), &RunOptions{IO: io, ScenarioPath: path, Backend: "delay", Out: out, Quiet: true, Gate: gateArg})
			if exitCode(err) != exitUsage || !strings.Contains(err.Error(), c.want) {
				t.Errorf("exit %d: %v\nwant 2 with %q", exitCode(err), err, c.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("nothing may run on bad input (results dir: %v)", err)
			}
		})
	}
}

func TestRunGateFlagForms(t *testing.T) {
	io, _, _ := testIO()
	var got *RunOptions
	cmd := newRunCmd(io, func(o *RunOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"s.yaml", "--gate", "--junit", "j.xml", "--strict"})
	if err := cmd.Execute(); err != nil || got.Gate != gateScenario || got.JUnit != "j.xml" || !got.GateStrict {
		t.Errorf("--gate alone: %v %+v", err, got)
	}
	cmd = newRunCmd(io, func(o *RunOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"s.yaml", "--gate=ci/gate.yaml"})
	if err := cmd.Execute(); err != nil || got.Gate != "ci/gate.yaml" {
		t.Errorf("--gate=FILE: %v %+v", err, got)
	}
	cmd = newRunCmd(io, func(o *RunOptions) error { return nil })
	cmd.SetArgs([]string{"s.yaml", "--gate", "ci/gate.yaml"})
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	if err := cmd.Execute(); exitCode(err) != exitUsage || !strings.Contains(err.Error(), "write --gate=FILE") {
		t.Errorf("--gate FILE with a space: %v", err)
	}
}

// ---- results directories for the binary tests ----

// makeResults records a run of two operations on the delay backend (exponential
// latencies with the given mean; seed picks the sample) in a synctest bubble, so it is
// fast and exact. slo, when not empty, goes into the scenario as run.
func makeResults(t *testing.T, dir string, mean time.Duration, seed uint64, rate float64, slo string) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		sc := &scenario.Scenario{Name: "bin", Seed: 1, Load: scenario.Load{
			Arrival: "uniform", MaxInFlight: 512, OnFull: scenario.OnFullQueue, LateAfter: 100 * time.Millisecond,
			Timeout: time.Second, DrainTimeout: 5 * time.Second,
			Phases: []scenario.Phase{{Name: "c", Type: "constant", Rate: scenario.Rate(rate), Duration: 5 * time.Second}},
		}}
		sch := schedule.New(sc)
		d, err := results.Create(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		be := backend.NewDelay(backend.DelayOptions{Latency: mean, Distribution: "exponential", Seed: seed})
		cfg := engine.Config{
			Scenario: sc, Schedule: sch, Dir: d,
			Ops:       []engine.OpInfo{{Name: "carts.add_item", Kind: "write"}, {Name: "carts.view", Kind: "read"}},
			NewSource: func() (engine.Source, error) { return &cycle2{a: sch.Arrivals()}, nil },
			Variants:  []engine.VariantBackend{{Name: "v1", Backend: be}},
			SpinBelow: -1,
			Digest:    "sha256:bin",
		}
		if _, err := engine.Run(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
	})
	body := "name: bin\n"
	if slo != "" {
		body += "slo:\n" + slo
	}
	if err := os.WriteFile(filepath.Join(dir, results.ScenarioFile), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

type cycle2 struct {
	a *schedule.Arrivals
	n uint64
}

func (c *cycle2) Next(op *workloads.Op) bool {
	t, ok := c.a.Next()
	if !ok {
		return false
	}
	*op = workloads.Op{Seq: c.n, Type: uint16(c.n % 2), Intended: t}
	c.n++
	return true
}

// ---- the built binary ----

type result struct {
	code           int
	stdout, stderr string
}

func buildBinary(t *testing.T) string {
	t.Helper()
	return buildBinaryAt(t, "")
}

func execBin(t *testing.T, bin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, so.String(), se.String()}
}

func (r result) expect(t *testing.T, code int, stdout, stderr []string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, notPassing(r.stdout), r.stderr)
	}
	for _, s := range stdout {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("stdout lacks %q:\n%s", s, notPassing(r.stdout))
		}
	}
	for _, s := range stderr {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
		}
	}
}

// Exit codes of gate and merge, checked on the built binary: 0 all pass, 1 a check fails,
// 2 bad input.
func TestGateAndMergeBinary(t *testing.T) {
	bin := buildBinary(t)
	tmp := t.TempDir()
	// Two runs of the same system (different seeds), and one 40% slower; 50,000
	// operations each (25,000 per operation).
	base, same, slow := filepath.Join(tmp, "base"), filepath.Join(tmp, "same"), filepath.Join(tmp, "slow")
	// Delay latencies are a hash of (sequence number XOR seed): seeds far apart draw
	// independent samples.
	makeResults(t, base, 2*time.Millisecond, 1<<32, 10000, "  - carts.add_item p99 < 50ms\n  - \"carts.* p99.99 < 1s\"\n")
	makeResults(t, same, 2*time.Millisecond, 2<<32, 10000, "")
	makeResults(t, slow, 2800*time.Microsecond, 3<<32, 10000, "")
	write := func(name, body string) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pass := write("pass.yaml", "- carts.add_item p99 < 50ms\n- \"carts.* error_rate == 0\"\n- all achieved_ratio >= 0.95\n- carts.view service.p50 < 5ms\n")
	fail := write("fail.yaml", "- carts.add_item p99 < 1ms\n- carts.view p50 < 50ms\n- carts.view p99.99 < 1s\n")
	bad := write("bad.yaml", "- carts.add_item p99 < 1ms\n- carts.add_item p99 <\n")

	t.Run("pass", func(t *testing.T) {
		execBin(t, bin, "gate", base, "--gate", pass).expect(t, 0,
			[]string{"PASS  [v1] carts.add_item p99 < 50ms: ", "PASS  [v1] carts.view error_rate == 0: 0%", "gate: 5 passed, 0 failed, 0 skipped: PASS"}, nil)
		rep, err := results.ReadGate(base)
		if err != nil || rep == nil || rep.Passed != 5 || rep.Verdict != "pass" {
			t.Errorf("gate.json: %+v %v", rep, err)
		}
	})
	t.Run("fail with junit", func(t *testing.T) {
		junit := filepath.Join(tmp, "out", "gate.xml")
		r := execBin(t, bin, "gate", base, "--gate", fail, "--junit", junit)
		r.expect(t, 1, []string{"FAIL  [v1] carts.add_item p99 < 1ms: ", "(threshold < 1ms)", "SKIP  [v1] carts.view p99.99 < 1s: ", "insufficient sample: 25,000 values, p99.99 needs at least 100,000",
			"gate: 1 passed, 1 failed, 1 skipped: FAIL"}, []string{"gate: 1 check failed"})
		b, err := os.ReadFile(junit)
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
			Skipped  int `xml:"skipped,attr"`
			Suites   []struct {
				Cases []struct {
					Name    string    `xml:"name,attr"`
					Failure *struct{} `xml:"failure"`
					Skipped *struct{} `xml:"skipped"`
				} `xml:"testcase"`
			} `xml:"testsuite"`
		}
		if err := xml.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		if s.Tests != 3 || s.Failures != 1 || s.Skipped != 1 || len(s.Suites) != 1 || len(s.Suites[0].Cases) != 3 || s.Suites[0].Cases[0].Failure == nil || s.Suites[0].Cases[2].Skipped == nil {
			t.Errorf("junit: %+v\n%s", s, b)
		}
	})
	t.Run("strict turns a skip into a failure", func(t *testing.T) {
		execBin(t, bin, "gate", base, "--strict", "--gate", write("skip.yaml", "- carts.view p99.99 < 1s\n")).expect(t, 1,
			[]string{"SKIP  [v1] carts.view p99.99 < 1s", "(--strict: skipped checks fail)"}, []string{"1 check was skipped (--strict)"})
	})
	t.Run("rules from the scenario as run", func(t *testing.T) {
		execBin(t, bin, "gate", base).expect(t, 0, []string{"PASS  [v1] carts.add_item p99 < 50ms", "SKIP  [v1] carts.view p99.99 < 1s", "gate: 1 passed, 0 failed, 2 skipped: PASS"}, nil)
	})
	t.Run("bad input exits 2", func(t *testing.T) {
		execBin(t, bin, "gate", base, "--gate", bad).expect(t, 2, nil, []string{"bad.yaml:2:3: slo[1]: cannot read rule"})
		execBin(t, bin, "gate", filepath.Join(tmp, "nope")).expect(t, 2, nil, []string{"not a results directory"})
		execBin(t, bin, "gate", same).expect(t, 2, nil, []string{"nothing to check"})
		execBin(t, bin, "gate", base, "--baseline", same, "--tolerance", "lots").expect(t, 2, nil, []string{`--tolerance "lots"`})
		execBin(t, bin, "gate", base, "--baseline", filepath.Join(tmp, "nope")).expect(t, 2, nil, []string{"--baseline"})
		execBin(t, bin, "gate").expect(t, 2, nil, []string{"needs a results directory"})
		execBin(t, bin, "gate", base, "--frobnicate").expect(t, 2, nil, []string{"unknown flag"})
	})
	t.Run("an interrupted run fails the gate", func(t *testing.T) {
		inc := filepath.Join(tmp, "incomplete")
		makeResults(t, inc, time.Millisecond, 9<<32, 1000, "")
		sum, err := results.Read(inc)
		if err != nil {
			t.Fatal(err)
		}
		sum.Complete, sum.Interrupted = false, "received SIGINT"
		d := &results.Dir{Path: inc}
		if err := d.WriteSummary(sum); err != nil {
			t.Fatal(err)
		}
		execBin(t, bin, "gate", inc, "--gate", pass).expect(t, 1, []string{"FAIL  [*] results complete: incomplete — the run did not finish: received SIGINT"}, nil)
	})
	t.Run("baseline: noise passes", func(t *testing.T) {
		r := execBin(t, bin, "gate", same, "--baseline", base, "--tolerance", "10%")
		r.expect(t, 0, []string{"PASS  [v1] carts.add_item distribution vs baseline", "SKIP  [v1] carts.add_item p99.99 vs baseline", "insufficient sample"}, nil)
		t.Logf("noise:\n%s", r.stdout)
	})
	t.Run("baseline: a 40% slowdown fails", func(t *testing.T) {
		r := execBin(t, bin, "gate", slow, "--baseline", base, "--tolerance", "10%")
		r.expect(t, 1, []string{"FAIL  [v1] carts.add_item p50 vs baseline", "FAIL  [v1] carts.add_item distribution vs baseline", "regression: typical slowdown ×1.3"}, nil)
		t.Logf("slowdown:\n%s", r.stdout)
		// Within a 50% tolerance the same slowdown passes.
		execBin(t, bin, "gate", slow, "--baseline", base, "--tolerance", "0.5").expect(t, 0, nil, nil)
	})
	t.Run("merge", func(t *testing.T) {
		merged := filepath.Join(tmp, "merged")
		execBin(t, bin, "merge", base, same, "--out", merged).expect(t, 0, []string{"v1: 100000 operations (100000 completed)"}, []string{"merged 2 repeated runs"})
		sum, err := results.Read(merged)
		if err != nil || sum.Variants[0].Op("carts.add_item").Response.Count != 50000 {
			t.Fatalf("merged summary: %v", err)
		}
		// With 50,000 values per operation p99.9 is judged on the merged results.
		execBin(t, bin, "gate", merged, "--gate", write("merged.yaml", "- carts.* p99.9 < 100ms\n- carts.* p99.99 < 1s\n")).expect(t, 0,
			[]string{"PASS  [v1] carts.add_item p99.9 < 100ms", "SKIP  [v1] carts.add_item p99.99 < 1s"}, nil)
		execBin(t, bin, "merge", base, "--out", filepath.Join(tmp, "m2")).expect(t, 2, nil, []string{"at least two results directories"})
		execBin(t, bin, "merge", base, same).expect(t, 2, nil, []string{"--out"})
		execBin(t, bin, "merge", base, filepath.Join(tmp, "nope"), "--out", filepath.Join(tmp, "m3")).expect(t, 2, nil, []string{"not a results directory"})
		execBin(t, bin, "merge", base, same, "--out", merged).expect(t, 2, nil, []string{"already holds results"})
		// A run of another scenario does not pool with these.
		other := filepath.Join(tmp, "other")
		makeResults(t, other, time.Millisecond, 5<<32, 1000, "")
		osum, err := results.Read(other)
		if err != nil {
			t.Fatal(err)
		}
		osum.Scenario.Name, osum.Scenario.Digest = "other", "sha256:other"
		if err := (&results.Dir{Path: other}).WriteSummary(osum); err != nil {
			t.Fatal(err)
		}
		execBin(t, bin, "merge", base, other, "--out", filepath.Join(tmp, "m4")).expect(t, 2, nil, []string{`different scenarios, "bin" and "other"`})
	})
}

// ---- the example CI job stays in step with the CLI ----

// The shardbench commands in examples/github-actions.yml parse with this CLI's flags, and
// the compose files it starts exist.
func TestExampleCIJobMatchesTheCLI(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "github-actions.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			Strategy struct {
				Matrix struct {
					Include []map[string]string `yaml:"include"`
				} `yaml:"matrix"`
			} `yaml:"strategy"`
			Steps []struct {
				Name string `yaml:"name"`
				Run  string `yaml:"run"`
				Uses string `yaml:"uses"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatalf("not valid YAML: %v", err)
	}
	job, ok := wf.Jobs["gate"]
	if !ok || len(job.Steps) == 0 {
		t.Fatalf("no gate job: %+v", wf)
	}
	for _, m := range job.Strategy.Matrix.Include {
		if _, err := os.Stat(filepath.Join("..", "..", m["compose"])); err != nil {
			t.Errorf("matrix %s: compose file: %v", m["db"], err)
		}
	}
	expr := regexp.MustCompile(`\$\{\{[^}]*\}\}`)
	commands := map[string]int{}
	for _, st := range job.Steps {
		line := strings.TrimSpace(expr.ReplaceAllString(st.Run, "X"))
		if !strings.HasPrefix(line, "bin/shardbench ") {
			continue
		}
		args := shellWords(strings.TrimPrefix(line, "bin/shardbench "))
		io, _, _ := testIO()
		root := &cobra.Command{Use: "shardbench", SilenceErrors: true, SilenceUsage: true}
		root.AddCommand(
			newRunCmd(io, func(*RunOptions) error { return nil }),
			newGateCmd(io, func(*GateOptions) error { return nil }),
			newValidateCmd(io, func(*ValidateOptions) error { return nil }),
			newMergeCmd(io, func(*MergeOptions) error { return nil }),
		)
		root.SetArgs(args)
		if err := root.Execute(); err != nil {
			t.Errorf("step %q: shardbench %s: %v", st.Name, strings.Join(args, " "), err)
		}
		commands[args[0]]++
	}
	if commands["run"] != 1 || commands["gate"] != 1 || commands["validate"] != 1 {
		t.Errorf("the example should validate, run --gate and gate --baseline: %v", commands)
	}
}

// shellWords splits a command line on blanks, honouring single and double quotes.
func shellWords(s string) []string {
	var out []string
	var cur strings.Builder
	var quote rune
	in := false
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote == 0 && (r == '\'' || r == '"'):
			quote, in = r, true
		case quote == 0 && (r == ' ' || r == '\n' || r == '\t'):
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// examples/gate.yaml parses and names only operations of the scenario it is written for.
func TestExampleGateFileFitsBlackFriday(t *testing.T) {
	rs, err := gate.ParseFile(filepath.Join("..", "..", "examples", "gate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "scenarios", "black-friday.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var sc struct {
		Mix yaml.Node `yaml:"mix"`
	}
	if err := yaml.Unmarshal(b, &sc); err != nil {
		t.Fatal(err)
	}
	var ops []string
	for i := 0; i+1 < len(sc.Mix.Content); i += 2 {
		ops = append(ops, sc.Mix.Content[i].Value)
	}
	if len(ops) < 10 || len(rs.Rules) < 10 {
		t.Fatalf("%d operations, %d rules", len(ops), len(rs.Rules))
	}
	if err := rs.CheckOperations(ops); err != nil {
		t.Error(err)
	}
}

// validate decodes the slo section strictly, with positions.
func TestValidateReportsSLOErrors(t *testing.T) {
	path := writeFile(t, "v.yaml", smallScenario+"slo:\n  - sessions.read p99 < 15ms\n  - sessions.read p99 << 15ms\n")
	io, _, stderr := testIO()
	err := runValidate(&ValidateOptions{IO: io, Files: []string{path}})
	if exitCode(err) != exitUsage || !strings.Contains(stderr.String(), "v.yaml:14:24: slo[1]: p99: expected a duration") {
		t.Errorf("exit %d, stderr:\n%s", exitCode(err), stderr)
	}
}

// notPassing keeps a gate's output readable in a failure message: the lines that are not
// passing checks (a run's gate prints hundreds), and how many passing ones were left out.
func notPassing(out string) string {
	var b strings.Builder
	passed := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "PASS  ") {
			passed++
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "(%d passing checks not shown)\n", passed)
	return b.String()
}
