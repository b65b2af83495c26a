package workloads_test

import (
	"testing"

	"github.com/shardbench/shardbench/internal/scenario"
	"github.com/shardbench/shardbench/internal/schedule"
	"github.com/shardbench/shardbench/workloads"
)

// BenchmarkStream measures the operation stream alone (schedule + mix + generators) with
// every operation in the mix: the target is >= 2M ops/s on one core.
func BenchmarkStream(b *testing.B) {
	sc := testScenario(b, 1, allMix(), "")
	sc.Load.Phases = []scenario.Phase{{Name: "c", Type: "constant", Rate: 1e9, Duration: 1e9 * 1e9}}
	m := newModel(b, sc)
	s := m.NewStream(schedule.New(sc))
	var op workloads.Op
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if !s.Next(&op) {
			b.Fatal("ended")
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

func BenchmarkZipf(b *testing.B) {
	for _, s := range []float64{0.8, 1.0, 1.2} {
		z := workloads.NewZipf(10_000_000, s)
		r := workloads.NewRand(1)
		b.Run(map[float64]string{0.8: "s=0.8", 1.0: "s=1", 1.2: "s=1.2"}[s], func(b *testing.B) {
			var sum int64
			for i := 0; i < b.N; i++ {
				sum += z.Sample(&r)
			}
			_ = sum
		})
	}
}

// BenchmarkUserPick measures picking the acting person (or bot) of an operation under
// black-friday's population: orders.place (a person ceiling of 12 an hour truncates the
// Zipf) and views.append (bots take part), and the session pick of sessions.touch.
func BenchmarkUserPick(b *testing.B) {
	sc, err := scenario.ReadFile("../scenarios/black-friday.yaml")
	if err != nil {
		b.Fatal(err)
	}
	m := newModel(b, sc)
	s := m.NewStream(schedule.New(sc))
	st := s.State()
	for _, name := range []string{"orders.place", "views.append", "sessions.touch"} {
		op := workloads.Op{Type: uint16(m.OpIndex(name))}
		st.Op = &op
		b.Run(name, func(b *testing.B) {
			var sum int64
			for i := 0; i < b.N; i++ {
				if name == "sessions.touch" {
					sum += st.Session(0).ID
				} else {
					u, _ := st.User()
					sum += u
				}
			}
			_ = sum
		})
	}
}
