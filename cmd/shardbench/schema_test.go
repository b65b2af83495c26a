package main

import (
	"bytes"
	"strings"
	"testing"
)

func runSchemaCmd(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	io := &IO{Out: &out, ErrOut: &errOut}
	cmd := newSchemaCmd(io, nil)
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err := cmd.Execute()
	if err != nil {
		errOut.WriteString(err.Error())
	}
	return out.String(), errOut.String(), exitCode(err)
}

func TestSchemaOfADesign(t *testing.T) {
	out, errOut, code := runSchemaCmd(t, "../../scenarios/designs/seed000.yaml", "--set", "sessions.buckets=10")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"CREATE KEYSPACE IF NOT EXISTS mobile_world",
		"PRIMARY KEY ((customer_id, time_bucket), created_at, order_id)",
		"WITH CLUSTERING ORDER BY (updated_at DESC, product_id ASC)",
		"sessions.buckets=10",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	out, _, code = runSchemaCmd(t, "../../scenarios/designs/seed001-mongo.yaml", "--set", "orders.shard_key={created_at: 1}")
	if code != 0 || !strings.Contains(out, `sh.shardCollection("mobilnymir.orders", {created_at: 1}, false);`) {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestSchemaOfAScenarioVariant(t *testing.T) {
	out, errOut, code := runSchemaCmd(t, "../../scenarios/claims/session-buckets.yaml", "--variant", "buckets=1000")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "-- variant seed000[sessions.buckets=1000]") || strings.Count(out, "-- variant ") != 1 {
		t.Fatalf("got:\n%s", out)
	}
}

func TestSchemaBadInput(t *testing.T) {
	_, errOut, code := runSchemaCmd(t, "../../scenarios/designs/seed000.yaml", "--set", "sessions.buckets=0")
	if code != exitUsage || !strings.Contains(errOut, "bucket count must be at least 1, got 0") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	_, errOut, code = runSchemaCmd(t, "../../scenarios/designs/seed000.yaml", "--set", "nope=1")
	if code != exitUsage || !strings.Contains(errOut, `has no parameter "nope"`) {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}
