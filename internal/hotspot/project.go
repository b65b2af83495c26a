package hotspot

import (
	"fmt"
	"math"
	"time"
)

// Limits are the sizes a partition is judged against.
type Limits struct {
	Bytes int64
	Rows  int64 // 0: no row limit
	Name  string
}

var (
	// CassandraLimits is the usual guidance for one Cassandra partition: about 100 MB
	// (cassandra.yaml's large-partition warning, compaction_large_partition_warning_threshold
	// / partition_size_warn_threshold, defaults to 100 MiB) and about 100,000 rows.
	CassandraLimits = Limits{Bytes: 100 << 20, Rows: 100_000, Name: "Cassandra partition ~100 MiB / ~100K rows"}
	// MongoChunkLimits is MongoDB's default chunk (range) size since 6.0, 128 MiB: the
	// documents of one shard key value larger than this form a jumbo chunk that cannot
	// be split or moved.
	MongoChunkLimits = Limits{Bytes: 128 << 20, Name: "MongoDB chunk size 128 MiB"}
)

// Horizon is how long a partition keeps growing.
type Horizon struct {
	Label string
	// Life is how long the partition receives writes: its time bucket's length (a day for
	// a 'YYYY-MM-DD' bucket) or a chosen period (a year for an unbucketed key). Zero:
	// unbounded (then TTL must be set).
	Life time.Duration
	// TTL is how long a written row lives (default_time_to_live or USING TTL; 0: forever).
	TTL time.Duration
}

// TTLHorizon is a partition written for ever whose rows expire after ttl: it reaches a
// steady state of ttl's worth of writes.
func TTLHorizon(ttl time.Duration) Horizon {
	return Horizon{Label: "TTL " + human(ttl), TTL: ttl}
}

// BucketHorizon is a time-bucketed partition (written during one bucket of length
// life), optionally with a TTL.
func BucketHorizon(life, ttl time.Duration) Horizon {
	l := "end of " + human(life) + " bucket"
	if ttl > 0 {
		l += ", TTL " + human(ttl)
	}
	return Horizon{Label: l, Life: life, TTL: ttl}
}

// PeriodHorizon is an unbucketed partition followed for a period (e.g. a year),
// optionally with a TTL.
func PeriodHorizon(period, ttl time.Duration) Horizon {
	l := human(period)
	if ttl > 0 {
		l += ", TTL " + human(ttl)
	}
	return Horizon{Label: l, Life: period, TTL: ttl}
}

func human(d time.Duration) string {
	switch {
	case d >= 365*24*time.Hour && d%(365*24*time.Hour) == 0:
		n := d / (365 * 24 * time.Hour)
		if n == 1 {
			return "1 year"
		}
		return fmt.Sprintf("%d years", n)
	case d >= 24*time.Hour && d%(24*time.Hour) == 0:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	case d >= time.Hour && d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	return d.String()
}

// Growth is what one partition received during an observation.
type Growth struct {
	Rows, Bytes int64         // written during the observation
	Span        time.Duration // how long the observation lasted (store-clock time)
}

// Projection is a partition's projected size at its horizon.
type Projection struct {
	Horizon     Horizon
	Limits      Limits
	RowsPerSec  float64
	BytesPerSec float64
	// Lifetime is how much writing stays live: min(Life, TTL).
	Lifetime       time.Duration
	Rows, Bytes    int64
	ExceedsBytes   bool
	ExceedsRows    bool
	Exceeds        bool    // either (or Unbounded with any growth)
	BytesOverLimit float64 // Bytes / Limits.Bytes
	RowsOverLimit  float64 // Rows / Limits.Rows (0 without a row limit)
	// Unbounded: neither Life nor TTL, so the partition grows for ever (Rows and Bytes
	// stay 0; Exceeds is set if it grew at all).
	Unbounded bool
	Note      string
}

// Project extrapolates one partition's observed growth to its horizon with a constant
// rate (rows and bytes per second of the observation): the live size at the end of its
// life is rate × min(Life, TTL) — a TTL caps a partition at TTL's worth of writes (its
// steady state), a time bucket stops receiving writes when the bucket ends. Expired
// rows still on disk as tombstones until gc_grace_seconds and compaction are not
// counted; nor is data written before the observation. The result is flagged against
// lim (use [CassandraLimits] or [MongoChunkLimits]).
func Project(g Growth, h Horizon, lim Limits) Projection {
	p := Projection{Horizon: h, Limits: lim}
	if g.Span <= 0 {
		p.Note = "no observation span"
		return p
	}
	sec := g.Span.Seconds()
	p.RowsPerSec = float64(g.Rows) / sec
	p.BytesPerSec = float64(g.Bytes) / sec
	life := h.Life
	switch {
	case life > 0 && h.TTL > 0:
		life = min(life, h.TTL)
	case life == 0 && h.TTL > 0:
		life = h.TTL
	case life == 0:
		p.Unbounded = true
		p.Note = "no time bucket, TTL or period: the partition grows without bound"
		p.Exceeds = g.Bytes > 0
		return p
	}
	p.Lifetime = life
	s := life.Seconds()
	p.Rows = clampInt(p.RowsPerSec * s)
	p.Bytes = clampInt(p.BytesPerSec * s)
	if lim.Bytes > 0 {
		p.BytesOverLimit = float64(p.Bytes) / float64(lim.Bytes)
		p.ExceedsBytes = p.Bytes > lim.Bytes
	}
	if lim.Rows > 0 {
		p.RowsOverLimit = float64(p.Rows) / float64(lim.Rows)
		p.ExceedsRows = p.Rows > lim.Rows
	}
	p.Exceeds = p.ExceedsBytes || p.ExceedsRows
	if p.Exceeds {
		p.Note = fmt.Sprintf("projected %s, %d rows at %s exceeds %s", Bytes(p.Bytes), p.Rows, h.Label, lim.Name)
	}
	return p
}

func clampInt(x float64) int64 {
	if x >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(math.Round(x))
}

// Bytes formats a byte count with binary units ("1.5 GiB").
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f, u := float64(n), 0
	for f >= unit && u < 6 {
		f /= unit
		u++
	}
	return fmt.Sprintf("%.1f %ciB", f, "KMGTPE"[u-1])
}
