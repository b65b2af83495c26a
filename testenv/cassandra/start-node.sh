#!/usr/bin/env bash
# Start (or restart after stop-node.sh) node K of the local cluster and wait until it
# answers CQL. Usage: start-node.sh K   (K = 1..3)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "$0")/common.sh"
[[ $# -eq 1 ]] || die "usage: start-node.sh K"
start_node "$1"
