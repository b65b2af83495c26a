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
