#!/usr/bin/env bash
# Stop the project-owned PostgreSQL cluster (pg_ctl stop -m fast). Idempotent: does nothing
# when it is not running. Settings: see common.sh.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "$0")/common.sh"

[[ -d "$PG_DIR" ]] || { log "no cluster in $PG_DIR: nothing to stop"; exit 0; }
# One start/stop at a time (see start.sh).
exec 9>"$PG_DIR/.lock"
flock 9

if [[ ! -f "$PG_DATA/PG_VERSION" ]]; then
  log "no cluster in $PG_DATA: nothing to stop"
  exit 0
fi
PG_BINDIR="$(find_bindir)"
[[ -n "$PG_BINDIR" ]] || die "no PostgreSQL server binaries found; cannot run pg_ctl"
if ! id -u "$PG_OS_USER" >/dev/null 2>&1 && ((EUID == 0)); then
  die "OS user $PG_OS_USER is missing; cannot run pg_ctl as the cluster's owner"
fi
if ! pg_running; then
  log "not running"
  exit 0
fi
log "stopping ($PG_DATA)"
if ! as_owner "$PG_BINDIR/pg_ctl" stop -D "$PG_DATA" -m fast -w -t 60 -s; then
  log "fast shutdown timed out; trying immediate"
  as_owner "$PG_BINDIR/pg_ctl" stop -D "$PG_DATA" -m immediate -w -t 30 -s
fi
log "stopped"
