// Command ferretdb runs FerretDB (v1, embedded from its Go package) on the PostgreSQL
// backend, so shardbench's MongoDB integration tests have a real MongoDB-wire server on a
// machine where no MongoDB server can be installed. It lives in its own Go module so that
// FerretDB's dependencies never enter the tool's go.mod.
//
// Serve (until SIGTERM or SIGINT):
//
//	FERRETDB_POSTGRESQL_URL=postgres://user:pass@127.0.0.1:5433/ferretdb \
//	    ferretdb -listen 127.0.0.1:27017 -log .build/ferretdb/ferretdb.log
//
// The PostgreSQL URL may also come from -postgresql-url-file (first line of the file) or
// -postgresql-url; the environment and the file keep the password out of `ps`.
//
// Check a server (exit 0 when `hello` and `ping` answer, 1 otherwise):
//
//	ferretdb -check mongodb://127.0.0.1:27017/ -check-timeout 30s
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

const envPostgreSQLURL = "FERRETDB_POSTGRESQL_URL"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ferretdb", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:27017", "TCP address of the MongoDB wire listener")
	pgURL := fs.String("postgresql-url", "", "PostgreSQL URL (prefer $"+envPostgreSQLURL+" or -postgresql-url-file: arguments are visible in ps)")
	pgURLFile := fs.String("postgresql-url-file", "", "file whose first line is the PostgreSQL URL")
	logFile := fs.String("log", "", `log file ("" = no log, "-" = stderr)`)
	logLevel := fs.String("log-level", "info", "debug | info | warn | error")
	check := fs.String("check", "", "instead of serving: connect to this MongoDB URI, run hello and ping, exit 0 when both answer")
	checkTimeout := fs.Duration("check-timeout", 10*time.Second, "with -check: give up after this long")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "ferretdb: unexpected arguments %q\n", fs.Args())
		return 2
	}

	if *check != "" {
		if err := checkServer(*check, *checkTimeout, stdout); err != nil {
			fmt.Fprintf(stderr, "ferretdb -check: %v\n", err)
			return 1
		}
		return 0
	}

	u, err := postgreSQLURL(*pgURL, *pgURLFile)
	if err != nil {
		fmt.Fprintf(stderr, "ferretdb: %v\n", err)
		return 2
	}

	logger, closeLog, err := newLogger(*logFile, *logLevel, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "ferretdb: %v\n", err)
		return 2
	}
	defer closeLog()

	f, err := ferretdb.New(&ferretdb.Config{
		Listener:      ferretdb.ListenerConfig{TCP: *listen},
		Logger:        logger,
		Handler:       "postgresql",
		PostgreSQLURL: u,
	})
	if err != nil {
		fmt.Fprintf(stderr, "ferretdb: %v\n", redact(err.Error(), u))
		return 1
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	logger.Info("shardbench ferretdb: serving", slog.String("listen", *listen), slog.String("postgresql", safeURL(u)))
	if err := f.Run(ctx); err != nil {
		fmt.Fprintf(stderr, "ferretdb: %v\n", redact(err.Error(), u))
		return 1
	}
	logger.Info("shardbench ferretdb: stopped")
	return 0
}

// postgreSQLURL picks the URL from the flag, the file or the environment, in that order.
func postgreSQLURL(flagValue, file string) (string, error) {
	u := flagValue
	if u == "" && file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("reading -postgresql-url-file: %w", err)
		}
		u, _, _ = strings.Cut(string(b), "\n")
		u = strings.TrimSpace(u)
	}
	if u == "" {
		u = os.Getenv(envPostgreSQLURL)
	}
	if u == "" {
		return "", fmt.Errorf("no PostgreSQL URL: set $%s, -postgresql-url-file or -postgresql-url", envPostgreSQLURL)
	}
	if _, err := url.Parse(u); err != nil {
		return "", errors.New("the PostgreSQL URL does not parse as a URL") // do not echo it
	}
	return u, nil
}

func newLogger(file, level string, stderr io.Writer) (*slog.Logger, func(), error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, nil, fmt.Errorf("-log-level: %w", err)
	}
	switch file {
	case "":
		return slog.New(slog.DiscardHandler), func() {}, nil
	case "-":
		return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lv})), func() {}, nil
	}
	w, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("-log: %w", err)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lv})), func() { _ = w.Close() }, nil
}

// safeURL is the URL without its password, for logs.
func safeURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparsable)"
	}
	return p.Redacted()
}

// redact removes the password (and the whole URL) from a message.
func redact(msg, u string) string {
	msg = strings.ReplaceAll(msg, u, safeURL(u))
	if p, err := url.Parse(u); err == nil {
		if pw, ok := p.User.Password(); ok && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
	}
	return msg
}

// checkServer retries hello + ping until both answer or the timeout passes.
func checkServer(uri string, timeout time.Duration, stdout io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last error
	for {
		res, err := helloAndPing(ctx, uri)
		if err == nil {
			fmt.Fprintln(stdout, res)
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("no answer within %s: %w", timeout, last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func helloAndPing(ctx context.Context, uri string) (string, error) {
	opts := options.Client().ApplyURI(uri).
		SetServerSelectionTimeout(2 * time.Second).
		SetConnectTimeout(2 * time.Second)
	c, err := mongo.Connect(opts)
	if err != nil {
		return "", err
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = c.Disconnect(dctx)
	}()
	db := c.Database("admin")
	var hello bson.M
	if err := db.RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Decode(&hello); err != nil {
		return "", fmt.Errorf("hello: %w", err)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "ping", Value: 1}}).Err(); err != nil {
		return "", fmt.Errorf("ping: %w", err)
	}
	var bi bson.M
	_ = db.RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&bi)
	return fmt.Sprintf("ok: hello and ping answered (maxWireVersion=%v, version=%v, msg=%v)",
		hello["maxWireVersion"], bi["version"], orNone(hello["msg"])), nil
}

func orNone(v any) any {
	if v == nil {
		return "none"
	}
	return v
}
