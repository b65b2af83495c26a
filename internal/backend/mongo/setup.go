package mongo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"go.yaml.in/yaml/v3"

	"github.com/shardbench/shardbench/internal/design"
)

// Deployment kinds.
const (
	KindMongos     = "mongos"
	KindReplicaSet = "replica set"
	KindStandalone = "standalone"
	// KindFerretDB is a MongoDB-wire server without sharding (FerretDB).
	KindFerretDB = "ferretdb"
)

// Deployment is what the server said about itself at connect.
type Deployment struct {
	Kind     string
	Version  string // MongoDB version (FerretDB: the version it emulates)
	FerretDB string // FerretDB's own version
	SetName  string
	Hosts    []string
	// MaxWire is hello's maxWireVersion.
	MaxWire int32
}

func (d Deployment) String() string {
	switch d.Kind {
	case KindFerretDB:
		v := d.FerretDB
		if v == "unknown" { // an embedded build (testenv/ferretdb) carries no version
			v = "(embedded build)"
		}
		return fmt.Sprintf("FerretDB %s (MongoDB %s wire protocol, no sharding)", v, d.Version)
	case KindReplicaSet:
		return fmt.Sprintf("MongoDB %s (replica set %s, %d members)", d.Version, d.SetName, len(d.Hosts))
	}
	return fmt.Sprintf("MongoDB %s (%s)", d.Version, d.Kind)
}

// IsMongos reports whether sharding commands apply.
func (d Deployment) IsMongos() bool { return d.Kind == KindMongos }

// detect asks hello (isMaster on old servers) and buildInfo: `msg: "isdbgrid"` marks a
// mongos, setName a replica set member, ferretdbVersion FerretDB.
func detect(ctx context.Context, c *mongo.Client) (Deployment, error) {
	admin := c.Database("admin")
	var hello bson.M
	err := admin.RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Decode(&hello)
	if err != nil {
		var se mongo.ServerError
		if !errors.As(err, &se) {
			return Deployment{}, err
		}
		if err := admin.RunCommand(ctx, bson.D{{Key: "isMaster", Value: 1}}).Decode(&hello); err != nil {
			return Deployment{}, err
		}
	}
	var d Deployment
	if v, ok := hello["maxWireVersion"].(int32); ok {
		d.MaxWire = v
	}
	var build bson.M
	if err := admin.RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&build); err == nil {
		d.Version, _ = build["version"].(string)
		if v, ok := build["ferretdbVersion"].(string); ok {
			d.FerretDB = v
		}
	}
	switch {
	case hello["msg"] == "isdbgrid":
		d.Kind = KindMongos
	case d.FerretDB != "":
		d.Kind = KindFerretDB
	case hello["setName"] != nil:
		d.Kind = KindReplicaSet
		d.SetName, _ = hello["setName"].(string)
		if hs, ok := hello["hosts"].(bson.A); ok {
			for _, h := range hs {
				if s, ok := h.(string); ok {
					d.Hosts = append(d.Hosts, s)
				}
			}
		}
	default:
		d.Kind = KindStandalone
	}
	return d, nil
}

// serverCode is the server's error code, or 0.
func serverCode(err error) int32 {
	var ce mongo.CommandError
	if errors.As(err, &ce) {
		return ce.Code
	}
	var we mongo.WriteException
	if errors.As(err, &we) && len(we.WriteErrors) > 0 {
		return int32(we.WriteErrors[0].Code)
	}
	return 0
}

func unsupported(err error) bool {
	switch serverCode(err) {
	case 59, 238, 115, 27: // CommandNotFound, NotImplemented, CommandNotSupported, IndexNotFound (hashed, text...)
		return true
	}
	return false
}

// setup creates the variant's collections, validators and indexes and, on a mongos, its
// sharding. What the server refuses as unsupported becomes a note, never a failure.
func (b *Backend) setup(ctx context.Context) error {
	mg := b.cfg.Compiled.Design.MongoDB
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if b.cfg.Recreate {
		b.log.Logf("--recreate: dropping database %s", b.dbName)
		if err := b.db.Drop(ctx); err != nil {
			return fmt.Errorf("dropDatabase: %w", err)
		}
	}
	existing := map[string]bool{}
	names, err := b.db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		return fmt.Errorf("listCollections: %w", err)
	}
	for _, n := range names {
		existing[n] = true
	}
	shard := b.opts.Shard == nil || *b.opts.Shard
	for i := range mg.Collections {
		name, c := mg.Collections[i].Key, &mg.Collections[i].Value
		if err := b.createCollection(ctx, name, c, existing[name]); err != nil {
			return err
		}
		if err := b.createIndexes(ctx, name, c, shard); err != nil {
			return err
		}
	}
	switch {
	case !shard:
		if b.dep.IsMongos() {
			b.log.Note("backends.mongo.shard is false: collections stay unsharded on this mongos")
		}
	case b.dep.IsMongos():
		return b.shardCollections(ctx)
	default:
		for i := range mg.Collections {
			c := &mg.Collections[i].Value
			if len(c.ShardKey) == 0 {
				continue
			}
			b.log.Note("not a mongos (%s): shard key %s of %s not applied; placement is computed client-side", b.dep.Kind, formatDoc(keyDoc(c.ShardKey)), mg.Collections[i].Key)
		}
		if mg.ChunkSizeMB > 0 {
			b.log.Note("not a mongos: chunk_size_mb %d not applied", mg.ChunkSizeMB)
		}
	}
	return nil
}

func (b *Backend) createCollection(ctx context.Context, name string, c *design.Collection, exists bool) error {
	if exists {
		b.log.Logf("collection %s.%s exists: left as it is (--recreate drops it)", b.dbName, name)
		return nil
	}
	co := options.CreateCollection()
	hasValidator := !c.Validator.IsZero()
	if hasValidator {
		co.SetValidator(yamlToBSON(c.Validator.Node))
	}
	err := b.db.CreateCollection(ctx, name, co)
	if err != nil && hasValidator && unsupported(err) {
		b.log.Note("validator of %s not applied: the server does not support it (%s)", name, b.log.Redact(err.Error()))
		err = b.db.CreateCollection(ctx, name)
	}
	if err != nil && serverCode(err) == 48 { // NamespaceExists: created meanwhile
		return nil
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	return nil
}

// createIndexes creates the design's secondary indexes, its TTL index and, when the
// collection is sharded by design, the shard key's index (shardCollection creates it on a
// mongos; elsewhere it keeps shard-key queries indexed as they would be on the cluster).
func (b *Backend) createIndexes(ctx context.Context, name string, c *design.Collection, shard bool) error {
	coll := b.db.Collection(name)
	type idx struct {
		model mongo.IndexModel
		what  string
	}
	var list []idx
	for _, ix := range c.Indexes {
		io := options.Index()
		if ix.Name != "" {
			io.SetName(ix.Name)
		}
		if ix.Unique {
			io.SetUnique(true)
		}
		if ix.Sparse {
			io.SetSparse(true)
		}
		list = append(list, idx{mongo.IndexModel{Keys: keyDoc(ix.Key), Options: io}, "index " + formatDoc(keyDoc(ix.Key))})
	}
	if c.ExpireField != "" {
		list = append(list, idx{mongo.IndexModel{Keys: bson.D{{Key: c.ExpireField, Value: 1}},
			Options: options.Index().SetName(c.ExpireField + "_ttl").SetExpireAfterSeconds(int32(c.ExpireAfter / time.Second))},
			"TTL index on " + c.ExpireField})
	}
	if len(c.ShardKey) > 0 && !(shard && b.dep.IsMongos()) && !isID(c.ShardKey) {
		list = append(list, idx{mongo.IndexModel{Keys: keyDoc(c.ShardKey), Options: options.Index().SetName("shard_key")}, "shard key index " + formatDoc(keyDoc(c.ShardKey))})
	}
	for _, ix := range list {
		_, err := coll.Indexes().CreateOne(ctx, ix.model)
		switch {
		case err == nil:
		case unsupported(err):
			b.log.Note("%s of %s not applied: the server does not support it (%s)", ix.what, name, b.log.Redact(err.Error()))
			if fb := ascendingFallback(ix.model.Keys.(bson.D)); fb != nil && strings.HasPrefix(ix.what, "shard key") {
				if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: fb, Options: options.Index().SetName("shard_key_asc")}); err == nil {
					b.log.Note("%s: created %s instead, so shard-key equality queries stay indexed", name, formatDoc(fb))
				}
			}
		case serverCode(err) == 85 || serverCode(err) == 86: // IndexOptionsConflict, IndexKeySpecsConflict
			b.log.Note("%s of %s: an existing index differs (%s); left as it is", ix.what, name, b.log.Redact(err.Error()))
		default:
			return fmt.Errorf("%s of %s: %w", ix.what, name, err)
		}
	}
	return nil
}

func isID(key design.Ordered[yaml.Node]) bool {
	return len(key) == 1 && key[0].Key == "_id" && key[0].Value.Value != "hashed"
}

// ascendingFallback turns hashed fields of a key into ascending ones (nil if none is hashed).
func ascendingFallback(k bson.D) bson.D {
	changed := false
	out := make(bson.D, len(k))
	for i, e := range k {
		out[i] = e
		if s, ok := e.Value.(string); ok && s == "hashed" {
			out[i].Value = int32(1)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return out
}

// shardCollections applies the design's sharding on a mongos: enableSharding,
// shardCollection with its key (numInitialChunks for a presplit hashed key), split points
// for ranged keys, the collection's chunk size; then reads config.chunks for routing.
func (b *Backend) shardCollections(ctx context.Context) error {
	mg := b.cfg.Compiled.Design.MongoDB
	admin := b.client.Database("admin")
	if err := admin.RunCommand(ctx, bson.D{{Key: "enableSharding", Value: b.dbName}}).Err(); err != nil {
		if unsupported(err) {
			b.log.Note("enableSharding not supported by this mongos (%s): collections stay unsharded", b.log.Redact(err.Error()))
			return nil
		}
		return fmt.Errorf("enableSharding: %w", err)
	}
	b.routing = newRouting()
	for i := range mg.Collections {
		name, c := mg.Collections[i].Key, &mg.Collections[i].Value
		if len(c.ShardKey) == 0 {
			continue
		}
		ns := b.dbName + "." + name
		key := keyDoc(c.ShardKey)
		cmd := bson.D{{Key: "shardCollection", Value: ns}, {Key: "key", Value: key}}
		if c.Unique {
			cmd = append(cmd, bson.E{Key: "unique", Value: true})
		}
		if c.Presplit != nil && c.Presplit.Chunks > 0 {
			cmd = append(cmd, bson.E{Key: "numInitialChunks", Value: int32(c.Presplit.Chunks)})
		}
		err := admin.RunCommand(ctx, cmd).Err()
		if err != nil && c.Presplit != nil && c.Presplit.Chunks > 0 && !unsupported(err) {
			// Servers that dropped numInitialChunks reject it; the split then follows
			// their own rule (7.2+: one chunk per shard).
			b.log.Note("shardCollection %s refused numInitialChunks %d (%s); sharded without it", name, c.Presplit.Chunks, b.log.Redact(err.Error()))
			err = admin.RunCommand(ctx, cmd[:len(cmd)-1]).Err()
		}
		if err != nil && serverCode(err) == 23 { // AlreadyInitialized: sharded by an earlier run
			b.log.Logf("%s is already sharded: left as it is (--recreate reshards)", ns)
			err = nil
		}
		if err != nil {
			if unsupported(err) {
				b.log.Note("shardCollection %s %s not supported by this server (%s): not sharded; placement is computed client-side", name, formatDoc(key), b.log.Redact(err.Error()))
				continue
			}
			return fmt.Errorf("shardCollection %s %s: %w", ns, formatDoc(key), err)
		}
		b.log.Logf("sharded %s by %s", ns, formatDoc(key))
		if c.Presplit != nil {
			for j := range c.Presplit.Points {
				pt := yamlToBSON(&c.Presplit.Points[j])
				if err := admin.RunCommand(ctx, bson.D{{Key: "split", Value: ns}, {Key: "middle", Value: pt}}).Err(); err != nil {
					b.log.Note("split of %s at %v failed: %s", name, pt, b.log.Redact(err.Error()))
				}
			}
		}
		if mg.ChunkSizeMB > 0 {
			err := admin.RunCommand(ctx, bson.D{{Key: "configureCollectionBalancing", Value: ns}, {Key: "chunkSize", Value: int32(mg.ChunkSizeMB)}}).Err()
			if err != nil {
				b.log.Note("chunk size %d MB for %s not applied (%s)", mg.ChunkSizeMB, name, b.log.Redact(err.Error()))
			}
		}
		if err := b.routing.load(ctx, b.client, ns, name); err != nil {
			b.log.Note("chunk table of %s not read from config.chunks (%s): no per-shard attribution", name, b.log.Redact(err.Error()))
		}
	}
	return nil
}
