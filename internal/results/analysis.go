package results

import (
	"path/filepath"

	"github.com/shardbench/shardbench/internal/inputfile"
)

// AnalysisFile holds the key analysis of `shardbench analyze`: per design variant and per
// table or collection, the numbers MongoDB's analyzeShardKey gives (key characteristics,
// read and write distribution), predicted from the scenario's operation stream before any
// data exists, with flags, a verdict and a ranking of the variants of each entity.
const AnalysisFile = "analysis.json"

// AnalysisSchema identifies analysis.json.
const AnalysisSchema = "shardbench/analysis"

// Analysis is analysis.json.
type Analysis struct {
	Schema   string `json:"schema"` // "shardbench/analysis"
	Version  int    `json:"version"`
	Scenario string `json:"scenario"`
	// Operations is how many logical operations of the stream each variant analysed.
	Operations int64             `json:"operations"`
	Variants   []AnalysisVariant `json:"variants"`
	Ranking    []EntityRanking   `json:"ranking"`
	// ServerCheck says whether --server-check ran analyzeShardKey on a live server, and
	// if not, why (nil: not asked for).
	ServerCheck *ServerCheck `json:"serverCheck,omitempty"`
	Notes       []string     `json:"notes,omitempty"`
}

// Server check statuses.
const (
	ServerCheckDone         = "done"          // analyzeShardKey ran; the tables carry Server
	ServerCheckNotAvailable = "not-available" // the server has no analyzeShardKey: prediction only
	ServerCheckFailed       = "failed"        // the server could not be reached or the check broke off
)

// ServerCheck is the outcome of `analyze --server-check`: where it connected (hosts only,
// never credentials), what the server is, and a message in plain words.
type ServerCheck struct {
	Status  string `json:"status"` // done | not-available | failed
	Target  string `json:"target"` // host[:port][,host...]
	Server  string `json:"server,omitempty"`
	Message string `json:"message"`
	// LoadOps is how many operations of the stream each variant ran on the server before
	// analyzeShardKey.
	LoadOps int64 `json:"loadOps,omitempty"`
}

// AnalysisVariant is one design variant's analysis.
type AnalysisVariant struct {
	Variant  string        `json:"variant"`
	Database string        `json:"database"` // cassandra | mongodb | cassandra+mongodb
	Topology string        `json:"topology,omitempty"`
	Tables   []KeyAnalysis `json:"tables"`
	// Notes are the server check's notes for this variant (its database, the load phase,
	// what the server did not apply).
	Notes []string `json:"notes,omitempty"`
}

// KeyAnalysis is the analysis of one table's partition key or one collection's shard key.
// Field names follow analyzeShardKey's output where the concept is the same, so the
// prediction can be put beside the server's numbers; for Cassandra "shard" reads as
// "partition" (single-partition, multi-partition, scan or secondary index).
type KeyAnalysis struct {
	Table    string `json:"table"` // namespace.name
	Entity   string `json:"entity"`
	Database string `json:"database"`
	Key      string `json:"key"`
	// Targets is how many shards (MongoDB) or nodes (Cassandra) the data can spread over.
	Targets            int                `json:"targets"`
	KeyCharacteristics KeyCharacteristics `json:"keyCharacteristics"`
	// PrefixCharacteristics describe the first field of a compound key alone (its values
	// decide which chunk ranges are hot).
	PrefixCharacteristics *PrefixCharacteristics `json:"prefixCharacteristics,omitempty"`
	ReadDistribution      ReadDistribution       `json:"readDistribution"`
	WriteDistribution     WriteDistribution      `json:"writeDistribution"`
	// Ranges name the chunk ranges (MongoDB) or the nodes owning token ranges (Cassandra)
	// that numReadsByRange and numWritesByRange count.
	Ranges []string `json:"ranges,omitempty"`
	// HottestInsertRange is the chunk range (node) that took the most inserts.
	HottestInsertRange *RangeShare `json:"hottestInsertRange,omitempty"`
	Flags              []Flag      `json:"flags"`
	Verdict            string      `json:"verdict"` // good | caution | avoid
	Score              int         `json:"score"`   // penalty points: lower is better
	// Server is what analyzeShardKey said about this key on a live mongos (--server-check),
	// beside the prediction above.
	Server *ServerKeyAnalysis `json:"server,omitempty"`
}

// ServerKeyAnalysis is analyzeShardKey's output for one collection and key, with the
// server's own field names (MongoDB manual, "analyzeShardKey", Output:
// https://www.mongodb.com/docs/manual/reference/command/analyzeShardKey/), so it reads
// directly beside the prediction. Fields the server did not return stay zero.
type ServerKeyAnalysis struct {
	// Namespace is the collection analysed (the variant's own database).
	Namespace          string                    `json:"namespace"`
	Key                string                    `json:"key"`
	KeyCharacteristics *ServerKeyCharacteristics `json:"keyCharacteristics,omitempty"`
	ReadDistribution   *ServerReadDistribution   `json:"readDistribution,omitempty"`
	WriteDistribution  *ServerWriteDistribution  `json:"writeDistribution,omitempty"`
	// Note is the server's own note about how to read the metrics.
	Note string `json:"note,omitempty"`
	// Error is why the command failed for this collection (then nothing else is set).
	Error string `json:"error,omitempty"`
}

// ServerKeyCharacteristics is analyzeShardKey's keyCharacteristics. MongoDB 7.0.0 named
// the document count numDocs; later releases numDocsTotal and numDocsSampled.
type ServerKeyCharacteristics struct {
	NumDocsTotal      int64                  `json:"numDocsTotal"`
	NumDocsSampled    int64                  `json:"numDocsSampled,omitempty"`
	NumOrphanDocs     int64                  `json:"numOrphanDocs,omitempty"`
	AvgDocSizeBytes   int64                  `json:"avgDocSizeBytes"`
	IsUnique          bool                   `json:"isUnique"`
	NumDistinctValues int64                  `json:"numDistinctValues"`
	MostCommonValues  []ServerValueFrequency `json:"mostCommonValues"`
	Monotonicity      Monotonicity           `json:"monotonicity"`
}

// ServerValueFrequency is one of the server's mostCommonValues: the shard key value as
// relaxed extended JSON, and its document count.
type ServerValueFrequency struct {
	Value     string `json:"value"`
	Frequency int64  `json:"frequency"`
}

// ServerReadDistribution is analyzeShardKey's readDistribution (sampled queries).
type ServerReadDistribution struct {
	SampleSize                     ServerReadSampleSize `json:"sampleSize"`
	PercentageOfSingleShardReads   float64              `json:"percentageOfSingleShardReads"`
	PercentageOfMultiShardReads    float64              `json:"percentageOfMultiShardReads"`
	PercentageOfScatterGatherReads float64              `json:"percentageOfScatterGatherReads"`
	NumReadsByRange                []int64              `json:"numReadsByRange,omitempty"`
}

// ServerReadSampleSize counts the sampled reads by command.
type ServerReadSampleSize struct {
	Total     int64 `json:"total"`
	Find      int64 `json:"find"`
	Aggregate int64 `json:"aggregate"`
	Count     int64 `json:"count"`
	Distinct  int64 `json:"distinct"`
}

// ServerWriteDistribution is analyzeShardKey's writeDistribution (sampled queries).
type ServerWriteDistribution struct {
	SampleSize                              ServerWriteSampleSize `json:"sampleSize"`
	PercentageOfSingleShardWrites           float64               `json:"percentageOfSingleShardWrites"`
	PercentageOfMultiShardWrites            float64               `json:"percentageOfMultiShardWrites"`
	PercentageOfScatterGatherWrites         float64               `json:"percentageOfScatterGatherWrites"`
	NumWritesByRange                        []int64               `json:"numWritesByRange,omitempty"`
	PercentageOfShardKeyUpdates             float64               `json:"percentageOfShardKeyUpdates"`
	PercentageOfSingleWritesWithoutShardKey float64               `json:"percentageOfSingleWritesWithoutShardKey"`
	PercentageOfMultiWritesWithoutShardKey  float64               `json:"percentageOfMultiWritesWithoutShardKey"`
}

// ServerWriteSampleSize counts the sampled writes by command (the server samples no
// inserts).
type ServerWriteSampleSize struct {
	Total         int64 `json:"total"`
	Update        int64 `json:"update"`
	Delete        int64 `json:"delete"`
	FindAndModify int64 `json:"findAndModify"`
}

// RangeShare is one range's share of a kind of request, out of Ranges ranges.
type RangeShare struct {
	Range  string  `json:"range"`
	Share  float64 `json:"share"`
	Ranges int     `json:"ranges"`
}

// KeyCharacteristics are analyzeShardKey's keyCharacteristics, over the documents (rows)
// the stream writes with the whole key.
type KeyCharacteristics struct {
	NumDocs  int64 `json:"numDocs"`
	IsUnique bool  `json:"isUnique"`
	// NumDistinctValues is exact up to the exact limit; above it a HyperLogLog estimate
	// whose relative standard error is NumDistinctValuesRelError.
	NumDistinctValues         int64            `json:"numDistinctValues"`
	NumDistinctValuesExact    bool             `json:"numDistinctValuesExact"`
	NumDistinctValuesRelError float64          `json:"numDistinctValuesRelError,omitempty"`
	MostCommonValues          []ValueFrequency `json:"mostCommonValues"`
	Monotonicity              Monotonicity     `json:"monotonicity"`
	// MonotonicityWithinPrefix is the coefficient per first-field value, averaged by
	// weight (compound keys only): {geo_zone: 1, created_at: 1} is monotonic inside a zone.
	MonotonicityWithinPrefix *Monotonicity `json:"monotonicityWithinPrefix,omitempty"`
	AvgDocSizeBytes          int64         `json:"avgDocSizeBytes"`
	// Basis says which requests the values come from: "inserts" or, for a table the
	// stream never inserts into, "writes" or "requests" with the whole key.
	Basis string `json:"basis"`
}

// ValueFrequency is one of mostCommonValues; Share (Frequency/numDocs) is ours.
type ValueFrequency struct {
	Value     string  `json:"value"`
	Frequency int64   `json:"frequency"`
	Share     float64 `json:"share"`
	// Frequency is a guaranteed count; the true count is at most Frequency+FrequencyError
	// (Space-Saving; 0: exact).
	FrequencyError int64 `json:"frequencyError,omitempty"`
}

// Monotonicity is analyzeShardKey's monotonicity document plus the direction.
type Monotonicity struct {
	Type                           string  `json:"type"` // monotonic | not monotonic | unknown
	RecordIDCorrelationCoefficient float64 `json:"recordIdCorrelationCoefficient"`
	Direction                      string  `json:"direction,omitempty"`
	SampleSize                     int     `json:"sampleSize,omitempty"`
}

// PrefixCharacteristics describe the first field of a compound key.
type PrefixCharacteristics struct {
	Field             string           `json:"field"`
	NumDistinctValues int64            `json:"numDistinctValues"`
	MostCommonValues  []ValueFrequency `json:"mostCommonValues"`
}

// ReadDistribution is analyzeShardKey's readDistribution.
type ReadDistribution struct {
	SampleSize                     ReadSampleSize `json:"sampleSize"`
	PercentageOfSingleShardReads   float64        `json:"percentageOfSingleShardReads"`
	PercentageOfMultiShardReads    float64        `json:"percentageOfMultiShardReads"`
	PercentageOfScatterGatherReads float64        `json:"percentageOfScatterGatherReads"`
	NumReadsByRange                []int64        `json:"numReadsByRange,omitempty"`
	ByOperation                    []OpTargeting  `json:"byOperation,omitempty"`
	// FanOut is shardbench's, not analyzeShardKey's: the partition (Cassandra) or shard
	// (MongoDB) requests a read makes on average, 1 when every read reaches one. A listing
	// over 128 category shards makes 128; a broadcast one per shard (node).
	FanOut float64 `json:"fanOut,omitempty"`
}

// ReadSampleSize counts the reads analysed by command.
type ReadSampleSize struct {
	Total int64 `json:"total"`
	Find  int64 `json:"find"` // find, findOne, SELECT
}

// WriteDistribution is analyzeShardKey's writeDistribution.
type WriteDistribution struct {
	SampleSize                      WriteSampleSize `json:"sampleSize"`
	PercentageOfSingleShardWrites   float64         `json:"percentageOfSingleShardWrites"`
	PercentageOfMultiShardWrites    float64         `json:"percentageOfMultiShardWrites"`
	PercentageOfScatterGatherWrites float64         `json:"percentageOfScatterGatherWrites"`
	PercentageOfShardKeyUpdates     float64         `json:"percentageOfShardKeyUpdates"`
	NumWritesByRange                []int64         `json:"numWritesByRange,omitempty"`
	ByOperation                     []OpTargeting   `json:"byOperation,omitempty"`
}

// WriteSampleSize counts the writes analysed by command (insert is ours: analyzeShardKey
// samples only updates, deletes and findAndModify).
type WriteSampleSize struct {
	Total  int64 `json:"total"`
	Insert int64 `json:"insert"`
	Update int64 `json:"update"`
	Delete int64 `json:"delete"`
}

// OpTargeting is how one logical operation's requests to the table were targeted.
type OpTargeting struct {
	Op            string   `json:"op"`
	Statement     string   `json:"statement"`
	Filter        []string `json:"filter,omitempty"`
	Requests      int64    `json:"requests"`
	SingleShard   int64    `json:"singleShard"`
	MultiShard    int64    `json:"multiShard"`
	ScatterGather int64    `json:"scatterGather"`
	// Fanned is the partition or shard requests these requests made (FanOut's numerator).
	Fanned int64 `json:"fanned,omitempty"`
}

// Flag is one finding about a key, in plain words.
type Flag struct {
	Code     string `json:"code"`     // e.g. monotonic, low-cardinality, scatter-gather-reads
	Severity string `json:"severity"` // problem | warning | info
	Reason   string `json:"reason"`
}

// EntityRanking ranks the variants for one entity, best first.
type EntityRanking struct {
	Entity   string          `json:"entity"`
	Variants []RankedVariant `json:"variants"`
}

// RankedVariant is one variant's place for an entity.
type RankedVariant struct {
	Rank    int      `json:"rank"`
	Variant string   `json:"variant"`
	Tables  []string `json:"tables"`
	Score   int      `json:"score"`
	Verdict string   `json:"verdict"`
	// FanOut is the variant's partition or shard requests per read over the entity's
	// tables: among variants of equal score the one with less fan-out ranks first.
	FanOut float64 `json:"fanOut,omitempty"`
}

// ReadAnalysis loads analysis.json; it returns (nil, nil) when the directory has none.
func ReadAnalysis(dir string) (*Analysis, error) { return readDoc[Analysis](dir, analysisDoc) }

var analysisDoc = docKind{file: AnalysisFile, schema: AnalysisSchema, input: inputfile.Report}

// WriteAnalysis writes analysis.json atomically.
func (d *Dir) WriteAnalysis(a *Analysis) error {
	a.Schema, a.Version = AnalysisSchema, 1
	return d.WriteJSON(AnalysisFile, a)
}

// Variant returns the analysis of one variant, or nil.
func (a *Analysis) Variant(name string) *AnalysisVariant {
	if a == nil {
		return nil
	}
	for i := range a.Variants {
		if a.Variants[i].Variant == name {
			return &a.Variants[i]
		}
	}
	return nil
}

// Table returns the analysis of one table by its name or its namespace-qualified name,
// or nil.
func (v *AnalysisVariant) Table(name string) *KeyAnalysis {
	for i := range v.Tables {
		t := &v.Tables[i]
		if t.Table == name || filepath.Ext(t.Table) == "."+name {
			return t
		}
	}
	return nil
}

// HasFlag reports whether the key carries a flag with this code.
func (k *KeyAnalysis) HasFlag(code string) bool {
	for _, f := range k.Flags {
		if f.Code == code {
			return true
		}
	}
	return false
}
