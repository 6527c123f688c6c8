#!/usr/bin/env bash
# The streaming Kineto import's figures on a large trace, whole `dvfs-sim run` processes (README "Limits and bad
# input", issue 18 targets: the 200 MB trace in < 1.5 s and < 300 MB peak).
#   [DENSE=1] bench/streaming_import.sh [BUILD_DIR] [REPEATS] [MB]   (DENSE=1: the kernel-dense trace, make_big_trace.py --dense)
# Makes the trace with bench/make_big_trace.py (recorded events of the default scenario's recording repeated to MB
# megabytes, kept in $TMPDIR between runs), then runs the default scenario's GPU and policy on it with no workload
# cache: the streaming reader (what users get) REPEATS times (median wall and CPU time, largest peak RSS from GNU
# time), and the checked reader once (DVFS_SIM_KINETO_READER=checked: the whole document through nlohmann, as
# before the streaming reader). Times include the process start and the simulation.
set -eu
BUILD="${1:-build}"; N="${2:-3}"; MB="${3:-200}"; DENSE="${DENSE:-0}"
BIN="$BUILD/dvfs-sim"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SUFFIX=""; DENSE_ARG=()
if [ "$DENSE" = 1 ]; then SUFFIX="-dense"; DENSE_ARG=(--dense); fi
TRACE="${TMPDIR:-/tmp}/dvfs-sim-big-trace-${MB}mb${SUFFIX}.json"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
[ -f "$TRACE" ] || python3 "$ROOT/bench/make_big_trace.py" "$TRACE" --mb "$MB" "${DENSE_ARG[@]}"
printf '{"name": "big", "trace": "%s", "gpu": "h200", "policy": "native", "output": {"dir": "%s/out", "timeline_interval_s": 0.01}}\n' \
  "$TRACE" "$TMP" >"$TMP/scenario.json"
export DVFS_SIM_NO_CACHE=1
once() {  # label [env...]: one run, "wall_s rss_kib cpu_s" appended to $TMP/$label
  local label="$1"; shift
  env "$@" /usr/bin/time -f "%e %M %U %S" -o "$TMP/t" "$BIN" run "$TMP/scenario.json" >"$TMP/run.out" 2>"$TMP/err" \
    || { cat "$TMP/err" >&2; exit 1; }
  cat "$TMP/t" >>"$TMP/$label"
}
. "$ROOT/bench/timing.sh"  # median, timing_summary
report() {  # label, description
  local wall cpu rss
  read -r wall cpu rss <<<"$(timing_summary "$TMP/$1")"
  awk -v label="$2" -v w="$wall" -v c="$cpu" -v rss="$rss" -v n="$(wc -l <"$TMP/$1")" -v mb="$SIZE" 'BEGIN {
    printf "  %-30s %6.2f s wall, %6.2f s CPU (medians of %d)   peak RSS %6.0f MiB (%4.0f MB) = %4.2f MiB per MB of JSON\n",
           label, w, c, n, rss / 1024, rss * 1.024 / 1000, rss / 1024 / mb }'
}
SIZE=$(awk -v b="$(stat -c %s "$TRACE")" 'BEGIN { print b / 1e6 }')
for _ in $(seq "$N"); do once streaming; done
once checked DVFS_SIM_KINETO_READER=checked
echo "dvfs-sim streaming import: $(sed -n 2p "$TMP/run.out" | sed 's/^trace //') (${SIZE} MB JSON), whole dvfs-sim run"
report streaming "streaming reader (default):"
report checked "checked reader (before):"
echo "  targets (issue 18): < 1.5 s and < 300 MB peak; load now: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
