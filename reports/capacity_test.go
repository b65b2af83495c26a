package reports

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/results"
)

func capacityFixture() *results.Capacity {
	curve := func(knee float64, pass float64) []results.CapacityPoint {
		var pts []results.CapacityPoint
		for _, m := range []float64{1, 2, 4, 8} {
			p99 := 2.0
			if m > knee {
				p99 = 2 * (m / knee) * (m / knee) * 50
			}
			pts = append(pts, results.CapacityPoint{Multiple: m, OfferedRate: 100000 * m, Kind: results.ProbeWindow, Pass: m <= pass, P99Ms: p99, Op: "carts.read", Step: "x"})
		}
		return append(pts, results.CapacityPoint{Multiple: pass, OfferedRate: 100000 * pass, Kind: results.ProbeFull, Pass: true, P99Ms: 20, Step: "y"})
	}
	return &results.Capacity{
		Scenario: results.ScenarioInfo{Name: "bf", Source: "bf.yaml", Seed: 1}, Backend: results.BackendInfo{Name: "sim", Simulated: true},
		Method: results.CapacitySimulated, Complete: true, Precision: 0.05, MinMultiple: 0.01, MaxMultiple: 32,
		StartedAt: time.Unix(0, 0), EndedAt: time.Unix(300, 0),
		SLO:      results.CapacitySLO{Source: "default", Rules: []string{"* p99 < 50ms"}, P99BoundMs: 50, Served: true},
		PeakRate: 100000, PeakPhase: "flash-sale",
		Window: &results.CapacityWindow{FromS: 360, ToS: 450, PeakFromS: 390, LeadInS: 30, ScheduleS: 600},
		Variants: []results.CapacityVariant{
			{Variant: "seed002[products.partition_key=[category]]", Outcome: results.CapacityFound, Sustains: 0.8, Breaks: 0.84, Headroom: -0.2, SustainedPeakRate: 80000, ServedPeakRate: 41000, Confirmed: true,
				BreaksFirst: &results.CapacityCause{Kind: results.CauseNode, Subject: "DC1-n4", Summary: "node DC1-n4: its read stage saturated first",
					Evidence: []results.CapacityEvidence{{Source: "server.json", Figure: "DC1-n4 read stage utilisation", Value: "100%"}}}, Curve: curve(0.8, 0.8)},
			{Variant: "seed002[products.partition_key=[category, category_shard]]", Outcome: results.CapacityFound, Sustains: 2.4, Breaks: 2.5, Headroom: 1.4, SustainedPeakRate: 240000, ServedPeakRate: 120000, Confirmed: true,
				BreaksFirst: &results.CapacityCause{Kind: results.CauseCluster, Subject: "DC2-n1", Summary: "the cluster as a whole is at capacity"}, Curve: curve(2.4, 2.4)},
			{Variant: "seed002[products.partition_key=[id]]", Outcome: results.CapacityAboveRange, Sustains: 32, Headroom: 31, Confirmed: true, Curve: curve(64, 8)},
		},
		Probes: []results.CapacityProbe{{Step: "01-window-x1", Kind: results.ProbeWindow, Multiple: 1, Variants: []string{"a", "b", "c"}, WallS: 12}},
	}
}

// The terminal table ranks variants by the multiple they sustain (those that held at the
// largest multiple first) and says what breaks first for each.
func TestWriteCapacityText(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCapacityText(&buf, capacityFixture()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	id, sharded, single := strings.Index(out, "[id]]  "), strings.Index(out, "category_shard]]  "), strings.Index(out, "[category]]  ")
	if id < 0 || sharded < 0 || single < 0 || !(id < sharded && sharded < single) {
		t.Errorf("order: id %d, sharded %d, single %d\n%s", id, sharded, single, out)
	}
	for _, want := range []string{"≥ ×32", "×2.4", "+140%", "-20%", "node DC1-n4", "breaks first at ×0.84: node DC1-n4", "SLO default [* p99 < 50ms]", "scenario peak 100k/s (flash-sale)"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}

// A capacity directory renders as its own page (also through Render, which
// `shardbench report` calls): the ranked answer, the curve, what breaks first.
func TestRenderCapacity(t *testing.T) {
	dir := t.TempDir()
	if err := results.At(dir).WriteCapacity(capacityFixture()); err != nil {
		t.Fatal(err)
	}
	out, err := Render(dir, Options{Now: func() time.Time { return time.Unix(0, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Charts) != 1 || out.Charts[0].ID != "capacity-curve" {
		t.Fatalf("charts %+v", out.Charts)
	}
	if st, err := os.Stat(out.Charts[0].File); err != nil || st.Size() < 10000 {
		t.Errorf("chart file: %v", err)
	}
	html, err := os.ReadFile(filepath.Join(dir, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	page := string(html)
	for _, want := range []string{"Capacity: bf", "What breaks first", "node DC1-n4: its read stage saturated first", "charts/capacity-curve.png", "Held its SLO at ×32", "01-window-x1", "--fg:"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Index(page, "[id]]") > strings.Index(page, "[category]]") {
		t.Error("the answer table is not ranked by the multiple sustained")
	}
	if labels := variantLabels(capacityFixture().Variants); labels[0] != "…[category]]" || labels[1] != "…[category, category_shard]]" {
		t.Errorf("legend labels %q", labels)
	}
}

// On a real database a failing step that held when run again is drawn as a ring off the
// line, and the caption says what rings are; without one it says nothing of them.
func TestRenderCapacitySetAside(t *testing.T) {
	render := func(c *results.Capacity) string {
		dir := t.TempDir()
		if err := results.At(dir).WriteCapacity(c); err != nil {
			t.Fatal(err)
		}
		if _, err := Render(dir, Options{Now: func() time.Time { return time.Unix(0, 0) }}); err != nil {
			t.Fatal(err)
		}
		html, err := os.ReadFile(filepath.Join(dir, HTMLFile))
		if err != nil {
			t.Fatal(err)
		}
		return string(html)
	}
	c := capacityFixture()
	c.Method, c.Window = results.CapacityStepped, nil
	if strings.Contains(render(c), "rings, off the line") {
		t.Error("caption speaks of rings with none set aside")
	}
	v := &c.Variants[0]
	v.Curve = append(v.Curve, results.CapacityPoint{Multiple: 0.5, OfferedRate: 50000, Kind: results.ProbeStep, P99Ms: 300, Step: "01-step-x0.5", SetAside: true})
	if page := render(c); !strings.Contains(page, "rings, off the line, are steps that failed and held when run again") {
		t.Error("caption does not say what the ring is")
	}
}
