#!/usr/bin/env bash
# Which nodes of the local cluster are up: process alive and CQL port open.
# Prints one line per node; exits 0 if at least one node is up, 3 if none.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "$0")/common.sh"
up=0
for k in $(seq 1 "$CASSANDRA_MAX_NODES"); do
  ip="$(node_ip "$k")"
  pid="$(node_pid "$k")"
  [[ -n "$pid" ]] || pid="$(stray_pids "$k" | head -n1)"
  if [[ -z "$pid" ]]; then
    [[ -d "$(node_dir "$k")" ]] || continue
    printf 'node %s  %-10s down\n' "$k" "$ip"
  elif port_open "$ip" "$CASSANDRA_CQL_PORT"; then
    printf 'node %s  %-10s up       pid %-8s cql %s:%s  jmx %s\n' "$k" "$ip" "$pid" "$ip" "$CASSANDRA_CQL_PORT" "$(node_jmx_port "$k")"
    up=$((up + 1))
  else
    printf 'node %s  %-10s starting pid %-8s (CQL port not open yet)\n' "$k" "$ip" "$pid"
  fi
done
((up > 0)) || exit 3
