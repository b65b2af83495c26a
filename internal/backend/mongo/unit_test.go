package mongo

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.yaml.in/yaml/v3"

	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/metrics"
	pm "github.com/shardbench/shardbench/internal/placement/mongo"
	"github.com/shardbench/shardbench/internal/results"
)

func TestTargetKeepsCredentialsOutOfSight(t *testing.T) {
	t.Setenv(EnvUsername, "")
	t.Setenv(EnvPasswordFile, "")
	tg, err := parseTarget("mongodb://bench:s3cret@db1:27017,db2:27017/?replicaSet=rs0&authSource=admin", "")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(tg.uri, "s3cret") || strings.Contains(tg.redacted, "s3cret") || tg.user != "bench" || tg.password != "s3cret" {
		t.Fatalf("%+v", tg)
	}
	if tg.redacted != "mongodb://bench:***@db1:27017,db2:27017/?replicaSet=rs0&authSource=admin" {
		t.Errorf("redacted %q", tg.redacted)
	}
	t.Setenv(EnvUsername, "envuser")
	t.Setenv(EnvPassword, "fromenv")
	tg, err = parseTarget("mongodb://h:1/", "")
	if err != nil || tg.user != "envuser" || tg.password != "fromenv" || strings.Contains(tg.redacted, "fromenv") {
		t.Fatalf("%+v %v", tg, err)
	}
	for _, bad := range []string{"cassandra://h:9042", "mongodb://", "http://x"} {
		if _, err := parseTarget(bad, ""); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	// Secret options never reach the redacted target or an error.
	tg, err = parseTarget("mongodb://h:1/?tls=true&tlsCertificateKeyFilePassword=k3ypw&authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:t0ken", "")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(tg.redacted, "k3ypw") || strings.Contains(tg.redacted, "t0ken") || tg.secrets.Text("x k3ypw t0ken") != "x *** ***" {
		t.Errorf("redacted %q", tg.redacted)
	}
	if _, err := parseTarget("http://h/?password=p4ssw0rd", ""); err == nil || strings.Contains(err.Error(), "p4ssw0rd") {
		t.Errorf("err = %v", err)
	}
}

func TestDecimal128MatchesTheDriversParser(t *testing.T) {
	for _, c := range []struct {
		u int64
		s int32
	}{{12345, 2}, {-5, 2}, {0, 2}, {1, 0}, {999999999999, 4}} {
		want, ok := bson.ParseDecimal128FromBigInt(big.NewInt(c.u), -int(c.s))
		if !ok {
			t.Fatal("parse")
		}
		if got := decimal128(c.u, c.s); got.String() != want.String() {
			t.Errorf("%d e-%d: %s, want %s", c.u, c.s, got, want)
		}
	}
	if got := (converter{decimalAsDouble: true}).value(design.Decimal{Unscaled: 1999, Scale: 2}); got != 19.99 {
		t.Errorf("as double: %v", got)
	}
}

func TestYAMLToBSONKeepsOrderAndTypes(t *testing.T) {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(`{bsonType: object, required: [a, b], properties: {qty: {bsonType: int, minimum: 1}, big: 10000000000, f: 1.5, ok: true, n: null}}`), &n); err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(yamlToBSON(&n))
	// Canonical extended JSON shows the BSON types: int32 for small integers (as mongosh
	// sends a literal), int64 beyond, double, bool, null; keys in file order.
	want := `{"bsonType":"object","required":["a","b"],"properties":{"qty":{"bsonType":"int","minimum":{"$numberInt":"1"}},"big":{"$numberLong":"10000000000"},"f":{"$numberDouble":"1.5"},"ok":true,"n":null}}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestDatabaseNamesPerVariant(t *testing.T) {
	a, b := databaseName("", "mobilnymir", "seed001-mongo"), databaseName("", "mobilnymir", "seed001-mongo-orders-created")
	if a == b || !strings.HasPrefix(a, "mobilnymir_") || a != databaseName("", "mobilnymir", "seed001-mongo") {
		t.Errorf("%s %s", a, b)
	}
	if long := databaseName(strings.Repeat("x", 80), "", "v"); len(long) > 63 {
		t.Errorf("too long: %d", len(long))
	}
}

func TestClassify(t *testing.T) {
	cmdErr := func(code int32) error { return mongo.CommandError{Code: code, Message: "m"} }
	for _, c := range []struct {
		err    error
		ctxErr error
		want   metrics.Class
	}{
		{nil, nil, metrics.OK},
		{cmdErr(10107), nil, metrics.Unavailable},
		{cmdErr(238), nil, metrics.NotSupported},
		{cmdErr(59), nil, metrics.NotSupported},
		{cmdErr(112), nil, metrics.Conflict},
		{mongo.WriteException{WriteErrors: []mongo.WriteError{{Code: 11000}}}, nil, metrics.Conflict},
		{cmdErr(121), nil, metrics.Client},
		{cmdErr(50), nil, metrics.Timeout},
		{cmdErr(8000), nil, metrics.Server},
		{context.DeadlineExceeded, context.DeadlineExceeded, metrics.Timeout},
		{context.Canceled, context.Canceled, metrics.Canceled},
		{errors.New("server selection error: server selection timeout, current topology: ..."), nil, metrics.Connection},
	} {
		if got := Classify(c.err, c.ctxErr); got != c.want {
			t.Errorf("%v: %v, want %v", c.err, got, c.want)
		}
	}
}

// After a load on a mongos, server.json shows each collection's chunks per shard as the
// run starts, jumbo ones counted, from config.chunks as read after the load.
func TestLoadViewShowsChunksAfterTheLoad(t *testing.T) {
	p := pm.KeyPattern{{Name: "category"}}
	tb, err := pm.FromConfigChunks(p, []pm.ChunkRow{
		{Min: []pm.Field{{Name: "category", Value: pm.MinKey()}}, Max: []pm.Field{{Name: "category", Value: pm.String("electronics")}}, Shard: "s1"},
		{Min: []pm.Field{{Name: "category", Value: pm.String("electronics")}}, Max: []pm.Field{{Name: "category", Value: pm.String("home")}}, Shard: "s0", Jumbo: true},
		{Min: []pm.Field{{Name: "category", Value: pm.String("home")}}, Max: []pm.Field{{Name: "category", Value: pm.MaxKey()}}, Shard: "s1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	b := &Backend{loadedChunks: map[string]*pm.ChunkTable{"products": tb}}
	var sv results.ServerVariant
	b.loadView(&sv)
	if len(sv.Tables) != 1 {
		t.Fatalf("tables %+v", sv.Tables)
	}
	got := fmt.Sprint(sv.Tables[0].Rows)
	if got != "[[products s0 1 1] [products s1 2 0]]" {
		t.Errorf("chunks after the load: %s", got)
	}
}
