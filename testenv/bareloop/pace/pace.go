// Package pace is the measured loop both bare driver loops run (cql and mongo): a paced
// producer releases one operation per intended start to a fixed pool of goroutines, as
// anyone would write it with a driver alone, and counts what it must to be compared
// fairly with shardbench: completed, errors, operations dropped because every goroutine
// was busy, responses from the intended start over Stall (the server's stalls as the loop
// saw them), and its own CPU during the measured loop.
package pace

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Loop is what to run: Rate operations per second for Duration on Workers goroutines.
type Loop struct {
	Rate     int
	Duration time.Duration
	Workers  int
	Stall    time.Duration
	Label    string // client name in the output
	Profile  string // a Go CPU profile of the measured loop, when set
	Progress bool   // completions and drops each second to stderr
}

// Result is the JSON line printed at the end.
type Result struct {
	Client     string  `json:"client"`
	Rate       int     `json:"rate"`
	Workers    int     `json:"workers"`
	DurationS  float64 `json:"duration_s"`
	Completed  int64   `json:"completed"`
	Errors     int64   `json:"errors"`
	Dropped    int64   `json:"dropped"`
	Stalled    int64   `json:"stalled"`
	MaxRespMS  float64 `json:"max_response_ms"`
	Achieved   float64 `json:"achieved_per_s"`
	CPUUserS   float64 `json:"cpu_user_s"`
	CPUSysS    float64 `json:"cpu_sys_s"`
	CPUPerOpUS float64 `json:"cpu_per_op_us"`
	FirstError string  `json:"first_error,omitempty"`
}

// Check refuses a loop that cannot run.
func (l Loop) Check() error {
	if l.Rate <= 0 || l.Workers <= 0 || l.Duration <= 0 {
		return fmt.Errorf("-rate, -workers and -duration must be positive")
	}
	return nil
}

// Run runs op at the loop's rate (each goroutine with its own random source) and prints
// the result as one JSON line to out.
func (l Loop) Run(out io.Writer, op func(r *rand.Rand) error) error {
	var completed, errs, stalled, maxResp, busy, dropped atomic.Int64
	var firstErr atomic.Pointer[string]
	work := make(chan int64) // intended start, ns since t0
	var wg sync.WaitGroup
	t0 := time.Now()
	for w := 0; w < l.Workers; w++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, 7))
			for intended := range work {
				err := op(r)
				resp := int64(time.Since(t0)) - intended
				completed.Add(1)
				busy.Add(-1)
				if err != nil {
					errs.Add(1)
					msg := err.Error()
					firstErr.CompareAndSwap(nil, &msg)
				}
				if resp > int64(l.Stall) {
					stalled.Add(1)
				}
				for m := maxResp.Load(); resp > m && !maxResp.CompareAndSwap(m, resp); m = maxResp.Load() {
				}
			}
		}(uint64(w))
	}

	if l.Profile != "" {
		f, err := os.Create(l.Profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	before := rusage()
	t0 = time.Now()
	if l.Progress {
		stop := make(chan struct{})
		defer close(stop)
		go progress(stop, t0, &completed, &dropped)
	}
	interval := time.Second / time.Duration(l.Rate)
	total := int64(l.Duration / interval)
	// The paced producer: sleep until the next operation is due (timer sleeps overshoot by
	// up to a millisecond, so several operations then go at once), then hand it over
	// without waiting.
	for i := int64(0); i < total; i++ {
		due := time.Duration(i) * interval
		if d := due - time.Since(t0); d > 0 {
			time.Sleep(d)
		}
		// Dropped only when every goroutine is busy; a free one that has not come back to
		// the channel yet is waited for (as shardbench does).
		if busy.Load() >= int64(l.Workers) {
			dropped.Add(1)
			continue
		}
		busy.Add(1)
		work <- int64(due)
	}
	close(work)
	wg.Wait()
	elapsed := time.Since(t0)
	after := rusage()

	res := Result{
		Client: l.Label, Rate: l.Rate, Workers: l.Workers, DurationS: elapsed.Seconds(),
		Completed: completed.Load(), Errors: errs.Load(), Dropped: dropped.Load(), Stalled: stalled.Load(),
		MaxRespMS: float64(maxResp.Load()) / 1e6,
		CPUUserS:  after.user - before.user, CPUSysS: after.sys - before.sys,
	}
	res.Achieved = float64(res.Completed) / l.Duration.Seconds()
	if res.Completed > 0 {
		res.CPUPerOpUS = 1e6 * (res.CPUUserS + res.CPUSysS) / float64(res.Completed)
	}
	if p := firstErr.Load(); p != nil {
		res.FirstError = *p
	}
	return json.NewEncoder(out).Encode(res)
}

// progress prints completions and drops each second until stop closes.
func progress(stop <-chan struct{}, t0 time.Time, completed, dropped *atomic.Int64) {
	var lastC, lastD int64
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		c, d := completed.Load(), dropped.Load()
		fmt.Fprintf(os.Stderr, "%.0f s: %d completed, %d dropped\n", time.Since(t0).Seconds(), c-lastC, d-lastD)
		lastC, lastD = c, d
	}
}

type cpu struct{ user, sys float64 }

func rusage() cpu {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return cpu{
		user: float64(ru.Utime.Sec) + float64(ru.Utime.Usec)/1e6,
		sys:  float64(ru.Stime.Sec) + float64(ru.Stime.Usec)/1e6,
	}
}
