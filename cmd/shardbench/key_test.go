package main

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/shardbench/shardbench/internal/results"
)

func runKeyCmd(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	io, stdout, stderr := testIO()
	cmd := newKeyCmd(io, nil)
	cmd.SetArgs(args)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	err := cmd.Execute()
	if err != nil {
		stderr.WriteString(err.Error())
	}
	return stdout.String(), stderr.String(), exitCode(err)
}

// key and plan reach a partition by different paths — key parses the text a user types,
// plan encodes the workload's generated values through the design — and must agree on the
// token, the vnode range and the replicas of every hot partition plan reports.
func TestKeyAgreesWithPlan(t *testing.T) {
	io, _, stderr := testIO()
	out := filepath.Join(t.TempDir(), "plan")
	if err := runPlan(context.Background(), &PlanOptions{IO: io, ScenarioPath: "../../scenarios/claims/session-buckets.yaml", PlacementOptions: PlacementOptions{Out: out, Limit: 20000, Quiet: true}, NoReport: true}); err != nil {
		t.Fatalf("plan: %v\n%s", err, stderr)
	}
	hs, err := results.ReadHotspots(out)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, v := range hs.Variants {
		if !strings.HasSuffix(v.Variant, "buckets=1000]") {
			continue
		}
		for _, tb := range v.Tables {
			if !strings.HasSuffix(tb.Table, ".user_sessions") {
				continue
			}
			for _, p := range tb.Top[:min(5, len(tb.Top))] {
				bucket := strings.TrimPrefix(p.Key, "bucket=")
				stdout, stderr, code := runKeyCmd(t, "--design", "../../scenarios/designs/seed000.yaml", "--entity", "sessions",
					"--table", "user_sessions", "--set", "sessions.buckets=1000", "--seed", "1000", "bucket="+bucket)
				if code != 0 {
					t.Fatalf("key bucket=%s: exit %d: %s", bucket, code, stderr)
				}
				if !strings.Contains(stdout, "token       "+p.Token+"\n") {
					t.Errorf("bucket=%s: plan says token %s, key says:\n%s", bucket, p.Token, stdout)
				}
				if !strings.Contains(stdout, "vnode range "+p.Range) {
					t.Errorf("bucket=%s: plan says range %s, key says:\n%s", bucket, p.Range, stdout)
				}
				for _, r := range p.Replicas {
					if !strings.Contains(stdout, r+" (") {
						t.Errorf("bucket=%s: plan's replica %s missing from:\n%s", bucket, r, stdout)
					}
				}
				checked++
			}
		}
	}
	if checked < 3 {
		t.Fatalf("only %d partitions compared", checked)
	}
}

// A MongoDB hashed key: the hashed value is MongoDB's (convertShardKeyToHashed of the
// string "user:42" is a fixed 64-bit value), and the chunk and shard follow the 7.2+
// pre-split of the hashed space into one chunk per shard.
func TestKeyMongoHashed(t *testing.T) {
	stdout, stderr, code := runKeyCmd(t, "--design", "../../scenarios/designs/seed001-mongo.yaml", "--entity", "carts", "owner_key=user:42")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	m := regexp.MustCompile(`owner_key: "user:42" → (-?\d+)`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no hashed value in:\n%s", stdout)
	}
	// Three shards: [MinKey, -3074457345618258602) on shard0, then shard1, then shard2.
	h := m[1]
	want := "shard1"
	switch {
	case strings.HasPrefix(h, "-") && len(h) == 20 && h > "-3074457345618258602":
		want = "shard0"
	case !strings.HasPrefix(h, "-") && len(h) == 19 && h >= "3074457345618258602":
		want = "shard2"
	}
	if !strings.Contains(stdout, "shard       "+want+" ") {
		t.Errorf("hashed %s should be on %s:\n%s", h, want, stdout)
	}
	stdout, _, code = runKeyCmd(t, "--design", "../../scenarios/designs/seed001-mongo-orders-created.yaml", "--entity", "orders", "created_at=2025-11-28T10:00:00Z")
	if code != 0 || !strings.Contains(stdout, "ranged key: chunk boundaries follow the data") {
		t.Errorf("ranged key: exit %d\n%s", code, stdout)
	}
}

// Bad input names what is wrong and exits 2.
func TestKeyBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--design", "../../scenarios/designs/seed000.yaml", "--entity", "sessions", "bucket=forty"}, `column bucket: "forty" is not a valid int`},
		{[]string{"--design", "../../scenarios/designs/seed000.yaml", "--entity", "orders", "user_id=1"}, "needs time_bucket (text)"},
		{[]string{"--design", "../../scenarios/designs/seed000.yaml", "--entity", "nosuch", "a=1"}, `no table or collection for entity "nosuch"`},
		{[]string{"--design", "../../scenarios/designs/seed000.yaml", "bucket=1"}, "--design and --entity are required"},
		{[]string{"--design", "../../scenarios/designs/seed000.yaml", "--entity", "sessions"}, "give the key as name=value"},
		{[]string{"--design", "../../scenarios/designs/seed000.yaml", "--entity", "sessions", "--racks", "9", "bucket=1"}, "--racks must be between"},
		{[]string{"--design", "../../scenarios/designs/seed001-mongo.yaml", "--entity", "carts", "owner_key"}, `"owner_key": want name=value`},
	} {
		stdout, stderr, code := runKeyCmd(t, c.args...)
		if code != 2 || !strings.Contains(stdout+stderr, c.want) {
			t.Errorf("%v: exit %d, output %q %q; want exit 2 and %q", c.args, code, stdout, stderr, c.want)
		}
	}
}
