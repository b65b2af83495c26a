package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/results"
)

// The binary as CI uses it: a shipped scenario with every seed design, gated by a rules
// file, exit 0 when the rules hold and 1 when one fails, the results kept either way.
func TestRunShippedScenarioWithGateBinary(t *testing.T) {
	bin := buildBinary(t)
	tmp := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// The rules judge what the schedule fixes (the operations scheduled, errors) and a
	// latency bound no machine misses. The operations completed (count) are left out: one
	// still waiting for a worker when a busy machine's schedule ends is dropped (CI saw
	// seed002 complete 582 of its 631). So is achieved_ratio, which depends on how busy the
	// machine is in the run's last moments (a 200 ms stall on a 2 s run is 0.9): a speed
	// target, not behaviour. So is error_rate, which counts dropped operations. The error
	// rule names a class instead: an operation a design does not serve is never
	// not_supported.
	// Every seed design leaves some operations to another store (62-70% of the stream is
	// served): "all" counts the served ones, and a rule on sessions.read names variants
	// whose design serves it (seed001-mongo and seed002 do not: their checks would SKIP).
	pass := write("pass.yaml", "- all scheduled >= 600\n- all served_share >= 0.6\n- \"* error_rate.not_supported == 0\"\n- sessions.read@seed000 p50 < 2s\n- sessions.read@seed004 p50 < 2s\n")
	fail := write("fail.yaml", "- all scheduled >= 600\n- sessions.read@seed000 p50 < 1us\n")
	scenario := filepath.Join("..", "..", "scenarios", "smoke.yaml")
	// 2 s at 500 ops/s over 25 operation types: about 40 samples per operation, enough for
	// the gate's small-sample rule to judge a p50 (it needs 20).

	t.Run("pass", func(t *testing.T) {
		out := filepath.Join(tmp, "pass")
		junit := filepath.Join(tmp, "pass.xml")
		r := execBin(t, bin, "run", scenario, "--backend", "delay", "--duration", "2s", "--rate-scale", "5", "--quiet", "--no-report",
			"--out", out, "--gate="+pass, "--junit", junit)
		r.expect(t, 0, []string{"PASS  [seed000] all scheduled >= 600: 6", "PASS  [seed000] all served_share >= 0.6: 6", "PASS  [seed004] sessions.read p50 < 2s", ": PASS"}, nil)
		if strings.Contains(r.stdout, "FAIL ") || strings.Contains(r.stdout, "SKIP ") {
			t.Errorf("no check may fail or be skipped:\n%s", notPassing(r.stdout))
		}
		sum, err := results.Read(out)
		if err != nil {
			t.Fatal(err)
		}
		if !sum.Complete || len(sum.Variants) < 6 {
			t.Errorf("summary: complete=%v, %d variants (smoke lists 6 designs)", sum.Complete, len(sum.Variants))
		}
		for _, v := range sum.Variants {
			// Every scheduled operation once: completed, unserved, or dropped at the end.
			if v.Totals.Completed == 0 || len(v.Totals.Errors) != 0 || v.Totals.Completed+v.Totals.Unserved+v.Totals.Dropped != 1000 {
				t.Errorf("variant %s: %d completed, %d unserved, %d dropped, errors %v", v.Name, v.Totals.Completed, v.Totals.Unserved, v.Totals.Dropped, v.Totals.Errors)
			}
		}
		rep, err := results.ReadGate(out)
		if err != nil || rep == nil || rep.Verdict != "pass" || rep.Failed != 0 || rep.Passed == 0 {
			t.Errorf("gate.json: %+v %v", rep, err)
		}
		if _, err := os.Stat(junit); err != nil {
			t.Errorf("junit: %v", err)
		}
	})
	t.Run("fail", func(t *testing.T) {
		out := filepath.Join(tmp, "fail")
		r := execBin(t, bin, "run", scenario, "--backend", "delay", "--duration", "2s", "--rate-scale", "5", "--quiet", "--no-report",
			"--out", out, "--gate="+fail)
		r.expect(t, 1, []string{"FAIL  [seed000] sessions.read p50 < 1us", ": FAIL"}, []string{"check"})
		if _, err := results.Read(out); err != nil {
			t.Errorf("the results must be kept when the gate fails: %v", err)
		}
		rep, err := results.ReadGate(out)
		if err != nil || rep == nil || rep.Verdict != "fail" {
			t.Errorf("gate.json: %+v %v", rep, err)
		}
	})
}

// SIGTERM or SIGHUP (the terminal closed) to the binary mid-run: it stops scheduling,
// drains, writes what it measured and exits 1, promptly. Started with SIGHUP ignored (as
// nohup starts it), it runs on through SIGHUP.
func TestRunBinaryFlushesOnSignals(t *testing.T) {
	bin := buildBinary(t)
	for _, tc := range []struct {
		name    string
		sigs    []syscall.Signal // sent a second apart; the last one stops the run
		ignored bool             // started with SIGHUP ignored
	}{
		{"SIGTERM", []syscall.Signal{syscall.SIGTERM}, false},
		{"SIGHUP", []syscall.Signal{syscall.SIGHUP}, false},
		{"SIGHUP under nohup, then SIGTERM", []syscall.Signal{syscall.SIGHUP, syscall.SIGTERM}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "res")
			args := []string{"run", filepath.Join("..", "..", "scenarios", "smoke.yaml"), "--backend", "delay",
				"--duration", "60s", "--no-report", "--out", out}
			cmd := exec.Command(bin, args...)
			if tc.ignored {
				// What nohup does before exec: the signal ignored, inherited.
				cmd = exec.Command("sh", append([]string{"-c", `trap '' HUP; exec "$0" "$@"`, bin}, args...)...)
			}
			var so, se bytes.Buffer
			cmd.Stdout, cmd.Stderr = &so, &se
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Wait until the first variant has run for a while (the first checkpoint is
			// written after 5 s; two seconds are enough to have measured something), and a
			// second between signals.
			time.Sleep(time.Second)
			var sent time.Time
			for _, sig := range tc.sigs {
				time.Sleep(time.Second)
				sent = time.Now()
				if err := cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
			}
			last := tc.sigs[len(tc.sigs)-1]
			err := cmd.Wait()
			took := time.Since(sent)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				t.Fatalf("want exit 1 after %s, got %v\nstderr:\n%s", signalName(last), err, se.String())
			}
			if took > 15*time.Second {
				t.Errorf("took %s to stop after %s", took, signalName(last))
			}
			sum := interruptedRun(t, out, "received "+signalName(last), se.String())
			// 100 ops/s for two seconds or more: the operations measured before the
			// signal are all there.
			if done, ran := measuredOps(sum), 100*int64(1+len(tc.sigs)); done < ran/2 {
				t.Errorf("only %d operations kept; about %d ran before %s", done, ran, signalName(last))
			}
		})
	}
}

// Output whose reader goes away (`shardbench run ... | head`): the write fails with a
// broken pipe instead of killing the process, and the run stops as on SIGTERM, keeping
// what it measured. Black Friday on the simulator, whose progress lines come every
// simulated minute: the pipe is closed after the first.
func TestRunBinaryKeepsResultsWhenItsOutputCloses(t *testing.T) {
	bin := buildBinary(t)
	out := filepath.Join(t.TempDir(), "res")
	cmd := exec.Command(bin, "run", filepath.Join("..", "..", "scenarios", "black-friday.yaml"), "--no-report", "--out", out)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var so bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close() // the child's copy is its stderr
	lines := bufio.NewReader(pr)
	var seen string
	for !strings.Contains(seen, "00:01/10:00") {
		line, err := lines.ReadString('\n')
		if err != nil {
			cmd.Process.Kill()
			t.Fatalf("no progress line before %v; read:\n%s", err, seen)
		}
		seen += line
	}
	closed := time.Now()
	pr.Close()
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		// A process that SIGPIPE killed has no exit code (-1).
		t.Fatalf("want exit 1 after its output closed, got %v", err)
	}
	if took := time.Since(closed); took > 30*time.Second {
		t.Errorf("took %s to stop after its output closed", took)
	}
	sum := interruptedRun(t, out, "output closed (broken pipe)", "")
	// The first simulated second of 14 variants ran before the pipe closed: at least its
	// 2,000 operations each are kept, and the run stopped within the first two minutes
	// (a ramp to 50K ops/s: about 3 M operations each).
	done := measuredOps(sum)
	if done < 14*2000 || done > 14*3_000_000 {
		t.Errorf("%d operations kept", done)
	}
	t.Logf("%d operations kept; stopped %s after the pipe closed", done, time.Since(closed))
}

// interruptedRun reads the summary of a run stopped for reason: incomplete, the reason
// in it and (when stderr is given) said on stderr beside where the results are.
func interruptedRun(t *testing.T, out, reason, stderr string) *results.Summary {
	t.Helper()
	if stderr != "" && (!strings.Contains(stderr, reason) || !strings.Contains(stderr, out)) {
		t.Errorf("stderr should say why it stopped (%s) and where the results are:\n%s", reason, stderr)
	}
	sum, err := results.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Complete || sum.Interrupted != reason {
		t.Errorf("summary: complete=%v interrupted=%q, want %q", sum.Complete, sum.Interrupted, reason)
	}
	return sum
}

// measuredOps is how many operations a summary kept: completed, or counted unserved
// (never sent).
func measuredOps(sum *results.Summary) int64 {
	var n int64
	for _, v := range sum.Variants {
		n += v.Totals.Completed + v.Totals.Unserved
	}
	return n
}
