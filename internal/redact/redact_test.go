package redact

import (
	"bytes"
	"strings"
	"testing"
)

func TestTarget(t *testing.T) {
	for in, want := range map[string]string{
		// Mongo URIs: user information, TLS key password, AWS session token.
		"mongodb://u:p4ss@h1:27017,h2:27017/db?replicaSet=rs":                                                          "mongodb://u:***@h1:27017,h2:27017/db?replicaSet=rs",
		"mongodb://h:1/?tls=true&tlsCertificateKeyFilePassword=s3cret&tlsCertificateKeyFile=/k.pem":                    "mongodb://h:1/?tls=true&tlsCertificateKeyFilePassword=***&tlsCertificateKeyFile=/k.pem",
		"mongodb://h/?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:tok123,SERVICE_NAME:mongodb": "mongodb://h/?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:***,SERVICE_NAME:mongodb",
		"mongodb://h/?authMechanismProperties=AWS_SESSION_TOKEN%3Atok123%2CSERVICE_NAME%3Ax":                           "mongodb://h/?authMechanismProperties=AWS_SESSION_TOKEN%3A***%2CSERVICE_NAME%3Ax",
		"mongodb+srv://admin@cluster0.example.net/?retryWrites=true":                                                   "mongodb+srv://admin@cluster0.example.net/?retryWrites=true",
		"mongodb://u:p@ss/word@h/": "mongodb://u:***@h/",
		// Cassandra: parameters that are not dc=, a password in the user information.
		"cassandra://h1,h2:9042?dc=dc1&password=hunter2": "cassandra://h1,h2:9042?dc=dc1&password=***",
		"cassandra://u:hunter2@h1":                       "cassandra://u:***@h1",
		"cassandra://h:x?token=abc;sslpassword=def":      "cassandra://h:x?token=***;sslpassword=***",
		// Any parameter whose name suggests a secret; none that does not.
		"https://h/p?api-key=1&AccessKey=2&sig=3&keyspace=ks&secret_access_key=4&jwt=5": "https://h/p?api-key=***&AccessKey=***&sig=***&keyspace=ks&secret_access_key=***&jwt=***",
		// Not a URL at all: still masked.
		"u:pw@host?password=x":    "u:***@host?password=***",
		"plain-host":              "plain-host",
		"mongodb://h/?password":   "mongodb://h/?password",
		"mongodb://h/#frag?x=pwd": "mongodb://h/#frag?x=pwd",
	} {
		if got := Target(in); got != want {
			t.Errorf("Target(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}

func TestSecretName(t *testing.T) {
	for _, n := range []string{"password", "tlsCertificateKeyFilePassword", "sslpassword", "AWS_SESSION_TOKEN", "apiKey", "api-key", "secretAccessKey", "sig", "pwd", "x-amz-security-token", "client_secret", "privateKey"} {
		if !SecretName(n) {
			t.Errorf("%s must be secret", n)
		}
	}
	for _, n := range []string{"dc", "keyspace", "authSource", "authMechanism", "tlsCertificateKeyFile", "replicaSet", "SERVICE_NAME", "shardKey", "user"} {
		if SecretName(n) {
			t.Errorf("%s is not secret", n)
		}
	}
}

func TestRedactorText(t *testing.T) {
	target := "mongodb://u:p%40ssw0rd@h/?tlsCertificateKeyFilePassword=tlspw&authMechanismProperties=AWS_SESSION_TOKEN:awstok"
	r := New([]string{target}, "envpassword", "ab")
	msg := "error parsing uri " + target + ": auth failed for p@ssw0rd, token awstok, env envpassword, key tlspw, short ab"
	got := r.Text(msg)
	for _, secret := range []string{"p%40ssw0rd", "p@ssw0rd", "awstok", "envpassword", "tlspw"} {
		if strings.Contains(got, secret) {
			t.Errorf("%q left in %q", secret, got)
		}
	}
	if !strings.Contains(got, "short ab") {
		t.Errorf("secrets under %d characters are not scrubbed from text: %q", MinSecret, got)
	}
	var nilR *Redactor
	if nilR.Text("x") != "x" {
		t.Error("a nil Redactor scrubs nothing")
	}
}

func TestControls(t *testing.T) {
	in := "evil\x1b[2J\x1b]0;t\x07 \u009b31m ok\tnew\nline\r"
	want := "evil\\x1b[2J\\x1b]0;t\\x07 \\u009b31m ok\tnew\nline\\x0d"
	if got := Controls(in); got != want {
		t.Fatalf("Controls = %q, want %q", got, want)
	}
}

func TestWriter(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, New(nil, "hunter2"))
	// A two-byte rune (é) and the C1 control U+009B cut across writes.
	parts := []string{"pass hunter2 ", "caf\xc3", "\xa9 \x1b[31m \xc2", "\x9b end\n"}
	for _, p := range parts {
		n, err := w.Write([]byte(p))
		if err != nil || n != len(p) {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	want := "pass *** café \\x1b[31m \\u009b end\n"
	if buf.String() != want {
		t.Fatalf("wrote %q, want %q", buf.String(), want)
	}
}
