#!/usr/bin/env bash
# Client cost benchmark (make bench-client): what one operation costs the client, shardbench
# beside a bare driver loop and, when installed, latte, against one local Apache Cassandra
# node started for it, at the same rates; optionally the same on the MongoDB wire.
#
#   testenv/bench-client.sh            # or: make bench-client
#
# Every client runs the same single-row write (seed 001's session touch: UPDATE
# user_sessions SET last_activity = ? WHERE session_id = ?, at ONE, over 100,000 sessions)
# with 128 concurrent requests and drops what finds them all busy:
#   bare     testenv/bareloop/cql: a paced producer and 128 goroutines, gocql v2 alone
#   sb       shardbench run scenarios/bench/cassandra-client.yaml --backend cassandra
#   latte    latte run testenv/latte/sessions-touch.rn -r RATE --concurrency 128 (if found;
#            it paces cycles itself and drops nothing: its achieved rate is what it managed)
# first at BENCH_RATE, then at the highest rate the node sustains (what the bare loop
# achieves offered BENCH_PROBE_RATE), in alternation (bare, sb, latte; sb, latte, bare; ...),
# so a machine that gets busier part-way hurts every client alike. Client CPU is user + system
# time from /usr/bin/time divided by the operations completed (whole process, start-up and
# schema included), and the CPU of the measured loop alone (from getrusage: the bare loop
# and shardbench's summary.json report it).
#
# Settings (environment):
#   BENCH_RATE=5000            the fixed rate (operations/s)
#   BENCH_SECONDS=20           length of each measured run
#   BENCH_PAIRS=3              runs of each client per rate, alternating
#   BENCH_SAT_RATE=            the saturation rate; empty: probe it with the bare loop
#   BENCH_PROBE_RATE=30000     what the probe offers
#   BENCH_CASSANDRA_ADDRESS=4  the node listens on 127.0.0.N (its own address, so a test
#                              cluster on 127.0.0.1-3 is never touched); data in
#                              .build/bench-client/cassandra, JMX port 7299
#   BENCH_KEEP_NODE=0          1: leave the node running at the end
#   LATTE=                     latte binary (default: on PATH, or .build/latte/bin/latte,
#                              where `cargo install latte-cli --root .build/latte` puts it)
#   BENCH_MONGODB_URI=         also compare shardbench with the bare mongo-driver loop
#                              (testenv/bareloop/mongo) on this server, at BENCH_MONGO_RATE
#                              (default 500) for BENCH_MONGO_SECONDS (default 10)
#
# Output: one line per run, then a table per rate with medians and the ratios to the bare
# loop. Files: .build/bench-client/ (results directories, logs, runs.jsonl).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

rate="${BENCH_RATE:-5000}"
secs="${BENCH_SECONDS:-20}"
pairs="${BENCH_PAIRS:-3}"
sat="${BENCH_SAT_RATE:-}"
probe="${BENCH_PROBE_RATE:-30000}"
out="$root/.build/bench-client"
runs="$out/runs.jsonl"
mkdir -p "$out/bin"
: >"$runs"

export CASSANDRA_ADDRESS_BASE="${BENCH_CASSANDRA_ADDRESS:-4}"
export CASSANDRA_BASE_DIR="${BENCH_CASSANDRA_DIR:-$out/cassandra}"
export CASSANDRA_JMX_BASE="${BENCH_CASSANDRA_JMX:-7299}"
export CASSANDRA_CLUSTER_NAME=benchclient
host="127.0.0.$CASSANDRA_ADDRESS_BASE"

say() { printf '[bench-client %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

say "building shardbench and the bare loops"
make -s build
go build -o "$out/bin/bare-cql" ./testenv/bareloop/cql
go build -o "$out/bin/bare-mongo" ./testenv/bareloop/mongo

latte="${LATTE:-}"
if [[ -z "$latte" ]]; then
  latte="$(command -v latte || true)"
  [[ -n "$latte" || ! -x "$root/.build/latte/bin/latte" ]] || latte="$root/.build/latte/bin/latte"
fi
[[ -n "$latte" ]] && say "latte: $latte ($("$latte" --version 2>/dev/null | head -n1))" ||
  say "latte not found (cargo install latte-cli --root .build/latte, about 5 min): comparing with the bare loop only"

started=0
if testenv/cassandra/status.sh 2>/dev/null | grep -q "node 1 .* up "; then
  say "Cassandra node on $host already running: using it, leaving it running"
else
  say "starting one Cassandra node on $host (data in $CASSANDRA_BASE_DIR)"
  testenv/cassandra/start.sh 1 >&2
  started=1
fi
stop_node() {
  if ((started)) && [[ "${BENCH_KEEP_NODE:-0}" != 1 ]]; then
    say "stopping the Cassandra node"
    testenv/cassandra/stop.sh >&2 || true
  fi
}
trap stop_node EXIT

# timed FILE CMD...: run CMD under /usr/bin/time, user and system seconds into FILE.
timed() {
  local f="$1"
  shift
  /usr/bin/time -f "%U %S %e" -o "$f" "$@"
}

# record CLIENT RATE TIMEFILE COMPLETED DROPPED ERRORS LOOP_CPU_S [EXTRA_JSON]: one line of
# runs.jsonl (LOOP_CPU_S: CPU of the measured loop alone, or "null").
record() {
  python3 - "$@" >>"$runs" <<'PY'
import json, sys
client, rate, tf, done, dropped, errors, loop = sys.argv[1:8]
extra = json.loads(sys.argv[8]) if len(sys.argv) > 8 else {}
u, s, wall = map(float, open(tf).read().split())
done = int(done)
r = {"client": client, "rate": int(rate), "completed": done, "dropped": int(dropped), "errors": int(errors),
     "achieved": done / float(extra.pop("secs")), "cpu_s": u + s, "wall_s": wall,
     "cpu_us_op": 1e6 * (u + s) / max(done, 1),
     "loop_us_op": None if loop == "null" else 1e6 * float(loop) / max(done, 1)}
r.update(extra)
print(json.dumps(r))
PY
  tail -n1 "$runs" | python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
loop = "" if r["loop_us_op"] is None else " (measured loop %.1f)" % r["loop_us_op"]
print("%-6s %6d/s offered: achieved %7.0f/s, %d completed, %d dropped, %d errors; client CPU %.1f µs/op%s" % (
    r["client"], r["rate"], r["achieved"], r["completed"], r["dropped"], r["errors"], r["cpu_us_op"], loop))' >&2
}

run_bare() { # RATE SECONDS
  local j="$out/bare.json" t="$out/bare.time"
  timed "$t" "$out/bin/bare-cql" -hosts "$host" -dc dc1 -rate "$1" -duration "${2}s" >"$j" 2>"$out/bare.log" || {
    say "bare loop failed: $(tail -n3 "$out/bare.log")"
    return 1
  }
  read -r done dropped errs loop stalled < <(python3 -c '
import json, sys; r = json.load(open(sys.argv[1]))
print(r["completed"], r["dropped"], r["errors"], r["cpu_user_s"] + r["cpu_sys_s"], r["stalled"])' "$j")
  record bare "$1" "$t" "$done" "$dropped" "$errs" "$loop" "{\"secs\": $2, \"stalled\": $stalled}"
}

sb_first=1
run_sb() { # RATE SECONDS
  local d="$out/sb-$1" t="$out/sb.time" recreate=()
  ((sb_first)) && recreate=(--recreate)
  sb_first=0
  rm -rf "$d"
  timed "$t" bin/shardbench run scenarios/bench/cassandra-client.yaml --backend cassandra \
    --target "cassandra://$host:9042?dc=dc1" "${recreate[@]}" --quiet --no-report \
    --rate-scale "$(awk -v r="$1" 'BEGIN{print r/5000}')" --duration "${2}s" --out "$d" 2>"$out/sb.log" || {
    say "shardbench failed: $(tail -n3 "$out/sb.log")"
    return 1
  }
  read -r done dropped errs loop late spin < <(python3 -c '
import json, sys; s = json.load(open(sys.argv[1] + "/summary.json")); v = s["variants"][0]; t = v["totals"]
print(t["completed"], t.get("dropped", 0), sum(t.get("errors", {}).values()), (v.get("client") or {}).get("cpu_s", "null"),
      t.get("late", 0), (s.get("dispatch") or {}).get("spin_below_ms", 0))' "$d")
  record sb "$1" "$t" "$done" "$dropped" "$errs" "$loop" "{\"secs\": $2, \"late\": $late, \"spin_below_ms\": $spin}"
}

latte_ready=0
run_latte() { # RATE SECONDS
  [[ -n "$latte" ]] || return 0
  local w="$root/testenv/latte/sessions-touch.rn" t="$out/latte.time" log="$out/latte.log"
  if ((!latte_ready)); then
    (cd "$out" && "$latte" schema "$w" -- "$host") >"$log" 2>&1 || { say "latte schema failed: $(tail -n3 "$log")"; latte=""; return 0; }
    latte_ready=1
  fi
  rm -f "$out/latte.json"
  # latte writes a log file into its working directory: run it in $out.
  (cd "$out" && timed "$t" "$latte" run "$w" -d "${2}s" -r "$1" --threads 1 --concurrency 128 --consistency ONE -q \
    -o "$out/latte.json" -- "$host") >"$log" 2>&1 || {
    say "latte run failed: $(tail -n3 "$log")"
    return 0
  }
  read -r done errs loop < <(python3 -c '
import json, sys; r = json.load(open(sys.argv[1]))["result"]
print(r["cycle_count"], r["error_count"], r["cpu_time_s"])' "$out/latte.json")
  record latte "$1" "$t" "$done" 0 "$errs" "$loop" "{\"secs\": $2}"
}

say "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
say "warm-up: 10 s of the bare loop at $rate/s (JIT, compaction of an empty table)"
"$out/bin/bare-cql" -hosts "$host" -dc dc1 -rate "$rate" -duration 10s >/dev/null 2>&1 || true

if [[ -z "$sat" ]]; then
  "$out/bin/bare-cql" -hosts "$host" -dc dc1 -rate "$probe" -duration 10s >"$out/probe.json" 2>/dev/null
  sat=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(int(r["completed"] / 10 / 100) * 100)' "$out/probe.json")
  say "saturation: the bare loop offered $probe/s achieved $sat/s; every client is offered that"
fi

# Each round runs every client once, starting with a different one each time: the server
# flushes and compacts after a stretch of writes, and no client should always run right
# after another's.
clients=(bare sb latte)
for r in "$rate" "$sat"; do
  say "--- $r/s offered, ${secs} s per run, $pairs runs each, alternating"
  for p in $(seq 0 $((pairs - 1))); do
    for k in 0 1 2; do
      "run_${clients[$(((p + k) % 3))]}" "$r" "$secs"
    done
  done
done

if [[ -n "${BENCH_MONGODB_URI:-}" ]]; then
  mrate="${BENCH_MONGO_RATE:-500}"
  msecs="${BENCH_MONGO_SECONDS:-10}"
  say "--- MongoDB wire ($BENCH_MONGODB_URI): $mrate/s offered, ${msecs} s per run, $pairs runs each"
  for _ in $(seq 1 "$pairs"); do
    t="$out/bare-mongo.time"
    if timed "$t" "$out/bin/bare-mongo" -uri "$BENCH_MONGODB_URI" -rate "$mrate" -duration "${msecs}s" >"$out/bare-mongo.json" 2>"$out/bare-mongo.log"; then
      read -r done dropped errs loop < <(python3 -c '
import json, sys; r = json.load(open(sys.argv[1])); print(r["completed"], r["dropped"], r["errors"], r["cpu_user_s"] + r["cpu_sys_s"])' "$out/bare-mongo.json")
      record bare-m "$mrate" "$t" "$done" "$dropped" "$errs" "$loop" "{\"secs\": $msecs}"
    fi
    d="$out/sb-mongo"
    rm -rf "$d"
    t="$out/sb-mongo.time"
    if timed "$t" bin/shardbench run scenarios/bench/mongo-client.yaml --backend mongo --target "$BENCH_MONGODB_URI" --quiet --no-report \
      --rate-scale "$(awk -v r="$mrate" 'BEGIN{print r/1000}')" --duration "${msecs}s" --out "$d" 2>"$out/sb-mongo.log"; then
      read -r done dropped errs loop < <(python3 -c '
import json, sys; v = json.load(open(sys.argv[1] + "/summary.json"))["variants"][0]; t = v["totals"]
print(t["completed"], t.get("dropped", 0), sum(t.get("errors", {}).values()), (v.get("client") or {}).get("cpu_s", "null"))' "$d")
      record sb-m "$mrate" "$t" "$done" "$dropped" "$errs" "$loop" "{\"secs\": $msecs}"
    fi
  done
fi

say "machine at the end: load average $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$runs" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None
groups = {}
for r in runs:
    base = "bare-m" if r["client"].endswith("-m") else "bare"
    groups.setdefault((base, r["rate"]), {}).setdefault(r["client"], []).append(r)
print()
print("| offered | client | runs | achieved/s | dropped | client CPU µs/op (process) | vs bare | measured loop µs/op | vs bare | achieved vs bare |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for (base, rate), clients in groups.items():
    b = clients.get(base, [])
    bcpu, bloop, bach = (med([r[k] for r in b]) for k in ("cpu_us_op", "loop_us_op", "achieved"))
    def ratio(x, y):
        return "%.2f×" % (x / y) if x is not None and y and c != base else "-"
    for c, rs in clients.items():
        cpu, loop, ach = (med([r[k] for r in rs]) for k in ("cpu_us_op", "loop_us_op", "achieved"))
        drop = med([r["dropped"] for r in rs])
        print("| %d/s | %s | %d | %.0f | %.0f | %.1f | %s | %s | %s | %s |" % (
            rate, c, len(rs), ach, drop, cpu, ratio(cpu, bcpu), "-" if loop is None else "%.1f" % loop,
            ratio(loop, bloop), ratio(ach, bach)))
PY
