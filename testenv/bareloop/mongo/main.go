// Command mongo is the bare mongo-driver loop shardbench's client cost is measured against
// on the MongoDB wire: a paced producer releases one single-document update (seed 001's
// catalog.stock_decrement: updateOne({product_id, geo_zone, qty: {$gte: 1}},
// {$inc: {qty: -1}, $set: {updated_at}}) at write concern majority) per intended start to
// a fixed pool of goroutines, with the driver alone. It counts completed operations,
// errors, operations dropped because every goroutine was busy and responses (from the
// intended start) over -stall, and prints one JSON line with its own CPU during the
// measured loop.
//
// It lives in the main module so that it is built with exactly the driver version
// shardbench is. testenv/bench-client.sh runs it beside shardbench.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"
)

type config struct {
	uri      string
	database string
	rate     int
	duration time.Duration
	workers  int
	keys     int
	timeout  time.Duration
	stall    time.Duration
	label    string
	profile  string
}

type result struct {
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

func main() {
	var o config
	flag.StringVar(&o.uri, "uri", "mongodb://127.0.0.1:27017/", "MongoDB URI (credentials: put them in the URI of a throwaway server only)")
	flag.StringVar(&o.database, "database", "bareloop", "database to write (collection inventory)")
	flag.IntVar(&o.rate, "rate", 1000, "operations per second")
	flag.DurationVar(&o.duration, "duration", 20*time.Second, "how long to send")
	flag.IntVar(&o.workers, "workers", 128, "goroutines executing operations (and the pool size); an operation due when all are busy is dropped")
	flag.IntVar(&o.keys, "keys", 100000, "distinct product ids, uniformly")
	flag.DurationVar(&o.timeout, "timeout", 5*time.Second, "per-operation timeout (client timeoutMS)")
	flag.DurationVar(&o.stall, "stall", 100*time.Millisecond, "a response (from the intended start) longer than this counts as stalled")
	flag.StringVar(&o.label, "label", "bare-mongo-driver", "client name in the output")
	flag.StringVar(&o.profile, "cpuprofile", "", "write a Go CPU profile of the measured loop to this file")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bareloop mongo:", err)
		os.Exit(1)
	}
}

var zones = []string{"moscow", "spb", "ekb", "nsk", "kzn", "other"}

func run(o config) error {
	if o.rate <= 0 || o.workers <= 0 || o.keys <= 0 || o.duration <= 0 {
		return fmt.Errorf("-rate, -workers, -keys and -duration must be positive")
	}
	client, err := mongo.Connect(options.Client().ApplyURI(o.uri).SetAppName(o.label).
		SetMaxPoolSize(uint64(o.workers)).SetTimeout(o.timeout))
	if err != nil {
		return err
	}
	defer client.Disconnect(context.Background())
	coll := client.Database(o.database).Collection("inventory", options.Collection().SetWriteConcern(writeconcern.Majority()))
	ids := make([]string, o.keys)
	for i := range ids {
		ids[i] = fmt.Sprintf("PROD-ELE-%010d", i)
	}
	update := func(r *rand.Rand) error {
		filter := bson.D{{Key: "product_id", Value: ids[r.IntN(len(ids))]}, {Key: "geo_zone", Value: zones[r.IntN(len(zones))]}, {Key: "qty", Value: bson.D{{Key: "$gte", Value: 1}}}}
		upd := bson.D{{Key: "$inc", Value: bson.D{{Key: "qty", Value: -1}}}, {Key: "$set", Value: bson.D{{Key: "updated_at", Value: time.Now()}}}}
		_, err := coll.UpdateOne(context.Background(), filter, upd)
		return err
	}
	if err := update(rand.New(rand.NewPCG(1, 2))); err != nil {
		return fmt.Errorf("first update: %w", err)
	}

	var completed, errs, stalled, maxResp, busy atomic.Int64
	var firstErr atomic.Pointer[string]
	work := make(chan int64)
	var wg sync.WaitGroup
	t0 := time.Now()
	for w := 0; w < o.workers; w++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, 7))
			for intended := range work {
				err := update(r)
				resp := int64(time.Since(t0)) - intended
				completed.Add(1)
				busy.Add(-1)
				if err != nil {
					errs.Add(1)
					msg := err.Error()
					firstErr.CompareAndSwap(nil, &msg)
				}
				if resp > int64(o.stall) {
					stalled.Add(1)
				}
				for m := maxResp.Load(); resp > m && !maxResp.CompareAndSwap(m, resp); m = maxResp.Load() {
				}
			}
		}(uint64(w))
	}

	if o.profile != "" {
		f, err := os.Create(o.profile)
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
	interval := time.Second / time.Duration(o.rate)
	total := int64(o.duration / interval)
	var dropped int64
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
		if busy.Load() >= int64(o.workers) {
			dropped++
			continue
		}
		busy.Add(1)
		work <- int64(due)
	}
	close(work)
	wg.Wait()
	elapsed := time.Since(t0)
	after := rusage()

	res := result{
		Client: o.label, Rate: o.rate, Workers: o.workers, DurationS: elapsed.Seconds(),
		Completed: completed.Load(), Errors: errs.Load(), Dropped: dropped, Stalled: stalled.Load(),
		MaxRespMS: float64(maxResp.Load()) / 1e6,
		CPUUserS:  after.user - before.user, CPUSysS: after.sys - before.sys,
	}
	res.Achieved = float64(res.Completed) / o.duration.Seconds()
	if res.Completed > 0 {
		res.CPUPerOpUS = 1e6 * (res.CPUUserS + res.CPUSysS) / float64(res.Completed)
	}
	if p := firstErr.Load(); p != nil {
		res.FirstError = *p
	}
	return json.NewEncoder(os.Stdout).Encode(res)
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
