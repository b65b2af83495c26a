# shellcheck shell=bash
# Shared settings and helpers for the project-owned PostgreSQL cluster (FerretDB's backend).
# Sourced, never run. Every setting can be overridden from the environment:
#
#   PG_PORT            TCP port on PG_HOST                                            (5433)
#   PG_HOST            listen address (loopback only)                            (127.0.0.1)
#   PG_DIR             cluster directory: data/, run/ (socket), log/, secrets  (.build/pg;
#                      as root with a checkout under a private directory such as /root:
#                      /var/tmp/shardbench-pg-<checksum of the checkout path>)
#   PG_OS_USER         non-root OS user that owns the cluster when run as root (shardbench)
#                      (created as a system user if missing; ignored when not root)
#   PG_BINDIR          directory holding initdb/pg_ctl/postgres/psql   (newest found, see below)
#   PG_FERRETDB_ROLE   login role for FerretDB                                     (ferretdb)
#   PG_FERRETDB_DB     database for FerretDB (owned by that role)                  (ferretdb)
#   PG_FERRETDB_PASSWORD  the role's password; if unset, one is generated once into
#                      PG_DIR/ferretdb.password (mode 0600) and reused. Never printed.
#   PG_FAST            1: fsync/synchronous_commit/full_page_writes off (test data only) (1)
#   PG_START_TIMEOUT   seconds to wait for the server to accept connections              (60)
#   PG_APT_INSTALL     1: apt-get install PostgreSQL when no server binaries are found     (1)
#
# Files for other scripts: PG_DIR/ferretdb.url (0600) holds the full postgres:// URL with the
# password, for FerretDB's -postgresql-url-file.

set -euo pipefail

PG_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PG_PORT="${PG_PORT:-5433}"
PG_HOST="${PG_HOST:-127.0.0.1}"
# others_can_enter DIR: every existing ancestor of DIR is searchable by other users.
others_can_enter() {
  local d="$1"
  while [[ "$d" != "/" && -n "$d" ]]; do
    if [[ -e "$d" ]] && ! find "$d" -maxdepth 0 -perm -o+x | grep -q .; then return 1; fi
    d="$(dirname "$d")"
  done
}
if [[ -z "${PG_DIR:-}" ]]; then
  PG_DIR="$PG_ROOT/.build/pg"
  # As root the cluster belongs to PG_OS_USER, who must reach it: a checkout under a private
  # directory (such as /root) gets its cluster under /var/tmp instead, one per checkout.
  if ((EUID == 0)) && ! others_can_enter "$PG_ROOT"; then
    PG_DIR="/var/tmp/shardbench-pg-$(printf '%s' "$PG_ROOT" | cksum | cut -d' ' -f1)"
  fi
fi
PG_OS_USER="${PG_OS_USER:-shardbench}"
PG_FERRETDB_ROLE="${PG_FERRETDB_ROLE:-ferretdb}"
PG_FERRETDB_DB="${PG_FERRETDB_DB:-ferretdb}"
PG_FAST="${PG_FAST:-1}"
PG_START_TIMEOUT="${PG_START_TIMEOUT:-60}"
PG_APT_INSTALL="${PG_APT_INSTALL:-1}"

PG_DATA="$PG_DIR/data"
PG_RUN="$PG_DIR/run"
PG_LOGDIR="$PG_DIR/log"
# shellcheck disable=SC2034 # used by the scripts that source this file
PG_LOG="$PG_LOGDIR/postgres.log"
# shellcheck disable=SC2034 # used by the scripts that source this file
PG_PASSWORD_FILE="$PG_DIR/ferretdb.password"
# shellcheck disable=SC2034 # used by the scripts that source this file
PG_URL_FILE="$PG_DIR/ferretdb.url"

log() { printf '[postgres] %s\n' "$*" >&2; }
die() { printf '[postgres] error: %s\n' "$*" >&2; exit 1; }

case "$PG_HOST" in
127.* | localhost | ::1) ;;
*) die "PG_HOST=$PG_HOST: the test cluster listens on loopback only" ;;
esac
[[ "$PG_PORT" =~ ^[0-9]+$ ]] || die "PG_PORT=$PG_PORT is not a port number"

# find_bindir prints the directory of the server binaries, or nothing.
find_bindir() {
  if [[ -n "${PG_BINDIR:-}" ]]; then
    [[ -x "$PG_BINDIR/initdb" && -x "$PG_BINDIR/postgres" ]] || die "PG_BINDIR=$PG_BINDIR has no initdb/postgres"
    echo "$PG_BINDIR"
    return
  fi
  # Debian keeps the server binaries off PATH, one directory per major version.
  local d best="" bestv=0 v
  for d in /usr/lib/postgresql/*/bin; do
    [[ -x "$d/initdb" && -x "$d/postgres" && -x "$d/pg_ctl" ]] || continue
    v="$(basename "$(dirname "$d")")"
    [[ "$v" =~ ^[0-9]+$ ]] || continue
    if ((v > bestv)); then best="$d" bestv="$v"; fi
  done
  if [[ -n "$best" ]]; then echo "$best"; return; fi
  local i
  i="$(command -v initdb 2>/dev/null || true)"
  if [[ -n "$i" ]]; then
    i="$(readlink -f "$i")"
    d="$(dirname "$i")"
    [[ -x "$d/postgres" && -x "$d/pg_ctl" ]] && echo "$d"
  fi
  return 0
}

# install_server installs Debian's PostgreSQL server without creating or starting the
# distribution's own cluster (we run our own in PG_DIR).
install_server() {
  ((EUID == 0)) || die "PostgreSQL server binaries not found and not root: install Debian's 'postgresql' package (or set PG_BINDIR)"
  command -v apt-get >/dev/null || die "PostgreSQL server binaries not found and no apt-get: install PostgreSQL (or set PG_BINDIR)"
  log "installing Debian's PostgreSQL server (apt-get install postgresql)"
  # No main cluster on 5432: postgresql-common reads createcluster.d/*.conf.
  mkdir -p /etc/postgresql-common/createcluster.d
  if [[ ! -e /etc/postgresql-common/createcluster.d/00-shardbench-no-main-cluster.conf ]]; then
    printf '# written by shardbench testenv/postgres: do not create a main cluster on install\ncreate_main_cluster = false\n' \
      >/etc/postgresql-common/createcluster.d/00-shardbench-no-main-cluster.conf
  fi
  local t0 apt_opts
  t0=$(date +%s)
  apt_opts=(-y -q -o Dpkg::Use-Pty=0 -o DPkg::Lock::Timeout=300 -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get update -q -o DPkg::Lock::Timeout=300 >"$PG_DIR/apt.log" 2>&1; then
    log "apt-get update failed (continuing with the lists there are); see $PG_DIR/apt.log"
  fi
  if ! apt-get install "${apt_opts[@]}" --no-install-recommends postgresql >>"$PG_DIR/apt.log" 2>&1; then
    tail -n 20 "$PG_DIR/apt.log" >&2
    die "apt-get install postgresql failed; full log in $PG_DIR/apt.log"
  fi
  log "installed in $(($(date +%s) - t0)) s"
}

# as_owner runs a command as the cluster's OS user (root cannot run initdb or postgres).
as_owner() {
  if ((EUID == 0)); then
    (cd / && runuser -u "$PG_OS_USER" -- "$@") # cd: the caller's directory may be private
  else
    "$@"
  fi
}

ensure_os_user() {
  ((EUID == 0)) || return 0
  if ! id -u "$PG_OS_USER" >/dev/null 2>&1; then
    log "creating system user $PG_OS_USER (owns the test cluster; root cannot run initdb)"
    useradd --system --user-group --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin "$PG_OS_USER"
  fi
}

# pg_running exits 0 when a server runs on PG_DATA.
pg_running() {
  [[ -f "$PG_DATA/PG_VERSION" ]] || return 1
  as_owner "$PG_BINDIR/pg_ctl" status -D "$PG_DATA" >/dev/null 2>&1
}

# superuser_psql runs psql as the cluster's bootstrap superuser over the private socket.
superuser_psql() {
  as_owner "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$PG_RUN" -p "$PG_PORT" -d postgres "$@"
}
