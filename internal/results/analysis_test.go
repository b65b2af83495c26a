package results

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// analysis.json round-trips, carries analyzeShardKey's field names, and a file of another
// schema is refused with its path in the error.
func TestAnalysisRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r")
	dir, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	in := &Analysis{Scenario: "s", Operations: 10, Variants: []AnalysisVariant{{
		Variant: "v", Database: "mongodb",
		Tables: []KeyAnalysis{{
			Table: "db.orders", Entity: "orders", Key: "{created_at: 1}", Targets: 3,
			KeyCharacteristics: KeyCharacteristics{NumDocs: 10, NumDistinctValues: 10, IsUnique: true,
				MostCommonValues: []ValueFrequency{{Value: "x", Frequency: 1, Share: 0.1}},
				Monotonicity:     Monotonicity{Type: "monotonic", RecordIDCorrelationCoefficient: 0.99}},
			ReadDistribution:  ReadDistribution{SampleSize: ReadSampleSize{Total: 4, Find: 4}, PercentageOfScatterGatherReads: 25},
			WriteDistribution: WriteDistribution{PercentageOfShardKeyUpdates: 1},
			Flags:             []Flag{{Code: "monotonic", Severity: "problem", Reason: "r"}},
		}},
	}}}
	if err := dir.WriteAnalysis(in); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(path, AnalysisFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"keyCharacteristics"`, `"numDocs"`, `"isUnique"`, `"numDistinctValues"`, `"mostCommonValues"`, `"frequency"`,
		`"monotonicity"`, `"recordIdCorrelationCoefficient"`, `"avgDocSizeBytes"`, `"readDistribution"`, `"sampleSize"`,
		`"percentageOfSingleShardReads"`, `"percentageOfScatterGatherReads"`, `"writeDistribution"`, `"percentageOfShardKeyUpdates"`} {
		if !strings.Contains(string(raw), field) {
			t.Errorf("analysis.json lacks %s", field)
		}
	}
	out, err := ReadAnalysis(path)
	if err != nil {
		t.Fatal(err)
	}
	k := out.Variant("v").Table("orders")
	if k == nil || k.KeyCharacteristics.Monotonicity.RecordIDCorrelationCoefficient != 0.99 || !k.HasFlag("monotonic") || k.HasFlag("low-cardinality") ||
		k.ReadDistribution.PercentageOfScatterGatherReads != 25 || out.Schema != AnalysisSchema {
		t.Errorf("read back %+v", out)
	}
	if out.Variant("nope") != nil {
		t.Error("unknown variant found")
	}

	// Absent: nil, nil. Another schema: an error naming the file.
	if a, err := ReadAnalysis(t.TempDir()); a != nil || err != nil {
		t.Errorf("absent: %v %v", a, err)
	}
	other := t.TempDir()
	b, _ := json.Marshal(map[string]any{"schema": "shardbench/hotspots"})
	os.WriteFile(filepath.Join(other, AnalysisFile), b, 0o644)
	if _, err := ReadAnalysis(other); err == nil || !strings.Contains(err.Error(), AnalysisFile) {
		t.Errorf("other schema: %v", err)
	}
}
