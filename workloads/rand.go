package workloads

import (
	"math"
	"math/bits"
)

// Rand is a small, fast pseudo-random generator (wyrand). It is a value type: copying it
// forks the sequence, and it never allocates. Not safe for concurrent use.
type Rand struct{ s uint64 }

// NewRand seeds a generator.
func NewRand(seed uint64) Rand { return Rand{s: Mix(seed, 0x9e3779b97f4a7c15)} }

// Uint64 returns 64 random bits.
func (r *Rand) Uint64() uint64 {
	r.s += 0xa0761d6478bd642f
	hi, lo := bits.Mul64(r.s, r.s^0xe7037ed1a0b428db)
	return hi ^ lo
}

// Float64 returns a number in [0, 1).
func (r *Rand) Float64() float64 { return float64(r.Uint64()>>11) * (1.0 / (1 << 53)) }

// Intn returns a number in [0, n) for n > 0 (Lemire's multiply-shift; the bias for n far
// below 2^64 is negligible for load generation).
func (r *Rand) Intn(n int64) int64 {
	hi, _ := bits.Mul64(r.Uint64(), uint64(n))
	return int64(hi)
}

// Range returns a number in [lo, hi].
func (r *Rand) Range(lo, hi int64) int64 { return lo + r.Intn(hi-lo+1) }

// Chance returns true with probability p.
func (r *Rand) Chance(p float64) bool { return p > 0 && r.Float64() < p }

// Geometric returns a number >= 1 with the given mean (>= 1), capped at max.
func (r *Rand) Geometric(mean float64, max int64) int64 {
	if mean <= 1 {
		return 1
	}
	p := 1 / mean
	u := r.Float64()
	k := int64(math.Log1p(-u)/math.Log1p(-p)) + 1
	if k > max {
		k = max
	}
	if k < 1 {
		k = 1
	}
	return k
}

// Mix hashes two words into one (a strong 64-bit mixer, used to derive attributes of
// entities from (seed, id) without storing them).
func Mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a^0x2d358dccaa6c78a5, b^0x8bb84b93962eacc9)
	x := hi ^ lo
	x ^= x >> 32
	x *= 0xd6e8feb86659fd93
	x ^= x >> 32
	return x
}

// Hash derives a word from the seed, a salt naming what is derived and an id.
func Hash(seed int64, salt uint64, id int64) uint64 {
	return Mix(uint64(seed)^salt*0x9e3779b97f4a7c15, uint64(id))
}

// unit maps a hash to [0, 1).
func unit(h uint64) float64 { return float64(h>>11) * (1.0 / (1 << 53)) }

// below maps a hash to [0, n).
func below(h uint64, n int64) int64 {
	hi, _ := bits.Mul64(h, uint64(n))
	return int64(hi)
}
