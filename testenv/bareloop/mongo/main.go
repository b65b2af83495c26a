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
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/shardbench/shardbench/testenv/bareloop/pace"
)

type config struct {
	pace.Loop
	uri      string
	database string
	keys     int
	timeout  time.Duration
}

func main() {
	var o config
	flag.StringVar(&o.uri, "uri", "mongodb://127.0.0.1:27017/", "MongoDB URI (credentials: put them in the URI of a throwaway server only)")
	flag.StringVar(&o.database, "database", "bareloop", "database to write (collection inventory)")
	flag.IntVar(&o.Rate, "rate", 1000, "operations per second")
	flag.DurationVar(&o.Duration, "duration", 20*time.Second, "how long to send")
	flag.IntVar(&o.Workers, "workers", 128, "goroutines executing operations (and the pool size); an operation due when all are busy is dropped")
	flag.IntVar(&o.keys, "keys", 100000, "distinct product ids, uniformly")
	flag.DurationVar(&o.timeout, "timeout", 5*time.Second, "per-operation timeout (client timeoutMS)")
	flag.DurationVar(&o.Stall, "stall", 100*time.Millisecond, "a response (from the intended start) longer than this counts as stalled")
	flag.StringVar(&o.Label, "label", "bare-mongo-driver", "client name in the output")
	flag.StringVar(&o.Profile, "cpuprofile", "", "write a Go CPU profile of the measured loop to this file")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bareloop mongo:", err)
		os.Exit(1)
	}
}

var zones = []string{"moscow", "spb", "ekb", "nsk", "kzn", "other"}

func run(o config) error {
	if err := o.Check(); err != nil {
		return err
	}
	if o.keys <= 0 {
		return fmt.Errorf("-keys must be positive")
	}
	client, err := mongo.Connect(options.Client().ApplyURI(o.uri).SetAppName(o.Label).
		SetMaxPoolSize(uint64(o.Workers)).SetTimeout(o.timeout))
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

	return o.Run(os.Stdout, update)
}
