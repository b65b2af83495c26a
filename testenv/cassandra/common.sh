# shellcheck shell=bash
# Shared settings and helpers for the local Apache Cassandra scripts in testenv/cassandra.
# Sourced, never run. Every setting can be overridden from the environment:
#
#   CASSANDRA_VERSION        cassandra-all version from Maven Central      (5.0.9)
#   CASSANDRA_BASE_DIR       where node directories live      (.build/cassandra-cluster)
#   CASSANDRA_CLUSTER_NAME   cluster_name                                    (shardbench)
#   CASSANDRA_HEAP           -Xms/-Xmx per node                                      (1G)
#   CASSANDRA_HEAP_NEW       -Xmn per node                                         (256M)
#   CASSANDRA_SNITCH         GossipingPropertyFileSnitch | SimpleSnitch
#                                                          (GossipingPropertyFileSnitch)
#   CASSANDRA_DC             data centre of every node                              (dc1)
#   CASSANDRA_RACKS          racks of nodes 1,2,3, comma separated  (rack1,rack2,rack3)
#   CASSANDRA_NUM_TOKENS     num_tokens                                              (16)
#   CASSANDRA_ALLOC_RF       allocate_tokens_for_local_replication_factor             (3)
#   CASSANDRA_FAST           1: settings that make a small test cluster start fast (1)
#   CASSANDRA_RING_DELAY_MS  -Dcassandra.ring_delay_ms when CASSANDRA_FAST=1          (3000)
#   CASSANDRA_START_TIMEOUT  seconds to wait for one node to answer CQL            (300)
#   CASSANDRA_STOP_TIMEOUT   seconds between SIGTERM and SIGKILL                    (60)
#   CASSANDRA_JMX_BASE       JMX port of node 1; node K uses base+K-1             (7199)
#   CASSANDRA_CQL_PORT       native_transport_port on every node address          (9042)
#   CASSANDRA_ADDRESS_BASE   last octet of node 1's address: node K listens on
#                            127.0.0.(base+K-1) and node 1 is the seed                 (1)
#   CASSANDRA_JVM_OPTS       extra JVM options appended to every node's command line
#   MVN                      Maven command                                          (mvn)

set -euo pipefail

CASS_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CASSANDRA_VERSION="${CASSANDRA_VERSION:-5.0.9}"
CASSANDRA_BASE_DIR="${CASSANDRA_BASE_DIR:-$CASS_ROOT/.build/cassandra-cluster}"
CASSANDRA_CLUSTER_NAME="${CASSANDRA_CLUSTER_NAME:-shardbench}"
CASSANDRA_HEAP="${CASSANDRA_HEAP:-1G}"
CASSANDRA_HEAP_NEW="${CASSANDRA_HEAP_NEW:-256M}"
CASSANDRA_SNITCH="${CASSANDRA_SNITCH:-GossipingPropertyFileSnitch}"
CASSANDRA_DC="${CASSANDRA_DC:-dc1}"
CASSANDRA_RACKS="${CASSANDRA_RACKS:-rack1,rack2,rack3}"
CASSANDRA_NUM_TOKENS="${CASSANDRA_NUM_TOKENS:-16}"
CASSANDRA_ALLOC_RF="${CASSANDRA_ALLOC_RF:-3}"
CASSANDRA_FAST="${CASSANDRA_FAST:-1}"
CASSANDRA_RING_DELAY_MS="${CASSANDRA_RING_DELAY_MS:-3000}"
CASSANDRA_START_TIMEOUT="${CASSANDRA_START_TIMEOUT:-300}"
CASSANDRA_STOP_TIMEOUT="${CASSANDRA_STOP_TIMEOUT:-60}"
CASSANDRA_JMX_BASE="${CASSANDRA_JMX_BASE:-7199}"
CASSANDRA_CQL_PORT="${CASSANDRA_CQL_PORT:-9042}"
CASSANDRA_ADDRESS_BASE="${CASSANDRA_ADDRESS_BASE:-1}"
CASSANDRA_JVM_OPTS="${CASSANDRA_JVM_OPTS:-}"
MVN="${MVN:-mvn}"

CASSANDRA_HOME="$CASS_ROOT/.build/cassandra/$CASSANDRA_VERSION"
CASSANDRA_LIB="$CASSANDRA_HOME/lib"
CASSANDRA_MARKER="$CASSANDRA_HOME/.fetched"
CASSANDRA_MAX_NODES=3

# Java 17 module flags, as in Cassandra's own conf/jvm17-server.options.
CASSANDRA_JAVA17_FLAGS=(
  --add-exports java.base/jdk.internal.misc=ALL-UNNAMED
  --add-exports java.base/jdk.internal.ref=ALL-UNNAMED
  --add-exports java.base/sun.nio.ch=ALL-UNNAMED
  --add-exports java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED
  --add-exports java.rmi/sun.rmi.registry=ALL-UNNAMED
  --add-exports java.rmi/sun.rmi.server=ALL-UNNAMED
  --add-exports java.sql/java.sql=ALL-UNNAMED
  --add-exports java.base/java.lang.ref=ALL-UNNAMED
  --add-exports jdk.unsupported/sun.misc=ALL-UNNAMED
  --add-opens java.base/java.lang.module=ALL-UNNAMED
  --add-opens java.base/jdk.internal.loader=ALL-UNNAMED
  --add-opens java.base/jdk.internal.ref=ALL-UNNAMED
  --add-opens java.base/jdk.internal.reflect=ALL-UNNAMED
  --add-opens java.base/jdk.internal.math=ALL-UNNAMED
  --add-opens java.base/jdk.internal.module=ALL-UNNAMED
  --add-opens java.base/jdk.internal.util.jar=ALL-UNNAMED
  --add-opens jdk.management/com.sun.management.internal=ALL-UNNAMED
  --add-opens java.base/sun.nio.ch=ALL-UNNAMED
  --add-opens java.base/java.io=ALL-UNNAMED
  --add-opens java.base/java.nio=ALL-UNNAMED
  --add-opens java.base/java.util.concurrent=ALL-UNNAMED
  --add-opens java.base/java.util=ALL-UNNAMED
  --add-opens java.base/java.util.concurrent.atomic=ALL-UNNAMED
  --add-opens java.base/java.lang=ALL-UNNAMED
  --add-opens java.base/java.math=ALL-UNNAMED
  --add-opens java.base/java.lang.reflect=ALL-UNNAMED
  --add-opens java.base/java.net=ALL-UNNAMED
)

log() { printf '[cassandra %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# check_node K: K must be 1..3.
check_node() {
  if ! [[ "$1" =~ ^[1-9]$ ]] || (($1 > CASSANDRA_MAX_NODES)); then
    die "node number must be 1..$CASSANDRA_MAX_NODES, got '$1'"
  fi
}

node_ip() { echo "127.0.0.$((CASSANDRA_ADDRESS_BASE + $1 - 1))"; }
node_dir() { echo "$CASSANDRA_BASE_DIR/node$1"; }
node_pidfile() { echo "$(node_dir "$1")/cassandra.pid"; }
node_log() { echo "$(node_dir "$1")/logs/system.log"; }
node_jmx_port() { echo $((CASSANDRA_JMX_BASE + $1 - 1)); }
node_rack() {
  local racks
  IFS=, read -r -a racks <<<"$CASSANDRA_RACKS"
  local r="${racks[$(($1 - 1))]:-}"
  [[ -n "$r" ]] || r="${racks[$((${#racks[@]} - 1))]}"
  echo "$r"
}

# port_open HOST PORT: a TCP connection is accepted.
port_open() { timeout 2 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null; }

# proc_alive PID: the process exists and is not a finished zombie. While a JVM exits, its
# main thread can be a zombie while other threads still hold its sockets open, so a zombie
# with more than one task still counts as alive.
proc_alive() {
  [[ -d "/proc/$1" ]] || return 1
  grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null || return 0
  local tasks=("/proc/$1/task/"*)
  ((${#tasks[@]} > 1))
}

# node_config_arg K: the JVM argument that identifies node K's process.
node_config_arg() { echo "-Dcassandra.config=file://$(node_dir "$1")/conf/cassandra.yaml"; }

# node_pid K: the pid of node K if its process is alive and is this node's JVM, else nothing.
node_pid() {
  local pf pid
  pf="$(node_pidfile "$1")"
  [[ -s "$pf" ]] || return 0
  pid="$(<"$pf")"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 0
  if grep -qxzF -- "$(node_config_arg "$1")" "/proc/$pid/cmdline" 2>/dev/null &&
    proc_alive "$pid"; then
    echo "$pid"
  fi
}

# stray_pids K: JVMs running node K's configuration (found by its exact config argument), so
# a lost or stale pid file never leaves a server behind.
stray_pids() {
  local f p
  while IFS= read -r f; do
    p="${f#/proc/}"
    p="${p%/cmdline}"
    ! proc_alive "$p" || echo "$p"
  done < <(grep -lxzF -- "$(node_config_arg "$1")" /proc/[0-9]*/cmdline 2>/dev/null || true)
}

ensure_fetched() {
  [[ -f "$CASSANDRA_MARKER" ]] || "$CASS_ROOT/testenv/cassandra/fetch.sh" >/dev/null
}

# write_config K: cassandra.yaml, logback.xml and cassandra-rackdc.properties of node K.
write_config() {
  local k="$1" dir ip conf
  dir="$(node_dir "$k")"
  ip="$(node_ip "$k")"
  conf="$dir/conf"
  mkdir -p "$conf" "$dir/logs" "$dir/data" "$dir/commitlog" "$dir/saved_caches" \
    "$dir/hints" "$dir/cdc_raw"

  local fast=""
  if [[ "$CASSANDRA_FAST" == 1 ]]; then
    # Small machine (2 cores), small data: few threads, no snapshots on DROP/TRUNCATE.
    fast="
# --- CASSANDRA_FAST=1: a small, fast, disposable test cluster ---
concurrent_reads: 8
concurrent_writes: 8
concurrent_counter_writes: 4
concurrent_materialized_view_writes: 4
concurrent_compactors: 1
memtable_flush_writers: 1
auto_snapshot: false
snapshot_before_compaction: false
# A restarted node waits this long for its peers before it serves CQL (default 10 s, which
# node 1 spends in full when the whole cluster restarts one node at a time).
block_for_peers_timeout_in_secs: 2
"
  fi

  cat >"$conf/cassandra.yaml" <<EOF
# Written by testenv/cassandra (node $k of cluster $CASSANDRA_CLUSTER_NAME). Rewritten on
# every start; edit testenv/cassandra/common.sh instead.
cluster_name: '$CASSANDRA_CLUSTER_NAME'
# Cassandra 4.0+ default. With allocate_tokens_for_local_replication_factor the first node
# takes random tokens and every later node's tokens are chosen by the allocator to balance
# ownership for that RF in its DC: tokens differ from cluster to cluster.
num_tokens: $CASSANDRA_NUM_TOKENS
allocate_tokens_for_local_replication_factor: $CASSANDRA_ALLOC_RF
partitioner: org.apache.cassandra.dht.Murmur3Partitioner

data_file_directories:
  - $dir/data
commitlog_directory: $dir/commitlog
saved_caches_directory: $dir/saved_caches
hints_directory: $dir/hints
cdc_raw_directory: $dir/cdc_raw
commitlog_sync: periodic
commitlog_sync_period: 10000ms

seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "$(node_ip 1):7000"
listen_address: $ip
rpc_address: $ip
storage_port: 7000
native_transport_port: $CASSANDRA_CQL_PORT
start_native_transport: true
endpoint_snitch: $CASSANDRA_SNITCH

authenticator: AllowAllAuthenticator
authorizer: AllowAllAuthorizer
$fast
EOF

  if [[ "$CASSANDRA_SNITCH" == GossipingPropertyFileSnitch ]]; then
    cat >"$conf/cassandra-rackdc.properties" <<EOF
# Written by testenv/cassandra: node $k.
dc=$CASSANDRA_DC
rack=$(node_rack "$k")
EOF
  fi

  cat >"$conf/logback.xml" <<EOF
<configuration scan="false">
  <appender name="FILE" class="ch.qos.logback.core.rolling.RollingFileAppender">
    <file>$dir/logs/system.log</file>
    <!-- Rolled by size only: a roll at midnight while a node starts would cut the log the
         start script reads from its offset (start.sh failed that way at 00:00). -->
    <rollingPolicy class="ch.qos.logback.core.rolling.FixedWindowRollingPolicy">
      <fileNamePattern>$dir/logs/system.log.%i.zip</fileNamePattern>
      <minIndex>1</minIndex>
      <maxIndex>4</maxIndex>
    </rollingPolicy>
    <triggeringPolicy class="ch.qos.logback.core.rolling.SizeBasedTriggeringPolicy">
      <maxFileSize>50MB</maxFileSize>
    </triggeringPolicy>
    <encoder>
      <pattern>%-5level [%thread] %date{ISO8601} %F:%L - %msg%n</pattern>
    </encoder>
  </appender>
  <appender name="STDOUT" class="ch.qos.logback.core.ConsoleAppender">
    <filter class="ch.qos.logback.classic.filter.ThresholdFilter">
      <level>ERROR</level>
    </filter>
    <encoder>
      <pattern>%-5level [%thread] %date{ISO8601} %F:%L - %msg%n</pattern>
    </encoder>
  </appender>
  <root level="INFO">
    <appender-ref ref="FILE"/>
    <appender-ref ref="STDOUT"/>
  </root>
  <logger name="org.apache.cassandra" level="INFO"/>
  <!-- DEBUG here logs "Node /IP:7000 state NORMAL" when this node learns that a peer joined:
       start.sh waits for it, so every node lists every peer in system.peers_v2. -->
  <logger name="org.apache.cassandra.service.StorageService" level="DEBUG"/>
</configuration>
EOF
}

# node_java_args K: the JVM command line of node K (without "java").
node_java_args() {
  local k="$1" dir
  dir="$(node_dir "$k")"
  local jamm
  jamm="$(find "$CASSANDRA_LIB" -maxdepth 1 -name 'jamm-*.jar' | head -n1)"
  [[ -n "$jamm" ]] || die "no jamm jar in $CASSANDRA_LIB (run fetch.sh)"
  local args=(
    "-Xms$CASSANDRA_HEAP" "-Xmx$CASSANDRA_HEAP" "-Xmn$CASSANDRA_HEAP_NEW"
    -XX:+UseG1GC -XX:+HeapDumpOnOutOfMemoryError "-XX:HeapDumpPath=$dir/logs"
    -Xss256k -XX:+PerfDisableSharedMem -Djava.net.preferIPv4Stack=true
    "-javaagent:$jamm" -Djdk.attach.allowAttachSelf=true
    -Dio.netty.tryReflectionSetAccessible=true
    "${CASSANDRA_JAVA17_FLAGS[@]}"
    "-Dcassandra.config=file://$dir/conf/cassandra.yaml"
    "-Dlogback.configurationFile=file://$dir/conf/logback.xml"
    "-Dcassandra.logdir=$dir/logs"
    "-Dcassandra.storagedir=$dir"
    -Dcassandra-foreground=yes
    "-Dcassandra.jmx.local.port=$(node_jmx_port "$k")"
  )
  if [[ "$CASSANDRA_SNITCH" == GossipingPropertyFileSnitch ]]; then
    args+=("-Dcassandra-rackdc.properties=file://$dir/conf/cassandra-rackdc.properties")
  fi
  if [[ "$CASSANDRA_FAST" == 1 ]]; then
    # Cassandra's default ring delay is 30 s: the first node sleeps it before choosing its
    # tokens, a joining node twice (ring information, pending ranges). It also bounds a
    # joining node's first gossip round with the seed, which needs ~2 s on busy CPUs.
    args+=(-Dcassandra.skip_wait_for_gossip_to_settle=0 "-Dcassandra.ring_delay_ms=$CASSANDRA_RING_DELAY_MS")
  fi
  # shellcheck disable=SC2206 # word splitting of the user's extra options is intended
  [[ -z "$CASSANDRA_JVM_OPTS" ]] || args+=($CASSANDRA_JVM_OPTS)
  args+=(-cp "$CASSANDRA_LIB/*" org.apache.cassandra.service.CassandraDaemon)
  printf '%s\n' "${args[@]}"
}

# log_since FILE OFFSET: the part of a log written after byte OFFSET.
# A file now shorter than OFFSET was rolled since: read it whole.
log_since() {
  [[ -f "$1" ]] || return 0
  local off="$2"
  (($(stat -c %s "$1") >= off)) || off=0
  tail -c "+$((off + 1))" "$1"
}

# node_failed K OFFSET REASON: print why node K did not come up, with its log tail.
node_failed() {
  local k="$1" off="$2" dir
  dir="$(node_dir "$k")"
  log "node $k ($(node_ip "$k")) FAILED: $3"
  local errors
  errors="$(log_since "$(node_log "$k")" "$off" | grep -E '^ERROR|^[A-Za-z.]*(Exception|Error): |^Caused by: ' |
    grep -v '^\s*at ' | head -n 8 | cut -c1-300)" || true
  if [[ -n "$errors" ]]; then
    log "---- errors in $(node_log "$k") ----"
    echo "$errors" >&2
  fi
  log "---- last 40 lines of $(node_log "$k") ----"
  log_since "$(node_log "$k")" "$off" | tail -n 40 >&2
  if [[ -s "$dir/logs/stdout.log" ]]; then
    log "---- last 20 lines of $dir/logs/stdout.log ----"
    tail -n 20 "$dir/logs/stdout.log" >&2
  fi
}

# node_ready_in_log K OFFSET: the node's log (since OFFSET) shows it finished starting up:
# it joined the ring (NORMAL) and its native transport listens.
node_ready_in_log() {
  local text
  text="$(log_since "$(node_log "$1")" "$2")"
  grep -q "Starting listening for CQL clients" <<<"$text" &&
    grep -qE "Node /?$(node_ip "$1"):7000 state jump to NORMAL|Startup complete" <<<"$text"
}

# wait_ready K OFFSET START_EPOCH: wait until node K answers CQL. Returns 1 after a timeout
# (the node is killed, its log tail printed), 2 when the process exited (nothing printed).
wait_ready() {
  local k="$1" off="$2" t0="$3" ip now last=0 pid
  ip="$(node_ip "$k")"
  while :; do
    now=$(date +%s)
    pid="$(node_pid "$k")"
    if [[ -z "$pid" ]]; then
      return 2
    fi
    if node_ready_in_log "$k" "$off" && port_open "$ip" "$CASSANDRA_CQL_PORT"; then
      log "node $k ($ip:$CASSANDRA_CQL_PORT) is up: joined and answering CQL after $((now - t0)) s"
      return 0
    fi
    if ((now - t0 >= CASSANDRA_START_TIMEOUT)); then
      node_failed "$k" "$off" "not ready after ${CASSANDRA_START_TIMEOUT} s (CASSANDRA_START_TIMEOUT)"
      stop_node "$k" >/dev/null 2>&1 || true
      return 1
    fi
    if ((now - last >= 15)); then
      last=$now
      log "node $k: starting ($((now - t0)) s) $(log_since "$(node_log "$k")" "$off" |
        grep -E '^(INFO|WARN|ERROR)' | tail -n1 | sed -E 's/^(\S+) +\[[^]]*\] \S+ \S+ \S+ - /\1 /' | cut -c1-110)"
    fi
    sleep 1
  done
}

# gossip_sees_up I J: node I's log says node J is a NORMAL member (its last state line about
# J) and UP (its last UP/DOWN line about J).
gossip_sees_up() {
  local log ip last
  log="$(node_log "$1")"
  ip="$(node_ip "$2")"
  last="$(grep -oE "Node /?$ip:7000 state (jump to )?[A-Za-z_]+" "$log" 2>/dev/null | tail -n1)" || true
  [[ "$last" =~ (NORMAL|normal)$ ]] || return 1
  last="$(grep -oE "InetAddress /?$ip:7000 is now (UP|DOWN)" "$log" 2>/dev/null | tail -n1)" || true
  [[ "$last" == *UP ]]
}

# wait_peers_up K: every other running node and node K see each other as NORMAL and UP, so
# a client that connects to any node right now finds K in system.peers_v2 (and vice versa).
wait_peers_up() {
  local k="$1" j t0 missing
  t0=$(date +%s)
  while :; do
    missing=""
    for j in $(seq 1 "$CASSANDRA_MAX_NODES"); do
      [[ "$j" != "$k" && -n "$(node_pid "$j")" ]] || continue
      gossip_sees_up "$j" "$k" || missing+=" $j->$k"
      gossip_sees_up "$k" "$j" || missing+=" $k->$j"
    done
    if [[ -z "$missing" ]]; then
      (($(date +%s) - t0 < 2)) || log "node $k: all running nodes see each other (after $(($(date +%s) - t0)) s)"
      return 0
    fi
    if (($(date +%s) - t0 >= 60)); then
      log "node $k: after 60 s, gossip still does not show (viewer->node) NORMAL and UP:$missing"
      return 1
    fi
    sleep 0.5
  done
}

# start_node K: start node K (unless it runs already) and wait until it answers CQL.
start_node() {
  local k="$1" dir ip pid pf off=0 t0
  check_node "$k"
  dir="$(node_dir "$k")"
  ip="$(node_ip "$k")"
  pf="$(node_pidfile "$k")"
  t0=$(date +%s)
  pid="$(node_pid "$k")"
  if [[ -z "$pid" ]]; then
    pid="$(stray_pids "$k" | head -n1)"
    [[ -z "$pid" ]] || echo "$pid" >"$pf"
  fi
  if [[ -n "$pid" ]]; then
    log "node $k ($ip) already running (pid $pid)"
    local rc=0
    wait_ready "$k" 0 "$t0" || rc=$?
    if ((rc == 2)); then
      node_failed "$k" 0 "the process exited"
    fi
    ((rc == 0)) || return 1
    wait_peers_up "$k"
    return
  fi
  rm -f "$pf"
  local port host tries
  for port in "$CASSANDRA_CQL_PORT" 7000 "$(node_jmx_port "$k")"; do
    host="$ip"
    [[ "$port" != "$(node_jmx_port "$k")" ]] || host=127.0.0.1
    tries=0
    while port_open "$host" "$port"; do
      # a process that was just stopped may hold its sockets for a moment
      ((++tries < 20)) || die "node $k: $host:$port is in use by another process (not this node)"
      sleep 0.5
    done
  done
  if ((k > 1)); then
    local j others=""
    for j in $(seq 1 "$CASSANDRA_MAX_NODES"); do
      [[ "$j" == "$k" || -z "$(node_pid "$j")" ]] || others+=" $j"
    done
    [[ -n "$others" ]] || die "node $k: no other node runs, so it cannot join; start node 1 (the seed) first"
  fi
  ensure_fetched
  write_config "$k"
  local args attempt rc
  mapfile -t args < <(node_java_args "$k")
  log "node $k ($ip): starting Cassandra $CASSANDRA_VERSION, heap $CASSANDRA_HEAP, dc $CASSANDRA_DC rack $(node_rack "$k"), JMX $(node_jmx_port "$k"), dir $dir"
  : >"$dir/logs/stdout.log"
  for attempt in 1 2 3; do
    off=0
    [[ ! -f "$(node_log "$k")" ]] || off="$(stat -c %s "$(node_log "$k")")"
    rm -f "$pf"
    # A new session, so the server outlives the shell that started it; the child writes its
    # own pid before exec'ing the JVM, so the pid file always names the JVM.
    # shellcheck disable=SC2016 # $$ and $@ belong to the child shell
    setsid bash -c 'echo $$ >"$0"; exec "$@"' "$pf" java "${args[@]}" \
      >>"$dir/logs/stdout.log" 2>&1 </dev/null &
    local _
    for _ in $(seq 1 50); do [[ -s "$pf" ]] && break; sleep 0.1; done
    rc=0
    wait_ready "$k" "$off" "$t0" || rc=$?
    ((rc == 0)) && break
    ((rc == 2)) || return 1
    # A joining node gives up when the seed does not answer its first gossip round within
    # the ring delay (busy CPUs); it has not joined yet, so starting it again is safe.
    if ((attempt < 3)) && log_since "$(node_log "$k")" "$off" |
      grep -qE "Unable to contact any seeds|Unable to gossip with any peers"; then
      log "node $k: could not reach the seed in time (attempt $attempt); starting it again"
      continue
    fi
    node_failed "$k" "$off" "the process exited"
    return 1
  done
  wait_peers_up "$k"
}

# stop_node K [KILL]: SIGTERM node K (SIGKILL at once with KILL), wait, SIGKILL after
# CASSANDRA_STOP_TIMEOUT seconds. Also stops any stray JVM running this node's config.
stop_node() {
  local k="$1" how="${2:-TERM}" pids p t0
  check_node "$k"
  pids="$( (node_pid "$k"; stray_pids "$k") | sort -u)"
  if [[ -z "$pids" ]]; then
    rm -f "$(node_pidfile "$k")"
    return 0
  fi
  t0=$(date +%s)
  log "node $k ($(node_ip "$k")): SIG$how to pid $(echo "$pids" | tr '\n' ' ')"
  for p in $pids; do kill "-$how" "$p" 2>/dev/null || true; done
  local alive
  while :; do
    alive=""
    for p in $pids; do
      ! proc_alive "$p" || alive+=" $p"
    done
    [[ -n "$alive" ]] || break
    if (($(date +%s) - t0 >= CASSANDRA_STOP_TIMEOUT)) && [[ "$how" != KILL ]]; then
      log "node $k: still running after ${CASSANDRA_STOP_TIMEOUT} s, SIGKILL$alive"
      for p in $alive; do kill -KILL "$p" 2>/dev/null || true; done
      how=KILL
    fi
    sleep 0.5
  done
  rm -f "$(node_pidfile "$k")"
  log "node $k stopped after $(($(date +%s) - t0)) s"
}
