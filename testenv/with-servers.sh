#!/usr/bin/env bash
# Run a command (the test suite) with every server and tool the integration tests need,
# started by the project's own scripts, and stop them all afterwards — also when the
# command fails or is interrupted. Used by `make test` (and so by CI):
#
#   testenv/with-servers.sh go test -count=1 ./...
#
# Exports for the tests (internal/itest reads them):
#   SHARDBENCH_INTEGRATION=require   a missing server fails a test instead of skipping it
#   SHARDBENCH_HDR_JAR               Java HdrHistogram 2.2.2 (reference log reader)
#   SHARDBENCH_CASSANDRA             3-node Apache Cassandra 5.0: 127.0.0.1,127.0.0.2,127.0.0.3
#   SHARDBENCH_CASSANDRA_TESTENV     the scripts that stop/start single nodes (kill-a-node test)
#   SHARDBENCH_MONGODB_URI           FerretDB on PostgreSQL (MongoDB wire protocol)
#   SHARDBENCH_CHROMIUM              headless Chromium
#
# Set WITH_SERVERS_SKIP="cassandra ferretdb chromium" (any of them) to leave one out while
# developing; make test never does.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
skip=" ${WITH_SERVERS_SKIP:-} "
log() { echo "with-servers: $*" >&2; }

started=()
cleanup() {
  local rc=$?
  for s in "${started[@]}"; do
    case "$s" in
    cassandra) testenv/cassandra/stop.sh >&2 || true ;;
    ferretdb) testenv/ferretdb/stop.sh >&2 || true ;;
    esac
  done
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

t0=$(date +%s)
# Cassandra takes minutes to start three nodes: start it in the background first and do the
# rest meanwhile.
cass_pid=""
if [[ "$skip" != *" cassandra "* ]]; then
  started+=(cassandra)
  log "starting 3 Cassandra nodes in the background (log: .build/cassandra-start.log)"
  mkdir -p .build
  testenv/cassandra/start.sh 3 >.build/cassandra-start.log 2>&1 &
  cass_pid=$!
fi

export SHARDBENCH_INTEGRATION=require
log "fetching Java HdrHistogram"
SHARDBENCH_HDR_JAR="$(testenv/hdrhistogram/fetch.sh)"
export SHARDBENCH_HDR_JAR

if [[ "$skip" != *" ferretdb "* ]]; then
  started+=(ferretdb)
  log "starting PostgreSQL + FerretDB"
  SHARDBENCH_MONGODB_URI="$(testenv/ferretdb/start.sh)"
  export SHARDBENCH_MONGODB_URI
fi

if [[ "$skip" != *" chromium "* ]]; then
  log "checking headless Chromium"
  SHARDBENCH_CHROMIUM="$(testenv/chromium/install.sh)"
  export SHARDBENCH_CHROMIUM
fi

if [[ -n "$cass_pid" ]]; then
  log "waiting for Cassandra"
  if ! wait "$cass_pid"; then
    tail -40 .build/cassandra-start.log >&2
    log "Cassandra did not start"
    exit 1
  fi
  export SHARDBENCH_CASSANDRA="127.0.0.1,127.0.0.2,127.0.0.3"
  export SHARDBENCH_CASSANDRA_TESTENV="$root/testenv/cassandra"
fi
log "servers ready after $(($(date +%s) - t0))s; running: $*"
"$@"
