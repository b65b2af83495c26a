package design_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardbench/shardbench/internal/design"
)

// Every design's schema is well formed: one CREATE TABLE per table, one createCollection
// per collection, balanced brackets, statements terminated.
func TestSchemaOfEveryDesign(t *testing.T) {
	for _, f := range designFiles(t) {
		d := mustLoad(t, f)
		var b bytes.Buffer
		if err := design.WriteSchema(&b, d); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		tables, colls, sharded := 0, 0, 0
		if d.Cassandra != nil {
			tables = len(d.Cassandra.Tables)
			if !strings.Contains(out, "CREATE KEYSPACE IF NOT EXISTS "+d.Cassandra.Keyspace) {
				t.Errorf("%s: no keyspace", f)
			}
		}
		if d.MongoDB != nil {
			colls = len(d.MongoDB.Collections)
			for _, c := range d.MongoDB.Collections {
				if len(c.Value.ShardKey) > 0 {
					sharded++
				}
			}
		}
		if n := strings.Count(out, "CREATE TABLE IF NOT EXISTS"); n != tables {
			t.Errorf("%s: %d CREATE TABLE for %d tables", f, n, tables)
		}
		if n := strings.Count(out, "db.createCollection("); n != colls {
			t.Errorf("%s: %d createCollection for %d collections", f, n, colls)
		}
		if n := strings.Count(out, "sh.shardCollection("); n != sharded {
			t.Errorf("%s: %d shardCollection for %d sharded collections", f, n, sharded)
		}
		for _, pair := range [][2]string{{"(", ")"}, {"{", "}"}, {"[", "]"}} {
			if strings.Count(out, pair[0]) != strings.Count(out, pair[1]) {
				t.Errorf("%s: unbalanced %s%s", filepath.Base(f), pair[0], pair[1])
			}
		}
		for _, stmt := range strings.Split(out, "CREATE ")[1:] {
			body := stmt
			if i := strings.Index(body, "\n\n"); i >= 0 {
				body = body[:i]
			}
			if !strings.HasSuffix(strings.TrimSpace(body), ";") {
				t.Errorf("%s: statement not terminated: CREATE %s", filepath.Base(f), body)
			}
		}
	}
}

func TestSchemaContents(t *testing.T) {
	schema := func(file string) string {
		var b bytes.Buffer
		if err := design.WriteSchema(&b, mustLoad(t, filepath.Join(designsDir, file))); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	for file, wants := range map[string][]string{
		"seed000.yaml": {
			"WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3}",
			"CREATE TYPE IF NOT EXISTS mobile_world.order_item (",
			"    items list<frozen<order_item>>,\n    PRIMARY KEY ((customer_id, time_bucket), created_at, order_id)\n) WITH CLUSTERING ORDER BY (created_at DESC, order_id ASC)",
			"AND default_time_to_live = 86400\n    AND compaction = {'class': 'LeveledCompactionStrategy'}",
			"'compaction_window_unit': 'DAYS', 'compaction_window_size': '1'",
		},
		"seed002.yaml": {
			"{'class': 'NetworkTopologyStrategy', 'DC1': 3, 'DC2': 3}",
			"PRIMARY KEY ((category, category_shard), price, product_id)",
			"stock_by_geo map<text, int>",
		},
		"seed002-products-category.yaml": {"PRIMARY KEY ((category), price, product_id)"},
		"seed001-mongo.yaml": {
			`db = db.getSiblingDB("mobilnymir");`,
			`required: ["_id", "user_id", "created_at", "items", "status", "total", "geo_zone"]`,
			`sh.shardCollection("mobilnymir.orders", {user_id: "hashed", created_at: 1}, false);`,
			`sh.shardCollection("mobilnymir.products", {category: 1, _id: "hashed"}, false);`,
			`sh.shardCollection("mobilnymir.carts", {owner_key: "hashed"}, false);`,
			`sh.shardCollection("mobilnymir.inventory", {geo_zone: 1, product_id: "hashed"}, false);`,
			`{key: {expires_at: 1}, name: "expires_at_ttl", expireAfterSeconds: 0}`,
			`db.getSiblingDB("config").settings.updateOne({_id: "chunksize"}, {$set: {value: 64}}, {upsert: true});`,
		},
		"seed001-mongo-products-subcategory.yaml": {
			`sh.shardCollection("mobilnymir.products", {category: 1, subcategory: 1, _id: "hashed"}, false);`,
			`{$set: {value: 32}}`,
		},
		"seed004.yaml": {"PRIMARY KEY ((user_id, event_date), event_time, event_type)", `sh.shardCollection("mobilnymir.carts", {user_id: "hashed"}, false);`},
	} {
		out := schema(file)
		for _, w := range wants {
			if !strings.Contains(out, w) {
				t.Errorf("%s: missing %q in\n%s", file, w, out)
			}
		}
	}
}
