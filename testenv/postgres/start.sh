#!/usr/bin/env bash
# Start the project-owned PostgreSQL cluster that FerretDB uses as its backend.
# Idempotent: installs Debian's PostgreSQL server if missing, runs initdb once (as a
# non-root user), starts the server if it is not running, and (re)creates FerretDB's role and
# database. Prints the connection URL without the password on stdout.
#
#   start.sh [--clean]     --clean: delete the cluster's data first (only when stopped)
#
# Listens on PG_HOST:PG_PORT (127.0.0.1:5433) and a private Unix socket in PG_DIR/run.
# Settings: see common.sh.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "$0")/common.sh"

clean=0
for a in "$@"; do
  case "$a" in
  --clean) clean=1 ;;
  -h | --help) sed -n '2,10p' "$0"; exit 0 ;;
  *) die "usage: start.sh [--clean]" ;;
  esac
done

mkdir -p "$PG_DIR"
chmod 0755 "$PG_DIR"

# One start/stop at a time (tests may call this concurrently); the server must not inherit fd 9.
exec 9>"$PG_DIR/.lock"
flock 9

PG_BINDIR="$(find_bindir)"
if [[ -z "$PG_BINDIR" ]]; then
  [[ "$PG_APT_INSTALL" == 1 ]] || die "no PostgreSQL server binaries found (PG_APT_INSTALL=0); set PG_BINDIR"
  install_server
  PG_BINDIR="$(find_bindir)"
  [[ -n "$PG_BINDIR" ]] || die "PostgreSQL installed but no server binaries found under /usr/lib/postgresql/*/bin"
fi
export PG_BINDIR

ensure_os_user

if ((clean)); then
  ! pg_running || die "--clean: the cluster in $PG_DATA is running; run stop.sh first"
  log "--clean: removing $PG_DATA"
  rm -rf "$PG_DATA" "$PG_RUN" "$PG_LOGDIR"
fi

mkdir -p "$PG_DATA" "$PG_RUN" "$PG_LOGDIR"
if ((EUID == 0)); then
  chown "$PG_OS_USER:" "$PG_DATA" "$PG_RUN" "$PG_LOGDIR"
fi
chmod 0700 "$PG_DATA" "$PG_RUN"

# --- initdb (once) --------------------------------------------------------------------------
if [[ ! -f "$PG_DATA/PG_VERSION" ]]; then
  [[ -z "$(ls -A "$PG_DATA")" ]] || die "$PG_DATA is not empty but holds no cluster; remove it or use --clean"
  log "initdb $PG_DATA ($("$PG_BINDIR/postgres" --version))"
  t0=$(date +%s%N)
  # FerretDB needs UTF8 and a C/POSIX/C.UTF-8/en_US.UTF-8 collation; peer auth on the private
  # socket (for these scripts), passwords over TCP (for FerretDB).
  if ! as_owner "$PG_BINDIR/initdb" -D "$PG_DATA" --encoding=UTF8 --locale=C \
    --auth-local=peer --auth-host=scram-sha-256 >"$PG_LOGDIR/initdb.log" 2>&1; then
    cat "$PG_LOGDIR/initdb.log" >&2
    die "initdb failed"
  fi
  log "initdb took $((($(date +%s%N) - t0) / 1000000)) ms"
fi

# Settings live in an included file, rewritten every start so that PG_PORT etc. can change.
conf="$PG_DATA/shardbench.conf"
{
  echo "# written by testenv/postgres/start.sh on every start; edit the environment, not this"
  echo "listen_addresses = '$PG_HOST'"
  echo "port = $PG_PORT"
  echo "unix_socket_directories = '$PG_RUN'"
  echo "unix_socket_permissions = 0700"
  echo "max_connections = 200"
  echo "shared_buffers = 256MB"
  echo "password_encryption = scram-sha-256"
  echo "logging_collector = off"
  echo "log_min_messages = warning"
  echo "log_min_error_statement = panic # never log statements (ALTER ROLE ... PASSWORD)"
  if [[ "$PG_FAST" == 1 ]]; then
    echo "# PG_FAST=1: a throwaway test cluster, durability traded for speed"
    echo "fsync = off"
    echo "synchronous_commit = off"
    echo "full_page_writes = off"
  fi
} | as_owner tee "$conf" >/dev/null
if ! grep -qx "include_if_exists = 'shardbench.conf'" "$PG_DATA/postgresql.conf"; then
  echo "include_if_exists = 'shardbench.conf'" | as_owner tee -a "$PG_DATA/postgresql.conf" >/dev/null
fi

# --- start ----------------------------------------------------------------------------------
if pg_running; then
  log "already running ($PG_DATA)"
  running_port="$(sed -n 4p "$PG_DATA/postmaster.pid" 2>/dev/null || true)"
  if [[ -n "$running_port" && "$running_port" != "$PG_PORT" ]]; then
    die "the cluster runs on port $running_port, not PG_PORT=$PG_PORT: run stop.sh first"
  fi
else
  if "$PG_BINDIR/pg_isready" -q -h "$PG_HOST" -p "$PG_PORT" -t 2 >/dev/null 2>&1; then
    die "another server already answers on $PG_HOST:$PG_PORT; set PG_PORT to a free port"
  fi
  log "starting on $PG_HOST:$PG_PORT (log: $PG_LOG)"
  t0=$(date +%s%N)
  if ! as_owner "$PG_BINDIR/pg_ctl" start -D "$PG_DATA" -l "$PG_LOG" -w -t "$PG_START_TIMEOUT" -s 9>&-; then
    tail -n 30 "$PG_LOG" >&2 || true
    die "PostgreSQL did not start within ${PG_START_TIMEOUT} s"
  fi
  log "accepting connections after $((($(date +%s%N) - t0) / 1000000)) ms"
fi

deadline=$(($(date +%s) + PG_START_TIMEOUT))
until "$PG_BINDIR/pg_isready" -q -h "$PG_HOST" -p "$PG_PORT" -t 2; do
  (($(date +%s) < deadline)) || die "no answer on $PG_HOST:$PG_PORT within ${PG_START_TIMEOUT} s"
  sleep 0.2
done

# --- FerretDB's role and database -----------------------------------------------------------
umask 077
if [[ -n "${PG_FERRETDB_PASSWORD:-}" ]]; then
  password="$PG_FERRETDB_PASSWORD"
elif [[ -s "$PG_PASSWORD_FILE" ]]; then
  password="$(head -n 1 "$PG_PASSWORD_FILE")"
else
  password="$(head -c 24 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
  printf '%s\n' "$password" >"$PG_PASSWORD_FILE"
fi
chmod 0600 "$PG_PASSWORD_FILE" 2>/dev/null || true
[[ "$PG_FERRETDB_ROLE" =~ ^[a-z_][a-z0-9_]*$ ]] || die "PG_FERRETDB_ROLE must be a plain lower-case identifier"
[[ "$PG_FERRETDB_DB" =~ ^[a-z_][a-z0-9_]*$ ]] || die "PG_FERRETDB_DB must be a plain lower-case identifier"

# The password travels on psql's standard input only (never in arguments or logs).
pwsql="${password//\'/\'\'}"
superuser_psql -f - <<SQL
SELECT format('CREATE ROLE %I LOGIN', '$PG_FERRETDB_ROLE')
WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '$PG_FERRETDB_ROLE') \gexec
ALTER ROLE $PG_FERRETDB_ROLE WITH LOGIN PASSWORD '$pwsql';
SELECT format('CREATE DATABASE %I OWNER %I', '$PG_FERRETDB_DB', '$PG_FERRETDB_ROLE')
WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = '$PG_FERRETDB_DB') \gexec
SQL

# URL-encode the password for the URL file (generated ones need none; given ones might).
enc="$(printf '%s' "$password" | od -An -tx1 -v | tr -d ' \n' | sed 's/\(..\)/%\1/g')"
printf 'postgres://%s:%s@%s:%s/%s\n' "$PG_FERRETDB_ROLE" "$enc" "$PG_HOST" "$PG_PORT" "$PG_FERRETDB_DB" >"$PG_URL_FILE"
chmod 0600 "$PG_URL_FILE"

log "ready: role $PG_FERRETDB_ROLE, database $PG_FERRETDB_DB (password in $PG_PASSWORD_FILE; URL with password in $PG_URL_FILE)"
printf 'postgres://%s@%s:%s/%s\n' "$PG_FERRETDB_ROLE" "$PG_HOST" "$PG_PORT" "$PG_FERRETDB_DB"
