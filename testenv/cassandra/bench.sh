#!/usr/bin/env bash
# Client benchmark against ONE local Cassandra node (start it with: testenv/cassandra/start.sh --clean 1):
# shardbench and cassandra-stress drive the same table (seed 001's user_sessions), the same
# statements (UPDATE last_activity / SELECT by session_id, 1:1) over the same 100,000 keys,
# at the same fixed rate, and then each at its maximum; /usr/bin/time gives each client's
# CPU. Prints one line per run. Usage: testenv/cassandra/bench.sh [RATE] [SECONDS]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
rate="${1:-2000}"
secs="${2:-30}"
profile="$root/testenv/cassandra/stress-sessions.yaml"
scenario="$root/scenarios/bench/cassandra-sessions.yaml"
out="$root/.build/bench"
mkdir -p "$out"
make -s build
sb() { # rate label [flags]
  rm -rf "${out:?}/$2"
  /usr/bin/time -o "$out/$2.time" -f "%U %S %e" bin/shardbench run "$scenario" --backend cassandra "${@:3}" \
    --target 'cassandra://127.0.0.1:9042?dc=dc1' --recreate --no-report --quiet \
    --rate-scale "$(awk -v r="$1" 'BEGIN{print r/5000}')" --duration "${secs}s" --out "$out/$2" >/dev/null 2>&1 || true
  python3 - "$out/$2" "$out/$2.time" "$2" "$secs" <<'PY'
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json")); v = s["variants"][0]; t = v["totals"]
u, sy, wall = map(float, open(sys.argv[2]).read().split())
done, secs = t["completed"], float(sys.argv[4])
# achieved: completions over the variant's measured time (a saturated open-model run
# keeps going until its backlog is served).
print(f"shardbench {sys.argv[3]}: target {t['scheduled']/secs:.0f}/s achieved {done/v['duration_s']:.0f}/s over {v['duration_s']:.0f} s, ok {t['ok']} errors {sum(t.get('errors', {}).values())} late {t.get('late', 0)} dropped {t.get('dropped', 0)}; "
      f"response p50 {t['response']['p50_ms']:.1f} ms p99 {t['response']['p99_ms']:.1f} ms, service p50 {t['service']['p50_ms']:.1f} ms p99 {t['service']['p99_ms']:.1f} ms; "
      f"client CPU {u+sy:.1f} s = {1e6*(u+sy)/max(done,1):.0f} µs/op (wall {wall:.0f} s)")
PY
}
st() { # rate-arg label
  /usr/bin/time -o "$out/$2.time" -f "%U %S %e" testenv/cassandra/stress.sh user profile="$profile" "ops(touch=1,read=1)" \
    duration="${secs}s" no-warmup -rate $1 -node 127.0.0.1 >"$out/$2.log" 2>&1 || true
  read -r u sy wall <"$out/$2.time"
  ops=$(grep -E '^Total partitions|^Op rate' "$out/$2.log" | head -1)
  rate_line=$(grep -E '^Op rate' "$out/$2.log" | sed 's/  */ /g')
  p50=$(grep -E '^Latency median' "$out/$2.log" | awk -F: '{print $2}' | awk '{print $1, $2}')
  p99=$(grep -E '^Latency 99th' "$out/$2.log" | awk -F: '{print $2}' | awk '{print $1, $2}')
  n=$(grep -E '^Op rate' "$out/$2.log" | awk -F: '{gsub(/[ ,]/,"",$2); sub(/op\/s.*/,"",$2); print $2}')
  echo "stress     $2: $rate_line; latency p50 $p50 p99 $p99; client CPU $(awk -v u="$u" -v s="$sy" 'BEGIN{print u+s}') s = $(awk -v u="$u" -v s="$sy" -v n="$n" -v t="$secs" 'BEGIN{printf "%.0f", 1e6*(u+s)/(n*t)}') µs/op incl. JVM start (wall $wall s)"
}
# Populate the keys both read (stress's own keyspace; shardbench reads what its writes made).
testenv/cassandra/stress.sh user profile="$profile" "ops(insert=1)" n=100000 no-warmup -rate threads=32 -node 127.0.0.1 >"$out/populate.log" 2>&1
sb "$rate" "sb-fixed-spin" --spin 2ms
sb "$rate" "sb-fixed-nospin" --spin 0
st "threads=64 fixed=${rate}/s" "st-fixed"
sb 50000 "sb-max"
st "threads=64" "st-max"
