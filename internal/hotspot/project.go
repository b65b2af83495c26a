package hotspot

import (
	"fmt"
	"math"
	"time"
)

// Limits are the sizes a partition (or chunk) is judged against.
type Limits struct {
	Bytes int64
	Rows  int64 // 0: no row limit
	Name  string
	// Source says where the figures come from: the design file's own setting or the
	// database's documented default.
	Source string
	// Chunk: the unit judged is a MongoDB chunk (a key range), which the balancer splits
	// when it outgrows Bytes unless it holds a single shard key value (a jumbo chunk).
	Chunk bool
}

var (
	// CassandraLimits is Cassandra's large-partition threshold, 100 MiB (cassandra.yaml's
	// compaction_large_partition_warning_threshold default through 4.1; 5.0 keeps the
	// figure as the documented guidance beside its partition_size_warn_threshold
	// guardrail, off by default), and the usual 100,000 rows per partition of the data
	// modelling guidance. Seed 000 states the same ~100 MB.
	CassandraLimits = Limits{Bytes: 100 << 20, Rows: 100_000, Name: "Cassandra partition ~100 MiB / ~100K rows",
		Source: "cassandra.yaml large-partition warning (100 MiB) and ~100K rows per partition"}
	// MongoChunkLimits is MongoDB's default chunk (range) size since 6.0, 128 MiB
	// (MongoDB manual, "Range Size": "The default range size in MongoDB is 128
	// megabytes"), for designs that do not set chunk_size_mb.
	MongoChunkLimits = ChunkLimits(0)
)

// ChunkLimits is the chunk size a MongoDB design declares (chunk_size_mb, the balancer's
// configured range size), or MongoDB's default (128 MiB) when mb is 0.
func ChunkLimits(mb int) Limits {
	if mb <= 0 {
		return Limits{Bytes: 128 << 20, Name: "MongoDB chunk size 128 MiB", Chunk: true,
			Source: "MongoDB 6.0+ default range size (128 MiB)"}
	}
	return Limits{Bytes: int64(mb) << 20, Name: fmt.Sprintf("chunk size %d MiB", mb), Chunk: true,
		Source: "the design's chunk_size_mb"}
}

// Horizon is how long a partition keeps growing.
type Horizon struct {
	Label string
	// Life is how long the partition receives writes: its time bucket's length (a day for
	// a 'YYYY-MM-DD' bucket) or a chosen period (a year for an unbucketed key). Zero:
	// unbounded (then TTL must be set).
	Life time.Duration
	// TTL is how long a written row lives (default_time_to_live or USING TTL; 0: forever).
	TTL time.Duration
	// Bucket: Life is a time bucket's (which starts and ends on the clock), not a period
	// followed from the observation on.
	Bucket bool
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
	return Horizon{Label: l, Life: life, TTL: ttl, Bucket: true}
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

// Growth is what one partition (or chunk) received during an observation, and where
// the observation falls in its life.
type Growth struct {
	Rows, Bytes int64 // written during the observation
	// Observed is how long the observation could see the partition receive writes
	// (store-clock time): the observation, less any part before its time bucket began
	// or after it ended.
	Observed time.Duration
	// Elapsed is how much of its life had passed when the observation ended (at least
	// Observed; a bucket that began before the observation counts from the observation's
	// start, so what it received before is not counted).
	Elapsed time.Duration
	// Finished: its life (a time bucket) ended within the observation, so what was
	// written is its final size.
	Finished bool
	// Factor scales the observed write rate to the ordinary rate the partition grows at
	// for the rest of its life: a run is a peak of minutes, a partition lives a day or a
	// year (0 means 1: the observed rate goes on).
	Factor float64
	// Rate says where Factor comes from ("declared daily profile", "steady rate 20k/s").
	Rate string
}

// Projection is a partition's projected size at its horizon.
type Projection struct {
	Horizon Horizon
	Limits  Limits
	// RowsPerSec and BytesPerSec are the rates the rest of its life is projected at:
	// the observed ones times Growth.Factor.
	RowsPerSec  float64
	BytesPerSec float64
	// Remaining is how much more writing stays live: what is left of min(Life, TTL).
	Remaining      time.Duration
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

// Project projects one partition's size at its horizon: what the observation saw, plus
// the rest of its life at the ordinary rate (the observed rate × Factor). The rest of its
// life is what remains of its time bucket or period, capped by its TTL (rows older than
// the TTL have expired: the live size peaks when the observed rows are about to). A
// bucket that finished during the observation is what it received. Expired rows still
// on disk as tombstones until gc_grace_seconds and compaction are not counted; nor is
// data written before the observation. The result is flagged against lim; a chunk
// (lim.Chunk) is judged by the caller, which knows whether it can be split.
func Project(g Growth, h Horizon, lim Limits) Projection {
	p := Projection{Horizon: h, Limits: lim}
	if g.Observed <= 0 {
		p.Note = "no observation span"
		return p
	}
	f := g.Factor
	if f <= 0 {
		f = 1
	}
	sec := g.Observed.Seconds()
	p.RowsPerSec = float64(g.Rows) / sec * f
	p.BytesPerSec = float64(g.Bytes) / sec * f
	if h.Life == 0 && h.TTL == 0 {
		p.Unbounded = true
		p.Note = "no time bucket, TTL or period: the partition grows without bound"
		p.Exceeds = g.Bytes > 0
		return p
	}
	elapsed := max(g.Elapsed, g.Observed)
	rows, bytes := float64(g.Rows), float64(g.Bytes)
	switch {
	case g.Finished:
	case h.TTL > 0 && g.Observed >= h.TTL:
		// The observation outlasts the TTL: the live size is the TTL's worth of writes.
		ttl := h.TTL.Seconds()
		rows, bytes = rows*ttl/sec, bytes*ttl/sec
	default:
		rest := time.Duration(math.MaxInt64)
		if h.Life > 0 {
			rest = max(h.Life-elapsed, 0)
		}
		if h.TTL > 0 {
			rest = min(rest, h.TTL-g.Observed)
		}
		p.Remaining = rest
		rows += p.RowsPerSec * rest.Seconds()
		bytes += p.BytesPerSec * rest.Seconds()
	}
	p.Rows, p.Bytes = clampInt(rows), clampInt(bytes)
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

// GrowthOf places a partition's observed growth (a [TopK] entry timed with AddAt) in its
// life, for a horizon h, over an observation from start to end (the same clock as the
// entry's times, in nanoseconds). A time bucket began during the observation when its
// first write came well after the observation's start (it has no earlier data), and
// finished when its last write came well before the end; "well" is 50 of its mean gaps
// between writes or 1% of the observation, whichever is longer, so a hot bucket's end is
// seen within seconds and a quiet partition is not taken for a finished one.
func GrowthOf(rows, bytes, first, last int64, h Horizon, start, end int64) Growth {
	g := Growth{Rows: rows, Bytes: bytes, Observed: time.Duration(end - start)}
	g.Elapsed = g.Observed
	if !h.Bucket || first == 0 || end <= start {
		return g
	}
	gap := int64(0)
	if rows > 1 {
		gap = (last - first) / (rows - 1)
	}
	tol := max(50*gap, (end-start)/100)
	life := int64(h.Life)
	began := first-start > tol
	b0 := start
	if began {
		b0 = first
	}
	switch {
	case began && b0+life <= end+tol:
		g.Finished = true
		g.Observed = time.Duration(min(b0+life, end) - b0)
	case !began && end-last > tol:
		g.Finished = true
		g.Observed = time.Duration(last - start)
	default:
		g.Observed = time.Duration(end - b0)
		g.Elapsed = g.Observed
	}
	g.Observed = max(g.Observed, 1)
	return g
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
