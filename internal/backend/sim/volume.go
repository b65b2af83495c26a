package sim

import (
	"github.com/shardbench/shardbench/internal/design"
)

// volume counts the rows (documents) each node or shard holds of each table or
// collection: what a scan reads and a collection scan examines. Rows come from the
// inserts the run made (a Cassandra INSERT's rows on every replica, a MongoDB insert's
// documents on its shard); a table's data from before the run is added with populate.
// Updates and deletes do not change the count, nor does TTL expiry: a scan still reads
// tombstones until compaction purges them.
type volume struct {
	ids  map[string]int // table name → index into rows
	rows [][]int64      // per table, per node or shard
	// byStep caches each step's table index (Step.ID → index+1; 0: not looked up).
	byStep []int
}

func newVolume(steps int) *volume {
	return &volume{ids: map[string]int{}, byStep: make([]int, steps)}
}

func (v *volume) table(s *design.Step) int {
	if id := v.byStep[s.ID]; id > 0 {
		return id - 1
	}
	id, ok := v.ids[s.Target]
	if !ok {
		id = len(v.rows)
		v.ids[s.Target] = id
		v.rows = append(v.rows, nil)
	}
	v.byStep[s.ID] = id + 1
	return id
}

// add counts n rows of the step's table on node (or shard) i.
func (v *volume) add(s *design.Step, i int, n int64) { v.addTable(v.table(s), i, n) }

func (v *volume) addTable(t, i int, n int64) {
	r := v.rows[t]
	for len(r) <= i {
		r = append(r, 0)
	}
	r[i] += n
	v.rows[t] = r
}

// populate counts rows that were there before the run: table's rows on node (shard) i.
func (v *volume) populate(table string, i int, n int64) {
	id, ok := v.ids[table]
	if !ok {
		id = len(v.rows)
		v.ids[table] = id
		v.rows = append(v.rows, nil)
	}
	v.addTable(id, i, n)
}

// held is how many rows of the step's table node (shard) i holds.
func (v *volume) held(s *design.Step, i int) int64 {
	r := v.rows[v.table(s)]
	if i < len(r) {
		return r[i]
	}
	return 0
}

// inserts reports whether a write step adds rows: a Cassandra INSERT or a MongoDB
// insertOne (an UPDATE is an upsert in Cassandra too, but the designs' updates change
// rows an insert made).
func inserts(s *design.Step) bool {
	return s.Statement == "INSERT" || s.Statement == "insertOne"
}

// loadVolumes counts the data each table held before the run (plan.TableLoad) on its
// nodes and shards. A Cassandra table's rows spread over the ring as its tokens do: a
// node of a data center with rf replicas and n nodes holds rf/n of them (balanced token
// allocation, Cassandra 4.0+'s default). A sharded collection's documents are where the
// placer put their bytes (plan.Placer.StartChunks: by the loaded keys for a ranged key,
// by each chunk's share of the hashed values for a hashed one); an unsharded
// collection's are on its primary shard.
func (s *Simulator) loadVolumes() {
	ls, err := s.cfg.Compiled.Loaders()
	if err != nil {
		return // NewPlacer met the same error
	}
	for _, l := range ls {
		t := s.placer.Loaded[l.Target]
		if t == nil || t.Rows == 0 {
			continue
		}
		switch {
		case l.Database == design.Cassandra && s.cass != nil:
			s.cass.loadVolume(l.Target, t.Rows)
		case l.Database == design.MongoDB && s.mongo != nil:
			s.mongo.loadVolume(l.Target, t.Rows, t.Bytes)
		}
	}
}

func (c *cassCluster) loadVolume(table string, rows int64) {
	ring := c.pl.Ring
	rep := c.pl.Replicas.Replication
	perDC := map[string]int64{}
	for _, n := range ring.Nodes {
		perDC[n.DC]++
	}
	for i, n := range ring.Nodes {
		c.vol.populate(table, i, rows*int64(rep.Factor(n.DC))/perDC[n.DC])
	}
}

func (c *mongoCluster) loadVolume(coll string, rows, bytes int64) {
	start := c.pl.StartChunks(coll)
	if start == nil || bytes <= 0 {
		c.vol.populate(coll, 0, rows) // unsharded: the primary shard
		return
	}
	for i, sc := range start {
		c.vol.populate(coll, i, int64(float64(rows)*float64(sc.LoadedBytes)/float64(bytes)))
	}
}
