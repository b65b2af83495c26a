package sim

import (
	"time"

	"github.com/shardbench/shardbench/internal/design"
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
	// members) in one data center; InterDCNetwork between two data centers.
	Network        time.Duration `yaml:"network,omitempty"`
	InterDCNetwork time.Duration `yaml:"inter_dc_network,omitempty"`
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

// CassandraModel is one Cassandra node: its cores, shared by the read and write stages,
// the CPU time each kind of request takes on one replica, and the request timeouts after
// which a replica's queued request is dropped. Capacity at saturation is cores / mean
// cost (see Capacity); the defaults are an 8-vCPU SSD node (docs/simulator.md gives each
// figure's source).
type CassandraModel struct {
	Loc yamlx.Loc
	// Cores serve every request the node takes part in (reads, mutations, Paxos rounds,
	// scans).
	Cores int `yaml:"cores,omitempty"`
	// Write is one replica's mutation (commit log + memtable), its share of coordinating
	// included.
	Write time.Duration `yaml:"write,omitempty"`
	// Read is one replica's single-partition read of a small partition in one SSTable.
	Read time.Duration `yaml:"read,omitempty"`
	// Row is the extra cost of each row a read returns.
	Row time.Duration `yaml:"row,omitempty"`
	// SSTable is the extra cost of each further SSTable a read must merge: a partition
	// of size S spans 1 + log2(1 + S/1 MiB) SSTables (size-tiered growth).
	SSTable time.Duration `yaml:"sstable,omitempty"`
	// Index is one read of a partition-index block: a read of a partition larger than
	// the index granularity (64 KiB) binary-searches its row index (readpath.go).
	Index time.Duration `yaml:"index,omitempty"`
	// Scan is the fixed part of one node's share of a request without its partition key
	// (a range scan, ALLOW FILTERING); ScanRow the cost of each row it reads of those
	// the node holds.
	Scan    time.Duration `yaml:"scan,omitempty"`
	ScanRow time.Duration `yaml:"scan_row,omitempty"`
	// ReadTimeout and WriteTimeout are read_request_timeout and write_request_timeout.
	ReadTimeout  time.Duration `yaml:"read_timeout,omitempty"`
	WriteTimeout time.Duration `yaml:"write_timeout,omitempty"`
	// CasContentionTimeout is cas_contention_timeout: how long a lightweight transaction
	// keeps retrying Paxos rounds that lose to another proposer on its partition before
	// it fails with a CAS write timeout. PaxosBackoff bounds the random sleep before each
	// retry (Paxos v1 sleeps uniformly in [0, 100 ms)).
	CasContentionTimeout time.Duration `yaml:"cas_contention_timeout,omitempty"`
	PaxosBackoff         time.Duration `yaml:"paxos_backoff,omitempty"`
	// Stream is how long a joining node streams its ranges (add_node) before it serves,
	// and StreamShare the share of each other node's cores streaming takes.
	Stream      time.Duration `yaml:"stream,omitempty"`
	StreamShare float64       `yaml:"stream_share,omitempty"`
}

// MongoModel is one shard replica set member: its cores, serving finds, writes and
// oplog application, and the CPU time of each. WiredTiger's concurrent transactions
// (128 tickets, adjusted dynamically since 7.0) exceed the cores, so the cores bound it.
type MongoModel struct {
	Loc     yamlx.Loc
	Members int `yaml:"members,omitempty"` // per shard replica set, default 3
	Cores   int `yaml:"cores,omitempty"`
	// Find is a targeted query returning one document; Doc the extra cost per further
	// document returned; Write an insert on the primary (its journal and oplog entry
	// included); Update an update or delete on the primary (it finds the document first);
	// Apply a secondary's application of one oplog entry; Scan the fixed part of a
	// collection scan, Examine the cost of each document it examines (every document the
	// shard holds); Mongos the router's own time (mongos is not a station). A broadcast
	// query the shard answers from an index costs Find.
	Examine time.Duration `yaml:"examine,omitempty"`
	Find    time.Duration `yaml:"find,omitempty"`
	Doc     time.Duration `yaml:"doc,omitempty"`
	Write   time.Duration `yaml:"write,omitempty"`
	Update  time.Duration `yaml:"update,omitempty"`
	Apply   time.Duration `yaml:"apply,omitempty"`
	Scan    time.Duration `yaml:"scan,omitempty"`
	Mongos  time.Duration `yaml:"mongos,omitempty"`
	// Election is how long a shard has no primary after its primary goes down
	// (electionTimeoutMillis 10 s plus the election).
	Election time.Duration `yaml:"election,omitempty"`
	// Migration is how long one chunk migration takes; donor and recipient primaries
	// spend MigrationShare of their cores on it meanwhile.
	Migration      time.Duration `yaml:"migration,omitempty"`
	MigrationShare float64       `yaml:"migration_share,omitempty"`
}

// Defaults: an 8-vCPU, SSD-backed Cassandra 5.0 node and MongoDB 7.0 replica set member,
// sized from published measurements (docs/simulator.md, "Servers of a real size", gives
// each figure's source and the capacity it implies); data centers 0.2 ms apart inside and
// 10 ms apart (two cities, e.g. Moscow and St Petersburg) between. Set them from a real
// run's service times with `shardbench calibrate`.
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
	def(&o.InterDCNetwork, 10*time.Millisecond)
	def(&o.Tick, time.Second)
	c := &o.Cassandra
	defInt(&c.Cores, 8)
	// Instaclustr, 3 × 8-vCPU nodes, RF 3, QUORUM, cassandra-stress: 45,252 inserts/s
	// (45K mutations per node and second) and 66,226–73,172 reads/s (44–49K replica reads
	// per node): 8 cores / 44K per second = 180 µs each.
	def(&c.Write, 180*time.Microsecond)
	def(&c.Read, 180*time.Microsecond)
	def(&c.Row, 4*time.Microsecond)
	def(&c.SSTable, 40*time.Microsecond)
	def(&c.Index, 10*time.Microsecond)
	def(&c.Scan, 3*time.Millisecond)
	def(&c.ScanRow, 2*time.Microsecond)
	def(&c.ReadTimeout, 5*time.Second)
	def(&c.WriteTimeout, 2*time.Second)
	def(&c.CasContentionTimeout, time.Second) // cassandra.yaml 5.0 cas_contention_timeout
	def(&c.PaxosBackoff, 100*time.Millisecond)
	def(&c.Stream, 60*time.Second)
	defF(&c.StreamShare, 0.25)
	m := &o.MongoDB
	defInt(&m.Members, 3)
	defInt(&m.Cores, 8)
	// Huawei Cloud DDS 4.0 (MongoDB) replica set, 8 vCPU, YCSB 1 KB documents: 77,401
	// reads/s, 34,262 inserts/s, 32,177 ops/s at 50% reads and 50% updates.
	def(&m.Find, 103*time.Microsecond)
	def(&m.Doc, 5*time.Microsecond)
	def(&m.Write, 230*time.Microsecond)
	def(&m.Update, 390*time.Microsecond)
	def(&m.Apply, 115*time.Microsecond)
	def(&m.Scan, 600*time.Microsecond)
	def(&m.Examine, time.Microsecond)
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
	neg(&errs, o.Loc, "inter_dc_network", o.InterDCNetwork)
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
	}{{"write", c.Write}, {"read", c.Read}, {"row", c.Row}, {"sstable", c.SSTable}, {"index", c.Index}, {"scan", c.Scan}, {"read_timeout", c.ReadTimeout}, {"write_timeout", c.WriteTimeout},
		{"cas_contention_timeout", c.CasContentionTimeout}, {"paxos_backoff", c.PaxosBackoff}, {"stream", c.Stream}} {
		neg(errs, c.Loc, f.name, f.d)
	}
	if c.Cores < 0 || c.Cores > 1024 {
		errs.AddAt(c.Loc, "cores", "must be between 1 and 1024, got %d", c.Cores)
	}
	if c.StreamShare < 0 || c.StreamShare > 1 {
		errs.AddAt(c.Loc, "stream_share", "must be between 0 and 1, got %g", c.StreamShare)
	}
}

func checkMongo(errs *yamlx.Errors, m *MongoModel) {
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"find", m.Find}, {"doc", m.Doc}, {"write", m.Write}, {"update", m.Update}, {"apply", m.Apply}, {"scan", m.Scan}, {"mongos", m.Mongos}, {"election", m.Election}, {"migration", m.Migration}} {
		neg(errs, m.Loc, f.name, f.d)
	}
	if m.Members < 0 || m.Members > 50 {
		errs.AddAt(m.Loc, "members", "must be between 1 and 50 (a replica set's limit), got %d", m.Members)
	}
	if m.Cores < 0 || m.Cores > 1024 {
		errs.AddAt(m.Loc, "cores", "must be between 1 and 1024, got %d", m.Cores)
	}
	if m.MigrationShare < 0 || m.MigrationShare > 1 {
		errs.AddAt(m.Loc, "migration_share", "must be between 0 and 1, got %g", m.MigrationShare)
	}
}

// CheckDesigns checks what of backends.sim depends on the designs: the client data
// centers must be data centers each Cassandra design's ring has. Errors name the
// scenario's file, line and field.
func CheckDesigns(o *Options, prep *design.Prepared) error {
	for _, v := range prep.Variants {
		d := v.Design
		if d.Cassandra == nil {
			continue
		}
		rep, err := plan.Replication(d.Cassandra.Replication)
		if err != nil {
			continue // the design's own check reports it
		}
		if err := o.Cluster.CheckClients(rep); err != nil {
			return err // the same for every variant that replicates alike: once
		}
	}
	return nil
}
