package design

// KeyColumn is one partition key column (Cassandra) or shard key field (MongoDB) with its
// type: the CQL type, or the BSON type of the document field.
type KeyColumn struct {
	Name   string
	Type   string
	Hashed bool
}

// KeyTarget is one table or collection holding an entity, with its key.
type KeyTarget struct {
	Database  Database
	Namespace string // keyspace or database
	Target    string // table or collection
	Entity    string
	Columns   []KeyColumn // empty: an unsharded collection
}

// Keys lists the tables and collections holding entity (all of them when entity is ""),
// each with its partition or shard key, in file order.
func (d *Design) Keys(entity string) []KeyTarget {
	var out []KeyTarget
	for _, t := range d.tables {
		if entity != "" && t.t.Entity != entity {
			continue
		}
		kt := KeyTarget{Database: Cassandra, Namespace: d.Cassandra.Keyspace, Target: t.name, Entity: t.t.Entity}
		for _, c := range t.pk {
			kt.Columns = append(kt.Columns, KeyColumn{Name: c.name, Type: c.typ.String()})
		}
		out = append(out, kt)
	}
	for _, c := range d.colls {
		if entity != "" && c.c.Entity != entity {
			continue
		}
		kt := KeyTarget{Database: MongoDB, Namespace: d.MongoDB.Database, Target: c.name, Entity: c.c.Entity}
		for i, name := range c.shardKey {
			typ := ""
			if f := c.byName[name]; f != nil {
				typ = f.bson
			}
			kt.Columns = append(kt.Columns, KeyColumn{Name: name, Type: typ, Hashed: c.hashed[i]})
		}
		out = append(out, kt)
	}
	return out
}
