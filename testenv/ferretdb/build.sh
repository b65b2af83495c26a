#!/usr/bin/env bash
# Build .build/ferretdb/ferretdb from this module if it is missing or older than its sources.
# Prints the binary's path. Settings: see common.sh.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "$0")/common.sh"
ferretdb_build
echo "$FERRETDB_BIN"
