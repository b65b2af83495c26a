#!/usr/bin/env bash
# A distributed run on one machine, the way the Kubernetes manifests in docker/kubernetes/
# make it on a cluster: a setup step (schema, load phase) once, then N shardbench
# processes that each get their index in JOB_COMPLETION_INDEX (as an Indexed Job's pods
# do) and one common start time (--start-at), then merge, report and gate of the merged
# directory (the follow-up Job).
#
#   testenv/distributed-run.sh --out results/bf [options] SCENARIO [-- RUN_ARGS...]
#
#   --out DIR          results root: DIR/shard-<i> per process, DIR/merged (required)
#   --shards N         processes (default 4)
#   --bin PATH         the shardbench binary (default bin/shardbench)
#   --lead SECONDS     the common start is this long after the setup step (default 10):
#                      time for every process to connect and prepare
#   --straggle SECONDS start the last process this long after the common start, as a pod
#                      scheduled late would: what it missed goes out at once, counted late
#   --recreate         drop and recreate the schema in the setup step
#   --no-setup         skip the setup step (sim, null and delay backends need none)
#   --gate[=FILE]      gate the merged directory on the scenario's slo (or FILE's rules)
#   --report           render the merged directory's HTML report
# RUN_ARGS go to every `shardbench run` (--backend, --target, --duration, --seed ...).
# Exit status: 0 when every step passed; else the first failing step's.
set -euo pipefail

bin=bin/shardbench shards=4 out="" lead=10 straggle=0 recreate=() setup=1 gate=0 rules=() report=0
while (($#)); do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --shards) shards="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    --lead) lead="$2"; shift 2 ;;
    --straggle) straggle="$2"; shift 2 ;;
    --recreate) recreate=(--recreate); shift ;;
    --no-setup) setup=0; shift ;;
    --gate) gate=1; shift ;;
    --gate=*) gate=1; rules=(--gate "${1#--gate=}"); shift ;;
    --report) report=1; shift ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    -*) echo "distributed-run: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
(($# >= 1)) || { echo "distributed-run: give a scenario file (see --help)" >&2; exit 2; }
[[ -n "$out" ]] || { echo "distributed-run: --out DIR is required" >&2; exit 2; }
scenario="$1"; shift
[[ "${1:-}" == "--" ]] && shift
run_args=("$@")
log() { echo "distributed-run: $*" >&2; }

mkdir -p "$out"
if ((setup)); then
  log "setup: schema and load phase, once"
  "$bin" run "$scenario" "${run_args[@]}" --setup-only "${recreate[@]}"
fi

start_at="$(date -u -d "+${lead} seconds" +%Y-%m-%dT%H:%M:%SZ)"
log "$shards processes, common start $start_at"
pids=()
for ((i = 0; i < shards; i++)); do
  delay=0
  ((i == shards - 1)) && delay="$straggle"
  (
    sleep "$delay"
    # What the Indexed Job's pod i sees: its index in JOB_COMPLETION_INDEX, the count and
    # the start time in its arguments.
    JOB_COMPLETION_INDEX="$i" exec "$bin" run "$scenario" "${run_args[@]}" --shards "$shards" \
      --start-at "$start_at" --no-report --quiet --out "$out/shard-$i"
  ) &
  pids+=("$!")
done
status=0
for i in "${!pids[@]}"; do
  if wait "${pids[$i]}"; then
    log "shard $i of $shards: done"
  else
    rc=$?
    log "shard $i of $shards: exit $rc"
    ((status == 0)) && status=$rc
  fi
done
((status == 0)) || exit "$status"

dirs=()
for ((i = 0; i < shards; i++)); do dirs+=("$out/shard-$i"); done
"$bin" merge "${dirs[@]}" --out "$out/merged"
if ((report)); then
  "$bin" report "$out/merged"
fi
if ((gate)); then
  "$bin" gate "$out/merged" "${rules[@]}"
fi
