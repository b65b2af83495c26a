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

// The server's analyzeShardKey numbers and the server check round-trip beside the
// prediction, under the server's own field names.
func TestAnalysisServerCheckRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r")
	dir, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	in := &Analysis{Scenario: "s", Variants: []AnalysisVariant{{Variant: "v", Database: "mongodb", Notes: []string{"load: 10 operations"},
		Tables: []KeyAnalysis{{Table: "db.orders", Database: "mongodb", Key: "{a: 1}",
			Server: &ServerKeyAnalysis{Namespace: "db_x_analyze.orders", Key: "{a: 1}",
				KeyCharacteristics: &ServerKeyCharacteristics{NumDocsTotal: 7, NumDistinctValues: 3, MostCommonValues: []ServerValueFrequency{{Value: `{"a":1}`, Frequency: 4}},
					Monotonicity: Monotonicity{Type: "monotonic", RecordIDCorrelationCoefficient: 0.9}},
				ReadDistribution:  &ServerReadDistribution{SampleSize: ServerReadSampleSize{Total: 5, Find: 5}, PercentageOfScatterGatherReads: 40},
				WriteDistribution: &ServerWriteDistribution{SampleSize: ServerWriteSampleSize{Total: 2, Update: 2}, PercentageOfShardKeyUpdates: 50, PercentageOfSingleWritesWithoutShardKey: 50}}}}}},
		ServerCheck: &ServerCheck{Status: ServerCheckDone, Target: "h:27017", Server: "MongoDB 7.0.14 (mongos)", Message: "m", LoadOps: 10}}
	if err := dir.WriteAnalysis(in); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(path, AnalysisFile))
	for _, field := range []string{`"serverCheck"`, `"status": "done"`, `"server": {`, `"numDocsTotal": 7`, `"namespace": "db_x_analyze.orders"`,
		`"percentageOfSingleWritesWithoutShardKey": 50`, `"findAndModify": 0`, `"aggregate": 0`} {
		if !strings.Contains(string(raw), field) {
			t.Errorf("analysis.json lacks %s:\n%s", field, raw)
		}
	}
	out, err := ReadAnalysis(path)
	if err != nil {
		t.Fatal(err)
	}
	k := out.Variant("v").Table("orders")
	if k.Server == nil || k.Server.KeyCharacteristics.MostCommonValues[0].Frequency != 4 || k.Server.ReadDistribution.PercentageOfScatterGatherReads != 40 ||
		out.ServerCheck.Status != ServerCheckDone || out.ServerCheck.LoadOps != 10 || out.Variants[0].Notes[0] != "load: 10 operations" {
		t.Errorf("read back %+v / %+v", k.Server, out.ServerCheck)
	}
}
