package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// A simulated run's results are a function of the scenario and its seed: the same binary
// run twice writes the same files, and so does the binary `make build` makes for a CPU
// with x86-64-v3 (GOAMD64=v3, where the compiler may fuse a*b+c into one FMA instruction
// that rounds once) and the one `go build` makes (v1). Black Friday's first 30 s, every
// design, compared file by file: only wall-clock fields may differ.
func TestSimulatedResultsReproduceAcrossRunsAndBuilds(t *testing.T) {
	scenario := filepath.Join("..", "..", "scenarios", "black-friday.yaml")
	run := func(bin, name string) string {
		out := filepath.Join(t.TempDir(), name)
		r := execBin(t, bin, "run", scenario, "--duration", "30s", "--quiet", "--no-report", "--out", out)
		r.expect(t, 0, nil, nil)
		return out
	}
	v1 := buildBinaryAt(t, "v1")
	first := run(v1, "first")
	if d := diffResults(first, run(v1, "again")); d != "" {
		t.Errorf("the same binary, the same seed, different results: %s", d)
	}
	if runtime.GOARCH != "amd64" || !cpuHasV3() {
		// The Makefile builds v1 here: there is no second build to compare.
		t.Logf("this CPU lacks x86-64-v3 (AVX2, BMI2, FMA): make build builds v1 here")
		return
	}
	if d := diffResults(first, run(buildBinaryAt(t, "v3"), "v3")); d != "" {
		t.Errorf("GOAMD64=v1 and v3 builds, different results: %s", d)
	}
}

// buildBinaryAt builds the command for an x86-64 level (GOAMD64; "": the environment's).
func buildBinaryAt(t *testing.T, level string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "shardbench")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if level != "" {
		cmd.Env = append(os.Environ(), "GOAMD64="+level)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("GOAMD64=%s go build: %v\n%s", level, err, out)
	}
	return bin
}

// cpuHasV3 reports whether the CPU has what the Makefile asks of x86-64-v3.
func cpuHasV3() bool {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return false
	}
	for _, f := range []string{"avx2", "bmi2", "fma"} {
		if !regexp.MustCompile(`\b` + f + `\b`).Match(b) {
			return false
		}
	}
	return true
}

// wallClock are the results' fields that say when the run happened or how long it took
// on this machine, not what it measured.
var wallClock = map[string]bool{"started_at": true, "ended_at": true, "generated_at": true}

// hlogTimes are a histogram log's header lines naming wall-clock times.
var hlogTimes = regexp.MustCompile(`(?m)^#\[(StartTime|BaseTime).*\n`)

// diffResults compares two results directories file by file and names the first
// difference ("" if none): a file only one has, or one whose contents differ.
func diffResults(a, b string) string {
	fa, err := filesUnder(a)
	if err != nil {
		return err.Error()
	}
	fb, err := filesUnder(b)
	if err != nil {
		return err.Error()
	}
	for _, rel := range fb {
		if !slices.Contains(fa, rel) {
			return rel + " only in " + b
		}
	}
	for _, rel := range fa {
		x, err := os.ReadFile(filepath.Join(a, rel))
		if err != nil {
			return err.Error()
		}
		y, err := os.ReadFile(filepath.Join(b, rel))
		if err != nil {
			return err.Error()
		}
		if d := diffFile(rel, x, y); d != "" {
			return d
		}
	}
	return ""
}

// filesUnder lists the files under dir, relative to it, in lexical order.
func filesUnder(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return err
	})
	return out, err
}

// diffFile compares one results file's two versions as its kind allows.
func diffFile(rel string, x, y []byte) string {
	switch {
	case strings.HasSuffix(rel, ".json"):
		return diffJSON(rel, x, y)
	case strings.HasSuffix(rel, ".jsonl"):
		// The variants append their lines as they go: the same lines, in any order.
		xs, ys := sortedLines(x), sortedLines(y)
		if len(xs) != len(ys) {
			return fmt.Sprintf("%s: %d lines against %d", rel, len(xs), len(ys))
		}
		for i := range xs {
			if d := diffJSON(rel, xs[i], ys[i]); d != "" {
				return d
			}
		}
		return ""
	case strings.HasSuffix(rel, ".hlog"):
		x, y = hlogTimes.ReplaceAll(x, nil), hlogTimes.ReplaceAll(y, nil)
	}
	if !bytes.Equal(x, y) {
		return rel + " differs"
	}
	return ""
}

// sortedLines are a file's lines in byte order.
func sortedLines(b []byte) [][]byte {
	ls := bytes.Split(b, []byte("\n"))
	slices.SortFunc(ls, bytes.Compare)
	return ls
}

func diffJSON(name string, x, y []byte) string {
	if len(bytes.TrimSpace(x)) == 0 && len(bytes.TrimSpace(y)) == 0 {
		return ""
	}
	var u, v any
	if err := json.Unmarshal(x, &u); err != nil {
		return fmt.Sprintf("%s: %v", name, err)
	}
	if err := json.Unmarshal(y, &v); err != nil {
		return fmt.Sprintf("%s: %v", name, err)
	}
	if p := firstDiff(u, v, ""); p != "" {
		return name + ": " + p
	}
	return ""
}

// firstDiff is the path of the first value u and v disagree on, wall-clock fields aside.
func firstDiff(u, v any, path string) string {
	switch x := u.(type) {
	case map[string]any:
		y, ok := v.(map[string]any)
		if !ok || len(x) != len(y) {
			return fmt.Sprintf("%s: %v against %v", path, u, v)
		}
		for k := range x {
			if wallClock[k] {
				continue
			}
			if p := firstDiff(x[k], y[k], path+"."+k); p != "" {
				return p
			}
		}
		return ""
	case []any:
		y, ok := v.([]any)
		if !ok || len(x) != len(y) {
			return fmt.Sprintf("%s: %d items against %v", path, len(x), v)
		}
		for i := range x {
			if p := firstDiff(x[i], y[i], fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
		return ""
	}
	if !reflect.DeepEqual(u, v) {
		return fmt.Sprintf("%s: %v against %v", path, u, v)
	}
	return ""
}

// The comparison itself: wall-clock fields and line order aside, any difference counts.
func TestDiffResultsNamesTheFirstDifference(t *testing.T) {
	dir := func(files map[string]string) string {
		d := t.TempDir()
		for name, body := range files {
			p := filepath.Join(d, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	base := map[string]string{
		"summary.json":     `{"started_at":"09:00","variants":[{"name":"a","p50":1.5}]}`,
		"timeseries.jsonl": "{\"v\":\"a\",\"t\":1}\n{\"v\":\"b\",\"t\":1}\n",
		"h/a.hlog":         "#[StartTime: 1 (seconds since epoch)]\n0.0,1.0,HIST\n",
	}
	with := func(name, body string) map[string]string {
		m := maps.Clone(base)
		if body == "" {
			delete(m, name)
		} else {
			m[name] = body
		}
		return m
	}
	a := dir(base)
	for _, c := range []struct {
		name, file, body, want string
	}{
		{"wall clock only", "summary.json", `{"started_at":"10:00","variants":[{"name":"a","p50":1.5}]}`, ""},
		{"lines reordered", "timeseries.jsonl", "{\"v\":\"b\",\"t\":1}\n{\"v\":\"a\",\"t\":1}\n", ""},
		{"hlog start time", "h/a.hlog", "#[StartTime: 2 (seconds since epoch)]\n0.0,1.0,HIST\n", ""},
		{"a value", "summary.json", `{"started_at":"09:00","variants":[{"name":"a","p50":1.6}]}`, "summary.json: .variants[0].p50: 1.5 against 1.6"},
		{"a line", "timeseries.jsonl", "{\"v\":\"a\",\"t\":1}\n{\"v\":\"b\",\"t\":2}\n", "timeseries.jsonl"},
		{"a histogram", "h/a.hlog", "#[StartTime: 1 (seconds since epoch)]\n0.0,1.0,HIST2\n", "a.hlog differs"},
		{"a file missing", "summary.json", "", "summary.json"},
		{"a file more", "extra.json", "{}", "extra.json only in"},
	} {
		got := diffResults(a, dir(with(c.file, c.body)))
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
