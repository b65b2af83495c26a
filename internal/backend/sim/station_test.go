package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// erlangC is the probability that an arrival waits in an M/M/c queue with offered load
// a = λ/μ.
func erlangC(c int, a float64) float64 {
	sum, term := 0.0, 1.0
	for k := 0; k < c; k++ {
		if k > 0 {
			term *= a / float64(k)
		}
		sum += term
	}
	top := term * a / float64(c) / (1 - a/float64(c))
	return top / (sum + top)
}

// mmcTail is P(T > t) for the M/M/c FCFS sojourn time (waiting + service).
func mmcTail(c int, lambda, mu, t float64) float64 {
	a := lambda / mu
	pw := erlangC(c, a)
	d := float64(c)*mu - lambda
	if math.Abs(d-mu) < 1e-12 {
		return math.Exp(-mu*t) * (1 + pw*mu*t)
	}
	return math.Exp(-mu*t) + pw*mu/(d-mu)*(math.Exp(-mu*t)-math.Exp(-d*t))
}

func mmcQuantile(c int, lambda, mu, q float64) float64 {
	lo, hi := 0.0, 1.0
	for mmcTail(c, lambda, mu, hi) > 1-q {
		hi *= 2
	}
	for i := 0; i < 200; i++ {
		mid := (lo + hi) / 2
		if mmcTail(c, lambda, mu, mid) > 1-q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// A single node with Poisson arrivals and exponential service must match M/M/c theory:
// mean and p99 response time within a few percent across utilisations 0.3–0.9.
func TestStationMatchesMMc(t *testing.T) {
	const mu = 1000.0 // 1 ms mean service
	for _, c := range []int{1, 4, 16} {
		for _, rho := range []float64{0.3, 0.5, 0.7, 0.9} {
			lambda := rho * float64(c) * mu
			rng := rand.New(rand.NewPCG(uint64(c), uint64(rho*100)))
			s := NewStation(c)
			n := 2_000_000
			if rho >= 0.9 {
				n = 6_000_000 // heavier tail: more samples for a stable p99
			}
			resp := make([]float64, n)
			at := 0.0
			var sum float64
			for i := 0; i < n; i++ {
				at += rng.ExpFloat64() / lambda
				svc := rng.ExpFloat64() / mu
				arr := int64(at * 1e9)
				_, end, _ := s.Serve(arr, int64(svc*1e9), 0)
				resp[i] = float64(end-arr) / 1e9
				sum += resp[i]
			}
			// Drop the warm-up tenth: the queue starts empty.
			warm := n / 10
			sum = 0
			for _, r := range resp[warm:] {
				sum += r
			}
			mean := sum / float64(n-warm)
			wantMean := erlangC(c, lambda/mu)/(float64(c)*mu-lambda) + 1/mu
			rest := resp[warm:]
			sort.Float64s(rest)
			p99 := rest[int(0.99*float64(len(rest)))]
			wantP99 := mmcQuantile(c, lambda, mu, 0.99)
			if e := math.Abs(mean-wantMean) / wantMean; e > 0.03 {
				t.Errorf("c=%d ρ=%.1f: mean %.4f ms, theory %.4f ms (%.1f%% off)", c, rho, mean*1e3, wantMean*1e3, e*100)
			}
			if e := math.Abs(p99-wantP99) / wantP99; e > 0.03 {
				t.Errorf("c=%d ρ=%.1f: p99 %.4f ms, theory %.4f ms (%.1f%% off)", c, rho, p99*1e3, wantP99*1e3, e*100)
			}
			t.Logf("c=%2d ρ=%.1f mean %.4f (theory %.4f) p99 %.4f (theory %.4f) ms", c, rho, mean*1e3, wantMean*1e3, p99*1e3, wantP99*1e3)
		}
	}
}

func TestStationDropsWhatWaitedTooLong(t *testing.T) {
	s := NewStation(1)
	ms := int64(1e6)
	s.Serve(0, 100*ms, 10*ms) // busy until 100 ms
	if _, _, ok := s.Serve(1*ms, ms, 50*ms); ok {
		t.Error("a job that would wait 99 ms with a 50 ms queue timeout must be dropped")
	}
	if start, end, ok := s.Serve(60*ms, ms, 50*ms); !ok || start != 100*ms || end != 101*ms {
		t.Errorf("a job waiting 40 ms must be served at 100 ms: %d %d %v", start, end, ok)
	}
	st := s.Take(200 * ms)
	if st.Jobs[StageRead] != 2 || st.Drops != 1 || math.Abs(st.Utilisation-0.505) > 1e-9 || math.Abs(st.MeanQueue-0.2) > 1e-9 {
		t.Errorf("stats: %+v", st)
	}
}

// BenchmarkStationServe: one station's Serve at a few loads and sizes (ρ 1.2 is past
// capacity: the queue grows and every worker stays busy).
func BenchmarkStationServe(b *testing.B) {
	for _, workers := range []int{8, 32} {
		for _, rho := range []float64{0.3, 0.9, 1.2} {
			b.Run(fmt.Sprintf("workers=%d/rho=%.1f", workers, rho), func(b *testing.B) {
				s := NewStation(workers)
				rng := rand.New(rand.NewPCG(1, 2))
				const service = 250_000.0
				gap := service / (rho * float64(workers))
				at := int64(0)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					at += int64(rng.ExpFloat64() * gap)
					s.Serve(at, int64(service/2+rng.ExpFloat64()*service/2), 0)
				}
			})
		}
	}
}

// sstables is ⌊log2(1 + size/1 MiB)⌋, as the floating-point formula the cost model
// documents, at the powers of two and either side of them, for partitions up to 8 TiB
// (past a PiB the floating-point formula rounds up a size just short of a power of two).
func TestSSTablesCount(t *testing.T) {
	sizes := []int64{0, 1, 1 << 19}
	for k := 0; k <= 23; k++ {
		b := int64(1)<<20*(int64(1)<<k) - 1<<20 // 1 + b/MiB = 2^k
		sizes = append(sizes, b-1, b, b+1)
	}
	for _, size := range sizes {
		if size < 0 {
			continue
		}
		want := int32(math.Log2(1 + float64(size)/(1<<20)))
		if got := sstables(size); got != want {
			t.Errorf("size %d: %d SSTables, the formula says %d", size, got, want)
		}
	}
}

// kth is the k-th smallest, with ties and any order of a few values.
func TestKth(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for i := 0; i < 10_000; i++ {
		xs := make([]int64, 1+rng.IntN(9))
		for j := range xs {
			xs[j] = rng.Int64N(6)
		}
		k := 1 + rng.IntN(len(xs))
		sorted := slices.Clone(xs)
		slices.Sort(sorted)
		if got := kth(xs, k); got != sorted[k-1] {
			t.Fatalf("kth(%v, %d) = %d, want %d", xs, k, got, sorted[k-1])
		}
	}
}

// Jobs submitted ahead of their time (a remote replica's request 5 ms away, a Paxos
// round retried after its backoff) must not make the others queue behind cores that do no
// work: the same jobs, a third of them submitted 5 ms early, wait about as long as when
// they are submitted in arrival order (a station following the clock holds them back
// until it reaches them). Placed at once, as a plain Lindley recursion would, the 8-core
// node at 70% load queues every job for milliseconds.
func TestStationOutOfOrderSubmissions(t *testing.T) {
	const (
		cores   = 8
		service = 200e3 // ns
		ahead   = 5e6   // ns
		n       = 400_000
	)
	rng := rand.New(rand.NewPCG(3, 4))
	type job struct{ submit, arrival, service int64 }
	jobs := make([]job, n)
	at := 0.0
	for i := range jobs {
		at += rng.ExpFloat64() * service / (0.7 * cores)
		j := job{submit: int64(at), arrival: int64(at), service: int64(service/2 + rng.ExpFloat64()*service/2)}
		if rng.IntN(3) == 0 {
			j.arrival += ahead // submitted now, arrives 5 ms later
		}
		jobs[i] = j
	}
	wait := func(order []job, clock bool) (float64, float64) {
		s := NewStation(cores)
		var now int64
		if clock {
			s.Follow(&now)
		}
		var sum float64
		for _, j := range order {
			now = j.submit
			start, _, _ := s.Serve(j.arrival, j.service, 0)
			sum += float64(start - j.arrival)
		}
		now = math.MaxInt64
		return sum / float64(len(order)), s.Take(int64(at)).Utilisation
	}
	held, heldUtil := wait(jobs, true)
	placed, _ := wait(jobs, false)
	sorted := slices.Clone(jobs)
	sort.SliceStable(sorted, func(a, b int) bool { return sorted[a].arrival < sorted[b].arrival })
	for i := range sorted {
		sorted[i].submit = sorted[i].arrival
	}
	inOrder, inOrderUtil := wait(sorted, true)
	t.Logf("mean wait: %.1f µs held back, %.1f µs placed at once, %.1f µs in arrival order", held/1e3, placed/1e3, inOrder/1e3)
	if held > inOrder+0.25*service {
		t.Errorf("jobs submitted ahead of time make the others wait %.1f µs on average, %.1f µs in arrival order", held/1e3, inOrder/1e3)
	}
	if math.Abs(heldUtil-inOrderUtil) > 0.01 {
		t.Errorf("utilisation %.3f with jobs held back, %.3f in arrival order: held-back work must be counted", heldUtil, inOrderUtil)
	}
}

// TestStationKnowsItsEarliestWorker: through saturation, idle spells, jobs of no
// service, out-of-order arrivals that fit gaps and reserved workers, the station's
// earliest free time is the minimum of its workers' and lowAt the first worker free then
// (the one a saturated station places on, as a scan would pick it).
func TestStationKnowsItsEarliestWorker(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	st := NewStation(8)
	var now int64
	for i := range 100_000 {
		now += r.Int64N(400)
		arrival := now - r.Int64N(3000) // some arrive before others placed already
		service := r.Int64N(4) * r.Int64N(2500)
		st.place(StageRead, max(arrival, 0), service, 0)
		if i%10_000 == 9_999 {
			st.Reserve(now, 5000, 3)
		}
		low := slices.Min(st.free)
		if st.low != low || st.lowAt != slices.Index(st.free, low) {
			t.Fatalf("job %d: low %d at worker %d; the workers are free at %v", i, st.low, st.lowAt, st.free)
		}
	}
}
