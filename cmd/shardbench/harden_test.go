package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/shardbench/shardbench/internal/results"
)

// mainResult is one in-process run of the CLI.
type mainResult struct {
	code           int
	stdout, stderr string
}

func runMain(t *testing.T, args ...string) mainResult {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(args, &IO{Out: &out, ErrOut: &errOut})
	return mainResult{code, out.String(), errOut.String()}
}

func (r mainResult) expect(t *testing.T, code int, want ...string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(r.stdout+r.stderr, w) {
			t.Errorf("output lacks %q\nstdout:\n%s\nstderr:\n%s", w, r.stdout, r.stderr)
		}
	}
}

const hardenScenario = `name: harden
seed: 3
load:
  arrival: uniform
  max_in_flight: 4
  phases:
    - {name: a, type: constant, rate: 200, duration: 1s}
mix: {sessions.read: 1, carts.add_item: 1}
`

// goodRun writes a small results directory with the null backend.
func goodRun(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "good")
	runMain(t, "run", writeFile(t, "s.yaml", hardenScenario), "--backend", "null", "--quiet", "--no-report", "--out", out).expect(t, 0)
	return out
}

// copyDir copies a results directory (regular files and directories only).
func copyDir(t *testing.T, from, to string) string {
	t.Helper()
	err := filepath.Walk(from, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if info.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return to
}

// Flags that make no sense, or would take a run past what its results can hold, are
// usage errors (exit 2) that say the limit.
func TestRunRefusesFlagsPastCeilings(t *testing.T) {
	s := writeFile(t, "s.yaml", hardenScenario)
	out := filepath.Join(t.TempDir(), "r")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--rate-scale", "0"}, "--rate-scale must be a positive number, got 0"},
		{[]string{"--rate-scale", "1e9"}, "--rate-scale 1e+09 would schedule 2e+11 ops/s at the scenario's peak of 200, over the 1e+07 ops/s one run can schedule: at most --rate-scale 50000"},
		{[]string{"--duration", "0s"}, "--duration must be positive, got 0s"},
		{[]string{"--duration", "1000000h"}, "--duration 1000000h is over the 7d one run may last"},
		{[]string{"--duration", "100h"}, "--duration 100h: the results of 1 variant(s) over 100h would be about"},
		{[]string{"--spin", "-1s"}, "want auto or a non-negative duration"},
	} {
		args := append([]string{"run", s, "--backend", "null", "--quiet", "--no-report", "--out", out}, c.args...)
		r := runMain(t, args...)
		r.expect(t, exitUsage, c.want)
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%v: a refused run must write nothing", c.args)
		}
	}
	// Within the rate ceiling, the simulator still holds each operation until it completes
	// or times out: 5e6 ops/s with a 5 s timeout is refused at load.timeout's line; a
	// real-time backend holds at most max_in_flight.
	fast := writeFile(t, "fast.yaml", strings.Replace(hardenScenario, "rate: 200, duration: 1s", "rate: 5M, duration: 1s", 1))
	runMain(t, "run", fast, "--backend", "sim", "--quiet", "--no-report", "--out", out).
		expect(t, exitUsage, fast+":4:3: load.timeout: the simulator keeps each operation until it completes or times out: at the peak of 5e+06 ops/s with a timeout of 5s it may hold 2.5e+07 operations, over the 16777216 it can")
	// A schedule the results cannot hold, from the file: the error points at its line.
	long := strings.Replace(hardenScenario, "duration: 1s", "duration: 100h", 1)
	p := writeFile(t, "long.yaml", long)
	runMain(t, "run", p, "--backend", "null", "--quiet", "--no-report", "--out", out).
		expect(t, exitUsage, p+":7:5: load.phases: the results of 1 variant(s) over 100h would be about", "server.json would reach about 703 MiB, over the 512 MiB limit", "at most 72.8h for this scenario")
}

// Every results command agrees on a summary.json that cannot be read: bad input, exit 2,
// the file named and what is wrong with it, without blocking on a FIFO or reading a device.
func TestResultsCommandsAgreeOnUnreadableSummary(t *testing.T) {
	good := goodRun(t)
	tmp := t.TempDir()
	rules := writeFile(t, "rules.yaml", "- \"* p99 < 10s\"\n")
	bad := map[string]func(p string) error{
		"bad JSON": func(p string) error {
			return os.WriteFile(p, []byte("{\"schema\": \"shardbench/summary\",\n  \"variants\": ["), 0o644)
		},
		"directory": func(p string) error { os.Remove(p); return os.Mkdir(p, 0o755) },
		"device":    func(p string) error { os.Remove(p); return os.Symlink("/dev/zero", p) },
		"FIFO":      func(p string) error { os.Remove(p); return syscall.Mkfifo(p, 0o600) },
	}
	want := map[string]string{
		"bad JSON":  "summary.json:2:16: not valid JSON: unexpected end of JSON input",
		"directory": "summary.json: not a regular file (a directory); a results summary must be one",
		"device":    "summary.json: not a regular file (a character device); a results summary must be one",
		"FIFO":      "summary.json: not a regular file (a named pipe); a results summary must be one",
	}
	for name, corrupt := range bad {
		dir := copyDir(t, good, filepath.Join(tmp, strings.ReplaceAll(name, " ", "-")))
		if err := corrupt(filepath.Join(dir, results.SummaryFile)); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"report", dir, "--out", filepath.Join(tmp, "rep")},
			{"compare", dir, "--out", filepath.Join(tmp, "cmp")},
			{"gate", dir, "--gate", rules},
			{"merge", dir, good, "--out", filepath.Join(tmp, "merged")},
			{"calibrate", dir, "--out", filepath.Join(tmp, "cal.yaml")},
		} {
			t.Run(name+"/"+args[0], func(t *testing.T) {
				runMain(t, args...).expect(t, exitUsage, want[name])
			})
		}
	}
}

func TestUnknownCommandIsAUsageError(t *testing.T) {
	runMain(t, "frobnicate").expect(t, exitUsage, `unknown command "frobnicate"`)
}

// A directory that lost its summary.json is not presented as a plan; damaged interval
// logs and a torn time series are named by report and gate.
func TestPartialResultsAreNamed(t *testing.T) {
	good := goodRun(t)
	tmp := t.TempDir()
	rules := writeFile(t, "rules.yaml", "- \"* count >= 1\"\n")

	nosum := copyDir(t, good, filepath.Join(tmp, "nosum"))
	os.Remove(filepath.Join(nosum, results.SummaryFile))
	runMain(t, "report", nosum, "--out", filepath.Join(tmp, "r1")).
		expect(t, exitUsage, "incomplete results directory: it holds a run's timeseries.jsonl and histograms/*/*.hlog but no summary.json")

	badlog := copyDir(t, good, filepath.Join(tmp, "badlog"))
	hlog := filepath.Join(badlog, "histograms", "default", "sessions.read.hlog")
	os.WriteFile(hlog, []byte("garbage that is not an interval log\n"), 0o644)
	runMain(t, "report", badlog, "--out", filepath.Join(tmp, "r2")).
		expect(t, exitOK, "warning: "+hlog+":1: not an HdrHistogram interval line")
	runMain(t, "gate", badlog, "--gate", rules).
		expect(t, exitFailure, "FAIL  [*] results intact", hlog+":1: not an HdrHistogram interval line", "PASS  [default] sessions.read count >= 1")

	torn := copyDir(t, good, filepath.Join(tmp, "torn"))
	ts := filepath.Join(torn, results.TimeseriesFile)
	b, _ := os.ReadFile(ts)
	os.WriteFile(ts, b[:len(b)-20], 0o644)
	runMain(t, "report", torn, "--out", filepath.Join(tmp, "r3")).
		expect(t, exitOK, "warning: "+ts+":", ": not a time series point", "cut short when the run was killed")
}

// What the scenario gets wrong is refused at its line: an event on a node the cluster does
// not have, a backends section no backend reads, escape sequences in names.
func TestValidateRefusesWhatRunWouldIgnore(t *testing.T) {
	design, _ := filepath.Abs("../../scenarios/designs/seed000.yaml")
	base := hardenScenario + "designs: [{design: " + design + "}]\n"
	event := writeFile(t, "event.yaml", base+"events:\n  - {at: 500ms, action: node_down, node: dc9-n1}\n")
	runMain(t, "validate", event).expect(t, exitUsage, event+":11:42: events[0].node: design seed000's simulated cluster has no node \"dc9-n1\" (it has nodes dc1-n1 … dc1-n6, or 1 to 6)")
	runMain(t, "run", event, "--quiet", "--no-report", "--out", filepath.Join(t.TempDir(), "r")).expect(t, exitUsage, "has no node \"dc9-n1\"")
	ok := writeFile(t, "ok.yaml", base+"events:\n  - {at: 100ms, action: add_node}\n  - {at: 500ms, action: node_down, node: dc1-n7}\n  - {at: 600ms, action: node_up, node: \"3\"}\n")
	runMain(t, "validate", ok).expect(t, exitOK)

	oracle := writeFile(t, "oracle.yaml", base+"backends: {oracle: {}}\n")
	runMain(t, "validate", oracle).expect(t, exitUsage, "backends.oracle: no such backend (backends: cassandra, delay, mongo, null, sim)")

	ansi := writeFile(t, "ansi.yaml", strings.Replace(hardenScenario, "name: harden", `name: "x\e[2Jy"`, 1))
	r := runMain(t, "validate", ansi)
	r.expect(t, exitUsage, ansi+":1:7: control character U+001B in a value: terminal escape sequences are refused")
	if strings.ContainsRune(r.stdout+r.stderr, 0x1b) {
		t.Errorf("an escape reached the terminal: %q", r.stderr)
	}
}

// Names read from a results directory written elsewhere reach the terminal escaped.
func TestResultsNamesAreEscaped(t *testing.T) {
	good := goodRun(t)
	dir := copyDir(t, good, filepath.Join(t.TempDir(), "ansi"))
	p := filepath.Join(dir, results.SummaryFile)
	b, _ := os.ReadFile(p)
	os.WriteFile(p, bytes.ReplaceAll(b, []byte(`"name": "default"`), []byte(`"name": "evil\u001b[2J\u009b31m"`)), 0o644)
	r := runMain(t, "gate", dir, "--gate", writeFile(t, "rules.yaml", "- \"* count >= 1\"\n"))
	r.expect(t, exitOK, `[evil\x1b[2J\u009b31m] sessions.read count >= 1`)
	if strings.ContainsAny(r.stdout+r.stderr, "\x1b\u009b") {
		t.Errorf("an escape reached the terminal: %q", r.stdout)
	}
}

// No target form lets a secret reach stdout or stderr: connect errors, unknown
// parameters, bad ports, options the drivers refuse.
func TestTargetsNeverEchoSecrets(t *testing.T) {
	for _, env := range []string{"SHARDBENCH_MONGODB_USERNAME", "SHARDBENCH_MONGODB_PASSWORD", "SHARDBENCH_MONGODB_PASSWORD_FILE",
		"SHARDBENCH_CASSANDRA_USERNAME", "SHARDBENCH_CASSANDRA_PASSWORD", "SHARDBENCH_CASSANDRA_PASSWORD_FILE"} {
		t.Setenv(env, "") // restored after the test
		os.Unsetenv(env)
	}
	mongoDesign, _ := filepath.Abs("../../scenarios/designs/seed001-mongo.yaml")
	cassDesign, _ := filepath.Abs("../../scenarios/designs/seed000.yaml")
	scn := func(design, section string) string {
		return writeFile(t, "s.yaml", hardenScenario+"designs: [{design: "+design+"}]\nbackends:\n  "+section+"\n")
	}
	mongo := scn(mongoDesign, "mongo: {connect_timeout: 300ms, server_selection_timeout: 300ms}")
	cass := scn(cassDesign, "cassandra: {connect_timeout: 300ms}")
	const host = "127.0.0.9:1"
	for _, c := range []struct {
		backend, scenario, target string
	}{
		{"mongo", mongo, "mongodb://" + host + "/?tls=true&tlsCertificateKeyFilePassword=S3CRETtls"},
		{"mongo", mongo, "mongodb://" + host + "/?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:S3CRETaws"},
		{"mongo", mongo, "mongodb://u:S3CRETpw@" + host + "/"},
		{"mongo", mongo, "mongodb://" + host + "/?apiToken=S3CRETtok&appName=x"},
		{"cassandra", cass, "cassandra://127.0.0.9?password=S3CRETcass"},
		{"cassandra", cass, "cassandra://u:S3CRETpw@127.0.0.9"},
		{"cassandra", cass, "cassandra://127.0.0.9:x?token=S3CRETtok"},
	} {
		r := runMain(t, "run", c.scenario, "--backend", c.backend, "--target", c.target, "--quiet", "--no-report", "--out", filepath.Join(t.TempDir(), "r"))
		if r.code == exitOK {
			t.Errorf("%s: connected to nothing?", c.target)
		}
		if strings.Contains(r.stdout+r.stderr, "S3CRET") {
			t.Errorf("%s: a secret reached the output:\n%s%s", c.target, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stderr, "***") {
			t.Errorf("%s: the target is not named (redacted):\n%s", c.target, r.stderr)
		}
	}
	// analyze --server-check keeps its failure in analysis.json: no secret there either.
	out := filepath.Join(t.TempDir(), "an")
	r := runMain(t, "analyze", mongo, "--server-check", "--out", out, "--target", "mongodb://"+host+"/?tlsCertificateKeyFilePassword=S3CRETtls")
	b, _ := os.ReadFile(filepath.Join(out, results.AnalysisFile))
	if strings.Contains(r.stdout+r.stderr+string(b), "S3CRET") {
		t.Errorf("analyze: a secret reached the output or analysis.json:\n%s%s", r.stderr, b)
	}
}
