package mongo

import (
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/shardbench/shardbench/internal/backend"
	"github.com/shardbench/shardbench/internal/inputfile"
	"github.com/shardbench/shardbench/internal/redact"
	"github.com/shardbench/shardbench/internal/yamlx"
)

// Options are the scenario's backends.mongo section.
type Options struct {
	Loc yamlx.Loc
	// PoolSize is the driver's maxPoolSize per server (default: the scenario's
	// max_in_flight, so the driver never queues operations out of sight of the engine).
	PoolSize int `yaml:"pool_size,omitempty"`
	// ConnectTimeout bounds connecting and the first server selection (default 10s).
	ConnectTimeout time.Duration `yaml:"connect_timeout,omitempty"`
	// ServerSelectionTimeout bounds how long an operation waits for a suitable server
	// (default: the scenario's operation timeout).
	ServerSelectionTimeout time.Duration `yaml:"server_selection_timeout,omitempty"`
	// Database overrides the design's database name as the prefix of each variant's
	// database (<prefix>_<hash of the variant name>).
	Database string `yaml:"database,omitempty"`
	// PasswordFile holds the password (first line); the user name comes from
	// SHARDBENCH_MONGODB_USERNAME or the target. SHARDBENCH_MONGODB_PASSWORD_FILE overrides it.
	PasswordFile string `yaml:"password_file,omitempty"`
	// Shard: apply the design's sharding on a mongos (default true); false measures an
	// unsharded layout on the same cluster.
	Shard *bool `yaml:"shard,omitempty"`
	// Load is the load step: the scenario's population written into the variant's
	// database before the measured run (scale, concurrency, batch).
	Load backend.LoadOptions `yaml:"load,omitempty"`
}

// ParseOptions decodes and checks backends.mongo.
func ParseOptions(raw yamlx.Raw) (Options, error) {
	var o Options
	var errs yamlx.Errors
	if !raw.IsZero() {
		errs.Append(raw.Decode(&o))
	}
	if o.PoolSize < 0 || o.PoolSize > 100_000 {
		errs.AddAt(o.Loc, "pool_size", "must be between 1 and 100000, got %d", o.PoolSize)
	}
	if o.ConnectTimeout < 0 {
		errs.AddAt(o.Loc, "connect_timeout", "must not be negative")
	}
	if o.ServerSelectionTimeout < 0 {
		errs.AddAt(o.Loc, "server_selection_timeout", "must not be negative")
	}
	if o.Database != "" && strings.ContainsAny(o.Database, "/\\. \"$*<>:|?") {
		errs.AddAt(o.Loc, "database", "%q is not a valid MongoDB database name", o.Database)
	}
	o.Load.Check(&errs)
	if o.ConnectTimeout == 0 {
		o.ConnectTimeout = 10 * time.Second
	}
	return o, errs.Err()
}

// DefaultTarget is where the backend connects without --target.
const DefaultTarget = "mongodb://127.0.0.1:27017/"

// Environment variables holding credentials (never the command line or scenario).
const (
	EnvUsername     = "SHARDBENCH_MONGODB_USERNAME"
	EnvPassword     = "SHARDBENCH_MONGODB_PASSWORD"
	EnvPasswordFile = "SHARDBENCH_MONGODB_PASSWORD_FILE"
)

// target is a parsed --target: the URI to connect with (credentials removed) and the
// credentials found, kept apart so nothing prints them.
type target struct {
	uri      string // without user info
	redacted string // for logs and results
	user     string
	password string
	hasPass  bool
	// secrets scrubs the password and the URI's secret options from text.
	secrets *redact.Redactor
}

// parseTarget checks a mongodb:// or mongodb+srv:// target and gathers credentials from
// the URI's user info (accepted, never shown), the environment or a password file.
func parseTarget(s, passwordFile string) (target, error) {
	if s == "" {
		s = DefaultTarget
	}
	shown := redact.Target(s) // every error names the target this way
	u, err := url.Parse(s)
	if err != nil {
		return target{}, fmt.Errorf("--target %s: not a URI: %s", shown, redact.New([]string{s}).Text(err.Error()))
	}
	if u.Scheme != "mongodb" && u.Scheme != "mongodb+srv" {
		return target{}, fmt.Errorf("--target %s: the mongo backend wants mongodb://host:port[,host:port]/?options or mongodb+srv://", shown)
	}
	if u.Host == "" {
		return target{}, fmt.Errorf("--target %s: no host", shown)
	}
	t := target{}
	if u.User != nil {
		t.user = u.User.Username()
		t.password, t.hasPass = u.User.Password()
		u.User = nil
	}
	if v := os.Getenv(EnvUsername); v != "" {
		t.user = v
	}
	if v, ok := os.LookupEnv(EnvPassword); ok {
		t.password, t.hasPass = v, true
	}
	if f := os.Getenv(EnvPasswordFile); f != "" {
		passwordFile = f
	}
	if passwordFile != "" {
		b, err := inputfile.ReadFile(passwordFile, inputfile.PasswordFile)
		if err != nil {
			return target{}, fmt.Errorf("password file: %v", err)
		}
		line, _, _ := strings.Cut(string(b), "\n")
		t.password, t.hasPass = strings.TrimRight(line, "\r"), true
	}
	if t.hasPass && t.user == "" {
		return target{}, fmt.Errorf("a MongoDB password is set but no user name: set %s", EnvUsername)
	}
	t.uri = u.String()
	t.secrets = redact.New([]string{s, t.uri}, t.password)
	t.redacted = redact.Target(t.uri)
	if t.user != "" {
		t.redacted = strings.Replace(t.redacted, "://", "://"+url.User(t.user).String()+":"+redact.Mask+"@", 1)
	}
	return t, nil
}
