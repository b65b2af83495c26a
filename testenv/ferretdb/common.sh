# shellcheck shell=bash
# Shared settings and helpers for the local FerretDB (MongoDB wire protocol on PostgreSQL).
# Sourced, never run. Every setting can be overridden from the environment:
#
#   FERRETDB_LISTEN         host:port of the MongoDB wire listener (loopback)  (127.0.0.1:27017)
#   FERRETDB_DIR            binary, pid file, logs                              (.build/ferretdb)
#   FERRETDB_LOG_LEVEL      debug | info | warn | error (warn: errors sent to clients)   (warn)
#   FERRETDB_BUILD_TAGS     Go build tags                                 (ferretdb_no_sqlite)
#   FERRETDB_START_TIMEOUT  seconds to wait for hello + ping to answer                     (60)
#   FERRETDB_STOP_TIMEOUT   seconds between SIGTERM and SIGKILL                            (30)
#   FERRETDB_KEEP_PG        1: stop.sh leaves PostgreSQL running                            (0)
#   GO                      Go command                                                     (go)
# PostgreSQL settings (PG_PORT, PG_DIR, ...): see ../postgres/common.sh.

set -euo pipefail

FDB_SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
FDB_ROOT="$(cd "$FDB_SRC/../.." && pwd)"
FERRETDB_LISTEN="${FERRETDB_LISTEN:-127.0.0.1:27017}"
FERRETDB_DIR="${FERRETDB_DIR:-$FDB_ROOT/.build/ferretdb}"
FERRETDB_LOG_LEVEL="${FERRETDB_LOG_LEVEL:-warn}"
FERRETDB_BUILD_TAGS="${FERRETDB_BUILD_TAGS-ferretdb_no_sqlite}"
FERRETDB_START_TIMEOUT="${FERRETDB_START_TIMEOUT:-60}"
FERRETDB_STOP_TIMEOUT="${FERRETDB_STOP_TIMEOUT:-30}"
FERRETDB_KEEP_PG="${FERRETDB_KEEP_PG:-0}"
GO="${GO:-go}"

# shellcheck disable=SC2034 # used by the scripts that source this file
FERRETDB_BIN="$FERRETDB_DIR/ferretdb"
FERRETDB_PID="$FERRETDB_DIR/ferretdb.pid"
# shellcheck disable=SC2034
FERRETDB_LOG="$FERRETDB_DIR/ferretdb.log"
# shellcheck disable=SC2034
FERRETDB_URI_FILE="$FERRETDB_DIR/mongodb.uri"
# shellcheck disable=SC2034
FERRETDB_URI="mongodb://$FERRETDB_LISTEN/"

flog() { printf '[ferretdb] %s\n' "$*" >&2; }
fdie() { printf '[ferretdb] error: %s\n' "$*" >&2; exit 1; }

case "$FERRETDB_LISTEN" in
127.*:[0-9]* | localhost:[0-9]* | "[::1]:"[0-9]*) ;;
*) fdie "FERRETDB_LISTEN=$FERRETDB_LISTEN: must be a loopback host:port" ;;
esac

# ferretdb_pid prints the pid of our running FerretDB, or nothing.
ferretdb_pid() {
  [[ -s "$FERRETDB_PID" ]] || return 0
  local pid
  pid="$(cat "$FERRETDB_PID")"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 0
  # Only a live process running our binary counts (pids are reused).
  if kill -0 "$pid" 2>/dev/null && [[ "$(readlink -f "/proc/$pid/exe" 2>/dev/null)" == "$(readlink -f "$FERRETDB_BIN")"* ]]; then
    echo "$pid"
  fi
}

# ferretdb_stale exits 0 when the binary is missing or older than its sources.
ferretdb_stale() {
  [[ -x "$FERRETDB_BIN" ]] || return 0
  [[ "$(cat "$FERRETDB_DIR/build.tags" 2>/dev/null)" == "$FERRETDB_BUILD_TAGS" ]] || return 0
  [[ -n "$(find "$FDB_SRC" -maxdepth 1 \( -name '*.go' -o -name go.mod -o -name go.sum \) -newer "$FERRETDB_BIN" -print -quit)" ]]
}

ferretdb_build() {
  if ! ferretdb_stale; then
    return 0
  fi
  command -v "$GO" >/dev/null || fdie "no Go toolchain ($GO) on PATH"
  mkdir -p "$FERRETDB_DIR"
  flog "building $FERRETDB_BIN (FerretDB from the Go module proxy; about 1.5 min with empty Go caches)"
  local t0
  t0=$(date +%s)
  # Its own module: GOWORK=off keeps any go.work out; -mod=readonly keeps go.mod/go.sum as committed.
  (cd "$FDB_SRC" && GOWORK=off "$GO" build -mod=readonly -buildvcs=false -trimpath \
    -tags "$FERRETDB_BUILD_TAGS" -o "$FERRETDB_BIN.tmp" .) ||
    fdie "go build of testenv/ferretdb failed"
  mv -f "$FERRETDB_BIN.tmp" "$FERRETDB_BIN"
  printf '%s\n' "$FERRETDB_BUILD_TAGS" >"$FERRETDB_DIR/build.tags"
  flog "built in $(($(date +%s) - t0)) s"
}
