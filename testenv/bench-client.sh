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
#   stress   cassandra-stress user profile=testenv/cassandra/stress-sessions.yaml ops(touch=1)
#            -rate threads=128 fixed=RATE/s (if fetched: testenv/cassandra/fetch.sh --stress;
#            a JVM, so only its whole-process CPU, start-up included, is known)
# first at BENCH_RATE, then at the highest rate the node sustains (what the bare loop
# achieves offered BENCH_PROBE_RATE), in rounds that each run every client once, each round
# starting with another client (bare, sb, latte, stress; sb, latte, stress, bare; ...), so a
# machine that gets busier part-way hurts every client alike; each client's ratio to the bare
# loop is also given round by round (the bare run of the same round), the fairest comparison
# on a shared machine. Client CPU is user + system
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
#   BENCH_STRESS=1             0: leave cassandra-stress out even when fetched
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
import json, os, sys
client, rate, tf, done, dropped, errors, loop = sys.argv[1:8]
extra = json.loads(sys.argv[8]) if len(sys.argv) > 8 else {}
u, s, wall = map(float, open(tf).read().split())
done = int(done)
r = {"client": client, "rate": int(rate), "round": int(os.environ.get("ROUND", "0")), "completed": done, "dropped": int(dropped), "errors": int(errors),
     "achieved": done / float(extra.pop("secs")), "cpu_s": u + s, "wall_s": wall,
     "cpu_us_op": 1e6 * (u + s) / max(done, 1),
     "loop_us_op": None if loop == "null" else 1e6 * float(loop) / max(done, 1),
     "load1": float(open("/proc/loadavg").read().split()[0])}
r.update(extra)
print(json.dumps(r))
PY
  tail -n1 "$runs" | python3 -c '
import json, os, sys
r = json.loads(sys.stdin.read())
loop = "" if r["loop_us_op"] is None else " (measured loop %.1f)" % r["loop_us_op"]
stall = "" if r.get("stalled") is None else ", %d over 100 ms" % r["stalled"]
print("%-6s %6d/s offered: achieved %7.0f/s, %d completed, %d dropped%s, %d errors; client CPU %.1f µs/op%s; load %.0f" % (
    r["client"], r["rate"], r["achieved"], r["completed"], r["dropped"], stall, r["errors"], r["cpu_us_op"], loop, r["load1"]))' >&2
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
  # Responses over 100 ms from the intended start, counted as the bare loop counts its stalls.
  stalled=$(python3 testenv/hdr_over.py "$(python3 -c '
import json, sys; print(json.load(open(sys.argv[1] + "/summary.json"))["variants"][0]["totals"]["response"]["histogram"])' "$d")" 100e6)
  record sb "$1" "$t" "$done" "$dropped" "$errs" "$loop" "{\"secs\": $2, \"late\": $late, \"spin_below_ms\": $spin, \"stalled\": $stalled}"
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

stress_ready=0
[[ "${BENCH_STRESS:-1}" == 1 && -f .build/cassandra-stress/.fetched-4.0-alpha2 ]] && stress=1 || stress=0
((stress)) && say "cassandra-stress: $(cat .build/cassandra-stress/.fetched-4.0-alpha2)" ||
  say "cassandra-stress not fetched (testenv/cassandra/fetch.sh --stress) or BENCH_STRESS=0: left out"
run_stress() { # RATE SECONDS
  ((stress)) || return 0
  local t="$out/stress.time" log="$out/stress.log" profile="$root/testenv/cassandra/stress-sessions.yaml"
  if ((!stress_ready)); then # its keyspace and table, outside the measured runs
    testenv/cassandra/stress.sh user profile="$profile" "ops(touch=1)" n=1000 no-warmup cl=ONE \
      -rate threads=8 -node "$host" >"$log" 2>&1 || { say "cassandra-stress failed: $(tail -n3 "$log")"; stress=0; return 0; }
    stress_ready=1
  fi
  timed "$t" testenv/cassandra/stress.sh user profile="$profile" "ops(touch=1)" duration="${2}s" no-warmup cl=ONE \
    -rate threads=128 "fixed=${1}/s" -node "$host" >"$log" 2>&1 || {
    say "cassandra-stress run failed: $(tail -n3 "$log")"
    return 0
  }
  # Operations done: the last progress line's running total ("total, OPS, op/s, ...";
  # its summary's partition count stays 0 for an UPDATE).
  read -r done errs < <(python3 -c '
import re, sys
text = open(sys.argv[1]).read()
totals = re.findall(r"^total,\s*(\d+),", text, re.M)
errs = re.search(r"^Total errors\s*:\s*([\d,]+)", text, re.M)
print(totals[-1] if totals else 0, errs.group(1).replace(",", "") if errs else 0)' "$log")
  record stress "$1" "$t" "$done" 0 "$errs" null "{\"secs\": $2}"
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
clients=(bare sb latte stress)
for r in "$rate" "$sat"; do
  say "--- $r/s offered, ${secs} s per run, $pairs runs each, alternating"
  for p in $(seq 0 $((pairs - 1))); do
    export ROUND=$p
    for k in 0 1 2 3; do
      "run_${clients[$(((p + k) % 4))]}" "$r" "$secs"
    done
  done
done

if [[ -n "${BENCH_MONGODB_URI:-}" ]]; then
  mrate="${BENCH_MONGO_RATE:-500}"
  msecs="${BENCH_MONGO_SECONDS:-10}"
  say "--- MongoDB wire ($BENCH_MONGODB_URI): $mrate/s offered, ${msecs} s per run, $pairs runs each"
  run_bare_m() {
    local t="$out/bare-mongo.time"
    if timed "$t" "$out/bin/bare-mongo" -uri "$BENCH_MONGODB_URI" -rate "$mrate" -duration "${msecs}s" >"$out/bare-mongo.json" 2>"$out/bare-mongo.log"; then
      read -r done dropped errs loop stalled < <(python3 -c '
import json, sys; r = json.load(open(sys.argv[1])); print(r["completed"], r["dropped"], r["errors"], r["cpu_user_s"] + r["cpu_sys_s"], r["stalled"])' "$out/bare-mongo.json")
      record bare-m "$mrate" "$t" "$done" "$dropped" "$errs" "$loop" "{\"secs\": $msecs, \"stalled\": $stalled}"
    fi
  }
  run_sb_m() {
    local d="$out/sb-mongo" t="$out/sb-mongo.time"
    rm -rf "$d"
    if timed "$t" bin/shardbench run scenarios/bench/mongo-client.yaml --backend mongo --target "$BENCH_MONGODB_URI" --quiet --no-report \
      --rate-scale "$(awk -v r="$mrate" 'BEGIN{print r/1000}')" --duration "${msecs}s" --out "$d" 2>"$out/sb-mongo.log"; then
      read -r done dropped errs loop < <(python3 -c '
import json, sys; v = json.load(open(sys.argv[1] + "/summary.json"))["variants"][0]; t = v["totals"]
print(t["completed"], t.get("dropped", 0), sum(t.get("errors", {}).values()), (v.get("client") or {}).get("cpu_s", "null"))' "$d")
      stalled=$(python3 testenv/hdr_over.py "$(python3 -c '
import json, sys; print(json.load(open(sys.argv[1] + "/summary.json"))["variants"][0]["totals"]["response"]["histogram"])' "$d")" 100e6)
      record sb-m "$mrate" "$t" "$done" "$dropped" "$errs" "$loop" "{\"secs\": $msecs, \"stalled\": $stalled}"
    fi
  }
  for p in $(seq 0 $((pairs - 1))); do
    export ROUND=$p
    if ((p % 2)); then run_sb_m; run_bare_m; else run_bare_m; run_sb_m; fi
  done
fi

say "machine at the end: load average $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$runs" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None
def fmt(x, f="%.1f"):
    return "-" if x is None else f % x
groups = {}
for r in runs:
    base = "bare-m" if r["client"].endswith("-m") else "bare"
    groups.setdefault((base, r["rate"]), {}).setdefault(r["client"], []).append(r)
print()
print("Medians over the runs; ratios to the bare loop are the median of the round-by-round ratios")
print("(each client's run against the bare loop's run of the same round).")
print()
print("| offered | client | runs | achieved/s | dropped | over 100 ms | client CPU µs/op (process) | vs bare | measured loop µs/op | vs bare | achieved vs bare |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
pairs = []
for (base, rate), clients in groups.items():
    bare = {r["round"]: r for r in clients.get(base, [])}
    for c, rs in clients.items():
        def ratio(k):
            if c == base:
                return None
            return med([r[k] / bare[r["round"]][k] for r in rs
                        if r["round"] in bare and r[k] is not None and bare[r["round"]][k]])
        if c != base:
            pairs += [(rate, r["round"], c, r, bare[r["round"]]) for r in rs if r["round"] in bare]
        print("| %d/s | %s | %d | %.0f | %.0f | %s | %.1f | %s | %s | %s | %s |" % (
            rate, c, len(rs), med([r["achieved"] for r in rs]), med([r["dropped"] for r in rs]),
            fmt(med([r.get("stalled") for r in rs]), "%.0f"), med([r["cpu_us_op"] for r in rs]),
            fmt(ratio("cpu_us_op"), "%.2f×"), fmt(med([r["loop_us_op"] for r in rs])),
            fmt(ratio("loop_us_op"), "%.2f×"), fmt(ratio("achieved"), "%.2f×")))
print()
print("Round by round (each client against the bare loop's run of the same round):")
print()
print("| offered | round | client | CPU/op process | measured loop | achieved | dropped (client / bare) | over 100 ms (client / bare) |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for rate, rnd, c, r, b in pairs:
    def q(k):
        return "-" if r[k] is None or not b[k] else "%.2f×" % (r[k] / b[k])
    print("| %d/s | %d | %s | %s | %s | %s | %d / %d | %s / %s |" % (
        rate, rnd + 1, c, q("cpu_us_op"), q("loop_us_op"), q("achieved"), r["dropped"], b["dropped"],
        fmt(r.get("stalled"), "%d"), fmt(b.get("stalled"), "%d")))
PY
