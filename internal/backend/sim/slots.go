package sim

// slots is a pool of identical slots: the client's max_in_flight operations. Only when
// the pool is full does it matter which busy slot frees first, and most of a pool of
// thousands is idle most of the time. So the busy slots' end times are appended as they
// come and counted busy even after they end, until the pool looks full; then those that
// ended are dropped in one pass. Only while the pool stays more than three quarters busy
// are they kept in a min-heap, which a saturated client needs: its next operation starts
// when the earliest busy slot frees. Whether the pool is full, and when the earliest slot
// frees, are the same as with every slot tracked exactly.
//
// The heap is 4-ary: half the levels of a binary one over the thousands of slots a
// saturated client holds, and a node's four children share a cache line. A slot taken
// (the earliest to free) is reused by the push that follows it: its end replaces the
// root and sinks once, instead of the last slot sinking from the root and the new end
// rising from the bottom. Only the end times leave the pool, so any heap of the same
// times gives the same answers.
type slots struct {
	size  int
	busy  []int64 // when the busy slots free; lazily, some that already did
	heap  bool    // busy is a min-heap of the slots busy at the last full
	taken bool    // take freed the root, which the next push fills
}

// full reports whether every slot is busy at t.
func (p *slots) full(t int64) bool {
	if p.taken {
		p.pop() // taken without a push: free it for good
		p.taken = false
	}
	if p.heap {
		for len(p.busy) > 0 && p.busy[0] <= t {
			p.pop()
		}
		if len(p.busy) < p.size/2 {
			p.heap = false // mostly idle again: order no longer needed
		}
		return len(p.busy) >= p.size
	}
	if len(p.busy) < p.size {
		return false // a slot is idle, whichever of the busy ones ended by t
	}
	n := 0
	for _, end := range p.busy {
		if end > t {
			p.busy[n] = end
			n++
		}
	}
	p.busy = p.busy[:n]
	if n > p.size*3/4 {
		for i := (n - 2) / 4; i >= 0; i-- {
			siftDown(p.busy, i)
		}
		p.heap = true
	}
	return n >= p.size
}

// earliest is when the earliest-freeing busy slot frees, leaving it busy. Only after full
// said true.
func (p *slots) earliest() int64 { return p.busy[0] }

// take frees the earliest-freeing busy slot and returns when it frees; the push that
// follows occupies it again. Only after full said true (the slots are then a heap).
func (p *slots) take() int64 {
	p.taken = true
	return p.busy[0]
}

// pop removes the earliest-freeing busy slot from the heap.
func (p *slots) pop() {
	last := len(p.busy) - 1
	p.busy[0] = p.busy[last]
	p.busy = p.busy[:last]
	siftDown(p.busy, 0)
}

// push occupies a slot until end: one that full said idle, or the one take freed.
func (p *slots) push(end int64) {
	if p.taken {
		p.taken = false
		p.busy[0] = end
		siftDown(p.busy, 0)
		return
	}
	p.busy = append(p.busy, end)
	if !p.heap {
		return
	}
	rise(p.busy, len(p.busy)-1, 0, end)
}

// siftDown restores the 4-ary min-heap property of h below i. The value at i is
// usually one of the latest ends (a slot just occupied, or the last leaf), which belongs
// near the bottom: so the hole left at i first moves down along the smallest children
// to a leaf, without comparing with the value, and the value then rises from there to
// its place (Floyd's bottom-up sift), which takes about one comparison fewer per level.
func siftDown(h []int64, i int) {
	n := len(h)
	if i >= n {
		return
	}
	v := h[i]
	top := i
	for {
		c := 4*i + 1
		if c+4 <= n {
			ch := h[c : c+4 : c+4]
			m, mv := c, ch[0]
			if ch[1] < mv {
				m, mv = c+1, ch[1]
			}
			if ch[2] < mv {
				m, mv = c+2, ch[2]
			}
			if ch[3] < mv {
				m, mv = c+3, ch[3]
			}
			h[i] = mv
			i = m
			continue
		}
		if c < n {
			m, mv := c, h[c]
			for k := c + 1; k < n; k++ {
				if h[k] < mv {
					m, mv = k, h[k]
				}
			}
			h[i] = mv
			i = m
		}
		break
	}
	rise(h, i, top, v)
}

// rise puts v, bound for the hole at i, in its place on the path from i up to top: the
// larger values above it move down one level each.
func rise(h []int64, i, top int, v int64) {
	for i > top {
		parent := (i - 1) / 4
		if h[parent] <= v {
			break
		}
		h[i] = h[parent]
		i = parent
	}
	h[i] = v
}
