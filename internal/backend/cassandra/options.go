package cassandra

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/design"
	"github.com/shardbench/shardbench/internal/inputfile"
	"github.com/shardbench/shardbench/internal/redact"
	"github.com/shardbench/shardbench/internal/yamlx"
)

// Options are the scenario's backends.cassandra section.
type Options struct {
	Loc yamlx.Loc
	// Keyspace overrides the design's keyspace name as the prefix of each variant's keyspace
	// (<prefix>_<hash of the variant name>).
	Keyspace string `yaml:"keyspace,omitempty"`
	// Replication replaces the design's keyspace replication, e.g.
	// {class: NetworkTopologyStrategy, dc1: 3}: a design written for production data
	// centres runs on a test cluster with other DC names.
	Replication *design.Replication `yaml:"replication,omitempty"`
	// LocalDC is the data centre the client prefers (token-aware within it, DC-aware
	// fallback); the target's ?dc= sets it too. Default: the contact point's DC.
	LocalDC string `yaml:"local_dc,omitempty"`
	// NumConns is connections per host (default 2).
	NumConns int `yaml:"num_conns,omitempty"`
	// ConnectTimeout bounds connecting and the initial topology queries (default 10s).
	ConnectTimeout time.Duration `yaml:"connect_timeout,omitempty"`
	// RequestTimeout is the driver's per-request timeout (default: the scenario's operation
	// timeout, so the driver never gives up before the engine does).
	RequestTimeout time.Duration `yaml:"request_timeout,omitempty"`
	// Retry: attempts after the first for idempotent statements (default 0: a benchmark
	// reports the server's errors rather than hiding them behind retries), with exponential
	// backoff between min_backoff and max_backoff.
	Retry RetryOptions `yaml:"retry,omitempty"`
	// ProtocolVersion pins the native protocol (0: negotiate).
	ProtocolVersion int `yaml:"protocol_version,omitempty"`
	// PasswordFile holds the password (first line); the user name comes from
	// SHARDBENCH_CASSANDRA_USERNAME. SHARDBENCH_CASSANDRA_PASSWORD(_FILE) override it.
	PasswordFile string `yaml:"password_file,omitempty"`
	// TLS enables client encryption.
	TLS TLSOptions `yaml:"tls,omitempty"`
	// Load is the load step: the scenario's population written into the variant's
	// keyspace before the measured run (scale, concurrency, batch).
	Load backend.LoadOptions `yaml:"load,omitempty"`
}

// RetryOptions configure the retry policy.
type RetryOptions struct {
	Loc        yamlx.Loc
	Attempts   int           `yaml:"attempts,omitempty"`
	MinBackoff time.Duration `yaml:"min_backoff,omitempty"`
	MaxBackoff time.Duration `yaml:"max_backoff,omitempty"`
}

// TLSOptions configure client encryption.
type TLSOptions struct {
	Loc                yamlx.Loc
	Enabled            bool   `yaml:"enabled,omitempty"`
	CAFile             string `yaml:"ca_file,omitempty"`
	CertFile           string `yaml:"cert_file,omitempty"`
	KeyFile            string `yaml:"key_file,omitempty"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify,omitempty"`
}

// ParseOptions decodes and checks backends.cassandra.
func ParseOptions(raw yamlx.Raw) (Options, error) {
	var o Options
	var errs yamlx.Errors
	if !raw.IsZero() {
		errs.Append(raw.Decode(&o))
	}
	if o.Keyspace != "" && !validKeyspace(o.Keyspace) {
		errs.AddAt(o.Loc, "keyspace", "%q is not a valid keyspace name (letters, digits, _; at most 39 characters to leave room for the variant suffix)", o.Keyspace)
	}
	if o.Replication != nil {
		if _, err := replicationCQL(*o.Replication); err != nil {
			errs.AddAt(o.Loc, "replication", "%v", err)
		}
	}
	if o.NumConns < 0 || o.NumConns > 64 {
		errs.AddAt(o.Loc, "num_conns", "must be between 1 and 64, got %d", o.NumConns)
	}
	for name, d := range map[string]time.Duration{"connect_timeout": o.ConnectTimeout, "request_timeout": o.RequestTimeout} {
		if d < 0 {
			errs.AddAt(o.Loc, name, "must not be negative")
		}
	}
	if o.Retry.Attempts < 0 || o.Retry.Attempts > 10 {
		errs.AddAt(o.Retry.Loc, "attempts", "must be between 0 and 10, got %d", o.Retry.Attempts)
	}
	if o.Retry.MinBackoff < 0 || o.Retry.MaxBackoff < 0 || o.Retry.MaxBackoff > 0 && o.Retry.MaxBackoff < o.Retry.MinBackoff {
		errs.AddAt(o.Retry.Loc, "max_backoff", "backoffs must be non-negative and max_backoff >= min_backoff")
	}
	if o.ProtocolVersion != 0 && (o.ProtocolVersion < 3 || o.ProtocolVersion > 5) {
		errs.AddAt(o.Loc, "protocol_version", "must be 3, 4 or 5 (0 negotiates), got %d", o.ProtocolVersion)
	}
	if (o.TLS.CertFile == "") != (o.TLS.KeyFile == "") {
		errs.AddAt(o.TLS.Loc, "cert_file", "cert_file and key_file go together")
	}
	o.Load.Check(&errs)
	if o.NumConns == 0 {
		o.NumConns = 2
	}
	if o.ConnectTimeout == 0 {
		o.ConnectTimeout = 10 * time.Second
	}
	if o.Retry.MinBackoff == 0 {
		o.Retry.MinBackoff = 50 * time.Millisecond
	}
	if o.Retry.MaxBackoff == 0 {
		o.Retry.MaxBackoff = time.Second
	}
	if o.TLS.CAFile != "" || o.TLS.CertFile != "" {
		o.TLS.Enabled = true
	}
	return o, errs.Err()
}

func validKeyspace(s string) bool {
	if s == "" || len(s) > 39 {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// replicationCQL renders a replication ({class: ..., dc1: 3} or replication_factor) as
// the CQL map literal.
func replicationCQL(r design.Replication) (string, error) {
	parts := []string{"'class': '" + r.Class + "'"}
	switch r.Class {
	case "SimpleStrategy", "org.apache.cassandra.locator.SimpleStrategy":
		if r.Factor <= 0 || len(r.DCs) > 0 {
			return "", fmt.Errorf("SimpleStrategy takes replication_factor only")
		}
	case "NetworkTopologyStrategy", "org.apache.cassandra.locator.NetworkTopologyStrategy":
		if len(r.DCs) == 0 {
			return "", fmt.Errorf("NetworkTopologyStrategy needs a factor per data centre, e.g. {class: NetworkTopologyStrategy, dc1: 3}")
		}
	case "":
		return "", fmt.Errorf("class is missing (SimpleStrategy or NetworkTopologyStrategy)")
	default:
		return "", fmt.Errorf("class %q: SimpleStrategy or NetworkTopologyStrategy", r.Class)
	}
	if r.Factor > 0 {
		parts = append(parts, "'replication_factor': "+strconv.Itoa(r.Factor))
	}
	for _, dc := range r.DCs {
		if dc.Factor < 0 {
			return "", fmt.Errorf("%s: negative replication factor", dc.DC)
		}
		parts = append(parts, "'"+strings.ReplaceAll(dc.DC, "'", "''")+"': "+strconv.Itoa(dc.Factor))
	}
	return "{" + strings.Join(parts, ", ") + "}", nil
}

// DefaultTarget is where the backend connects without --target.
const DefaultTarget = "cassandra://127.0.0.1:9042"

// Environment variables holding credentials (never the command line or scenario).
const (
	EnvUsername     = "SHARDBENCH_CASSANDRA_USERNAME"
	EnvPassword     = "SHARDBENCH_CASSANDRA_PASSWORD"
	EnvPasswordFile = "SHARDBENCH_CASSANDRA_PASSWORD_FILE"
)

// target is a parsed --target: contact points, port, local DC, and credentials kept apart
// so nothing prints them.
type target struct {
	hosts    []string
	port     int
	dc       string
	redacted string
	user     string
	password string
	// secrets scrubs the password (and anything secret the target carried) from text.
	secrets *redact.Redactor
}

// parseTarget reads cassandra://host1,host2[:port][?dc=DC]. Credentials in the URL are
// refused (they would end up in shell history and results): use the environment or a file.
func parseTarget(s, passwordFile string) (target, error) {
	if s == "" {
		s = DefaultTarget
	}
	shown := redact.Target(s) // every error names the target this way
	if !strings.HasPrefix(s, "cassandra://") {
		return target{}, fmt.Errorf("--target %s: the cassandra backend wants cassandra://host1,host2[:port][?dc=DC]", shown)
	}
	rest := strings.TrimPrefix(s, "cassandra://")
	hostPart, query, _ := strings.Cut(rest, "?")
	hostPart = strings.TrimSuffix(hostPart, "/")
	if strings.Contains(hostPart, "@") {
		return target{}, fmt.Errorf("--target %s: credentials do not belong in the target; set %s and %s (or %s)", shown, EnvUsername, EnvPassword, EnvPasswordFile)
	}
	if hostPart == "" {
		return target{}, fmt.Errorf("--target %s: no host", shown)
	}
	t := target{port: 9042}
	// A port may follow the last host (host1,host2:9042, the URL-like form) or each host.
	ports := map[int]bool{}
	for _, h := range strings.Split(hostPart, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			return target{}, fmt.Errorf("--target %s: empty host in the list", shown)
		}
		host, port := h, ""
		if hh, pp, err := net.SplitHostPort(h); err == nil {
			host, port = hh, pp
		}
		if port != "" {
			p, err := strconv.Atoi(port)
			if err != nil || p <= 0 || p > 65535 {
				return target{}, fmt.Errorf("--target %s: bad port %q", shown, port)
			}
			ports[p] = true
		}
		t.hosts = append(t.hosts, host)
	}
	if len(ports) > 1 {
		return target{}, fmt.Errorf("--target %s: every node must listen on the same native port", shown)
	}
	for p := range ports {
		t.port = p
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return target{}, fmt.Errorf("--target %s: %v", shown, err)
	}
	var unknown []string
	for k := range q {
		if k != "dc" {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return target{}, fmt.Errorf("--target %s: unknown parameter %s (only dc=; other settings go under backends.cassandra)", shown, strings.Join(unknown, ", "))
	}
	t.dc = q.Get("dc")
	t.redacted = "cassandra://" + strings.Join(t.hosts, ",") + ":" + strconv.Itoa(t.port)
	if t.dc != "" {
		t.redacted += "?dc=" + t.dc
	}
	t.user = os.Getenv(EnvUsername)
	pass, hasPass := os.LookupEnv(EnvPassword)
	if f := os.Getenv(EnvPasswordFile); f != "" {
		passwordFile = f
	}
	if passwordFile != "" {
		b, err := inputfile.ReadFile(passwordFile, inputfile.PasswordFile)
		if err != nil {
			return target{}, fmt.Errorf("password file: %v", err)
		}
		line, _, _ := strings.Cut(string(b), "\n")
		pass, hasPass = strings.TrimRight(line, "\r"), true
	}
	if hasPass && t.user == "" {
		return target{}, fmt.Errorf("a Cassandra password is set but no user name: set %s", EnvUsername)
	}
	if t.user != "" && !hasPass {
		return target{}, fmt.Errorf("%s is set but no password: set %s or %s", EnvUsername, EnvPassword, EnvPasswordFile)
	}
	t.password = pass
	t.secrets = redact.New([]string{s}, pass)
	if t.user != "" {
		t.redacted += " (user " + t.user + ")"
	}
	return t, nil
}
