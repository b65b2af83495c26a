#!/usr/bin/env bash
# Stop node K of the local cluster: SIGTERM (Cassandra drains), SIGKILL after
# CASSANDRA_STOP_TIMEOUT seconds. --kill: SIGKILL at once, like a crash.
# Usage: stop-node.sh [--kill] K
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "$0")/common.sh"
how=TERM
if [[ "${1:-}" == --kill ]]; then how=KILL; shift; fi
[[ $# -eq 1 ]] || die "usage: stop-node.sh [--kill] K"
stop_node "$1" "$how"
