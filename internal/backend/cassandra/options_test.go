package cassandra

import (
	"strings"
	"testing"
)

// No form of target lets a secret into an error or the target shown in the results.
func TestTargetErrorsNeverEchoSecrets(t *testing.T) {
	t.Setenv(EnvUsername, "")
	t.Setenv(EnvPassword, "")
	t.Setenv(EnvPasswordFile, "")
	for target, want := range map[string]string{
		"cassandra://h1?password=hunter2":             "--target cassandra://h1?password=***: unknown parameter password (only dc=; other settings go under backends.cassandra)",
		"cassandra://u:hunter2@h1":                    "--target cassandra://u:***@h1: credentials do not belong in the target",
		"cassandra://h1:x?token=hunter2":              "--target cassandra://h1:x?token=***: bad port \"x\"",
		"mongodb://u:hunter2@h1/?sslpassword=hunter2": "--target mongodb://u:***@h1/?sslpassword=***: the cassandra backend wants",
		"cassandra://h1,,h2?dc=dc1&secretKey=hunter2": "--target cassandra://h1,,h2?dc=dc1&secretKey=***: empty host in the list",
		"cassandra://h1:1,h2:2?apiKey=hunter2&dc=dc1": "--target cassandra://h1:1,h2:2?apiKey=***&dc=dc1: every node must listen on the same native port",
	} {
		_, err := parseTarget(target, "")
		if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s:\n got %v\nwant %s...", target, err, want)
		}
	}
	t.Setenv(EnvUsername, "bench")
	t.Setenv(EnvPassword, "s3cretpw")
	tg, err := parseTarget("cassandra://h1,h2:9042?dc=dc1", "")
	if err != nil {
		t.Fatal(err)
	}
	if tg.redacted != "cassandra://h1,h2:9042?dc=dc1 (user bench)" || tg.secrets.Text("auth failed: s3cretpw") != "auth failed: ***" {
		t.Errorf("redacted %q", tg.redacted)
	}
}
