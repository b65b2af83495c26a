# FerretDB (MongoDB wire protocol on PostgreSQL) for integration tests. Included from the top
# Makefile; paths are relative to this file, so it works from any directory.
#
#   make ferretdb-build   build .build/ferretdb/ferretdb if missing or stale
#   make ferretdb-up      PostgreSQL (127.0.0.1:5433) + FerretDB (127.0.0.1:27017), wait for hello
#   make ferretdb-down    stop both (idempotent)
#
# Settings come from the environment: FERRETDB_LISTEN, FERRETDB_LOG_LEVEL, PG_PORT, ... (see
# testenv/ferretdb/common.sh and testenv/postgres/common.sh).

FERRETDB_MK_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))

.PHONY: ferretdb-build ferretdb-up ferretdb-down

ferretdb-build:
	@$(FERRETDB_MK_DIR)/build.sh >/dev/null

ferretdb-up:
	@$(FERRETDB_MK_DIR)/start.sh

ferretdb-down:
	@$(FERRETDB_MK_DIR)/stop.sh
