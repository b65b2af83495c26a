#!/usr/bin/env bash
# Start FerretDB (MongoDB wire protocol) on the project-owned PostgreSQL cluster, in the
# background. Idempotent: builds the binary if missing or stale, starts PostgreSQL through
# ../postgres/start.sh, leaves a FerretDB that already runs alone, and returns only when a
# real `hello` and `ping` answer on FERRETDB_LISTEN. Prints the connection string (it holds
# no password: FerretDB logs in to PostgreSQL with the role in PG_DIR/ferretdb.url) on stdout
# and writes it to .build/ferretdb/mongodb.uri.
#
# Settings: see common.sh and ../postgres/common.sh. Stop with stop.sh.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "$0")/common.sh"
# shellcheck source-path=SCRIPTDIR source=../postgres/common.sh
source "$FDB_SRC/../postgres/common.sh"

case "${1:-}" in
"") ;;
-h | --help) sed -n '2,9p' "$0"; exit 0 ;;
*) fdie "usage: start.sh" ;;
esac

# One start/stop at a time (tests may call this concurrently); children must not inherit fd 9.
mkdir -p "$FERRETDB_DIR"
exec 9>"$FERRETDB_DIR/.lock"
flock 9
ferretdb_build
"$FDB_SRC/../postgres/start.sh" 9>&- >/dev/null
[[ -s "$PG_URL_FILE" ]] || fdie "no $PG_URL_FILE after postgres/start.sh"

pid="$(ferretdb_pid)"
if [[ -n "$pid" ]]; then
  flog "already running (pid $pid)"
else
  # Something else on the port (another FerretDB or a mongod) must not pass for ours.
  host="${FERRETDB_LISTEN%:*}" host="${host#[}" host="${host%]}"
  if (exec 3<>"/dev/tcp/$host/${FERRETDB_LISTEN##*:}") 2>/dev/null; then
    fdie "another server already answers on $FERRETDB_LISTEN; stop it or set FERRETDB_LISTEN"
  fi
  mkdir -p "$FERRETDB_DIR"
  flog "starting on $FERRETDB_LISTEN (log: $FERRETDB_LOG)"
  t0=$(date +%s%N)
  # setsid: its own session, so a Ctrl-C meant for make does not skip stop.sh's clean stop.
  setsid "$FERRETDB_BIN" -listen "$FERRETDB_LISTEN" -postgresql-url-file "$PG_URL_FILE" \
    -log "$FERRETDB_LOG" -log-level "$FERRETDB_LOG_LEVEL" \
    </dev/null >>"$FERRETDB_DIR/ferretdb.stderr" 2>&1 9>&- &
  pid=$!
  echo "$pid" >"$FERRETDB_PID"
  if ! "$FERRETDB_BIN" -check "$FERRETDB_URI" -check-timeout "${FERRETDB_START_TIMEOUT}s" >"$FERRETDB_DIR/check.out" 2>&1; then
    cat "$FERRETDB_DIR/check.out" >&2
    tail -n 20 "$FERRETDB_DIR/ferretdb.stderr" "$FERRETDB_LOG" >&2 2>/dev/null || true
    kill -TERM "$pid" 2>/dev/null || true
    rm -f "$FERRETDB_PID"
    fdie "FerretDB did not answer hello/ping on $FERRETDB_LISTEN within ${FERRETDB_START_TIMEOUT} s"
  fi
  [[ -n "$(ferretdb_pid)" ]] || fdie "pid $pid is not the FerretDB that answers; see $FERRETDB_DIR/ferretdb.stderr"
  flog "$(cat "$FERRETDB_DIR/check.out")"
  flog "answering after $((($(date +%s%N) - t0) / 1000000)) ms (pid $pid)"
fi
printf '%s\n' "$FERRETDB_URI" >"$FERRETDB_URI_FILE"
echo "$FERRETDB_URI"
