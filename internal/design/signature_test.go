package design_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardbench/shardbench/internal/design"
)

// TestTargetSignature: a target's signature ignores where and how its design was written
// (comments, blank lines, the file's name) and changes with what decides its accesses
// (its TTL, its shard key, the chunk size), and only for the targets that change.
func TestTargetSignature(t *testing.T) {
	m := model(t, allOpsScenario(t, 1))
	compile := func(file, text string) *design.Compiled {
		t.Helper()
		d, err := design.Parse(file, []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		p, err := design.Compile(d, m)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(designsDir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	same := func(a, b *design.Compiled, target string, want bool) {
		t.Helper()
		sa, sb := a.TargetSignature(target), b.TargetSignature(target)
		if sa == "" || sb == "" {
			t.Fatalf("%s: no signature", target)
		}
		if (sa == sb) != want {
			t.Errorf("%s: signatures equal = %v, want %v", target, sa == sb, want)
		}
	}

	seed000 := read("seed000.yaml")
	base := compile("seed000.yaml", seed000)
	moved := compile("elsewhere.yaml", "# moved down two lines\n\n"+strings.ReplaceAll(seed000, "\n  ", "\n\n  "))
	for _, target := range []string{"user_sessions", "sessions_by_user", "carts", "order_history", "orders_by_period"} {
		same(base, moved, target, true)
	}
	// The carts table's TTL (30 days in seed 000) decides its partitions' horizon.
	if !strings.Contains(seed000, "ttl: 30d") {
		t.Fatal("seed000.yaml no longer has ttl: 30d; pick another change")
	}
	ttl := compile("seed000.yaml", strings.Replace(seed000, "ttl: 30d", "ttl: 31d", 1))
	changed := 0
	for _, target := range []string{"user_sessions", "sessions_by_user", "carts", "order_history", "orders_by_period"} {
		if base.TargetSignature(target) != ttl.TargetSignature(target) {
			changed++
		}
	}
	if changed != 1 {
		t.Errorf("one TTL changed %d tables' signatures, want 1", changed)
	}
	if base.TargetSignature("no_such_table") != "" {
		t.Error("a signature for a table the design does not have")
	}

	mongo := read("seed001-mongo.yaml")
	mbase := compile("seed001-mongo.yaml", mongo)
	key := compile("seed001-mongo.yaml", strings.Replace(mongo, "orders.shard_key: {user_id: hashed, created_at: 1}", "orders.shard_key: {created_at: 1}", 1))
	same(mbase, key, "orders", false)
	for _, target := range []string{"products", "hot_products", "carts", "inventory"} {
		same(mbase, key, target, true)
	}
	chunks := compile("seed001-mongo.yaml", strings.Replace(mongo, "chunk_size_mb: 64", "chunk_size_mb: 32", 1))
	for _, target := range []string{"orders", "products", "hot_products", "carts", "inventory"} {
		same(mbase, chunks, target, false) // every collection splits by the chunk size
	}
}
