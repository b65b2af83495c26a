package mongo

// The server side of `shardbench analyze --server-check`: on a mongos of MongoDB 7.0 or
// newer, set up a variant's database as `run` does, enable query sampling
// (configureQueryAnalyzer), run the first operations of the scenario's stream, then ask
// analyzeShardKey about every collection the design shards, so the server's numbers can
// be put beside the prediction. Anything else (FerretDB, a replica set, an older mongos)
// gets a NotAvailableError that says why.

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/results"
)

// Probe connects to cfg.Target with cfg.Options (backends.mongo), asks hello and
// buildInfo, and disconnects: what kind of server it is. Bad input is a *UsageError; an
// unreachable server an error naming the target with its password hidden.
func Probe(ctx context.Context, cfg backend.Config) (Deployment, error) {
	o, err := ParseOptions(cfg.Options)
	if err != nil {
		return Deployment{}, &UsageError{err}
	}
	t, err := parseTarget(cfg.Target, o.PasswordFile)
	if err != nil {
		return Deployment{}, &UsageError{err}
	}
	b := newBackend(cfg, o, t, nil)
	if err := b.connect(ctx); err != nil {
		return Deployment{}, err
	}
	dctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b.client.Disconnect(dctx)
	return b.dep, nil
}

// TargetHosts is the host list of a --target (host:port[,host:port]), without user name,
// password or options: what messages about the server may show.
func TargetHosts(target string) string {
	if target == "" {
		target = DefaultTarget
	}
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		return "the target"
	}
	return u.Host
}

// NotAvailableError says why a server cannot run analyzeShardKey.
type NotAvailableError struct {
	Hosts  string // host:port, never credentials
	Server string // what the server said it is
	Reason string
}

func (e *NotAvailableError) Error() string {
	return fmt.Sprintf("analyzeShardKey needs a mongos of MongoDB 7.0+; %s is %s, %s: server check skipped, prediction only", e.Hosts, e.Server, e.Reason)
}

// AnalyzeShardKeySupport returns nil when the deployment runs analyzeShardKey with read
// and write distribution (a mongos of 7.0 or newer), else a *NotAvailableError naming
// hosts. FerretDB is refused by kind, not version: it reports the MongoDB version whose
// wire protocol it speaks (7.0.x) but has no sharding.
func (d Deployment) AnalyzeShardKeySupport(hosts string) error {
	na := &NotAvailableError{Hosts: hosts, Server: d.String()}
	switch {
	case d.Kind == KindFerretDB:
		na.Reason = "not a mongos (FerretDB has no analyzeShardKey)"
	case d.Kind == KindReplicaSet:
		na.Reason = "not a mongos (a replica set has no shards to distribute reads and writes over)"
	case d.Kind != KindMongos:
		na.Reason = "not a mongos"
	case !versionAtLeast(d.Version, 7, 0):
		v := d.Version
		if v == "" {
			v = "unknown"
		}
		na.Reason = "MongoDB " + v + " is older than 7.0, where analyzeShardKey is new"
	default:
		return nil
	}
	return na
}

// versionAtLeast compares a "major.minor.patch[-suffix]" version.
func versionAtLeast(v string, major, minor int) bool {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(leadingDigits(parts[1])) // "0-rc1"
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}

func leadingDigits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

// CheckOptions control the server check of one variant.
type CheckOptions struct {
	// LoadOps is how many operations of the scenario's stream run against the server
	// (every MongoDB step: inserts, updates, reads) before analyzeShardKey.
	LoadOps int
	// SamplesPerSecond is configureQueryAnalyzer's rate (the server allows at most 50).
	SamplesPerSecond float64
	// SamplerRefresh is how long to wait after configureQueryAnalyzer before the load:
	// mongos and mongod pick up a new sampling configuration every
	// queryAnalysisSamplerConfigurationRefreshSecs (10 s by default).
	SamplerRefresh time.Duration
	// SampleWait bounds how long to wait for sampled queries to reach disk: mongod writes
	// them every queryAnalysisWriterIntervalSecs (90 s by default), and analyzeShardKey
	// sees only written ones.
	SampleWait time.Duration
}

// Check defaults.
const (
	DefaultSamplesPerSecond = 50
	DefaultSamplerRefresh   = 12 * time.Second
	DefaultSampleWait       = 2 * time.Minute
)

// CheckedCollection is analyzeShardKey's answer about one collection of a variant.
type CheckedCollection struct {
	Collection string
	Server     results.ServerKeyAnalysis
}

// CheckResult is the server check of one variant.
type CheckResult struct {
	Database    string
	Collections []CheckedCollection
	// Notes say what the user must know to read the server's numbers (the load, query
	// sampling, what the server did not apply).
	Notes []string
}

// keyedCollection is a collection the design gives a shard key.
type keyedCollection struct {
	name string
	key  bson.D
	// sampled: the design reads, updates or deletes in it, so analyzeShardKey's read and
	// write distribution should see sampled queries (inserts are never sampled).
	sampled bool
}

// CheckShardKeys runs the server check of one variant on a mongos of MongoDB 7.0+: the
// variant's database (its `run` name with "_analyze" appended, dropped and set up afresh
// with the design's collections, indexes and sharding, so the numbers describe this load
// alone and `run`'s data is left alone), query sampling enabled on every sharded
// collection, the first o.LoadOps operations of the stream (every MongoDB step), then
// analyzeShardKey with keyCharacteristics and readWriteDistribution for each sharded
// collection and its key. Sampling is switched off again at the end.
func CheckShardKeys(ctx context.Context, cfg backend.Config, o CheckOptions) (*CheckResult, error) {
	if o.SamplesPerSecond <= 0 {
		o.SamplesPerSecond = DefaultSamplesPerSecond
	}
	cfg.Recreate = true
	b, err := Open(ctx, cfg, func(s *openSettings) { s.dbSuffix, s.noLoad = "_analyze", true })
	if err != nil {
		return nil, err
	}
	defer b.Close()
	if err := b.dep.AnalyzeShardKeySupport(TargetHosts(b.target.uri)); err != nil {
		return nil, err
	}
	res := &CheckResult{Database: b.dbName}
	note := func(format string, args ...any) {
		s := fmt.Sprintf(format, args...)
		res.Notes = append(res.Notes, s)
		b.log.Logf("%s", s)
	}
	res.Notes = append(res.Notes, b.Notes()...)
	colls := b.keyedCollections()
	admin := b.client.Database("admin")

	sampling := 0
	for _, c := range colls {
		ns := b.dbName + "." + c.name
		err := admin.RunCommand(ctx, bson.D{{Key: "configureQueryAnalyzer", Value: ns}, {Key: "mode", Value: "full"}, {Key: "samplesPerSecond", Value: o.SamplesPerSecond}}).Err()
		if err != nil {
			note("query sampling of %s could not be enabled (configureQueryAnalyzer: %s): the server's readDistribution and writeDistribution for it are empty", ns, b.log.Redact(err.Error()))
			continue
		}
		sampling++
	}
	defer func() {
		octx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		for _, c := range colls {
			admin.RunCommand(octx, bson.D{{Key: "configureQueryAnalyzer", Value: b.dbName + "." + c.name}, {Key: "mode", Value: "off"}})
		}
	}()
	if sampling > 0 && o.SamplerRefresh > 0 {
		b.log.Logf("query sampling enabled on %d collection(s) at %g queries/s; waiting %s for mongos and the shards to pick it up", sampling, o.SamplesPerSecond, o.SamplerRefresh)
		if err := sleep(ctx, o.SamplerRefresh); err != nil {
			return res, err
		}
	}

	lr, err := backend.LoadPhase{
		Ops: o.LoadOps, Concurrency: b.opts.Load.Concurrency, Timeout: b.timeout,
		Keep:     func(s *design.Step) bool { return s.Database == design.MongoDB },
		Exec:     b.run,
		Expected: func(err error) bool { return serverCode(err) == 11000 },
		Redact:   b.log.Redact,
	}.Run(ctx, cfg)
	if err != nil {
		return res, fmt.Errorf("mongo %s: load phase of %s: %w", b.target.redacted, b.dbName, err)
	}
	first := ""
	if lr.FirstFailure != "" {
		first = "; first failure: " + lr.FirstFailure
	}
	note("load: the first %d operations of the stream ran their MongoDB steps (inserts, updates, "+
		"reads) on %s: %d requests in %s, %d failed, %d duplicates%s",
		lr.Ops, b.dbName, lr.Writes, lr.Took.Round(time.Millisecond), lr.Failed, lr.Expected, first)
	if sampling > 0 {
		note("the server samples at most %g queries per second (configureQueryAnalyzer), so its "+
			"readDistribution and writeDistribution describe a sample of the load, and never "+
			"its inserts",
			o.SamplesPerSecond)
	}

	deadline := time.Now().Add(o.SampleWait)
	for _, c := range colls {
		ns := b.dbName + "." + c.name
		var sk results.ServerKeyAnalysis
		for {
			sk, err = b.analyzeShardKey(ctx, ns, c.key)
			if err != nil || !c.sampled || sampling == 0 || sampledTotal(&sk) > 0 || time.Now().After(deadline) {
				break
			}
			b.log.Logf("%s: no sampled queries written yet; retrying analyzeShardKey (mongod writes them every queryAnalysisWriterIntervalSecs)", ns)
			if err := sleep(ctx, 5*time.Second); err != nil {
				return res, err
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			sk = results.ServerKeyAnalysis{Namespace: ns, Key: formatDoc(c.key), Error: b.log.Redact(err.Error())}
			note("analyzeShardKey %s %s failed: %s", ns, formatDoc(c.key), sk.Error)
		} else if c.sampled && sampling > 0 && sampledTotal(&sk) == 0 {
			note("%s: no sampled queries reached analyzeShardKey within %s; its read and write distribution are empty", ns, o.SampleWait)
		}
		res.Collections = append(res.Collections, CheckedCollection{Collection: c.name, Server: sk})
	}
	return res, nil
}

func sampledTotal(sk *results.ServerKeyAnalysis) int64 {
	var n int64
	if sk.ReadDistribution != nil {
		n += sk.ReadDistribution.SampleSize.Total
	}
	if sk.WriteDistribution != nil {
		n += sk.WriteDistribution.SampleSize.Total
	}
	return n
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// keyedCollections lists the design's collections with a shard key, and whether the
// design sends them queries the server samples.
func (b *Backend) keyedCollections() []keyedCollection {
	mg := b.cfg.Compiled.Design.MongoDB
	sampled := map[string]bool{}
	m := b.cfg.Compiled.Model
	for i := range m.Ops {
		for _, s := range b.cfg.Compiled.Steps(i) {
			if s.Database == design.MongoDB && s.Statement != "insertOne" {
				sampled[s.Target] = true
			}
		}
	}
	var out []keyedCollection
	for i := range mg.Collections {
		name, c := mg.Collections[i].Key, &mg.Collections[i].Value
		if len(c.ShardKey) == 0 {
			continue
		}
		out = append(out, keyedCollection{name: name, key: keyDoc(c.ShardKey), sampled: sampled[name]})
	}
	return out
}

// analyzeShardKey runs the command on one collection and key.
func (b *Backend) analyzeShardKey(ctx context.Context, ns string, key bson.D) (results.ServerKeyAnalysis, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	raw, err := b.client.Database("admin").RunCommand(ctx, bson.D{
		{Key: "analyzeShardKey", Value: ns}, {Key: "key", Value: key},
		{Key: "keyCharacteristics", Value: true}, {Key: "readWriteDistribution", Value: true},
	}).Raw()
	if err != nil {
		return results.ServerKeyAnalysis{}, err
	}
	return ServerKeyAnalysis(ns, formatDoc(key), raw)
}

// ServerKeyAnalysis maps an analyzeShardKey response (MongoDB manual, "analyzeShardKey",
// Output) to the results' fields, which carry the server's own names. It accepts both
// 7.0.0's numDocs and later releases' numDocsTotal/numDocsSampled; numbers may come as
// int32, int64 or double.
func ServerKeyAnalysis(ns, key string, raw bson.Raw) (results.ServerKeyAnalysis, error) {
	if err := raw.Validate(); err != nil {
		return results.ServerKeyAnalysis{}, fmt.Errorf("analyzeShardKey %s: unreadable reply: %w", ns, err)
	}
	sk := results.ServerKeyAnalysis{Namespace: ns, Key: key}
	if v, err := raw.LookupErr("note"); err == nil {
		sk.Note, _ = v.StringValueOK()
	}
	if kc, ok := subDoc(raw, "keyCharacteristics"); ok {
		c := &results.ServerKeyCharacteristics{
			NumDocsTotal:      i64(kc, "numDocsTotal"),
			NumDocsSampled:    i64(kc, "numDocsSampled"),
			NumOrphanDocs:     i64(kc, "numOrphanDocs"),
			AvgDocSizeBytes:   i64(kc, "avgDocSizeBytes"),
			NumDistinctValues: i64(kc, "numDistinctValues"),
		}
		if c.NumDocsTotal == 0 {
			c.NumDocsTotal = i64(kc, "numDocs")
		}
		if v, err := kc.LookupErr("isUnique"); err == nil {
			c.IsUnique, _ = v.BooleanOK()
		}
		if arr, err := kc.LookupErr("mostCommonValues"); err == nil {
			if a, ok := arr.ArrayOK(); ok {
				vals, _ := a.Values()
				for _, v := range vals {
					d, ok := v.DocumentOK()
					if !ok {
						continue
					}
					fv := results.ServerValueFrequency{Frequency: i64(d, "frequency")}
					if val, err := d.LookupErr("value"); err == nil {
						fv.Value = extJSON(val)
					}
					c.MostCommonValues = append(c.MostCommonValues, fv)
				}
			}
		}
		if m, ok := subDoc(kc, "monotonicity"); ok {
			c.Monotonicity.RecordIDCorrelationCoefficient = f64(m, "recordIdCorrelationCoefficient")
			if v, err := m.LookupErr("type"); err == nil {
				c.Monotonicity.Type, _ = v.StringValueOK()
			}
		} else if v, err := kc.LookupErr("monotonicity"); err == nil {
			// 7.0 release candidates answered a bare string.
			c.Monotonicity.Type, _ = v.StringValueOK()
		}
		sk.KeyCharacteristics = c
	}
	if rd, ok := subDoc(raw, "readDistribution"); ok {
		r := &results.ServerReadDistribution{
			PercentageOfSingleShardReads:   f64(rd, "percentageOfSingleShardReads"),
			PercentageOfMultiShardReads:    f64(rd, "percentageOfMultiShardReads"),
			PercentageOfScatterGatherReads: f64(rd, "percentageOfScatterGatherReads"),
			NumReadsByRange:                i64s(rd, "numReadsByRange"),
		}
		if ss, ok := subDoc(rd, "sampleSize"); ok {
			r.SampleSize = results.ServerReadSampleSize{Total: i64(ss, "total"), Find: i64(ss, "find"), Aggregate: i64(ss, "aggregate"), Count: i64(ss, "count"), Distinct: i64(ss, "distinct")}
		}
		sk.ReadDistribution = r
	}
	if wd, ok := subDoc(raw, "writeDistribution"); ok {
		w := &results.ServerWriteDistribution{
			PercentageOfSingleShardWrites:           f64(wd, "percentageOfSingleShardWrites"),
			PercentageOfMultiShardWrites:            f64(wd, "percentageOfMultiShardWrites"),
			PercentageOfScatterGatherWrites:         f64(wd, "percentageOfScatterGatherWrites"),
			NumWritesByRange:                        i64s(wd, "numWritesByRange"),
			PercentageOfShardKeyUpdates:             f64(wd, "percentageOfShardKeyUpdates"),
			PercentageOfSingleWritesWithoutShardKey: f64(wd, "percentageOfSingleWritesWithoutShardKey"),
			PercentageOfMultiWritesWithoutShardKey:  f64(wd, "percentageOfMultiWritesWithoutShardKey"),
		}
		if ss, ok := subDoc(wd, "sampleSize"); ok {
			w.SampleSize = results.ServerWriteSampleSize{Total: i64(ss, "total"), Update: i64(ss, "update"), Delete: i64(ss, "delete"), FindAndModify: i64(ss, "findAndModify")}
		}
		sk.WriteDistribution = w
	}
	if sk.KeyCharacteristics == nil && sk.ReadDistribution == nil && sk.WriteDistribution == nil {
		return sk, errors.New("the reply has none of keyCharacteristics, readDistribution, writeDistribution")
	}
	return sk, nil
}

func subDoc(d bson.Raw, key string) (bson.Raw, bool) {
	v, err := d.LookupErr(key)
	if err != nil {
		return nil, false
	}
	return v.DocumentOK()
}

func i64(d bson.Raw, key string) int64 {
	v, err := d.LookupErr(key)
	if err != nil {
		return 0
	}
	if n, ok := v.AsInt64OK(); ok {
		return n
	}
	return 0
}

func f64(d bson.Raw, key string) float64 {
	v, err := d.LookupErr(key)
	if err != nil {
		return 0
	}
	if f, ok := v.AsFloat64OK(); ok {
		return f
	}
	return 0
}

func i64s(d bson.Raw, key string) []int64 {
	v, err := d.LookupErr(key)
	if err != nil {
		return nil
	}
	a, ok := v.ArrayOK()
	if !ok {
		return nil
	}
	vals, _ := a.Values()
	out := make([]int64, 0, len(vals))
	for _, x := range vals {
		n, _ := x.AsInt64OK()
		out = append(out, n)
	}
	return out
}

// extJSON renders a shard key value as relaxed extended JSON ({"user_id": 7}).
func extJSON(v bson.RawValue) string {
	if d, ok := v.DocumentOK(); ok {
		if b, err := bson.MarshalExtJSON(d, false, false); err == nil {
			return string(b)
		}
	}
	return v.String()
}
