package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/shardbench/shardbench/internal/design"
	pc "github.com/shardbench/shardbench/internal/placement/cassandra"
	pm "github.com/shardbench/shardbench/internal/placement/mongo"
	"github.com/shardbench/shardbench/internal/plan"
	"github.com/shardbench/shardbench/internal/yamlx"
)

// KeyOptions are the inputs of `shardbench key`.
type KeyOptions struct {
	IO         *IO
	DesignPath string
	Entity     string
	// Table limits the output to one table or collection of the entity.
	Table string
	Set   []string
	// Values are the key's columns or fields: name=value.
	Values []string
	// Cluster is the layout: nodes per DC, num_tokens, shards, seed.
	Cluster plan.Cluster
	Nodes   int
	Racks   int
}

func newKeyCmd(io *IO, runF func(*KeyOptions) error) *cobra.Command {
	opts := &KeyOptions{IO: io}
	cmd := &cobra.Command{
		Use:   "key --design FILE --entity NAME name=value...",
		Short: "Show where one key goes: token, vnode range and replicas, or hashed value, chunk and shard",
		Long: `key places one key of an entity on every table or collection of a design that
holds the entity, exactly as the databases do:

  Cassandra: the partition key serialised as the native protocol does for each CQL type
  (composite framing for several columns), its Murmur3 token, the vnode range that owns
  it and its replicas under the design's replication, on a synthetic ring (--nodes per
  data center, --racks, --num-tokens, --seed; the same ring plan and the simulator use).

  MongoDB: the shard key in key order, the hashed value of a hashed field (MD5 of the
  canonical BSON, as mongod computes it), and for a hashed-prefix key the chunk range and
  shard on an empty collection pre-split by shardCollection (MongoDB 7.2+ rule) on
  --shards shards. Ranged keys' chunks follow the data: plan shows them.

Values are typed by the design (a CQL column type or the document field's bsonType), so
"42" and 42 hash differently where the databases hash them differently. Columns that a
table's key needs but are not given are named.`,
		Example: `  shardbench key --design scenarios/designs/seed000.yaml --entity sessions bucket=42
  shardbench key --design scenarios/designs/seed000.yaml --entity orders period='2025-11-28'
  shardbench key --design scenarios/designs/seed001-mongo.yaml --entity carts owner_key=user:42
  shardbench key --design scenarios/designs/seed000.yaml --entity sessions --set sessions.buckets=10 bucket=3`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf("give the key as name=value arguments, e.g. user_id=9a7ee8da-a274-466d-ab99-cc97ad5f3db5")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Values = args
			if opts.DesignPath == "" || opts.Entity == "" {
				return usageErrorf("--design and --entity are required")
			}
			if err := opts.Cluster.Check(); err != nil {
				return usageError(err)
			}
			if opts.Nodes < 0 || opts.Nodes > 1000 {
				return usageErrorf("--nodes must be between 1 and 1000, got %d", opts.Nodes)
			}
			if nodes := cmp.Or(opts.Nodes, plan.DefaultNodesPerDC); opts.Racks < 0 || opts.Racks > nodes {
				return usageErrorf("--racks must be between 1 and the node count (%d), got %d", nodes, opts.Racks)
			}
			if runF != nil {
				return runF(opts)
			}
			return runKey(opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.DesignPath, "design", "", "design file (required)")
	f.StringVar(&opts.Entity, "entity", "", "logical entity: sessions, carts, orders, page_views, products (required)")
	f.StringVar(&opts.Table, "table", "", "only this table or collection of the entity")
	f.StringArrayVar(&opts.Set, "set", nil, "override a design parameter: name=value (YAML value; repeatable)")
	f.IntVar(&opts.Nodes, "nodes", 0, fmt.Sprintf("Cassandra nodes per data center (default %d)", plan.DefaultNodesPerDC))
	f.IntVar(&opts.Racks, "racks", 0, "racks per data center (default 3, at most the node count)")
	f.IntVar(&opts.Cluster.NumTokens, "num-tokens", 0, "num_tokens per node (default 16)")
	f.StringVar(&opts.Cluster.Allocation, "allocation", "", "token allocation: balanced (default) or random")
	f.IntVar(&opts.Cluster.Shards, "shards", 0, fmt.Sprintf("MongoDB shards (default %d)", plan.DefaultShards))
	f.Uint64Var(&opts.Cluster.Seed, "seed", 1, "seed of the synthetic token allocation")
	return cmd
}

// designOverrides turns --set name=value flags into design parameter overrides.
func designOverrides(sets []string) ([]design.Override, error) {
	var out []design.Override
	for _, s := range sets {
		name, value, ok := strings.Cut(s, "=")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, usageErrorf("--set %q: want name=value", s)
		}
		var node yaml.Node
		if err := yaml.Unmarshal([]byte(value), &node); err != nil || len(node.Content) == 0 {
			return nil, usageErrorf("--set %s: the value is not YAML: %v", name, err)
		}
		out = append(out, design.Override{Name: strings.TrimSpace(name), Node: node.Content[0], Pos: yamlx.Pos{File: "--set " + name}})
	}
	return out, nil
}

func runKey(opts *KeyOptions) error {
	overrides, err := designOverrides(opts.Set)
	if err != nil {
		return err
	}
	d, err := design.Load(opts.DesignPath, overrides...)
	if err != nil {
		return usageError(err)
	}
	values := map[string]string{}
	var order []string
	for _, kv := range opts.Values {
		name, value, ok := strings.Cut(kv, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return usageErrorf("key value %q: want name=value", kv)
		}
		if _, dup := values[name]; dup {
			return usageErrorf("key value %s is given twice", name)
		}
		values[name] = value
		order = append(order, name)
	}
	var targets []design.KeyTarget
	for _, kt := range d.Keys(opts.Entity) {
		if opts.Table == "" || kt.Target == opts.Table {
			targets = append(targets, kt)
		}
	}
	if len(targets) == 0 {
		var have []string
		for _, kt := range d.Keys("") {
			have = append(have, kt.Entity+":"+kt.Target)
		}
		return usageErrorf("%s has no table or collection for entity %q%s (it has: %s)", opts.DesignPath, opts.Entity,
			map[bool]string{true: " named " + opts.Table, false: ""}[opts.Table != ""], strings.Join(slices.Compact(have), ", "))
	}
	used := map[string]bool{}
	placed := 0
	for _, kt := range targets {
		missing := missingColumns(kt, values)
		if len(missing) > 0 {
			fmt.Fprintf(opts.IO.Out, "%s.%s (%s): key %s — not placed, needs %s\n\n", kt.Namespace, kt.Target, kt.Database, keyColumns(kt), strings.Join(missing, ", "))
			continue
		}
		var err error
		switch kt.Database {
		case design.Cassandra:
			err = placeCassandraKey(opts.IO.Out, d, kt, values, opts)
		case design.MongoDB:
			err = placeMongoKey(opts.IO.Out, kt, values, opts)
		}
		if err != nil {
			return usageError(fmt.Errorf("%s.%s: %w", kt.Namespace, kt.Target, err))
		}
		for _, c := range kt.Columns {
			used[c.Name] = true
		}
		placed++
	}
	for _, name := range order {
		if !used[name] && placed > 0 {
			fmt.Fprintf(opts.IO.ErrOut, "shardbench: %s is not part of any placed key; ignored\n", name)
		}
	}
	if placed == 0 {
		return usageErrorf("no table or collection of %q could be placed: give every column of one of the keys above", opts.Entity)
	}
	return nil
}

func missingColumns(kt design.KeyTarget, values map[string]string) []string {
	var missing []string
	for _, c := range kt.Columns {
		if _, ok := values[c.Name]; !ok {
			missing = append(missing, c.Name+" ("+c.Type+")")
		}
	}
	return missing
}

func keyColumns(kt design.KeyTarget) string {
	if len(kt.Columns) == 0 {
		return "none (unsharded)"
	}
	var parts []string
	for _, c := range kt.Columns {
		s := c.Name + " " + c.Type
		if c.Hashed {
			s = c.Name + ": hashed (" + c.Type + ")"
		}
		parts = append(parts, s)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// keyCluster is the layout for one design: --nodes and --racks apply to every data
// center the design replicates to.
func keyCluster(opts *KeyOptions, rep pc.Replication) plan.Cluster {
	c := opts.Cluster
	if opts.Nodes > 0 || opts.Racks > 0 {
		nodes, racks := opts.Nodes, opts.Racks
		if nodes == 0 {
			nodes = plan.DefaultNodesPerDC
		}
		if racks == 0 {
			racks = min(3, nodes)
		}
		for _, n := range plan.ReplicatedDCs(rep) {
			c.DCs = append(c.DCs, plan.DC{Name: n, Nodes: nodes, Racks: racks})
		}
	}
	return c
}

func placeCassandraKey(w io.Writer, d *design.Design, kt design.KeyTarget, values map[string]string, opts *KeyOptions) error {
	var kb pc.KeyBuilder
	kb.Reset(len(kt.Columns))
	var shown []string
	for _, c := range kt.Columns {
		v, err := pc.AppendLiteral(nil, c.Type, values[c.Name])
		if err != nil {
			return fmt.Errorf("column %s: %w", c.Name, err)
		}
		kb.Raw(v)
		shown = append(shown, c.Name+"="+values[c.Name])
	}
	if err := kb.Err(); err != nil {
		return err
	}
	rep, err := plan.Replication(d.Cassandra.Replication)
	if err != nil {
		return err
	}
	cluster := keyCluster(opts, rep)
	ring, err := cluster.Ring(rep)
	if err != nil {
		return err
	}
	pl, err := ring.Place(rep)
	if err != nil {
		return err
	}
	tok := kb.Token()
	vn := ring.VNode(tok)
	var reps []string
	for _, n := range pl.Replicas(tok) {
		node := ring.Nodes[n]
		reps = append(reps, fmt.Sprintf("%s (%s/%s)", node.Name, node.DC, node.Rack))
	}
	fmt.Fprintf(w, "%s.%s (cassandra): partition key %s\n", kt.Namespace, kt.Target, keyColumns(kt))
	fmt.Fprintf(w, "  key         %s\n", strings.Join(shown, ", "))
	fmt.Fprintf(w, "  key bytes   %x\n", kb.Bytes())
	fmt.Fprintf(w, "  token       %s\n", tok)
	fmt.Fprintf(w, "  vnode range %s, owned by %s (%.3f%% of the ring)\n", ring.RangeString(vn), ring.Nodes[ring.Owner[vn]].Name, 100*ring.Size(vn))
	fmt.Fprintf(w, "  replicas    %s\n", strings.Join(reps, ", "))
	fmt.Fprintf(w, "  ring        %d nodes, num_tokens %d, %s\n\n", len(ring.Nodes), len(ring.Tokens)/max(len(ring.Nodes), 1), rep)
	return nil
}

func placeMongoKey(w io.Writer, kt design.KeyTarget, values map[string]string, opts *KeyOptions) error {
	fmt.Fprintf(w, "%s.%s (mongodb): shard key %s\n", kt.Namespace, kt.Target, keyColumns(kt))
	shards := opts.Cluster.ShardNames()
	if len(kt.Columns) == 0 {
		fmt.Fprintf(w, "  unsharded: every document lives on the database's primary shard (%s)\n\n", shards[0])
		return nil
	}
	pat := make(pm.KeyPattern, len(kt.Columns))
	key := make([]pm.Value, len(kt.Columns))
	var shown []string
	for i, c := range kt.Columns {
		pat[i] = pm.KeyField{Name: c.Name, Hashed: c.Hashed}
		v, err := pm.ParseLiteral(c.Type, values[c.Name])
		if err != nil {
			return fmt.Errorf("field %s: %w", c.Name, err)
		}
		shown = append(shown, c.Name+": "+v.String())
		if c.Hashed {
			h := pm.Hash(&v)
			fmt.Fprintf(w, "  hashed      %s: %s → %d\n", c.Name, v, h)
			v = pm.Int64(h)
		}
		key[i] = v
	}
	fmt.Fprintf(w, "  key         {%s}\n", strings.Join(shown, ", "))
	fmt.Fprintf(w, "  key value   %s (as stored in the chunk table)\n", pat.FormatKey(key))
	if !pat.HashedPrefix() {
		fmt.Fprintf(w, "  chunk       ranged key: chunk boundaries follow the data, so the chunk and shard depend on what was inserted before (shardbench plan splits chunks from the scenario's writes)\n\n")
		return nil
	}
	t, err := pm.PresplitHashed(pat, shards, pm.Presplit{Rule: pm.SplitV72})
	if err != nil {
		return err
	}
	i := t.Find(key)
	fmt.Fprintf(w, "  chunk       %d of %d: %s\n", i+1, len(t.Chunks), t.RangeString(i))
	fmt.Fprintf(w, "  shard       %s (empty collection pre-split by shardCollection on %d shards, MongoDB 7.2+ rule)\n\n", t.Shard(i), len(shards))
	return nil
}
