#!/usr/bin/env bash
# Stop every node of the local cluster, all at once: SIGTERM (each node drains, 5-15 s),
# wait, SIGKILL after CASSANDRA_STOP_TIMEOUT seconds. Finds nodes by pid file and by their
# config path, so no JVM is left behind. Data stays unless --clean: then the node
# directories (CASSANDRA_BASE_DIR) are deleted after the stop. Exits 0 when no node runs
# afterwards.
#
#   stop.sh [--clean]
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "$0")/common.sh"
clean=0
case "${1:-}" in
"") ;;
--clean) clean=1 ;;
*) die "usage: stop.sh [--clean]" ;;
esac
t0=$(date +%s)
pids=()
for k in $(seq "$CASSANDRA_MAX_NODES" -1 1); do
  stop_node "$k" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || true; done
for k in $(seq 1 "$CASSANDRA_MAX_NODES"); do
  [[ -z "$(stray_pids "$k")" ]] || die "node $k still running after stop"
done
log "all nodes stopped ($(($(date +%s) - t0)) s)"
if ((clean)); then
  log "--clean: removing $CASSANDRA_BASE_DIR"
  rm -rf "$CASSANDRA_BASE_DIR"
fi
