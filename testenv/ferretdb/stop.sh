#!/usr/bin/env bash
# Stop FerretDB (SIGTERM, then SIGKILL after FERRETDB_STOP_TIMEOUT s) and then the PostgreSQL
# cluster (unless FERRETDB_KEEP_PG=1). Idempotent. Settings: see common.sh.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "$0")/common.sh"

if [[ -d "$FERRETDB_DIR" ]]; then
  exec 9>"$FERRETDB_DIR/.lock"
  flock 9
fi

pid="$(ferretdb_pid)"
if [[ -z "$pid" ]]; then
  flog "not running"
else
  flog "stopping (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  deadline=$(($(date +%s) + FERRETDB_STOP_TIMEOUT))
  while kill -0 "$pid" 2>/dev/null; do
    if (($(date +%s) >= deadline)); then
      flog "no exit within ${FERRETDB_STOP_TIMEOUT} s of SIGTERM; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      break
    fi
    sleep 0.1
  done
  flog "stopped"
fi
rm -f "$FERRETDB_PID" "$FERRETDB_URI_FILE"

if [[ "$FERRETDB_KEEP_PG" != 1 ]]; then
  "$FDB_SRC/../postgres/stop.sh" 9>&-
fi
