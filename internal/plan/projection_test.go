package plan

import (
	"strings"
	"testing"

	"github.com/shardbench/shardbench/internal/results"
)

// MongoDB collections are projected per chunk against the design's own chunk size
// (seed001-mongo: chunk_size_mb 64), never per shard key value: a {created_at: 1}
// millisecond is not a partition. The monotonic key's last chunk takes the inserts and
// grows past 64 MiB, but holds many values, so the balancer splits it: not over its limit.
// The rest of the projection runs at the declared 1M orders a day, not the run's peak.
func TestProjectionPerChunk(t *testing.T) {
	m := analyse(t, "../../scenarios/claims/orders-shard-keys.yaml", 300_000)
	hv := variantNamed(t, m, "seed001-mongo", "{created_at: 1}")
	tb := tableOf(t, hv, "orders")
	if len(tb.Projections) == 0 {
		t.Fatal("no projections for {created_at: 1}")
	}
	last := tb.Projections[0]
	if last.Unit != "chunk" || !strings.Contains(last.Key, "MaxKey") || last.LimitBytes != 64<<20 || !strings.Contains(last.LimitSource, "chunk_size_mb") {
		t.Errorf("largest projection %+v, want the last chunk (to MaxKey) against the design's 64 MiB", last)
	}
	if last.ObservedRows < tb.Rows*9/10 {
		t.Errorf("last chunk received %d of %d inserted rows, want ≥ 90%%", last.ObservedRows, tb.Rows)
	}
	if !last.Splittable || last.Exceeds || last.Over() || !strings.Contains(last.Note, "balancer splits it") {
		t.Errorf("the last chunk of many created_at values is split by the balancer, not over its limit: %+v", last)
	}
	if !strings.Contains(last.Rate, "orders.place 1M a day") {
		t.Errorf("rate %q, want the declared daily profile", last.Rate)
	}
	for _, p := range tb.Top {
		if p.ProjectedBytes != 0 {
			t.Errorf("a shard key value is projected: %+v", p)
		}
	}
	// A year at 1M orders a day is about 365M rows; the run's 4-minute peak at 4K
	// orders/s kept up for a year would be 100 times that.
	if last.ProjectedRows > 500_000_000 || last.ProjectedRows < 300_000_000 {
		t.Errorf("last chunk projected to %d rows a year, want about 365M (1M orders a day)", last.ProjectedRows)
	}

	// Seed 000's orders_by_period: the day's partition gets its observed peak and the
	// rest of the day at 1M orders a day: over the 100K-row guidance, not 100 times over.
	day := tableOf(t, variantNamed(t, m, "seed000"), "orders_by_period").Projections[0]
	rest := day.ProjectedRows - day.ObservedRows
	if rest < 950_000 || rest > 1_050_000 || !day.Exceeds {
		t.Errorf("orders_by_period: %d rows projected, %d observed; want the rest of the day at 1M a day (≈1M more) and over 100K rows", day.ProjectedRows, day.ObservedRows)
	}
}

// A day bucket that ended during the observation is projected at what it received, not
// its rows divided over the whole run: order-history-growth runs 30 store days in 10
// minutes, so seed 000's orders_by_period has finished days.
func TestProjectionFinishedBucket(t *testing.T) {
	m := analyse(t, "../../scenarios/claims/order-history-growth.yaml", 400_000)
	tb := tableOf(t, variantNamed(t, m, "seed000"), "orders_by_period")
	finished := 0
	for _, p := range tb.Projections {
		if strings.Contains(p.Note, "ended during the observation") {
			finished++
			if p.ProjectedRows != p.ObservedRows {
				t.Errorf("finished day %s: projected %d rows, observed %d", p.Key, p.ProjectedRows, p.ObservedRows)
			}
		} else if p.ProjectedRows < p.ObservedRows {
			t.Errorf("running day %s: projected %d rows below its observed %d", p.Key, p.ProjectedRows, p.ObservedRows)
		}
	}
	if finished == 0 {
		t.Errorf("no finished day among %+v", tb.Projections)
	}
	var top results.SizeProjection
	for _, p := range tb.Projections {
		if p.ObservedRows > top.ObservedRows {
			top = p
		}
	}
	t.Logf("orders_by_period: %d of %d projections finished; largest observed %s %d rows → %d", finished, len(tb.Projections), top.Key, top.ObservedRows, top.ProjectedRows)
}

// A declared daily volume is the operation's: a table that 70% of sessions.create calls
// insert into (sessions_by_user: users' sessions, not guests') grows at 70% of it, as
// the table every call inserts into (user_sessions) grows at all of it. With one bucket,
// user_sessions' one partition holds the day's 10M sessions (TTL 1 day).
func TestProjectionDailyProfileShare(t *testing.T) {
	m := analyse(t, "../../scenarios/claims/session-buckets.yaml", 300_000)
	hv := m["seed000[sessions.buckets=1]"]
	all := tableOf(t, hv, "user_sessions").Projections[0]
	users := tableOf(t, hv, "sessions_by_user").Projections[0]
	if all.Rate != users.Rate || !strings.Contains(all.Rate, "sessions.create 10M a day") {
		t.Errorf("rates differ: user_sessions %q, sessions_by_user %q", all.Rate, users.Rate)
	}
	rest := float64(all.ProjectedRows - all.ObservedRows)
	want := 10e6 * (86400 - all.ObservedS) / 86400
	if rest < want*0.97 || rest > want*1.03 {
		t.Errorf("one bucket: %d rows projected after %d observed in %.0f s; want %.0f more (10M a day)", all.ProjectedRows, all.ObservedRows, all.ObservedS, want)
	}
}
