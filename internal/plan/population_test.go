package plan

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/shardbench/shardbench/internal/results"
)

// shardShares is each shard's share of a collection's operations and the busiest's ratio
// to the mean.
func shardShares(t *testing.T, tb results.TableHotspots) (shares map[string]float64, maxOverMean float64) {
	t.Helper()
	if len(tb.Shards) < 2 {
		t.Fatalf("%s: no shard split reported (%v)", tb.Table, tb.Shards)
	}
	var total, top int64
	for _, s := range tb.Shards {
		total += s.Ops
		top = max(top, s.Ops)
	}
	shares = map[string]float64{}
	for _, s := range tb.Shards {
		shares[s.Shard] = float64(s.Ops) / float64(total)
	}
	return shares, float64(top) / (float64(total) / float64(len(tb.Shards)))
}

// Seed 001's products keys over the catalog as it is before the sale (500,000 products of
// about 16 KB, split at the design's chunk size and balanced by data size): under
// {category: 1} electronics is one jumbo chunk whose shard serves most of the catalog;
// the hashed suffix, and the subcategory remedy, spread it; {_id: hashed} spreads the load
// but broadcasts every category listing. Before the population existed, chunks were cut
// from the writes of the run's first operations, of which a catalog has none: every key
// left one chunk on shard0, and all five gave the same result.
func TestProductsKeysOverLoadedCatalog(t *testing.T) {
	prep, sch := prepare(t, "../../scenarios/claims/products-hot-category.yaml")
	m := map[string]results.HotspotsVariant{}
	for i, v := range prep.Variants {
		if !strings.HasPrefix(v.Name, "seed001-mongo") {
			continue
		}
		hv, _, err := PlaceVariant(context.Background(), v.Name, prep.Compiled[i], &Cluster{Seed: 1}, func() Stream { return prep.Model.NewStream(sch) }, 100_000)
		if err != nil {
			t.Fatal(err)
		}
		m[v.Name] = hv
	}
	products := func(key string) results.TableHotspots {
		return tableOf(t, variantNamed(t, m, "seed001-mongo", "products.shard_key="+key+"]"), "products")
	}
	cat := products("{category: 1}")
	shares, _ := shardShares(t, cat)
	jumbo := ""
	for _, s := range cat.Shards {
		for _, j := range s.Jumbo {
			if strings.Contains(j, "electronics") {
				jumbo = s.Shard
			}
		}
	}
	if jumbo == "" {
		t.Fatalf("{category: 1}: no jumbo electronics chunk: %+v", cat.Shards)
	}
	if shares[jumbo] < 0.60 {
		t.Errorf("{category: 1}: %s holds the electronics jumbo chunk but serves %.1f%% of products operations, want at least 60%%", jumbo, 100*shares[jumbo])
	}
	t.Logf("{category: 1}: %s (electronics jumbo) serves %.1f%%; %+v", jumbo, 100*shares[jumbo], cat.Shards)
	// The hottest partition: electronics, one jumbo chunk, under {category: 1}; under the
	// hashed suffixes the listings' key {category: electronics} reaches many chunks and is
	// no partition, so the hottest is one product's.
	if h := cat.Hottest(); h == nil || h.Key != "{category: electronics}" || h.Chunks != 0 || h.Range == "" {
		t.Errorf("{category: 1}: hottest partition %+v, want {category: electronics} in one chunk", h)
	}
	for _, key := range []string{"{category: 1, _id: hashed}", "{category: 1, subcategory: 1, _id: hashed}"} {
		tb := products(key)
		if top := tb.Top[0]; top.Key != "{category: electronics}" || top.Chunks < 10 || top.Shard != "" {
			t.Errorf("%s: heaviest key %+v, want {category: electronics} over many chunks on several shards", key, top)
		}
		if h := tb.Hottest(); h == nil || h.Chunks > 1 || h.Range == "" || h.Share >= 0.05 {
			t.Errorf("%s: hottest partition %+v, want one chunk's key below 5%%", key, h)
		} else {
			t.Logf("%s: %s over %d chunks takes %.1f%%; hottest partition %s %.1f%%", key, tb.Top[0].Key, tb.Top[0].Chunks, 100*tb.Top[0].Share, h.Key, 100*h.Share)
		}
	}
	for _, key := range []string{"{category: 1, _id: hashed}", "{category: 1, subcategory: 1, _id: hashed}", "{_id: hashed}"} {
		tb := products(key)
		_, ratio := shardShares(t, tb)
		if ratio >= 1.5 {
			t.Errorf("%s: busiest shard at %.2f× the mean, want below 1.5×: %+v", key, ratio, tb.Shards)
		}
		if n := prep.Model.Products; tb.Loaded == nil || math.Abs(float64(tb.Loaded.Rows)/float64(n)-1) > 0.01 {
			t.Errorf("%s: loaded %+v, want the %d products", key, tb.Loaded, n)
		}
		t.Logf("%s: busiest shard %.2f× the mean; broadcast reads %d of %d", key, ratio, tb.BroadcastReads, tb.Reads)
	}
	if id := products("{_id: hashed}"); id.BroadcastReads == 0 {
		t.Errorf("{_id: hashed}: category listings should broadcast")
	}
	if ch := products("{category: 1, _id: hashed}"); ch.BroadcastReads != 0 {
		t.Errorf("{category: 1, _id: hashed}: %d broadcast reads, want none", ch.BroadcastReads)
	}
}
