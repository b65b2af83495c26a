package design

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// WriteSchema writes what a design implies the databases need: for Cassandra the CQL
// (CREATE KEYSPACE, CREATE TYPE, CREATE TABLE with options) that a Cassandra 5.0 node
// accepts; for MongoDB mongosh commands (createCollection with the $jsonSchema validator,
// createIndexes, enableSharding, shardCollection with presplitting, chunk size).
func WriteSchema(w io.Writer, d *Design) error {
	bw := bufio.NewWriter(w)
	title := d.Name
	if len(d.Params) > 0 {
		var ps []string
		for _, p := range d.Params {
			ps = append(ps, p.Name+"="+p.Value)
		}
		title += " (" + strings.Join(ps, ", ") + ")"
	}
	if d.Cassandra != nil {
		writeCQL(bw, d, title)
	}
	if d.MongoDB != nil {
		if d.Cassandra != nil {
			fmt.Fprintln(bw)
		}
		writeMongo(bw, d, title)
	}
	return bw.Flush()
}

func commentLines(w io.Writer, prefix, text string) {
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		fmt.Fprintf(w, "%s %s\n", prefix, strings.TrimRight(line, " "))
	}
}

func writeCQL(w io.Writer, d *Design, title string) {
	cs := d.Cassandra
	ks := quoteIdent(cs.Keyspace)
	fmt.Fprintf(w, "-- design %s: Cassandra schema (CQL, Cassandra 5.0)\n", title)
	if d.Source != "" {
		fmt.Fprintf(w, "-- source: %s\n", d.Source)
	}
	r := cs.Replication
	repl := []string{"'class': " + cqlString(r.Class)}
	if r.Factor > 0 {
		repl = append(repl, "'replication_factor': "+strconv.Itoa(r.Factor))
	}
	for _, dc := range r.DCs {
		repl = append(repl, cqlString(dc.DC)+": "+strconv.Itoa(dc.Factor))
	}
	fmt.Fprintf(w, "\nCREATE KEYSPACE IF NOT EXISTS %s\n    WITH replication = {%s}", ks, strings.Join(repl, ", "))
	if cs.Durable != nil {
		fmt.Fprintf(w, "\n    AND durable_writes = %t", *cs.Durable)
	}
	fmt.Fprintln(w, ";")
	for _, e := range cs.Types {
		fmt.Fprintf(w, "\nCREATE TYPE IF NOT EXISTS %s.%s (\n", ks, quoteIdent(strings.ToLower(e.Key)))
		for i, f := range e.Value.Fields {
			sep := ","
			if i == len(e.Value.Fields)-1 {
				sep = ""
			}
			t, err := parseCQLType(f.Value, nil)
			typ := f.Value
			if err == nil {
				typ = t.String()
			}
			fmt.Fprintf(w, "    %s %s%s\n", quoteIdent(f.Key), typ, sep)
		}
		fmt.Fprintln(w, ");")
	}
	for _, t := range d.tables {
		fmt.Fprintln(w)
		if t.t.Doc != "" {
			commentLines(w, "--", t.t.Doc)
		}
		fmt.Fprintf(w, "CREATE TABLE IF NOT EXISTS %s.%s (\n", ks, quoteIdent(t.name))
		for _, c := range t.cols {
			static := ""
			if t.t.Column[indexOfCol(t, c)].Value.Static {
				static = " STATIC"
			}
			fmt.Fprintf(w, "    %s %s%s,\n", quoteIdent(c.name), c.typ, static)
		}
		var pk, ck []string
		for _, c := range t.pk {
			pk = append(pk, quoteIdent(c.name))
		}
		for _, c := range t.ck {
			ck = append(ck, quoteIdent(c.name))
		}
		key := "(" + strings.Join(pk, ", ") + ")"
		if len(ck) > 0 {
			key += ", " + strings.Join(ck, ", ")
		}
		fmt.Fprintf(w, "    PRIMARY KEY (%s)\n)", key)
		var opts []string
		if len(t.ck) > 0 {
			var order []string
			for i, c := range t.ck {
				dir := "ASC"
				if t.ckDesc[i] {
					dir = "DESC"
				}
				order = append(order, quoteIdent(c.name)+" "+dir)
			}
			opts = append(opts, "CLUSTERING ORDER BY ("+strings.Join(order, ", ")+")")
		}
		if t.t.TTL > 0 {
			opts = append(opts, "default_time_to_live = "+strconv.FormatInt(int64(t.t.TTL/time.Second), 10))
		}
		if t.t.GCGrace != nil {
			opts = append(opts, "gc_grace_seconds = "+strconv.FormatInt(int64(*t.t.GCGrace/time.Second), 10))
		}
		if len(t.t.Compaction) > 0 {
			var kv []string
			for _, e := range t.t.Compaction {
				kv = append(kv, cqlString(e.Key)+": "+cqlString(e.Value))
			}
			opts = append(opts, "compaction = {"+strings.Join(kv, ", ")+"}")
		}
		for _, e := range t.t.Options {
			opts = append(opts, e.Key+" = "+e.Value)
		}
		if t.t.Doc != "" {
			opts = append(opts, "comment = "+cqlString(firstLine(t.t.Doc)))
		}
		for i, o := range opts {
			if i == 0 {
				fmt.Fprintf(w, " WITH %s", o)
			} else {
				fmt.Fprintf(w, "\n    AND %s", o)
			}
		}
		fmt.Fprintln(w, ";")
	}
}

func indexOfCol(t *table, c *column) int {
	for i := range t.t.Column {
		if t.t.Column[i].Key == c.name {
			return i
		}
	}
	return 0
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func writeMongo(w io.Writer, d *Design, title string) {
	mg := d.MongoDB
	fmt.Fprintf(w, "// design %s: MongoDB commands (mongosh)\n", title)
	if d.Source != "" {
		fmt.Fprintf(w, "// source: %s\n", d.Source)
	}
	fmt.Fprintf(w, "db = db.getSiblingDB(%s);\n", jsString(mg.Database))
	for _, co := range d.colls {
		c := co.c
		fmt.Fprintln(w)
		if c.Doc != "" {
			commentLines(w, "//", c.Doc)
		}
		if !c.Validator.IsZero() {
			fmt.Fprintf(w, "db.createCollection(%s, {\n  validator: %s\n});\n", jsString(co.name), jsValue(c.Validator.Node, "  "))
		} else {
			fmt.Fprintf(w, "db.createCollection(%s);\n", jsString(co.name))
		}
		var idx []string
		for i, ix := range c.Indexes {
			name := ix.Name
			if name == "" {
				var parts []string
				for _, k := range ix.Key {
					parts = append(parts, k.Key+"_"+scalarString(&k.Value))
				}
				name = strings.Join(parts, "_")
			}
			spec := fmt.Sprintf("{key: %s, name: %s", keyDoc(ix.Key), jsString(name))
			if ix.Unique {
				spec += ", unique: true"
			}
			if ix.Sparse {
				spec += ", sparse: true"
			}
			_ = i
			idx = append(idx, spec+"}")
		}
		if c.ExpireField != "" {
			idx = append(idx, fmt.Sprintf("{key: {%s: 1}, name: %s, expireAfterSeconds: %d}", jsKey(c.ExpireField), jsString(c.ExpireField+"_ttl"), int64(c.ExpireAfter/time.Second)))
		}
		if len(idx) > 0 {
			fmt.Fprintf(w, "db.runCommand({createIndexes: %s, indexes: [\n  %s\n]});\n", jsString(co.name), strings.Join(idx, ",\n  "))
		}
	}
	sharded := false
	for _, co := range d.colls {
		if len(co.c.ShardKey) > 0 {
			sharded = true
		}
	}
	if !sharded {
		return
	}
	fmt.Fprintf(w, "\nsh.enableSharding(%s);\n", jsString(mg.Database))
	if mg.ChunkSizeMB > 0 {
		fmt.Fprintf(w, "db.getSiblingDB(\"config\").settings.updateOne({_id: \"chunksize\"}, {$set: {value: %d}}, {upsert: true});\n", mg.ChunkSizeMB)
	}
	for _, co := range d.colls {
		c := co.c
		if len(c.ShardKey) == 0 {
			continue
		}
		ns := jsString(mg.Database + "." + co.name)
		opts := ""
		if c.Presplit != nil && c.Presplit.Chunks > 0 {
			opts = fmt.Sprintf(", {numInitialChunks: %d}", c.Presplit.Chunks)
			fmt.Fprintln(w, "// numInitialChunks presplits an empty collection with a hashed key (MongoDB < 7.2; 7.2+ creates one chunk per shard)")
		}
		fmt.Fprintf(w, "sh.shardCollection(%s, %s, %t%s);\n", ns, keyDoc(c.ShardKey), c.Unique, opts)
		if c.Presplit != nil {
			for i := range c.Presplit.Points {
				fmt.Fprintf(w, "sh.splitAt(%s, %s);\n", ns, jsValue(&c.Presplit.Points[i], ""))
			}
		}
	}
}

func keyDoc(key Ordered[yaml.Node]) string {
	var parts []string
	for _, k := range key {
		v := scalarString(&k.Value)
		if v == "hashed" || v == "text" {
			v = jsString(v)
		}
		parts = append(parts, jsKey(k.Key)+": "+v)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func jsKey(s string) string {
	plain := s != ""
	for i, c := range s {
		if !(c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			plain = false
		}
	}
	if plain {
		return s
	}
	return jsString(s)
}

// jsValue renders a YAML node as a JavaScript literal.
func jsValue(n *yaml.Node, indent string) string {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch n.Kind {
	case yaml.MappingNode:
		if len(n.Content) == 0 {
			return "{}"
		}
		inner := indent + "  "
		var parts []string
		for i := 0; i+1 < len(n.Content); i += 2 {
			parts = append(parts, inner+jsKey(n.Content[i].Value)+": "+jsValue(n.Content[i+1], inner))
		}
		return "{\n" + strings.Join(parts, ",\n") + "\n" + indent + "}"
	case yaml.SequenceNode:
		var parts []string
		simple := true
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				simple = false
			}
		}
		for _, c := range n.Content {
			parts = append(parts, jsValue(c, indent+"  "))
		}
		if simple {
			return "[" + strings.Join(parts, ", ") + "]"
		}
		return "[\n" + indent + "  " + strings.Join(parts, ",\n"+indent+"  ") + "\n" + indent + "]"
	}
	switch n.ShortTag() {
	case "!!int", "!!float":
		return n.Value
	case "!!bool":
		return n.Value
	case "!!null":
		return "null"
	}
	return jsString(n.Value)
}
