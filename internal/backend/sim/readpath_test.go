package sim

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/metrics"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/schedule"
	"github.com/shardbench/shardbench/workloads"
)

// A read scans the rows of its slice until its LIMIT is reached (CQL's LIMIT: "the
// number of rows returned by a query"; SinglePartitionReadCommand stops at the limit's
// count of live rows): a day of 100,000 views read with LIMIT 200 scans 200 rows, without
// a LIMIT all of them, a partition smaller than the limit what it holds; a read naming the
// whole primary key scans one row however large the partition is.
func TestReadScansRowsToItsLimit(t *testing.T) {
	for _, c := range []struct {
		single      bool
		rows, limit int64
		want        int64
	}{
		{false, 100_000, 200, 200},
		{false, 100_000, 0, 100_000},
		{false, 37, 200, 37},
		{false, 0, 200, 0},
		{true, 10_000_000, 0, 1},
		{true, 0, 0, 0},
	} {
		if got := readWorkOf(c.single, 0, c.rows, c.limit).rows; got != c.want {
			t.Errorf("single row %v, %d rows, LIMIT %d: %d rows scanned, want %d", c.single, c.rows, c.limit, got, c.want)
		}
	}
}

// A partition larger than the index granularity (64 KiB, Cassandra 5.0's BIG format
// default) has a row index of one block per 64 KiB, binary-searched: ⌈log2(blocks)⌉ block
// reads; a partition of at most 64 KiB has no row index to search.
func TestRowIndexSearchGrowsWithThePartition(t *testing.T) {
	const kib = 1 << 10
	for _, c := range []struct {
		size int64
		want int32
	}{
		{0, 0}, {64 * kib, 0}, {64*kib + 1, 1}, {128 * kib, 1}, {129 * kib, 2},
		{64 * kib * 1024, 10}, {10 << 30, 18},
	} {
		if got := readWorkOf(false, c.size, 1, 0).index; got != c.want {
			t.Errorf("partition of %d bytes: %d index block reads, want %d", c.size, got, c.want)
		}
	}
}

// The size table keeps the large partitions whatever collides with them: 10,000 small
// partitions written after a 100 MiB one leave its bytes and rows exact, and a partition
// never written reads as untracked (0). Data under a TTL ages out with its window.
func TestPartitionSizesKeepLargePartitions(t *testing.T) {
	p := newPartitionSizes(8) // 64 sets of 4
	const big = uint64(0xfeed) << 6
	p.add(big, 100<<20, 400_000, 0, 0)
	for i := uint64(1); i <= 10_000; i++ {
		p.add(big+i*64, 300, 1, 0, 0) // the same set as big
	}
	if b, r := p.get(big, 0, 0); b != 100<<20 || r != 400_000 {
		t.Errorf("the large partition reads %d bytes, %d rows after collisions; want %d, 400000", b, r, 100<<20)
	}
	if b, r := p.get(big+64*20_000, 0, 0); b != 0 || r != 0 {
		t.Errorf("a partition never written reads %d bytes, %d rows", b, r)
	}
	p.add(7, 500, 2, 0, time.Hour)
	if _, r := p.get(7, int64(30*time.Minute), time.Hour); r != 2 {
		t.Errorf("within its TTL window: %d rows, want 2", r)
	}
	if _, r := p.get(7, int64(90*time.Minute), time.Hour); r != 0 {
		t.Errorf("past its TTL window: %d rows, want 0", r)
	}
}

// The population counts: with one session bucket, the bucket's partition holds every
// session loaded before the run (3.2 GiB for 10 M), so a point read of one session merges
// SSTables and searches the row index from the first operation on; the same read of a
// 100-bucket table's partition (32 MiB) does less of both.
func TestReadCostStartsFromTheLoadedPartition(t *testing.T) {
	sc, err := scenario.ReadFile("../../../scenarios/claims/session-buckets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cost := map[string]time.Duration{}
	for _, v := range []string{"seed000[sessions.buckets=1]", "seed000[sessions.buckets=100]"} {
		cfg, ops := configFor(t, sc, v, 2000)
		s, err := Open(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		s.prepare()
		if s.prepErr != nil {
			t.Fatal(s.prepErr)
		}
		for i := range ops {
			op := &ops[i]
			if cfg.Model.Ops[op.Type].Name != "sessions.read" || op.Session >= cfg.Model.Sessions {
				continue // a session of the population
			}
			accs := cfg.Compiled.Accesses(op, nil)
			a := &accs[0]
			w := s.placer.Place(a, op)
			fp := w.Fingerprint()
			cost[v] = s.readCost(a, op, fp)
			size, rows := s.sizes.get(fp, op.Time, a.Step.TTL)
			t.Logf("%s: a session's bucket holds %d MiB, %d rows: read cost %s", v, size>>20, rows, cost[v])
			if !a.Step.SingleRow {
				t.Errorf("%s: sessions.read names bucket and session_id, a single row", v)
			}
			break
		}
	}
	one, hundred := cost["seed000[sessions.buckets=1]"], cost["seed000[sessions.buckets=100]"]
	var o Options
	o.applyDefaults()
	m := &o.Cassandra
	if one == 0 || hundred == 0 {
		t.Fatalf("no read of a loaded session: %v", cost)
	}
	// 3.2 GiB: 11 further SSTables and 16 index blocks; 32 MiB: 5 and 10.
	if want := m.Read + 11*m.SSTable + 16*m.Index; one != want {
		t.Errorf("1 bucket: read cost %s, want %s (11 SSTables, 16 index blocks)", one, want)
	}
	if want := m.Read + 5*m.SSTable + 10*m.Index; hundred != want {
		t.Errorf("100 buckets: read cost %s, want %s (5 SSTables, 10 index blocks)", hundred, want)
	}
}

// views-bot-day: reading a bot's day costs more than a normal user's, and more as the day
// grows. The bots' day partitions grow by hundreds of views a second; by_day reads up to
// 200 rows (its LIMIT) of them, where a normal user's day (a user outside the 10,000 most
// active: user activity is Zipf, so the most active humans have large days too) holds a
// few.
func TestBotDayReadsCostMore(t *testing.T) {
	sc, err := scenario.ReadFile("../../../scenarios/claims/views-bot-day.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.Apply(scenario.Overrides{Duration: time.Minute}); err != nil {
		t.Fatal(err)
	}
	bot, human, heavy := botDayLatencies(t, sc, "seed004")
	if len(bot) < 100 || len(human) < 100 {
		t.Fatalf("%d reads of a bot's day, %d of a user's", len(bot), len(human))
	}
	pb, ph := quantile(bot, 0.99), quantile(human, 0.99)
	t.Logf("views.by_day p99: bot's day %s (%d reads), a user's day %s (%d reads)", pb, len(bot), ph, len(human))
	t.Logf("p50/p90: bot %s %s, user %s %s; the 10,000 most active users: p50 %s p99 %s (%d reads)", quantile(bot, 0.5), quantile(bot, 0.9), quantile(human, 0.5), quantile(human, 0.9), quantile(heavy, 0.5), quantile(heavy, 0.99), len(heavy))
	if pb < 2*ph {
		t.Errorf("p99 of a bot's day %s is not above twice a user's %s", pb, ph)
	}
	// And more as the day grows: the last third of the minute against the first.
	third := len(bot) / 3
	early, late := quantile(bot[:third], 0.5), quantile(bot[2*third:], 0.5)
	t.Logf("bot's day p50: first third %s, last third %s", early, late)
	if late <= early {
		t.Errorf("a bot's day reads no slower as it grows: p50 %s then %s", early, late)
	}
}

// botDayLatencies simulates variant over sc's stream and returns the response times of
// views.by_day reads of a bot's day, of a normal user's and of one of the 10,000 most
// active users' (users are numbered by activity after the bots), in intended order.
func botDayLatencies(t *testing.T, sc *scenario.Scenario, variant string) (bot, human, heavy []time.Duration) {
	t.Helper()
	cfg, _ := configFor(t, sc, variant, 0)
	s, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	st := cfg.Model.NewStream(schedule.New(sc))
	byDay := -1
	for i := range cfg.Model.Ops {
		if cfg.Model.Ops[i].Name == "views.by_day" {
			byDay = i
		}
	}
	class := map[int64]int{} // by intended time: 0 bot, 1 normal, 2 most active
	pull := workloads.Pull(st)
	next := func() *workloads.Op {
		op := pull()
		if op == nil {
			return nil
		}
		if int(op.Type) == byDay {
			switch {
			case op.Bot:
				class[int64(op.Intended)] = 0
			case op.User >= cfg.Model.Bots+10_000:
				class[int64(op.Intended)] = 1
			default:
				class[int64(op.Intended)] = 2
			}
		}
		return op
	}
	type lat struct {
		at int64
		d  time.Duration
	}
	var sets [3][]lat
	err = s.Simulate(context.Background(), next, func(smp *metrics.Sample) {
		if int(smp.Op) != byDay || smp.Class != uint8(metrics.OK) {
			return
		}
		l := lat{smp.Intended, time.Duration(smp.End - smp.Intended)}
		c := class[smp.Intended]
		sets[c] = append(sets[c], l)
	})
	if err != nil {
		t.Fatal(err)
	}
	var out [3][]time.Duration
	for c := range sets {
		slices.SortFunc(sets[c], func(x, y lat) int { return int(x.at - y.at) })
		for _, l := range sets[c] {
			out[c] = append(out[c], l.d)
		}
	}
	return out[0], out[1], out[2]
}

func quantile(d []time.Duration, q float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(int(q*float64(len(s))), len(s)-1)]
}

// slotModel is the size table entry by entry, as simply as it can be written: 4-way sets
// of whole entries. partitionSizes lays its sets out way by way for the cache; it must
// answer as this does.
type slotModel struct {
	slots []struct{ fp, bytes, rows, epoch int64 }
	mask  uint64
}

func (m *slotModel) set(fp uint64) []struct{ fp, bytes, rows, epoch int64 } {
	i := (fp & m.mask) * 4
	return m.slots[i : i+4]
}

func (m *slotModel) add(fp uint64, b, rows, now int64, ttl time.Duration) {
	e, set, victim := epochOf(now, ttl), m.set(fp), 0
	for i := range set {
		sl := &set[i]
		if sl.fp == int64(fp) && (sl.bytes > 0 || sl.rows > 0) {
			if sl.epoch != e {
				sl.epoch, sl.bytes, sl.rows = e, 0, 0
			}
			sl.bytes += b
			sl.rows += rows
			return
		}
		if sl.bytes < set[victim].bytes {
			victim = i
		}
	}
	set[victim] = struct{ fp, bytes, rows, epoch int64 }{int64(fp), b, rows, e}
}

func (m *slotModel) get(fp uint64, now int64, ttl time.Duration) (int64, int64) {
	for _, sl := range m.set(fp) {
		if sl.fp == int64(fp) && (sl.bytes > 0 || sl.rows > 0) {
			if sl.epoch != epochOf(now, ttl) {
				return 0, 0
			}
			return sl.bytes, sl.rows
		}
	}
	return 0, 0
}

// TestPartitionSizesMatchSlotModel: writes and reads of partitions that collide in few
// sets (evictions), with and without rows, bytes and TTL windows, get the same answers
// from the table as from the entry-by-entry model.
func TestPartitionSizesMatchSlotModel(t *testing.T) {
	p := newPartitionSizes(6) // 16 sets of 4
	m := slotModel{slots: make([]struct{ fp, bytes, rows, epoch int64 }, 64), mask: 15}
	r := rand.New(rand.NewPCG(3, 4))
	ttls := []time.Duration{0, time.Second, time.Minute}
	var now int64
	for i := range 200_000 {
		now += r.Int64N(int64(50 * time.Millisecond))
		fp := r.Uint64N(300) * 0x9e3779b97f4a7c15 // 300 partitions over 16 sets
		ttl := ttls[fp%3]
		if r.IntN(3) == 0 {
			b, rows := r.Int64N(4)*r.Int64N(1<<20), r.Int64N(3)
			p.add(fp, b, rows, now, ttl)
			m.add(fp, b, rows, now, ttl)
			continue
		}
		gb, gr := p.get(fp, now, ttl)
		wb, wr := m.get(fp, now, ttl)
		if gb != wb || gr != wr {
			t.Fatalf("operation %d: partition %x reads %d bytes, %d rows; the model %d, %d", i, fp, gb, gr, wb, wr)
		}
	}
}
