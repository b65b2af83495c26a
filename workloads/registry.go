package workloads

import (
	"fmt"
	"sort"
	"sync"
)

// Kind says whether an operation reads or writes.
type Kind uint8

// Operation kinds.
const (
	Read Kind = iota + 1
	Write
)

func (k Kind) String() string {
	switch k {
	case Read:
		return "read"
	case Write:
		return "write"
	}
	return "unknown"
}

// Action is what an operation does to its entity. Designs derive each physical statement
// from the action and the table or collection it targets.
type Action uint8

// Actions.
const (
	// Insert creates a record: every field of the entity is available.
	Insert Action = iota + 1
	// Update changes the Sets fields of the record the Binds fields identify.
	Update
	// Delete removes the record the Binds fields identify.
	Delete
	// Get reads one record by the Binds fields.
	Get
	// List reads the records matching the Binds fields (and the period [Ref, Until) of
	// the Range field when the operation has one), newest first, at most Op.Qty of them.
	List
	// ItemAdd, ItemSet and ItemRemove add, change the quantity of, and remove one element
	// of the record's item list (Op.Product names the item).
	ItemAdd
	ItemSet
	ItemRemove
	// Decrement lowers a counter field (Sets[0]) by Op.Qty, conditionally on it staying
	// non-negative: the stock decrement.
	Decrement
)

var actionNames = [...]string{"", "insert", "update", "delete", "get", "list", "item_add", "item_set", "item_remove", "decrement"}

func (a Action) String() string {
	if int(a) < len(actionNames) && a != 0 {
		return actionNames[a]
	}
	return "unknown"
}

// IsItem reports whether the action acts on one element of the record's item list.
func (a Action) IsItem() bool { return a == ItemAdd || a == ItemSet || a == ItemRemove }

// Kind is the read/write kind of the action.
func (a Action) Kind() Kind {
	if a == Get || a == List {
		return Read
	}
	return Write
}

// OpSpec declares one logical operation of a workload.
type OpSpec struct {
	// Name is local to the workload ("add_item"); the full name is "carts.add_item".
	Name   string
	Action Action
	// Binds are the fields the operation knows with equality (the record's identity as the
	// application holds it). Insert operations know every field of the entity.
	Binds []string
	// Sets are the fields an Update, item operation or Decrement changes.
	Sets []string
	// Range is the time field a List operation restricts to [Ref, Until) when Until is set.
	Range string
	// Doc says what the operation does and how it uses Op's fields.
	Doc string
	// Views are other views of the operation that some steps of a design act on.
	Views []View
}

// View is another view of an operation, which a design's step names with view: (the
// guest cart that carts.merge merges into the user's: its owner is the session).
type View struct {
	Name string
	Doc  string
	// Of derives the view: a copy of the operation with the fields the view changes.
	Of func(op *Op) Op
}

// View returns the operation's view of that name, or nil.
func (s *OpSpec) View(name string) *View {
	for i := range s.Views {
		if s.Views[i].Name == name {
			return &s.Views[i]
		}
	}
	return nil
}

// Knob is a workload setting read from population.extra as "<workload>.<name>".
type Knob struct {
	Name     string
	Default  float64
	Min, Max float64
	Doc      string
}

// Generator fills operations of one workload. One generator serves one stream; Fill is
// called from the stream's goroutine only.
type Generator interface {
	// Fill completes op for the workload's operation i (index into Meta.Ops). Seq, Type,
	// Intended and Time are set; every identity is -1 and every other field zero.
	Fill(i int, op *Op)
}

// Optional interfaces a Generator may implement (CockroachDB's pkg/workload style: the
// stream asks, and uses what a generator offers).

// Stater reports counters of the state a generator keeps (carts holding items, sessions
// created), for the results of a run; keys are "<workload>.<name>".
type Stater interface {
	Stats(add func(name string, value int64))
}

// Meta describes a registered workload.
type Meta struct {
	Name        string
	Description string
	// Entity names the logical record the operations act on ("sessions", "carts", ...);
	// designs map it to tables or collections.
	Entity string
	Ops    []OpSpec
	// Fields is the logical vocabulary of the entity.
	Fields []Field
	// Item, for a workload with item operations (ItemAdd, ItemSet, ItemRemove), builds
	// the item such an operation adds, changes or removes: Op.Product at Op.Qty and
	// Op.Price, added at Op.Ref. ItemKey names the field that tells the items of a
	// record's item list apart (a table keyed by it keeps a row per item).
	Item    func(m *Model) func(op *Op) Item
	ItemKey string
	Knobs   []Knob
	// Population lists the entity's records before the run (nil: none); Expansions the
	// dimensions a record expands along in tables keyed by them (see population.go).
	Population func(m *Model) []RecordSet
	Expansions func(m *Model) []Expansion
	// New returns a generator for one stream. st is the stream's shared state (random
	// numbers, population samplers, what the run created so far).
	New func(st *State) Generator
}

// Op returns the spec of the named operation.
func (m *Meta) Op(name string) (int, *OpSpec) {
	for i := range m.Ops {
		if m.Ops[i].Name == name {
			return i, &m.Ops[i]
		}
	}
	return -1, nil
}

// Field returns the named field of the entity.
func (m *Meta) Field(name string) *Field {
	for i := range m.Fields {
		if m.Fields[i].Name == name {
			return &m.Fields[i]
		}
	}
	return nil
}

// Knob returns the named knob.
func (m *Meta) Knob(name string) *Knob {
	for i := range m.Knobs {
		if m.Knobs[i].Name == name {
			return &m.Knobs[i]
		}
	}
	return nil
}

var registry struct {
	sync.Mutex
	byName map[string]*Meta
}

// Register adds a workload; workload packages call it from init. It panics on a duplicate
// name or an inconsistent spec (a programming error).
func Register(m *Meta) {
	registry.Lock()
	defer registry.Unlock()
	if registry.byName == nil {
		registry.byName = map[string]*Meta{}
	}
	if _, dup := registry.byName[m.Name]; dup {
		panic("workloads: duplicate registration of " + m.Name)
	}
	for _, op := range m.Ops {
		for _, f := range append(append(append([]string(nil), op.Binds...), op.Sets...), op.Range) {
			if f != "" && m.Field(f) == nil {
				panic(fmt.Sprintf("workloads: %s.%s names unknown field %q", m.Name, op.Name, f))
			}
		}
		for _, v := range op.Views {
			if v.Name == "" || v.Of == nil {
				panic(fmt.Sprintf("workloads: %s.%s has a view without a name or a function", m.Name, op.Name))
			}
		}
		if op.Action == Decrement && len(op.Sets) == 0 {
			panic(fmt.Sprintf("workloads: %s.%s decrements, but names no counter (Sets[0])", m.Name, op.Name))
		}
		if op.Action.IsItem() && (m.Item == nil || m.Field(m.ItemKey) == nil) {
			panic(fmt.Sprintf("workloads: %s.%s is an item operation, but %s gives no Item function or ItemKey field", m.Name, op.Name, m.Name))
		}
	}
	for _, f := range m.Fields {
		if p := f.PerKey; p != nil && (m.Field(p.Value) == nil || m.Field(p.Key) == nil) {
			panic(fmt.Sprintf("workloads: %s.%s holds %s per %s, which are not both fields", m.Name, f.Name, p.Value, p.Key))
		}
	}
	registry.byName[m.Name] = m
}

// Lookup returns a registered workload, or nil.
func Lookup(name string) *Meta {
	registry.Lock()
	defer registry.Unlock()
	return registry.byName[name]
}

// Registered lists the registered workloads by name.
func Registered() []*Meta {
	registry.Lock()
	defer registry.Unlock()
	out := make([]*Meta, 0, len(registry.byName))
	for _, m := range registry.byName {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// LookupOp resolves a full operation name ("carts.add_item").
func LookupOp(full string) (*Meta, int, *OpSpec) {
	for i := 0; i < len(full); i++ {
		if full[i] == '.' {
			m := Lookup(full[:i])
			if m == nil {
				return nil, -1, nil
			}
			j, spec := m.Op(full[i+1:])
			if spec == nil {
				return m, -1, nil
			}
			return m, j, spec
		}
	}
	return nil, -1, nil
}

// Getter compiles a logical field of an entity ("sessions", "owner_key") into its accessor,
// once; the accessor derives the value from an operation without allocating.
func (m *Model) Getter(entity, field string) (Getter, Type, error) {
	for _, meta := range Registered() {
		if meta.Entity != entity {
			continue
		}
		f := meta.Field(field)
		if f == nil {
			return nil, 0, fmt.Errorf("entity %s has no field %q", entity, field)
		}
		if f.Get == nil {
			return nil, f.Type, fmt.Errorf("%s.%s is composite (%s): use Field.Composite", entity, field, f.Type)
		}
		return f.Get(m), f.Type, nil
	}
	return nil, 0, fmt.Errorf("unknown entity %q", entity)
}
