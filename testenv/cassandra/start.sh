#!/usr/bin/env bash
# Start a local Apache Cassandra cluster of N nodes (1 or 3; default 1) on 127.0.0.1..N,
# one after another: each node must have joined the ring and answer CQL before the next
# starts. Idempotent: nodes that already run are left alone. Fetches Cassandra if needed.
#
#   start.sh [--clean] [N]    --clean: delete all node data first (only when none runs)
#
# Contact point: 127.0.0.1:9042 (every node listens on 9042 on its own address).
# Settings (heap, cluster name, dirs, DC/racks, snitch, timeouts): see common.sh.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "$0")/common.sh"

clean=0
n=1
for a in "$@"; do
  case "$a" in
  --clean) clean=1 ;;
  1 | 3) n="$a" ;;
  2) n=2 ;; # works too; not a supported layout for tests
  -h | --help) sed -n '2,9p' "$0"; exit 0 ;;
  *) die "usage: start.sh [--clean] [1|3]" ;;
  esac
done

if ((clean)); then
  for k in $(seq 1 "$CASSANDRA_MAX_NODES"); do
    [[ -z "$(node_pid "$k")$(stray_pids "$k")" ]] || die "--clean: node $k is running; run stop.sh first"
  done
  log "--clean: removing $CASSANDRA_BASE_DIR"
  rm -rf "$CASSANDRA_BASE_DIR"
fi

t0=$(date +%s)
log "starting $n node(s) of cluster '$CASSANDRA_CLUSTER_NAME' (Cassandra $CASSANDRA_VERSION, fast=$CASSANDRA_FAST)"
for k in $(seq 1 "$n"); do
  start_node "$k"
done
log "cluster up: $n node(s) in $(($(date +%s) - t0)) s; contact point $(node_ip 1):$CASSANDRA_CQL_PORT"
