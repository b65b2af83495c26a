package reports

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/results"
)

// Fixtures: the hot-partition, gate and server-side files are committed JSON under
// testdata/fixtures (what plan, the simulator, the real backends and gate write); the
// latency parts — summary.json with its histograms, the per-second time series and the
// .hlog files — are generated here, deterministically, through the same results writer
// and collector the engine uses, so the fixtures stay small and always match the format.

// fixOp is one operation of the generated workload.
type fixOp struct {
	name, kind string
	weight     float64
	medianMs   float64
}

var fixOps = []fixOp{
	{"sessions.read", "read", 30, 0.45},
	{"catalog.product_read", "read", 25, 0.6},
	{"sessions.touch", "write", 22, 0.5},
	{"views.append", "write", 10, 0.35},
	{"carts.add_item", "write", 8, 0.9},
	{"orders.status_change", "write", 3, 1.2},
	{"orders.place", "write", 2, 2.0},
}

// fixPhase is a phase of the generated schedule: the rate at t (seconds into it).
type fixPhase struct {
	name, typ string
	dur       float64
	rate      func(t float64) float64
}

var fixPhases = []fixPhase{
	{"morning-ramp", "ramp", 20, func(t float64) float64 { return 200 + 20*t }},
	{"plateau", "constant", 30, func(float64) float64 { return 600 }},
	{"flash-sale", "spike", 20, func(t float64) float64 {
		if t >= 5 && t < 15 {
			return 1500
		}
		return 600
	}},
	{"cool-down", "ramp", 10, func(t float64) float64 { return 600 - 40*t }},
}

func fixRate(t float64) (float64, string) {
	start := 0.0
	for _, p := range fixPhases {
		if t < start+p.dur {
			return p.rate(t - start), p.name
		}
		start += p.dur
	}
	return 0, fixPhases[len(fixPhases)-1].name
}

func fixDuration() float64 {
	var d float64
	for _, p := range fixPhases {
		d += p.dur
	}
	return d
}

// fixVariant models one design's latency: a capacity beyond which a queue builds, a
// per-design slowdown, and what its events do.
type fixVariant struct {
	name, design, db string
	params           map[string]string
	factor           float64 // service-time multiplier
	capacity         float64 // ops/s before queueing
	events           []results.Event
	// during an event window [from, to): extra service factor and error probability/class
	slowFrom, slowTo float64
	slowFactor       float64
	errProb          float64
	errClass         metrics.Class
	notes            []string
	// unserved: operations the design does not serve, with its reason (never sent:
	// counted unserved at their intended time, as the engine does).
	unserved map[string]string
}

// genRun writes a results directory with the given variants; interruptAt > 0 stops every
// variant there (as a SIGINT would).
func genRun(t testing.TB, dir string, seed uint64, backend results.BackendInfo, variants []fixVariant, interruptAt float64) *results.Summary {
	t.Helper()
	d, err := results.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	start := time.Date(2025, 11, 28, 6, 55, 0, 0, time.UTC)
	dur := fixDuration()
	sum := &results.Summary{
		Tool:      results.Tool{Name: "shardbench", Version: "v0.9.0-test", GoVersion: "go1.26.0", Host: "ci-runner"},
		Scenario:  results.ScenarioInfo{Name: "black-friday-mini", Description: "Eighty seconds of Black Friday at a thousandth of the scale: ramp, plateau, a flash sale, cool-down.", Source: "scenarios/black-friday-mini.yaml", Seed: 20251128, DurationS: dur, Arrival: "poisson", MaxInFlight: 256},
		Backend:   backend,
		StartedAt: start,
		Complete:  interruptAt == 0,
	}
	var ps float64
	for _, p := range fixPhases {
		exp := 0.0
		for x := 0.0; x < p.dur; x++ {
			exp += p.rate(x + 0.5)
		}
		sum.Phases = append(sum.Phases, results.Phase{Name: p.name, Type: p.typ, StartS: ps, EndS: ps + p.dur, ExpectedOps: exp})
		sum.Scenario.ExpectedOps += exp
		ps += p.dur
	}
	opNames := make([]string, len(fixOps))
	var wsum float64
	for i, o := range fixOps {
		opNames[i] = o.name
		wsum += o.weight
	}
	for vi, fv := range variants {
		rng := rand.New(rand.NewPCG(seed, uint64(vi)+1))
		vstart := start.Add(time.Duration(vi) * 90 * time.Second)
		end := dur
		if interruptAt > 0 {
			end = interruptAt
		}
		vw := d.Variant(fv.name, opNames, vstart, results.Timeline{
			Expected: func(from, to time.Duration) float64 {
				var n float64
				for x := from.Seconds(); x < to.Seconds(); x += 0.1 {
					r, _ := fixRate(x)
					n += r * 0.1
				}
				return n
			},
			Phase: func(at time.Duration) string { _, ph := fixRate(at.Seconds()); return ph },
		})
		col := metrics.NewCollector(len(fixOps), time.Millisecond, time.Second, vw.Sink)
		var samples []metrics.Sample
		backlog := 0.0 // seconds of queued work
		for sec := 0.0; sec < end; sec++ {
			rate, _ := fixRate(sec + 0.5)
			slow := 1.0
			inEvent := sec >= fv.slowFrom && sec < fv.slowTo
			if inEvent {
				slow = fv.slowFactor
			}
			load := rate * slow / fv.capacity
			if load > 1 {
				backlog += load - 1
			} else {
				backlog = math.Max(0, backlog-(1-load))
			}
			// Poisson arrivals at the second's rate.
			n := int(rate + rng.NormFloat64()*math.Sqrt(rate))
			for k := 0; k < n; k++ {
				intended := sec + rng.Float64()
				pick := rng.Float64() * wsum
				op := 0
				for acc := fixOps[0].weight; acc < pick && op < len(fixOps)-1; {
					op++
					acc += fixOps[op].weight
				}
				svc := fixOps[op].medianMs * fv.factor * math.Exp(0.45*rng.NormFloat64())
				if load < 1 {
					svc *= 1 + load*load/(1-load+0.05)*0.5
				} else {
					svc *= 1 + 20*rng.Float64()*rng.Float64()
				}
				if rng.Float64() < 0.002 {
					svc *= 8 // a GC pause or a compaction
				}
				svc *= slow
				lagMs := 0.02 + rng.ExpFloat64()*0.01 + backlog*1000*rng.Float64()
				class := uint8(metrics.OK)
				if inEvent && rng.Float64() < fv.errProb {
					class = uint8(fv.errClass)
				}
				if lagMs+svc > 2000 {
					class, svc = uint8(metrics.Timeout), 2000-lagMs
					if svc < 1 {
						svc = 1
					}
				}
				in := int64(intended * 1e9)
				if _, ok := fv.unserved[fixOps[op].name]; ok {
					samples = append(samples, metrics.Sample{Intended: in, Start: in, End: in, Op: uint16(op), Flags: metrics.FlagUnserved})
					continue
				}
				st := in + int64(lagMs*1e6)
				samples = append(samples, metrics.Sample{Intended: in, Start: st, End: st + int64(svc*1e6), Op: uint16(op), Class: class})
			}
		}
		sort.Slice(samples, func(i, j int) bool { return samples[i].End < samples[j].End })
		last := int64(0)
		for i := range samples {
			if interruptAt > 0 && samples[i].End > int64(interruptAt*1e9) {
				// In flight at the interrupt: abandoned.
				samples[i].Flags |= metrics.FlagAbandoned
				samples[i].End = int64(interruptAt * 1e9)
			}
			col.AddVirtual(&samples[i])
			last = max(last, samples[i].End)
		}
		span := time.Duration(last)
		col.Flush(span.Truncate(time.Second)+time.Second, 0)
		if err := col.Err(); err != nil {
			t.Fatal(err)
		}
		if err := vw.Close(); err != nil {
			t.Fatal(err)
		}
		due := time.Duration(end * 1e9)
		v := results.SummaryVariant{Name: fv.name, Design: fv.design, Database: fv.db, Params: fv.params, StartedAt: vstart, DurationS: span.Seconds(), Events: fv.events, Notes: fv.notes, Interrupted: interruptAt > 0}
		total := &metrics.Set{Response: metrics.NewHistogram(), Service: metrics.NewHistogram(), Lag: metrics.NewHistogram()}
		for i, set := range col.Totals() {
			if set == nil || set.Offered() == 0 {
				continue
			}
			st := results.FromSet(fixOps[i].name, fixOps[i].kind, set, span.Seconds(), due.Seconds())
			if set.Scheduled() > 0 {
				st.HistogramLog = results.HistogramLogPath(fv.name, fixOps[i].name)
			}
			st.UnservedReason = fv.unserved[fixOps[i].name]
			v.Ops = append(v.Ops, st)
			total.Merge(set)
		}
		v.Totals = results.FromSet("all", "", total, span.Seconds(), due.Seconds())
		v.Coverage = results.CoverageOf(v.Ops)
		if v.Totals.Errors["timeout"] > 0 {
			v.ErrorExamples = map[string][]string{"timeout": {"operation timed out after 2s (client timeout)"}}
		}
		if v.Totals.Errors["unavailable"] > 0 {
			if v.ErrorExamples == nil {
				v.ErrorExamples = map[string][]string{}
			}
			v.ErrorExamples["unavailable"] = []string{"Cannot achieve consistency level ALL (3 required, 2 alive)"}
		}
		sum.Variants = append(sum.Variants, v)
	}
	sum.EndedAt = start.Add(time.Duration(len(variants)) * 90 * time.Second)
	if interruptAt > 0 {
		sum.Interrupted = "received SIGINT"
		sum.EndedAt = start.Add(time.Duration(interruptAt) * time.Second)
	}
	if err := d.WriteSummary(sum); err != nil {
		t.Fatal(err)
	}
	if err := d.WriteFile(results.ScenarioFile, []byte("name: black-friday-mini\nseed: 20251128\n# (fixture)\n")); err != nil {
		t.Fatal(err)
	}
	return sum
}

func copyFixture(t testing.TB, name, dst string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "fixtures", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

var simVariants = []fixVariant{
	{name: "cass-day-bucket", design: "seed-000 orders_by_period (day bucket)", db: "cassandra", params: map[string]string{"bucket": "1d", "cl.write": "QUORUM"},
		factor: 1.2, capacity: 1300,
		events:   []results.Event{{AtS: 40, Action: "node_down", Target: "10.0.0.3", Note: "stop one replica of the hot day partition"}, {AtS: 60, Action: "node_up", Target: "10.0.0.3"}},
		slowFrom: 40, slowTo: 60, slowFactor: 1.4, errProb: 0.01, errClass: metrics.Unavailable,
		notes: []string{"Simulated: 6 nodes, 8 service workers each, RF 3; writes at QUORUM, catalog reads at ONE."}},
	{name: "cass-user-bucket", design: "orders_by_user_month + products_by_category_bucket", db: "cassandra", params: map[string]string{"buckets": "16", "cl.write": "QUORUM"},
		factor: 1.0, capacity: 2600,
		events:   []results.Event{{AtS: 40, Action: "node_down", Target: "10.0.0.3"}, {AtS: 60, Action: "node_up", Target: "10.0.0.3"}},
		slowFrom: 40, slowTo: 60, slowFactor: 1.15, errProb: 0, errClass: metrics.Unavailable},
	{name: "mongo-hashed-user", design: "seed-001 {user_id: hashed}", db: "mongodb", params: map[string]string{"w": "majority", "readPreference": "primaryPreferred"},
		factor: 1.5, capacity: 2000,
		events:   []results.Event{{AtS: 45, Action: "add_shard", Target: "shard-04", Note: "balancer moves 6 chunks"}},
		slowFrom: 45, slowTo: 60, slowFactor: 1.3, errProb: 0.002, errClass: metrics.Overloaded,
		unserved: map[string]string{"views.append": "seed-001 keeps view history in Cassandra (fixture)"}},
}

// simDir builds a simulated run: three variants, hot spots, gate verdict, simulator view.
func simDir(t testing.TB) string {
	dir := filepath.Join(t.TempDir(), "bf-mini-sim")
	genRun(t, dir, 1, results.BackendInfo{Name: "sim", Simulated: true, Details: map[string]string{"model": "cassandra 6 nodes / mongodb 3+1 shards"}}, simVariants, 0)
	copyFixture(t, "hotspots-sim.json", filepath.Join(dir, results.HotspotsFile))
	copyFixture(t, "gate-sim.json", filepath.Join(dir, results.GateFile))
	copyFixture(t, "server-sim.json", filepath.Join(dir, results.ServerFile))
	return dir
}

// realDir builds a real run on a local 3-node Cassandra: two variants run one after the
// other, placement read from the server, server-side tables; never gated.
func realDir(t testing.TB) string {
	dir := filepath.Join(t.TempDir(), "bf-mini-real")
	vs := []fixVariant{simVariants[1], simVariants[0]}
	vs[0].events, vs[1].events = nil, []results.Event{{AtS: 30, Action: "node_stop", Target: "127.0.0.3", Note: "kill -STOP"}, {AtS: 45, Action: "node_start", Target: "127.0.0.3"}}
	vs[0].slowFrom, vs[0].slowTo = 0, 0
	vs[1].slowFrom, vs[1].slowTo, vs[1].errProb = 30, 45, 0.04
	vs[1].capacity = 1100
	vs[0].notes, vs[1].notes = nil, []string{"Operations at consistency ALL fail while a node is stopped; QUORUM ones keep succeeding."}
	genRun(t, dir, 2, results.BackendInfo{Name: "cassandra", Target: "cassandra://127.0.0.1,127.0.0.2,127.0.0.3:9042?dc=datacenter1", Server: "Apache Cassandra 5.0.4", Details: map[string]string{"num_conns": "2", "host_selection": "token-aware"}}, vs, 0)
	copyFixture(t, "hotspots-real.json", filepath.Join(dir, results.HotspotsFile))
	copyFixture(t, "server-real.json", filepath.Join(dir, results.ServerFile))
	return dir
}

// interruptedDir builds a real run stopped by SIGINT at 35 s of 80: no hot spots.
func interruptedDir(t testing.TB) string {
	dir := filepath.Join(t.TempDir(), "bf-mini-interrupted")
	vs := []fixVariant{simVariants[2]}
	genRun(t, dir, 3, results.BackendInfo{Name: "mongo", Target: "mongodb://127.0.0.1:27018", Server: "FerretDB 1.24.0 (PostgreSQL 15)"}, vs, 35)
	return dir
}

// planDir builds a plan: operation counts per variant, no latency, hot spots.
func planDir(t testing.TB) string {
	dir := filepath.Join(t.TempDir(), "bf-mini-plan")
	d, err := results.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	sum := &results.Summary{
		Tool:      results.Tool{Name: "shardbench", Version: "v0.9.0-test", GoVersion: "go1.26.0"},
		Scenario:  results.ScenarioInfo{Name: "black-friday-mini", Source: "scenarios/black-friday-mini.yaml", Seed: 20251128, DurationS: fixDuration(), ExpectedOps: 51000},
		Backend:   results.BackendInfo{Name: "plan"},
		StartedAt: time.Date(2025, 11, 28, 6, 50, 0, 0, time.UTC), EndedAt: time.Date(2025, 11, 28, 6, 50, 2, 0, time.UTC),
		Complete: true,
	}
	for _, fv := range simVariants {
		v := results.SummaryVariant{Name: fv.name, Design: fv.design, Database: fv.db, Params: fv.params}
		var wsum float64
		for _, o := range fixOps {
			wsum += o.weight
		}
		for _, o := range fixOps {
			n := int64(51000 * o.weight / wsum)
			v.Ops = append(v.Ops, results.OpStats{Op: o.name, Kind: o.kind, Scheduled: n, TargetRate: float64(n) / fixDuration()})
			v.Totals.Scheduled += n
		}
		v.Totals.Op = "all"
		v.Totals.TargetRate = float64(v.Totals.Scheduled) / fixDuration()
		sum.Variants = append(sum.Variants, v)
	}
	if err := d.WriteSummary(sum); err != nil {
		t.Fatal(err)
	}
	copyFixture(t, "hotspots-sim.json", filepath.Join(dir, results.HotspotsFile))
	return dir
}

// hotspotsOnlyDir is a plan that wrote nothing but hotspots.json.
func hotspotsOnlyDir(t testing.TB) string {
	dir := filepath.Join(t.TempDir(), "plan-hotspots-only")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	copyFixture(t, "hotspots-sim.json", filepath.Join(dir, results.HotspotsFile))
	return dir
}

// analysisDoc is what `shardbench analyze --server-check` writes for three variants: two
// the sim fixture knows (a MongoDB one with the server's numbers beside the prediction
// and a Cassandra one) and one only the analysis knows, with an analyzeShardKey failure.
func analysisDoc() *results.Analysis {
	return &results.Analysis{
		Scenario: "black-friday-mini", Operations: 50000,
		Variants: []results.AnalysisVariant{
			{Variant: "mongo-hashed-user", Database: "mongodb", Topology: "3 shards",
				Notes: []string{"server check in database shop_1a2b3c4d_analyze on mongos-1:27017"},
				Tables: []results.KeyAnalysis{{
					Table: "shop.orders", Entity: "orders", Database: "mongodb", Key: "{user_id: hashed, created_at: 1}", Targets: 3,
					KeyCharacteristics: results.KeyCharacteristics{NumDocs: 4210, NumDistinctValues: 4207, NumDistinctValuesExact: true,
						MostCommonValues: []results.ValueFrequency{{Value: "{user_id: u-0042, created_at: 2025-11-28}", Frequency: 2, Share: 0.000475}},
						Monotonicity:     results.Monotonicity{Type: "not monotonic", RecordIDCorrelationCoefficient: -0.04}, AvgDocSizeBytes: 412, Basis: "inserts"},
					ReadDistribution:  results.ReadDistribution{SampleSize: results.ReadSampleSize{Total: 9000, Find: 9000}, PercentageOfSingleShardReads: 32, PercentageOfScatterGatherReads: 68},
					WriteDistribution: results.WriteDistribution{SampleSize: results.WriteSampleSize{Total: 8000, Insert: 4210, Update: 3790}, PercentageOfSingleShardWrites: 51, PercentageOfScatterGatherWrites: 49, PercentageOfShardKeyUpdates: 0},
					Flags:             []results.Flag{{Code: "scatter-gather-reads", Severity: "problem", Reason: "reads by _id must broadcast to all 3 shards (scatter-gather, 68% of reads): orders.read (findOne)"}},
					Verdict:           "avoid", Score: 20,
					Server: &results.ServerKeyAnalysis{Namespace: "shop_1a2b3c4d_analyze.orders", Key: `{user_id: "hashed", created_at: 1}`,
						KeyCharacteristics: &results.ServerKeyCharacteristics{NumDocsTotal: 4187, NumDocsSampled: 4187, AvgDocSizeBytes: 398, NumDistinctValues: 4185,
							MostCommonValues: []results.ServerValueFrequency{{Value: `{"user_id":"u-0042","created_at":{"$date":"2025-11-28T00:00:00Z"}}`, Frequency: 2}},
							Monotonicity:     results.Monotonicity{Type: "not monotonic", RecordIDCorrelationCoefficient: 0.0123}},
						ReadDistribution:  &results.ServerReadDistribution{SampleSize: results.ServerReadSampleSize{Total: 517, Find: 517}, PercentageOfSingleShardReads: 31.5, PercentageOfScatterGatherReads: 68.5},
						WriteDistribution: &results.ServerWriteDistribution{SampleSize: results.ServerWriteSampleSize{Total: 233, Update: 233}, PercentageOfSingleShardWrites: 0, PercentageOfScatterGatherWrites: 100},
					},
				}}},
			{Variant: "cass-day-bucket", Database: "cassandra", Topology: "6 nodes in 1 DC",
				Tables: []results.KeyAnalysis{{
					Table: "shop.orders_by_period", Entity: "orders", Database: "cassandra", Key: "((time_bucket))", Targets: 6,
					KeyCharacteristics: results.KeyCharacteristics{NumDocs: 4210, NumDistinctValues: 1, NumDistinctValuesExact: true,
						MostCommonValues: []results.ValueFrequency{{Value: "time_bucket='2025-11-28'", Frequency: 4210, Share: 1}},
						Monotonicity:     results.Monotonicity{Type: "not monotonic"}, AvgDocSizeBytes: 180, Basis: "inserts"},
					ReadDistribution:  results.ReadDistribution{SampleSize: results.ReadSampleSize{Total: 700, Find: 700}, PercentageOfSingleShardReads: 70, PercentageOfMultiShardReads: 30},
					WriteDistribution: results.WriteDistribution{SampleSize: results.WriteSampleSize{Total: 4210, Insert: 4210}, PercentageOfSingleShardWrites: 100},
					Flags:             []results.Flag{{Code: "one-partition-per-period", Severity: "problem", Reason: "one partition per period: every row written went to time_bucket='2025-11-28'"}},
					Verdict:           "avoid", Score: 30,
				}}},
			{Variant: "mongo-created-at", Database: "mongodb", Topology: "3 shards",
				Tables: []results.KeyAnalysis{{
					Table: "shop.orders", Entity: "orders", Database: "mongodb", Key: "{created_at: 1}", Targets: 3,
					KeyCharacteristics: results.KeyCharacteristics{NumDocs: 4210, NumDistinctValues: 1_234_567, NumDistinctValuesRelError: 0.0081,
						Monotonicity: results.Monotonicity{Type: "monotonic", RecordIDCorrelationCoefficient: 1, Direction: "increasing"}, Basis: "inserts"},
					HottestInsertRange: &results.RangeShare{Range: "[{created_at: 2025-11-28T06:00}, MaxKey) on shard-02", Share: 0.87, Ranges: 2},
					Flags:              []results.Flag{{Code: "monotonic", Severity: "problem", Reason: "monotonic (increasing, coefficient 1.00): every new document goes to the last chunk, on one shard"}},
					Verdict:            "avoid", Score: 30,
					Server: &results.ServerKeyAnalysis{Namespace: "shop_9f8e7d6c_analyze.orders", Key: "{created_at: 1}", Error: "(Unauthorized) not authorized on admin to execute command"},
				}}},
		},
		Ranking: []results.EntityRanking{{Entity: "orders", Variants: []results.RankedVariant{
			{Rank: 1, Variant: "mongo-hashed-user", Tables: []string{"shop.orders"}, Score: 20, Verdict: "avoid"},
			{Rank: 2, Variant: "cass-day-bucket", Tables: []string{"shop.orders_by_period"}, Score: 30, Verdict: "avoid"},
			{Rank: 3, Variant: "mongo-created-at", Tables: []string{"shop.orders"}, Score: 30, Verdict: "avoid"},
		}}},
		ServerCheck: &results.ServerCheck{Status: results.ServerCheckDone, Target: "mongos-1:27017", Server: "MongoDB 7.0.14 (mongos)",
			Message: "analyzeShardKey ran on mongos-1:27017 (MongoDB 7.0.14 (mongos)) for 2 MongoDB variant(s), each after a load of the stream's first 10000 operations", LoadOps: 10000},
		Notes: []string{"predicted from the scenario's operation stream with no database"},
	}
}

// writeAnalysis writes a as dir's analysis.json, beside whatever the directory holds.
func writeAnalysis(t testing.TB, dir string, a *results.Analysis) {
	t.Helper()
	a.Schema, a.Version = results.AnalysisSchema, 1
	b, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := results.WriteFileAtomic(filepath.Join(dir, results.AnalysisFile), b); err != nil {
		t.Fatal(err)
	}
}

// analysisOnlyDir is what `shardbench analyze` leaves: analysis.json and no summary.
func analysisOnlyDir(t testing.TB) string {
	dir := filepath.Join(t.TempDir(), "bf-mini-analyze")
	writeAnalysis(t, dir, analysisDoc())
	return dir
}

// simAnalysisDir is a simulated run whose directory also holds a key analysis.
func simAnalysisDir(t testing.TB) string {
	dir := simDir(t)
	writeAnalysis(t, dir, analysisDoc())
	return dir
}
