package workloads

// Alias samples an index with given weights in O(1) (Vose's alias method). Sampling
// never allocates.
type Alias struct {
	prob  []float64
	alias []uint16
}

// NewAlias builds a table from non-negative weights with a positive sum (at most 65535).
func NewAlias(weights []float64) Alias {
	n := len(weights)
	a := Alias{prob: make([]float64, n), alias: make([]uint16, n)}
	if n == 0 {
		return a
	}
	total := 0.0
	for _, w := range weights {
		total += w
	}
	scaled := make([]float64, n)
	var small, large []int
	for i, w := range weights {
		scaled[i] = w / total * float64(n)
		if scaled[i] < 1 {
			small = append(small, i)
		} else {
			large = append(large, i)
		}
	}
	for len(small) > 0 && len(large) > 0 {
		s, l := small[len(small)-1], large[len(large)-1]
		small, large = small[:len(small)-1], large[:len(large)-1]
		a.prob[s], a.alias[s] = scaled[s], uint16(l)
		scaled[l] -= 1 - scaled[s]
		if scaled[l] < 1 {
			small = append(small, l)
		} else {
			large = append(large, l)
		}
	}
	for _, i := range large {
		a.prob[i] = 1
	}
	for _, i := range small {
		a.prob[i] = 1
	}
	return a
}

// Len is the number of outcomes.
func (a *Alias) Len() int { return len(a.prob) }

// Pick returns an index from 64 random bits (one draw: the high bits choose the column,
// the low 32 bits decide between it and its alias).
func (a *Alias) Pick(h uint64) int {
	n := uint64(len(a.prob))
	if n <= 1 {
		return 0
	}
	col := (h >> 32) * n >> 32
	coin := float64(uint32(h)) * (1.0 / (1 << 32))
	if coin < a.prob[col] {
		return int(col)
	}
	return int(a.alias[col])
}

// Sample draws an index.
func (a *Alias) Sample(r *Rand) int { return a.Pick(r.Uint64()) }
