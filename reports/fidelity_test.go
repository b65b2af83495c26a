package reports

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/results"
)

// fidelityDoc is a comparison of two variants: seed000 misses placement on one node by
// 3.1 pp, seed004's predicted p99 misses by 40%, and the two rank differently by p99.
func fidelityDoc() *results.Fidelity {
	share := func(node string, real, sim float64, rc, sc int64) results.FidelityShare {
		return results.FidelityShare{Node: node, Real: real, Sim: sim, DiffPP: 100 * (sim - real), RealCount: rc, SimCount: sc}
	}
	lat := func(op string, real, sim results.FidelityStat, judged, within bool, why string) results.FidelityLatency {
		e := results.FidelityStat{Mean: sim.Mean/real.Mean - 1, P50: sim.P50/real.P50 - 1, P99: sim.P99/real.P99 - 1}
		return results.FidelityLatency{Op: op, Count: 5000, SimCount: 5000, Real: real, Sim: sim, Error: e, Judged: judged, Within: within, Why: why}
	}
	return &results.Fidelity{
		Simulated: "simulated", Target: "cassandra://127.0.0.1,127.0.0.2,127.0.0.3:9042?dc=dc1", Server: "Apache Cassandra 5.0.9",
		At:          time.Date(2025, 11, 28, 12, 0, 0, 0, time.UTC),
		Calibration: results.FidelityCalibration{Variant: "seed000", Written: "fidelity-calibration.yaml", NetworkMS: 0.41, Model: "read 412µs, write 180µs"},
		Tolerance:   results.FidelityTolerance{SharePP: 2, Latency: 0.25, Utilisation: 0.7, MinOps: 200},
		Variants: []results.FidelityVariant{
			{Name: "seed000", Design: "seed000", Calibrated: true, MaxNodeDiffPP: 3.1, Utilisation: 0.31,
				Nodes: []results.FidelityShare{share("127.0.0.1", 0.30, 0.331, 3000, 3310), share("127.0.0.2", 0.35, 0.339, 3500, 3390), share("127.0.0.3", 0.35, 0.33, 3500, 3300)},
				Ops:   []results.FidelityLatency{lat("sessions.read", results.FidelityStat{Mean: 1, P50: 0.9, P99: 3}, results.FidelityStat{Mean: 1.1, P50: 1, P99: 2.8}, false, false, "calibration variant (in-sample)")},
				All:   lat("all", results.FidelityStat{Mean: 1, P50: 0.9, P99: 3}, results.FidelityStat{Mean: 1.1, P50: 1, P99: 2.8}, false, false, "calibration variant (in-sample)")},
			{Name: "seed004", Design: "seed004", MaxNodeDiffPP: 0.4, Utilisation: 0.22,
				Nodes: []results.FidelityShare{share("127.0.0.1", 0.33, 0.334, 1000, 1002), share("127.0.0.2", 0.33, 0.33, 1000, 990), share("127.0.0.3", 0.34, 0.336, 1020, 1008)},
				Ops:   []results.FidelityLatency{lat("sessions.touch", results.FidelityStat{Mean: 0.8, P50: 0.7, P99: 2}, results.FidelityStat{Mean: 0.8, P50: 0.72, P99: 2.8}, true, false, "")},
				All:   lat("all", results.FidelityStat{Mean: 0.8, P50: 0.7, P99: 2}, results.FidelityStat{Mean: 0.8, P50: 0.72, P99: 2.8}, true, false, "")},
		},
		Rankings: []results.FidelityRanking{
			{Group: "all", By: "hottest node", Real: []string{"seed004", "seed000"}, Sim: []string{"seed004", "seed000"}, Agree: true},
			{Group: "all", By: "p99", Real: []string{"seed004", "seed000"}, Sim: []string{"seed000", "seed004"}, Discordant: []string{"seed004 before seed000"}},
		},
		Verdict: results.FidelityVerdict{Placement: false, Latency: false, Ranking: false,
			Lines: []string{"placement: every node's share NOT within 2.0 pp (largest difference 3.10 pp, seed000 127.0.0.1)"}},
		Notes: []string{"network round trip 410µs"},
	}
}

// withFidelity copies the real-run fixture and writes fidelity.json beside it.
func withFidelity(t *testing.T, f *results.Fidelity) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.CopyFS(dir, os.DirFS(fixture(t, "real"))); err != nil {
		t.Fatal(err)
	}
	if f != nil {
		if err := results.At(dir).WriteFidelity(f); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A run with fidelity.json gets a fidelity section: every node's share beside the
// simulated one, a difference beyond the tolerance marked, predicted latency with its
// error, the rankings and the verdict; a run without it has no section.
func TestFidelitySection(t *testing.T) {
	_, html := renderHTML(t, withFidelity(t, fidelityDoc()))
	mustContain(t, html,
		`<section id="fidelity">`, `href="#fidelity"`,
		`<span class="badge fail">MISS</span>`,
		"fitted to seed000&#39;s real run (its latency rows are in-sample)",
		"read 412µs, write 180µs",
		"largest difference 3.10 pp, seed000 127.0.0.1",
		"network round trip 410µs",
		"seed004 before seed000",
		"not judged: calibration variant (in-sample)",
	)
	sec := html[strings.Index(html, `<section id="fidelity">`):]
	sec = sec[:strings.Index(sec, "</section>")]
	// seed000's 127.0.0.1 is 3.10 pp off: marked; 127.0.0.2 (-1.10 pp) is not.
	row := func(node, diff string) string {
		m := regexp.MustCompile(`<tr><th scope="row">` + regexp.QuoteMeta(node) + `</th>(?:<td[^>]*>[^<]*</td>){2}<td class="([^"]*)">` + regexp.QuoteMeta(diff) + `</td>`).FindStringSubmatch(sec)
		if m == nil {
			t.Fatalf("no placement row for %s with %s in\n%s", node, diff, sec)
		}
		return m[1]
	}
	if c := row("127.0.0.1", "&#43;3.10 pp"); c != "num bad" {
		t.Errorf("a 3.10 pp difference (tolerance 2) is shown as %q, want num bad", c)
	}
	if c := row("127.0.0.2", "-1.10 pp"); c != "num" {
		t.Errorf("a 1.10 pp difference is shown as %q, want num", c)
	}
	// seed004's predicted p99 is 40% over: the p99 cell is marked, the p50 (+3%) is not.
	if !strings.Contains(sec, `<td class="num bad">2 | 2.8 (&#43;40%)</td>`) {
		t.Errorf("the p99 miss is not marked:\n%s", sec)
	}
	if !strings.Contains(sec, `<td class="num">0.7 | 0.72 (&#43;3%)</td>`) {
		t.Errorf("the p50 within tolerance is not shown plainly:\n%s", sec)
	}

	_, plain := renderHTML(t, withFidelity(t, nil))
	mustNotContain(t, plain, `<section id="fidelity">`, `href="#fidelity"`)
}

// A passing comparison says PASS; an unreadable fidelity.json is a warning and the rest
// of the report still renders.
func TestFidelitySectionPassAndBadFile(t *testing.T) {
	f := fidelityDoc()
	f.Verdict = results.FidelityVerdict{Placement: true, Latency: true, Ranking: true, Lines: []string{"all met"}}
	_, html := renderHTML(t, withFidelity(t, f))
	mustContain(t, html, `<span class="badge pass">PASS</span>`)

	dir := withFidelity(t, nil)
	if err := os.WriteFile(filepath.Join(dir, results.FidelityFile), []byte(`{"schema":"shardbench/fidelity","version":99}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, html := renderHTML(t, dir)
	mustNotContain(t, html, `<section id="fidelity">`)
	if len(out.Warnings) == 0 || !strings.Contains(strings.Join(out.Warnings, "\n"), "version 99") {
		t.Errorf("warnings %v, want one naming the unreadable fidelity.json", out.Warnings)
	}
	mustContain(t, html, `<section id="latency">`)
}
