package design_test

import (
	"strings"
	"testing"

	"github.com/shardbench/shardbench/internal/design"
)

const baseDesign = `name: t
cassandra:
  keyspace: ks
  replication: {class: SimpleStrategy, replication_factor: 3}
  tables:
    user_sessions:
      entity: sessions
      columns:
        bucket: {type: int, bucket: {of: session_id, count: 10, hash: java_uuid_hashcode}}
        session_id: uuid
        user_id: uuid
        created_at: timestamp
        last_activity: timestamp
      partition_key: [bucket]
      clustering: [session_id]
operations:
  sessions.read:
    - read: user_sessions
`

// Each broken design must be reported at the right line with a message naming the
// problem.
func TestValidationErrorsNameFileAndLine(t *testing.T) {
	cases := []struct {
		name    string
		from    string // replaced in baseDesign (empty: text is the whole design)
		to      string
		want    string // "line:col" or "line" and a message fragment
		message string
	}{
		{"unknown column in key", "partition_key: [bucket]", "partition_key: [bucket, shard]", "d.yaml:14:", `unknown column "shard"`},
		{"bucket count below one", "count: 10", "count: 0", "d.yaml:9:", "bucket count must be at least 1, got 0"},
		{"ANY on a read", "    - read: user_sessions", "    - {read: user_sessions, consistency: ANY}", "d.yaml:18:", "ANY is not valid for reads"},
		{"serial level on a write", "  sessions.read:\n    - read: user_sessions", "  sessions.touch:\n    - {write: user_sessions, consistency: SERIAL}", "d.yaml:18:", "serial consistency"},
		{"EACH_QUORUM with SimpleStrategy", "    - read: user_sessions", "    - {read: user_sessions, consistency: EACH_QUORUM}", "d.yaml:18:", "EACH_QUORUM needs NetworkTopologyStrategy"},
		{"THREE beyond the replication factor", "replication_factor: 3", "replication_factor: 2", "d.yaml:18:", ""},
		{"operation the table cannot serve", "  sessions.read:\n    - read: user_sessions", "  sessions.list_by_user:\n    - read: user_sessions", "d.yaml:18:",
			"user_sessions cannot serve sessions.list_by_user: partition key column bucket derives from session_id, but sessions.list_by_user knows user_id"},
		{"unknown field", "        last_activity: timestamp", "        last_seen: timestamp", "d.yaml:13:", `has no logical field "last_seen"`},
		{"incompatible type", "        created_at: timestamp", "        created_at: uuid", "d.yaml:12:", "cannot be stored as uuid"},
		{"unknown operation", "  sessions.read:", "  sessions.reed:", "d.yaml:17:", "unknown operation"},
		{"unknown table", "    - read: user_sessions", "    - read: sessions", "d.yaml:18:", `unknown table or collection "sessions"`},
		{"unknown hash", "hash: java_uuid_hashcode", "hash: crc32", "d.yaml:9:", "must be java_uuid_hashcode"},
		{"unknown strategy", "class: SimpleStrategy", "class: LocalStrategy", "d.yaml:4:", "must be SimpleStrategy or NetworkTopologyStrategy"},
		{"unknown key in file", "name: t\n", "name: t\nnmae: x\n", "d.yaml:2:", "unknown field"},
		{"a key column updated", "  sessions.read:\n    - read: user_sessions", "  sessions.touch:\n    - write: user_sessions", "", ""},
		{"unknown parameter", "count: 10", `count: "${buckets}"`, "d.yaml:9:", "unknown parameter ${buckets}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text := strings.Replace(baseDesign, c.from, c.to, 1)
			if text == baseDesign {
				t.Fatal("replacement did not apply")
			}
			if c.name == "THREE beyond the replication factor" {
				text = strings.Replace(text, "    - read: user_sessions", "    - {read: user_sessions, consistency: THREE}", 1)
				c.message = "THREE needs 3 replicas but the keyspace keeps 2"
			}
			_, err := design.Parse("d.yaml", []byte(text))
			if c.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("expected an error")
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.message) {
				t.Fatalf("error %q\nwant %q and %q", err, c.want, c.message)
			}
		})
	}
}

// All problems of a file come at once.
func TestValidationReportsEveryProblem(t *testing.T) {
	text := strings.NewReplacer("count: 10", "count: -1", "partition_key: [bucket]", "partition_key: [nope]",
		"    - read: user_sessions", "    - {read: user_sessions, consistency: ANY}").Replace(baseDesign)
	_, err := design.Parse("d.yaml", []byte(text))
	if err == nil {
		t.Fatal("expected errors")
	}
	for _, want := range []string{"d.yaml:9:", "d.yaml:14:", "d.yaml:18:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %s in\n%v", want, err)
		}
	}
}

const mongoDesign = `name: m
mongodb:
  database: shop
  collections:
    orders:
      entity: orders
      fields:
        _id: {type: objectId, field: order_oid}
        user_id: string
        created_at: date
        status: string
      shard_key: {user_id: hashed, created_at: 1}
operations:
  orders.read:
    - {read: orders, read_preference: {mode: secondary, max_staleness: 10s}}
  orders.status_change:
    - {write: orders, read_preference: secondary}
`

func TestMongoValidation(t *testing.T) {
	_, err := design.Parse("m.yaml", []byte(mongoDesign))
	if err == nil {
		t.Fatal("expected errors")
	}
	for _, want := range []string{
		"m.yaml:15:", "maxStalenessSeconds >= 90",
		"m.yaml:17:", "applies to reads: writes always go to the primary",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in\n%v", want, err)
		}
	}
	bad := strings.Replace(mongoDesign, "shard_key: {user_id: hashed, created_at: 1}", "shard_key: {user: hashed, created_at: 2}", 1)
	_, err = design.Parse("m.yaml", []byte(bad))
	if err == nil || !strings.Contains(err.Error(), `m.yaml:12:`) || !strings.Contains(err.Error(), `unknown document field "user"`) || !strings.Contains(err.Error(), `1 (ranged) or hashed, got "2"`) {
		t.Fatalf("got %v", err)
	}
}

// A value set from a scenario that breaks the design names both places.
func TestOverrideErrorsNameTheirOrigin(t *testing.T) {
	text := strings.Replace(baseDesign, "name: t\n", "name: t\nparams:\n  buckets: 10\n", 1)
	text = strings.Replace(text, "count: 10", `count: "${buckets}"`, 1)
	if _, err := design.Parse("d.yaml", []byte(text)); err != nil {
		t.Fatal(err)
	}
	node := yamlScalar("0", 40, 7)
	_, err := design.Parse("d.yaml", []byte(text), design.Override{Name: "buckets", Node: node, Pos: pos("bf.yaml", 40, 7)})
	if err == nil || !strings.Contains(err.Error(), "d.yaml:11:") || !strings.Contains(err.Error(), "bucket count must be at least 1, got 0 (${buckets} = 0, set at bf.yaml:40:7)") {
		t.Fatalf("got %v", err)
	}
	_, err = design.Parse("d.yaml", []byte(text), design.Override{Name: "bukets", Node: node, Pos: pos("bf.yaml", 40, 7)})
	if err == nil || !strings.Contains(err.Error(), "bf.yaml:40:7: bukets: design d.yaml has no parameter \"bukets\" (known: buckets)") {
		t.Fatalf("got %v", err)
	}
}

// A column or document field naming an unknown logical field is reported there, and the
// steps on it still report their own errors (they used to panic formatting them).
func TestUnknownFieldsDoNotBreakStepErrors(t *testing.T) {
	cases := []struct {
		file, text, from, to string
		want                 []string
	}{
		{"d.yaml", baseDesign, "of: session_id", "of: nosuch", []string{`d.yaml:9:`, `unknown field "nosuch" of sessions`,
			"user_sessions cannot serve sessions.read: partition key column bucket, but sessions.read knows"}},
		{"m.yaml", mongoDesign, "user_id: string", "user_id: {type: string, field: nosuch}", []string{`m.yaml:9:`, `has no logical field "nosuch"`,
			`orders.read does not know it (field "user_id")`}},
	}
	for _, c := range cases {
		text := strings.Replace(c.text, c.from, c.to, 1)
		if c.file == "m.yaml" {
			text = strings.Replace(text, "    - {read: orders, read_preference: {mode: secondary, max_staleness: 10s}}", "    - {read: orders, filter: [user_id]}", 1)
		}
		_, err := design.Parse(c.file, []byte(text))
		if err == nil {
			t.Fatalf("%s: no error", c.to)
		}
		for _, want := range c.want {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: missing %q in\n%v", c.to, want, err)
			}
		}
	}
}
