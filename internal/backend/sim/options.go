package sim

import (
	"time"

	"github.com/shardbench/shardbench/internal/plan"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/yamlx"
)

// Options are the scenario's backends.sim section. Every field has a documented default
// (docs/simulator.md); the service times are means, drawn per request from a
// distribution with coefficient of variation 0.5 (see [Model.draw]).
type Options struct {
	Loc yamlx.Loc
	// Cluster is the layout: data centers, racks, num_tokens; MongoDB shards.
	Cluster plan.Cluster `yaml:"cluster,omitempty"`
	// Network is the round trip between client, coordinator (mongos) and replicas (shard
	// members) in one data center.
	Network time.Duration `yaml:"network,omitempty"`
	// Cassandra and MongoDB are the per-node models.
	Cassandra CassandraModel `yaml:"cassandra,omitempty"`
	MongoDB   MongoModel     `yaml:"mongodb,omitempty"`
	// Tick is how often per-node utilisation and queue length are sampled (default 1s of
	// virtual time).
	Tick time.Duration `yaml:"tick,omitempty"`
	// OperationScale multiplies every service time drawn while serving one operation type
	// (default 1): what makes an operation costlier or cheaper than the node model says
	// (wide rows, large documents, a heavy filter). Keys are "op" (every variant) or
	// "op@variant"; `shardbench calibrate` fits the latter.
	OperationScale map[string]float64 `yaml:"operation_scale,omitempty"`
	// ServiceSpread, when above 0, draws every service time from a log-normal
	// distribution with the same mean and this σ (of the logarithm) instead of the
	// default shape (half fixed, half exponential: coefficient of variation 0.5). A real
	// server's service times are often heavier-tailed than that (collection pauses,
	// compaction, a CPU shared with other work); `shardbench fidelity` fits σ to the ratio
	// of p99 to p50 of the run it calibrates on.
	ServiceSpread float64 `yaml:"service_spread,omitempty"`
	// Calibration is a parameter file written by `shardbench calibrate`, relative to the
	// scenario file. Its fitted values replace this section's and the defaults: a
	// calibration is a measurement of the cluster, so it wins over round figures.
	Calibration string `yaml:"calibration,omitempty"`
}

// CassandraModel is one Cassandra node: separate read and write stages with a fixed
// number of workers each (concurrent_reads / concurrent_writes, 32 by default), and the
// request timeouts after which a replica's queued request is dropped.
type CassandraModel struct {
	Loc         yamlx.Loc
	ReadWorkers int `yaml:"read_workers,omitempty"`
	// WriteWorkers is concurrent_writes.
	WriteWorkers int `yaml:"write_workers,omitempty"`
	// Write is one replica's mutation (commit log + memtable).
	Write time.Duration `yaml:"write,omitempty"`
	// Read is one replica's single-partition read of a small partition in one SSTable.
	Read time.Duration `yaml:"read,omitempty"`
	// Row is the extra cost of each row a read returns.
	Row time.Duration `yaml:"row,omitempty"`
	// SSTable is the extra cost of each further SSTable a read must merge: a partition
	// of size S spans 1 + log2(1 + S/1 MiB) SSTables (size-tiered growth).
	SSTable time.Duration `yaml:"sstable,omitempty"`
	// Scan is one node's share of a request without its partition key (a range scan or
	// secondary-index query).
	Scan time.Duration `yaml:"scan,omitempty"`
	// ReadTimeout and WriteTimeout are read_request_timeout and write_request_timeout.
	ReadTimeout  time.Duration `yaml:"read_timeout,omitempty"`
	WriteTimeout time.Duration `yaml:"write_timeout,omitempty"`
	// Stream is how long a joining node streams its ranges (add_node) before it serves,
	// and StreamShare the share of each other node's write workers streaming takes.
	Stream      time.Duration `yaml:"stream,omitempty"`
	StreamShare float64       `yaml:"stream_share,omitempty"`
}

// MongoModel is one shard replica set member: a pool of workers (WiredTiger's 128
// concurrent transactions) serving finds, writes and oplog application.
type MongoModel struct {
	Loc     yamlx.Loc
	Members int `yaml:"members,omitempty"` // per shard replica set, default 3
	Workers int `yaml:"workers,omitempty"`
	// Find is a targeted query returning one document; Doc the extra cost per further
	// document returned; Write an insert or update on the primary; Apply a secondary's
	// oplog application; Scan one shard's part of a broadcast query; Mongos the router.
	Find   time.Duration `yaml:"find,omitempty"`
	Doc    time.Duration `yaml:"doc,omitempty"`
	Write  time.Duration `yaml:"write,omitempty"`
	Apply  time.Duration `yaml:"apply,omitempty"`
	Scan   time.Duration `yaml:"scan,omitempty"`
	Mongos time.Duration `yaml:"mongos,omitempty"`
	// Election is how long a shard has no primary after its primary goes down
	// (electionTimeoutMillis 10 s plus the election).
	Election time.Duration `yaml:"election,omitempty"`
	// Migration is how long one chunk migration takes; donor and recipient primaries
	// spend MigrationShare of their workers on it meanwhile.
	Migration      time.Duration `yaml:"migration,omitempty"`
	MigrationShare float64       `yaml:"migration_share,omitempty"`
}

// Defaults: an SSD-backed Cassandra 5.0 / MongoDB 7.0 node, one data center with a
// 0.2 ms round trip. They are round figures in the range published benchmarks and the
// projects' own tuning guides report, not measurements of any one machine: set them from a
// real run's service times (docs/simulator.md).
func (o *Options) applyDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	defInt := func(d *int, v int) {
		if *d == 0 {
			*d = v
		}
	}
	defF := func(d *float64, v float64) {
		if *d == 0 {
			*d = v
		}
	}
	def(&o.Network, 200*time.Microsecond)
	def(&o.Tick, time.Second)
	c := &o.Cassandra
	defInt(&c.ReadWorkers, 32)
	defInt(&c.WriteWorkers, 32)
	def(&c.Write, 60*time.Microsecond)
	def(&c.Read, 150*time.Microsecond)
	def(&c.Row, 4*time.Microsecond)
	def(&c.SSTable, 40*time.Microsecond)
	def(&c.Scan, 3*time.Millisecond)
	def(&c.ReadTimeout, 5*time.Second)
	def(&c.WriteTimeout, 2*time.Second)
	def(&c.Stream, 60*time.Second)
	defF(&c.StreamShare, 0.25)
	m := &o.MongoDB
	defInt(&m.Members, 3)
	defInt(&m.Workers, 128)
	def(&m.Find, 120*time.Microsecond)
	def(&m.Doc, 5*time.Microsecond)
	def(&m.Write, 100*time.Microsecond)
	def(&m.Apply, 40*time.Microsecond)
	def(&m.Scan, 600*time.Microsecond)
	def(&m.Mongos, 30*time.Microsecond)
	def(&m.Election, 12*time.Second)
	def(&m.Migration, 2*time.Second)
	defF(&m.MigrationShare, 0.1)
}

// Layout is the cluster layout a scenario's keys are placed on: backends.sim.cluster,
// its token seed defaulting to the scenario's. The simulator, plan, analyze and a real
// run's hot-partition placement all use it, so they place keys alike.
func Layout(sc *scenario.Scenario) (plan.Cluster, error) {
	o, err := ParseOptions(sc.Backends["sim"])
	if err != nil {
		return plan.Cluster{}, err
	}
	return o.layout(sc), nil
}

func (o *Options) layout(sc *scenario.Scenario) plan.Cluster {
	c := o.Cluster
	if c.Seed == 0 {
		c.Seed = uint64(sc.Seed)
	}
	return c
}

// ParseOptions decodes backends.sim strictly and checks it; every error names the
// scenario file, line, column and field.
func ParseOptions(raw yamlx.Raw) (Options, error) {
	var o Options
	var errs yamlx.Errors
	errs.Append(raw.Decode(&o))
	if err := o.Cluster.Check(); err != nil {
		errs.Append(err)
	}
	neg(&errs, o.Loc, "network", o.Network)
	if o.ServiceSpread < 0 || o.ServiceSpread > 4 {
		errs.AddAt(o.Loc, "service_spread", "must be between 0 and 4 (σ of the log of a service time), got %g", o.ServiceSpread)
	}
	neg(&errs, o.Loc, "tick", o.Tick)
	checkCassandra(&errs, &o.Cassandra)
	checkMongo(&errs, &o.MongoDB)
	checkScales(&errs, o.Loc, o.OperationScale)
	if err := errs.Err(); err != nil {
		return o, err
	}
	o.applyDefaults()
	return o, nil
}

func neg(errs *yamlx.Errors, loc yamlx.Loc, field string, d time.Duration) {
	if d < 0 {
		errs.AddAt(loc, field, "must not be negative, got %s", d)
	}
}

func checkCassandra(errs *yamlx.Errors, c *CassandraModel) {
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"write", c.Write}, {"read", c.Read}, {"row", c.Row}, {"sstable", c.SSTable}, {"scan", c.Scan}, {"read_timeout", c.ReadTimeout}, {"write_timeout", c.WriteTimeout}, {"stream", c.Stream}} {
		neg(errs, c.Loc, f.name, f.d)
	}
	if c.ReadWorkers < 0 || c.WriteWorkers < 0 {
		errs.AddAt(c.Loc, "read_workers", "worker counts must be positive")
	}
	if c.StreamShare < 0 || c.StreamShare > 1 {
		errs.AddAt(c.Loc, "stream_share", "must be between 0 and 1, got %g", c.StreamShare)
	}
}

func checkMongo(errs *yamlx.Errors, m *MongoModel) {
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"find", m.Find}, {"doc", m.Doc}, {"write", m.Write}, {"apply", m.Apply}, {"scan", m.Scan}, {"mongos", m.Mongos}, {"election", m.Election}, {"migration", m.Migration}} {
		neg(errs, m.Loc, f.name, f.d)
	}
	if m.Members < 0 || m.Members > 50 {
		errs.AddAt(m.Loc, "members", "must be between 1 and 50 (a replica set's limit), got %d", m.Members)
	}
	if m.Workers < 0 {
		errs.AddAt(m.Loc, "workers", "must be positive, got %d", m.Workers)
	}
	if m.MigrationShare < 0 || m.MigrationShare > 1 {
		errs.AddAt(m.Loc, "migration_share", "must be between 0 and 1, got %g", m.MigrationShare)
	}
}
