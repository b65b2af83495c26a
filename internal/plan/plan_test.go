package plan

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/results"
	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/schedule"
	_ "github.com/shardbench/shardbench/workloads/all"
)

// analyse runs every variant of a shipped scenario through placement (limit operations).
func analyse(t *testing.T, path string, limit int64) map[string]results.HotspotsVariant {
	t.Helper()
	prep, sch := prepare(t, path)
	out := map[string]results.HotspotsVariant{}
	for i, v := range prep.Variants {
		hv, n, err := PlaceVariant(context.Background(), v.Name, prep.Compiled[i], &Cluster{Seed: 1}, func() Stream { return prep.Model.NewStream(sch) }, limit)
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		if n == 0 {
			t.Fatalf("%s: no operations", v.Name)
		}
		out[v.Name] = hv
	}
	return out
}

// prepare reads a shipped scenario, two minutes of it, with its designs and schedule.
func prepare(tb testing.TB, path string) (*design.Prepared, *schedule.Schedule) {
	tb.Helper()
	sc, err := scenario.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := sc.Apply(scenario.Overrides{Duration: 2 * time.Minute}); err != nil {
		tb.Fatal(err)
	}
	prep, err := design.Prepare(sc)
	if err != nil {
		tb.Fatal(err)
	}
	return prep, schedule.New(sc)
}

func tableOf(t *testing.T, hv results.HotspotsVariant, suffix string) results.TableHotspots {
	t.Helper()
	for _, tb := range hv.Tables {
		if strings.HasSuffix(tb.Table, "."+suffix) {
			return tb
		}
	}
	var names []string
	for _, tb := range hv.Tables {
		names = append(names, tb.Table)
	}
	t.Fatalf("variant %s has no table %s (has %v)", hv.Variant, suffix, names)
	return results.TableHotspots{}
}

func variantNamed(t *testing.T, m map[string]results.HotspotsVariant, contains ...string) results.HotspotsVariant {
	t.Helper()
	for name, hv := range m {
		ok := true
		for _, c := range contains {
			ok = ok && strings.Contains(name, c)
		}
		if ok {
			return hv
		}
	}
	var names []string
	for n := range m {
		names = append(names, n)
	}
	t.Fatalf("no variant with %v among %v", contains, names)
	return results.HotspotsVariant{}
}

// Seed 000's user_sessions: one bucket is one partition taking everything; more buckets
// spread the sessions over more partitions and more nodes. (A single hot session — a bot —
// still lands in one bucket: bucketing by session hash cannot split it.)
func TestSessionBuckets(t *testing.T) {
	m := analyse(t, "../../scenarios/claims/session-buckets.yaml", 300_000)
	get := func(n string) (results.HotspotsVariant, results.TableHotspots) {
		hv, ok := m["seed000[sessions.buckets="+n+"]"]
		if !ok {
			t.Fatalf("no variant with %s buckets", n)
		}
		return hv, tableOf(t, hv, "user_sessions")
	}
	hv1, one := get("1")
	if one.Partitions != 1 || one.Top[0].Share < 0.999 {
		t.Errorf("1 bucket: %d partitions, top share %.3f; want 1 partition with everything", one.Partitions, one.Top[0].Share)
	}
	_, ten := get("10")
	hv100, hundred := get("100")
	if ten.Partitions != 10 || hundred.Partitions != 100 {
		t.Errorf("partitions: %d for 10 buckets, %d for 100", ten.Partitions, hundred.Partitions)
	}
	if !(hundred.Top[0].Share < ten.Top[0].Share && ten.Top[0].Share < one.Top[0].Share) {
		t.Errorf("hottest bucket share does not fall with more buckets: 1→%.3f 10→%.3f 100→%.3f", one.Top[0].Share, ten.Top[0].Share, hundred.Top[0].Share)
	}
	if hv100.Balance.MaxOverMean >= hv1.Balance.MaxOverMean {
		t.Errorf("node imbalance: 100 buckets max/mean %.2f, 1 bucket %.2f", hv100.Balance.MaxOverMean, hv1.Balance.MaxOverMean)
	}
	if len(hundred.Top[0].Replicas) != 3 || hundred.Top[0].Token == "" || hundred.Top[0].Range == "" {
		t.Errorf("top partition lacks its placement: %+v", hundred.Top[0])
	}
	t.Logf("hottest bucket: 1→%.3f 10→%.3f 100→%.4f; node max/mean 1→%.2f 100→%.2f", one.Top[0].Share, ten.Top[0].Share, hundred.Top[0].Share, hv1.Balance.MaxOverMean, hv100.Balance.MaxOverMean)
}

// Seed 000's orders_by_period: every order of a day goes to one partition, and its
// replicas carry more than the other nodes.
func TestOrdersByPeriodOnePartitionPerDay(t *testing.T) {
	m := analyse(t, "../../scenarios/claims/orders-shard-keys.yaml", 300_000)
	hv := variantNamed(t, m, "seed000")
	tb := tableOf(t, hv, "orders_by_period")
	if tb.Writes == 0 {
		t.Fatal("no writes to orders_by_period")
	}
	if tb.Top[0].Writes != tb.Writes {
		t.Errorf("the day's partition %s got %d of %d writes, want all", tb.Top[0].Key, tb.Top[0].Writes, tb.Writes)
	}
	if !strings.Contains(tb.Top[0].Key, "time_bucket") {
		t.Errorf("top key %q does not name the time bucket", tb.Top[0].Key)
	}
	t.Logf("orders_by_period: %d partitions, top %s %.3f of ops, replicas %v", tb.Partitions, tb.Top[0].Key, tb.Top[0].Share, tb.Top[0].Replicas)
}

// A category-keyed table shows electronics' ≈70% of catalog traffic in one partition;
// seed 002's category shards split it.
func TestCategoryShare(t *testing.T) {
	m := analyse(t, "../../scenarios/claims/products-hot-category.yaml", 300_000)
	for _, c := range []struct {
		variant, table string
		lo, hi         float64
	}{
		{"seed002[products.partition_key=[category]]", "products", 0.65, 0.75},
		{"seed004", "products_by_category", 0.65, 0.75},
		{"seed002-more-shards[products.category_shards=128]", "products", 0, 0.02},
	} {
		hv, ok := m[c.variant]
		if !ok {
			t.Fatalf("no variant %s", c.variant)
		}
		tb := tableOf(t, hv, c.table)
		top := tb.Top[0]
		if top.Share < c.lo || top.Share > c.hi {
			t.Errorf("%s %s: top partition %s has %.3f of the operations, want %.2f–%.2f", c.variant, c.table, top.Key, top.Share, c.lo, c.hi)
		}
		t.Logf("%s %s: top %s share %.3f (%d partitions)", c.variant, c.table, top.Key, top.Share, tb.Partitions)
	}
}
