package mongo

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/shardbench/shardbench/internal/results"
)

// mongosView adds what only a mongos can say to the server view: per-shard documents and
// bytes ($shardedDataDistribution), chunk counts per shard now against the table the
// attribution used, the balancer's state, and per-shard operation counts ($collStats
// latencyStats) against the client-side attribution.
func (b *Backend) mongosView(ctx context.Context, sv *results.ServerVariant, after serverSnapshot) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	admin := b.client.Database("admin")
	var bal bson.M
	if err := admin.RunCommand(ctx, bson.D{{Key: "balancerStatus", Value: 1}}).Decode(&bal); err == nil {
		sv.Notes = append(sv.Notes, fmt.Sprintf("balancer: mode %v, in a balancing round: %v", bal["mode"], bal["inBalancerRound"]))
	} else {
		sv.Notes = append(sv.Notes, "balancerStatus: "+b.log.Redact(err.Error()))
	}
	cur, err := admin.Aggregate(ctx, bson.A{
		bson.D{{Key: "$shardedDataDistribution", Value: bson.D{}}},
		bson.D{{Key: "$match", Value: bson.D{{Key: "ns", Value: bson.D{{Key: "$regex", Value: "^" + regexp.QuoteMeta(b.dbName+".")}}}}}},
	})
	if err != nil {
		sv.Notes = append(sv.Notes, "$shardedDataDistribution (MongoDB 6.0.3+): "+b.log.Redact(err.Error()))
	} else {
		t := results.ServerTable{Title: "data per shard ($shardedDataDistribution)", Subject: "nodes",
			Columns: []string{"collection", "shard", "documents", "bytes", "orphaned documents"}, Numeric: []bool{false, false, true, true, true}}
		for cur.Next(ctx) {
			var d struct {
				NS     string `bson:"ns"`
				Shards []struct {
					Shard    string `bson:"shardName"`
					Docs     int64  `bson:"numOwnedDocuments"`
					Bytes    int64  `bson:"ownedSizeBytes"`
					Orphaned int64  `bson:"numOrphanedDocs"`
				} `bson:"shards"`
			}
			if cur.Decode(&d) != nil {
				continue
			}
			for _, s := range d.Shards {
				t.Rows = append(t.Rows, []string{d.NS[len(b.dbName)+1:], s.Shard, itoa(s.Docs), itoa(s.Bytes), itoa(s.Orphaned)})
			}
		}
		cur.Close(ctx)
		sv.Tables = append(sv.Tables, t)
	}
	if b.routing == nil {
		return
	}
	ct := results.ServerTable{Title: "chunks per shard (config.chunks: as the run started, after the load → after the run)", Subject: "nodes",
		Columns: []string{"collection", "shard", "chunks at the start", "chunks after"}, Numeric: []bool{false, false, true, true}}
	var colls []string
	for c := range b.routing.tables {
		colls = append(colls, c)
	}
	sort.Strings(colls)
	for _, c := range colls {
		before := b.routing.tables[c]
		now, err := readChunkTable(ctx, b.client, b.dbName+"."+c)
		if err != nil {
			sv.Notes = append(sv.Notes, "config.chunks of "+c+" after the run: "+b.log.Redact(err.Error()))
			continue
		}
		count := func(t interface{ ChunksPerShard() []int }, shards []string) map[string]int {
			m := map[string]int{}
			for i, n := range t.ChunksPerShard() {
				m[shards[i]] = n
			}
			return m
		}
		bc, ac := count(before, before.Shards), count(now, now.Shards)
		shards := map[string]bool{}
		for s := range bc {
			shards[s] = true
		}
		for s := range ac {
			shards[s] = true
		}
		var names []string
		for s := range shards {
			names = append(names, s)
		}
		sort.Strings(names)
		moved := false
		for _, s := range names {
			ct.Rows = append(ct.Rows, []string{c, s, fmt.Sprint(bc[s]), fmt.Sprint(ac[s])})
			moved = moved || bc[s] != ac[s]
		}
		if moved {
			sv.Disagreements = append(sv.Disagreements, fmt.Sprintf("%s: chunks moved or split during the run; the client-side attribution used the table read as the run started", c))
		}
	}
	sv.Tables = append(sv.Tables, ct)
	// Per-shard operations the server counted against what the client attributed.
	_, client, _ := b.routing.counts()
	server := map[string]int64{}
	for _, c := range after.colls {
		if c.Shard == "" || !c.HasLatency {
			continue
		}
		var pr collStat
		for _, p := range b.before.colls {
			if p.Coll == c.Coll && p.Shard == c.Shard {
				pr = p
			}
		}
		server[c.Shard] += c.Reads - pr.Reads + c.Writes - pr.Writes
	}
	for s, n := range client {
		if m, ok := server[s]; ok && (m < n*9/10 || m > n*11/10+10) {
			sv.Disagreements = append(sv.Disagreements, fmt.Sprintf("shard %s: the client attributed %d requests, $collStats counted %d reads and writes", s, n, m))
		}
	}
}
