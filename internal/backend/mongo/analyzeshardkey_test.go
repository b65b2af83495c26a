package mongo

import (
	"reflect"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/shardbench/shardbench/internal/results"
)

// A recorded analyzeShardKey reply, built field by field from the documented output
// format (MongoDB manual, "analyzeShardKey" → Output: keyCharacteristics,
// readDistribution, writeDistribution;
// https://www.mongodb.com/docs/manual/reference/command/analyzeShardKey/), with the mixed
// number types a server sends (int32, int64, double), maps onto the results' fields.
func TestServerKeyAnalysisMapsTheDocumentedReply(t *testing.T) {
	reply := bson.D{
		{Key: "keyCharacteristics", Value: bson.D{
			{Key: "numDocsTotal", Value: int64(50000)},
			{Key: "numOrphanDocs", Value: int32(0)},
			{Key: "avgDocSizeBytes", Value: int64(412)},
			{Key: "numDocsSampled", Value: int64(50000)},
			{Key: "isUnique", Value: false},
			{Key: "numDistinctValues", Value: int64(6)},
			{Key: "mostCommonValues", Value: bson.A{
				bson.D{{Key: "value", Value: bson.D{{Key: "category", Value: "electronics"}}}, {Key: "frequency", Value: int64(35000)}},
				bson.D{{Key: "value", Value: bson.D{{Key: "category", Value: "books"}}}, {Key: "frequency", Value: int32(5000)}},
			}},
			{Key: "monotonicity", Value: bson.D{
				{Key: "recordIdCorrelationCoefficient", Value: 0.0163877874},
				{Key: "type", Value: "not monotonic"},
			}},
		}},
		{Key: "readDistribution", Value: bson.D{
			{Key: "sampleSize", Value: bson.D{{Key: "total", Value: int64(525)}, {Key: "find", Value: int64(500)}, {Key: "aggregate", Value: int64(25)}, {Key: "count", Value: int64(0)}, {Key: "distinct", Value: int64(0)}}},
			{Key: "percentageOfSingleShardReads", Value: 84.1904761905},
			{Key: "percentageOfMultiShardReads", Value: 12.1904761905},
			{Key: "percentageOfScatterGatherReads", Value: 3.6190476191},
			{Key: "numReadsByRange", Value: bson.A{int64(3), int32(500), int64(40)}},
		}},
		{Key: "writeDistribution", Value: bson.D{
			{Key: "sampleSize", Value: bson.D{{Key: "total", Value: int64(100)}, {Key: "update", Value: int64(80)}, {Key: "delete", Value: int64(20)}, {Key: "findAndModify", Value: int64(0)}}},
			{Key: "percentageOfSingleShardWrites", Value: 70.0},
			{Key: "percentageOfMultiShardWrites", Value: int32(0)},
			{Key: "percentageOfScatterGatherWrites", Value: 30.0},
			{Key: "numWritesByRange", Value: bson.A{int64(70), int64(30)}},
			{Key: "percentageOfShardKeyUpdates", Value: int64(2)},
			{Key: "percentageOfSingleWritesWithoutShardKey", Value: 30.0},
			{Key: "percentageOfMultiWritesWithoutShardKey", Value: 0.0},
		}},
		{Key: "note", Value: "If a shard key value has a frequency ..."},
		{Key: "ok", Value: 1.0},
	}
	raw, err := bson.Marshal(reply)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ServerKeyAnalysis("shop_1234.products", `{category: 1}`, raw)
	if err != nil {
		t.Fatal(err)
	}
	want := results.ServerKeyAnalysis{
		Namespace: "shop_1234.products", Key: `{category: 1}`,
		KeyCharacteristics: &results.ServerKeyCharacteristics{
			NumDocsTotal: 50000, NumDocsSampled: 50000, AvgDocSizeBytes: 412, NumDistinctValues: 6,
			MostCommonValues: []results.ServerValueFrequency{{Value: `{"category":"electronics"}`, Frequency: 35000}, {Value: `{"category":"books"}`, Frequency: 5000}},
			Monotonicity:     results.Monotonicity{Type: "not monotonic", RecordIDCorrelationCoefficient: 0.0163877874},
		},
		ReadDistribution: &results.ServerReadDistribution{
			SampleSize:                   results.ServerReadSampleSize{Total: 525, Find: 500, Aggregate: 25},
			PercentageOfSingleShardReads: 84.1904761905, PercentageOfMultiShardReads: 12.1904761905, PercentageOfScatterGatherReads: 3.6190476191,
			NumReadsByRange: []int64{3, 500, 40},
		},
		WriteDistribution: &results.ServerWriteDistribution{
			SampleSize:                    results.ServerWriteSampleSize{Total: 100, Update: 80, Delete: 20},
			PercentageOfSingleShardWrites: 70, PercentageOfScatterGatherWrites: 30, NumWritesByRange: []int64{70, 30},
			PercentageOfShardKeyUpdates: 2, PercentageOfSingleWritesWithoutShardKey: 30,
		},
		Note: "If a shard key value has a frequency ...",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("mapped\n%+v\nwant\n%+v", got, want)
	}
	if !reflect.DeepEqual(got.KeyCharacteristics, want.KeyCharacteristics) {
		t.Errorf("keyCharacteristics %+v", got.KeyCharacteristics)
	}

	// MongoDB 7.0.0 named the count numDocs; a reply without any metrics is an error.
	raw, _ = bson.Marshal(bson.D{{Key: "keyCharacteristics", Value: bson.D{{Key: "numDocs", Value: int32(12)}, {Key: "monotonicity", Value: bson.D{{Key: "type", Value: "monotonic"}, {Key: "recordIdCorrelationCoefficient", Value: int32(1)}}}}}})
	if got, err := ServerKeyAnalysis("d.c", "{a: 1}", raw); err != nil || got.KeyCharacteristics.NumDocsTotal != 12 || got.KeyCharacteristics.Monotonicity.RecordIDCorrelationCoefficient != 1 || got.ReadDistribution != nil {
		t.Errorf("7.0.0 reply: %+v, %v", got, err)
	}
	raw, _ = bson.Marshal(bson.D{{Key: "ok", Value: 1.0}})
	if _, err := ServerKeyAnalysis("d.c", "{a: 1}", raw); err == nil {
		t.Error("an empty reply was accepted")
	}
}

// Only a mongos of 7.0 or newer runs the check; every refusal names the hosts, what the
// server is and why, and FerretDB is refused although it reports MongoDB 7.0's version.
func TestAnalyzeShardKeySupport(t *testing.T) {
	for _, c := range []struct {
		dep  Deployment
		ok   bool
		want string
	}{
		{Deployment{Kind: KindMongos, Version: "7.0.14"}, true, ""},
		{Deployment{Kind: KindMongos, Version: "8.0.0-rc3"}, true, ""},
		{Deployment{Kind: KindMongos, Version: "7.10.1"}, true, ""},
		{Deployment{Kind: KindMongos, Version: "6.0.19"}, false, "MongoDB 6.0.19 is older than 7.0"},
		{Deployment{Kind: KindMongos}, false, "MongoDB unknown is older than 7.0"},
		{Deployment{Kind: KindFerretDB, Version: "7.0.42", FerretDB: "v1.24.0"}, false, "db1:27017 is FerretDB v1.24.0 (MongoDB 7.0.42 wire protocol, no sharding), not a mongos (FerretDB has no analyzeShardKey)"},
		{Deployment{Kind: KindReplicaSet, Version: "7.0.14", SetName: "rs0", Hosts: []string{"a", "b", "c"}}, false, "is MongoDB 7.0.14 (replica set rs0, 3 members), not a mongos"},
		{Deployment{Kind: KindStandalone, Version: "8.0.1"}, false, "is MongoDB 8.0.1 (standalone), not a mongos"},
	} {
		err := c.dep.AnalyzeShardKeySupport("db1:27017")
		if (err == nil) != c.ok {
			t.Errorf("%+v: %v", c.dep, err)
			continue
		}
		if err == nil {
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, c.want) || !strings.HasPrefix(msg, "analyzeShardKey needs a mongos of MongoDB 7.0+; db1:27017 is ") || !strings.HasSuffix(msg, "server check skipped, prediction only") {
			t.Errorf("%+v: %q", c.dep, msg)
		}
	}
	if h := TargetHosts("mongodb://bench:s3cret@db1:27017,db2:27017/?replicaSet=rs0"); h != "db1:27017,db2:27017" {
		t.Errorf("hosts %q", h)
	}
	if h := TargetHosts(""); h != "127.0.0.1:27017" {
		t.Errorf("default hosts %q", h)
	}
}
