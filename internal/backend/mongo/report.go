package mongo

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/shardbench/shardbench/internal/results"
)

// serverSnapshot is what the server reported at one moment.
type serverSnapshot struct {
	ok       bool
	counters map[string]int64 // "opcounters.insert", "commands.find.total", ...
	colls    []collStat
	err      string
}

type collStat struct {
	Coll, Shard                 string
	Count, Size, Storage        int64
	Reads, ReadUS, Writes, WrUS int64
	HasLatency                  bool
}

// counterCommands are the commands whose server-side totals are compared with what the
// client sent.
var counterCommands = []string{"insert", "update", "delete", "find", "getMore"}

func (b *Backend) snapshot(ctx context.Context) serverSnapshot {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	s := serverSnapshot{counters: map[string]int64{}}
	var st bson.M
	if err := b.client.Database("admin").RunCommand(ctx, bson.D{{Key: "serverStatus", Value: 1}}).Decode(&st); err != nil {
		s.err = b.log.Redact(err.Error())
		return s
	}
	s.ok = true
	if oc, ok := docOf(st["opcounters"]); ok {
		for k, v := range oc {
			s.counters["opcounters."+k] = asInt(v)
		}
	}
	if m, ok := docOf(st["metrics"]); ok {
		if cmds, ok := docOf(m["commands"]); ok {
			for _, name := range counterCommands {
				if c, ok := docOf(cmds[name]); ok {
					s.counters["commands."+name+".total"] = asInt(c["total"])
					s.counters["commands."+name+".failed"] = asInt(c["failed"])
				}
			}
		}
	}
	for i := range b.cfg.Compiled.Design.MongoDB.Collections {
		name := b.cfg.Compiled.Design.MongoDB.Collections[i].Key
		cur, err := b.db.Collection(name).Aggregate(ctx, bson.A{bson.D{{Key: "$collStats", Value: bson.D{
			{Key: "latencyStats", Value: bson.D{}}, {Key: "storageStats", Value: bson.D{}}}}}})
		if err != nil {
			continue
		}
		for cur.Next(ctx) {
			var d bson.M
			if cur.Decode(&d) != nil {
				continue
			}
			cs := collStat{Coll: name}
			cs.Shard, _ = d["shard"].(string)
			if ss, ok := docOf(d["storageStats"]); ok {
				cs.Count, cs.Size, cs.Storage = asInt(ss["count"]), asInt(ss["size"]), asInt(ss["storageSize"])
			}
			if ls, ok := docOf(d["latencyStats"]); ok {
				cs.HasLatency = true
				if r, ok := docOf(ls["reads"]); ok {
					cs.Reads, cs.ReadUS = asInt(r["ops"]), asInt(r["latency"])
				}
				if w, ok := docOf(ls["writes"]); ok {
					cs.Writes, cs.WrUS = asInt(w["ops"]), asInt(w["latency"])
				}
			}
			s.colls = append(s.colls, cs)
		}
		cur.Close(ctx)
	}
	return s
}

func asInt(v any) int64 {
	switch x := v.(type) {
	case int32:
		return int64(x)
	case int64:
		return x
	case float64:
		return int64(x)
	}
	return 0
}

// Report adds the backend's notes and per-server (or, on a mongos, per-shard) counts to
// the variant, and its server-side view to server.json: serverStatus counters before and
// after, $collStats per collection (and shard), the client's command counts, and where
// they disagree.
func (b *Backend) Report(ctx context.Context, v *results.SummaryVariant, dir *results.Dir) error {
	cmds, servers, perServer := b.mon.snapshot() // before our own $collStats commands
	after := b.snapshot(ctx)
	for _, n := range b.log.Notes() { // the CLI already copied the setup notes (engine.VariantBackend.Notes)
		if !contains(v.Notes, n) {
			v.Notes = append(v.Notes, n)
		}
	}
	if n := b.foreign.Load(); n > 0 {
		v.Notes = append(v.Notes, fmt.Sprintf("internal error (please report): %d operation(s) with steps on another database (Cassandra) reached the mongo backend and were counted as client errors", n))
	}
	sv := results.ServerVariant{Variant: v.Name, Source: "serverStatus + $collStats, " + b.dep.String()}
	if b.routing != nil {
		names, m, tg := b.routing.counts()
		for _, n := range names {
			v.Nodes = append(v.Nodes, results.NodeCount{Node: n, Ops: m[n]})
		}
		sv.Tables = append(sv.Tables, results.ServerTable{
			Title: "mongos targeting (client-side, from config.chunks and the placement code)", Subject: "nodes",
			Columns: []string{"targeting", "requests"}, Numeric: []bool{false, true},
			Rows: [][]string{{"one shard", itoa(tg[0])}, {"several shards", itoa(tg[1])}, {"broadcast", itoa(tg[2])}},
		})
	} else {
		for _, n := range servers {
			v.Nodes = append(v.Nodes, results.NodeCount{Node: n, Ops: perServer[n]})
		}
	}
	// Client commands.
	var names []string
	for k := range cmds {
		names = append(names, k)
	}
	sort.Strings(names)
	ct := results.ServerTable{Title: "commands sent (client command monitoring)", Columns: []string{"command", "sent", "succeeded", "failed", "mean ms"}, Numeric: []bool{false, true, true, true, true}}
	for _, n := range names {
		c := cmds[n]
		mean := "-"
		if done := c.Succeeded + c.Failed; done > 0 {
			mean = strconv.FormatFloat(float64(c.Duration)/float64(done)/1e6, 'f', 2, 64)
		}
		ct.Rows = append(ct.Rows, []string{n, itoa(c.Started), itoa(c.Succeeded), itoa(c.Failed), mean})
	}
	sv.Tables = append(sv.Tables, ct)
	if f, m := b.found.Load(), b.missed.Load(); f+m > 0 {
		sv.Notes = append(sv.Notes, fmt.Sprintf("reads that found documents: %d of %d (%.0f%%); the table of reads per step says which", f, f+m, 100*float64(f)/float64(f+m)))
	}
	b.loadView(&sv)
	// Server counters.
	if b.before.ok && after.ok {
		t := results.ServerTable{Title: "server counters during the run (serverStatus, after − before)", Columns: []string{"counter", "before", "after", "delta"}, Numeric: []bool{false, true, true, true}}
		var keys []string
		for k := range after.counters {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			t.Rows = append(t.Rows, []string{k, itoa(b.before.counters[k]), itoa(after.counters[k]), itoa(after.counters[k] - b.before.counters[k])})
		}
		sv.Tables = append(sv.Tables, t)
		for _, n := range counterCommands {
			k := "commands." + n + ".total"
			if _, ok := after.counters[k]; !ok {
				continue
			}
			srv := after.counters[k] - b.before.counters[k]
			cli := cmds[n].Started
			switch {
			case srv < cli:
				sv.Disagreements = append(sv.Disagreements, fmt.Sprintf("%s: the server counted %d, the client sent %d (%d never reached it or were not counted)", n, srv, cli, cli-srv))
			case srv > cli && srv-cli > cli/20+5:
				sv.Disagreements = append(sv.Disagreements, fmt.Sprintf("%s: the server counted %d, the client sent %d: other clients (or internal commands) used the server during the run", n, srv, cli))
			}
		}
	} else {
		msg := after.err
		if msg == "" {
			msg = b.before.err
		}
		sv.Notes = append(sv.Notes, "serverStatus not available before and after the run: "+msg)
	}
	// Collections.
	if len(after.colls) > 0 {
		t := results.ServerTable{Title: "collections after the run ($collStats)",
			Columns: []string{"collection", "shard", "documents", "data bytes", "storage bytes",
				"reads", "read mean ms", "writes", "write mean ms"},
			Numeric: []bool{false, false, true, true, true, true, true, true, true}}
		latency := false
		for _, c := range after.colls {
			row := []string{c.Coll, orDash(c.Shard), known(c.Count), known(c.Size), known(c.Storage), "-", "-", "-", "-"}
			if c.HasLatency {
				latency = true
				var pr collStat
				for _, p := range b.before.colls {
					if p.Coll == c.Coll && p.Shard == c.Shard {
						pr = p
					}
				}
				row[5], row[6] = itoa(c.Reads-pr.Reads), meanMS(c.ReadUS-pr.ReadUS, c.Reads-pr.Reads)
				row[7], row[8] = itoa(c.Writes-pr.Writes), meanMS(c.WrUS-pr.WrUS, c.Writes-pr.Writes)
			}
			t.Rows = append(t.Rows, row)
		}
		if !latency {
			t.Note = "the server returned no latencyStats (FerretDB accepts $collStats.latencyStats but fills nothing): server-side latency is not available"
		}
		sv.Tables = append(sv.Tables, t)
	}
	if b.dep.IsMongos() {
		b.mongosView(ctx, &sv, after)
	}
	sv.Notes = append(sv.Notes, b.log.Notes()...)
	return dir.AddServer(sv)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func meanMS(us, n int64) string {
	if n <= 0 {
		return "-"
	}
	return strconv.FormatFloat(float64(us)/float64(n)/1000, 'f', 2, 64)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// docOf reads an embedded document whichever way the driver decoded it (v2 decodes
// documents nested in a bson.M as bson.D).
func docOf(v any) (bson.M, bool) {
	switch x := v.(type) {
	case bson.M:
		return x, true
	case bson.D:
		m := make(bson.M, len(x))
		for _, e := range x {
			m[e.Key] = e.Value
		}
		return m, true
	}
	return nil, false
}

// known formats a server figure, "-" for the -1 some servers give when they do not know.
func known(n int64) string {
	if n < 0 {
		return "-"
	}
	return itoa(n)
}
