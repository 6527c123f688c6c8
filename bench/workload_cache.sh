#!/usr/bin/env bash
# Cold vs cached start of the default scenario, end to end (a whole `dvfs-sim run` process), and its peak memory
# per MB of trace: the workload cache's figures (README "Workload cache"; issue 18 targets: < 0.15 s cold,
# < 0.03 s cached).
#   bench/workload_cache.sh [BUILD_DIR] [REPEATS]
# Three ways, each REPEATS times (median wall time, largest max RSS, from GNU time):
#   no cache   DVFS_SIM_NO_CACHE=1: the import alone, as before the cache
#   cold       an empty cache directory: import + write the entry
#   cached     the entry there: read and check it
# then the cached start again to the tenth of a millisecond (bench/process_start.py: 30 whole processes, min and
# median wall and CPU time, interleaved with a bare start and the floor of any program linking SimGrid), and
# `perf stat -r 30` of it where perf runs. COMPARE=OTHER_BUILD_DIR interleaves that build's cached run too (its
# entry is filled first), for a before/after on the same minute.
# The cache lives in a temporary directory (the user's own cache is not touched).
set -eu
BUILD="${1:-build}"; N="${2:-5}"
BIN="$BUILD/dvfs-sim"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
TRACE="$ROOT/traces/recordings/h200-gpt3xl/trace.json.gz"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
export DVFS_SIM_CACHE_DIR="$TMP/cache"

once() {  # label: one run, "wall_s rss_kib cpu_s" appended to $TMP/$label
  /usr/bin/time -f "%e %M %U %S" -o "$TMP/t" "$BIN" run "$ROOT/scenarios/default.json" -o "$TMP/out" >/dev/null 2>"$TMP/err" \
    || { cat "$TMP/err" >&2; exit 1; }
  cat "$TMP/t" >>"$TMP/$1"
}
. "$ROOT/bench/timing.sh"  # median, timing_summary
report() {  # label, description
  local wall cpu rss
  read -r wall cpu rss <<<"$(timing_summary "$TMP/$1")"
  awk -v label="$2" -v w="$wall" -v c="$cpu" -v rss="$rss" -v n="$(wc -l <"$TMP/$1")" -v mb="$MB" -v zmb="$ZMB" 'BEGIN {
    printf "  %-34s %6.3f s wall, %6.3f s CPU (medians of %d)   peak RSS %6.1f MiB = %5.1f MiB per MB of JSON (%5.1f per MB of .gz)\n",
           label, w, c, n, rss / 1024, rss / 1024 / mb, rss / 1024 / zmb }'
}

ZMB=$(awk -v b="$(stat -c %s "$TRACE")" 'BEGIN { print b / 1e6 }')
MB=$(awk -v b="$(gzip -dc "$TRACE" | wc -c)" 'BEGIN { print b / 1e6 }')
echo "dvfs-sim workload cache: default scenario end to end ($(basename "$(dirname "$TRACE")"): ${MB} MB JSON, ${ZMB} MB gzip)"
for _ in $(seq "$N"); do DVFS_SIM_NO_CACHE=1 once nocache; done
for _ in $(seq "$N"); do "$BIN" cache clear >/dev/null; once cold; done
once fill
for _ in $(seq "$N"); do once cached; done
# The floor of any process linking Debian's SimGrid: an empty main() linked with -lsimgrid (its ld.so symbol
# binding and the ns-3 libraries' static initialisers), against the same program linked with nothing.
echo 'int main() { return 0; }' >"$TMP/empty.cpp"
FLOOR=()
if c++ -O2 "$TMP/empty.cpp" -o "$TMP/empty_simgrid" -Wl,--no-as-needed $(pkg-config --libs simgrid) 2>/dev/null &&
   c++ -O2 "$TMP/empty.cpp" -o "$TMP/empty" 2>/dev/null; then
  FLOOR=("empty main() + SimGrid=$TMP/empty_simgrid" "empty main()=$TMP/empty")
fi
RUN="run $ROOT/scenarios/default.json -o $TMP/out"
OTHER=()
if [ -n "${COMPARE:-}" ]; then
  "$COMPARE/dvfs-sim" $RUN >/dev/null 2>&1  # its own entry (another build's data directory is another key)
  OTHER=("cached, $COMPARE=$COMPARE/dvfs-sim $RUN")
fi
PRECISE=$(python3 "$ROOT/bench/process_start.py" --runs 30 "cached=$BIN $RUN" "${OTHER[@]}" \
          "bare start (cache info)=$BIN cache info" "${FLOOR[@]}")
PERF="(perf not available)"
if command -v perf >/dev/null && perf stat -r 1 true >/dev/null 2>&1; then
  PERF=$(perf stat -r 30 "$BIN" $RUN 2>&1 >/dev/null | awk '/task-clock/ { cpu = $1 } /elapsed/ { w = $1 * 1000; pm = $3 * 1000 }
         END { printf "%.1f ms wall (+- %.1f), %.1f ms CPU", w, pm, cpu }')
fi
# Inside one process (no process start): Python's dvfs_sim.run on the default scenario with the entry there (read
# from the cache + simulate), then again (the trace kept in the process); n/a where the module is not built.
INPROC=$(PYTHONPATH="$BUILD/python" /usr/bin/python3 - "$ROOT/scenarios/default.json" 2>/dev/null <<'PY' || true
import sys, time
import dvfs_sim
t = time.perf_counter(); dvfs_sim.run(sys.argv[1]); first = time.perf_counter() - t
t = time.perf_counter(); dvfs_sim.run(sys.argv[1]); second = time.perf_counter() - t
print(f"{first:.3f} s (entry read + simulate), again {second:.3f} s (trace kept in the process)")
PY
)
report nocache "no cache (DVFS_SIM_NO_CACHE=1):"
report cold "cold (empty cache, entry written):"
report cached "cached (entry read):"
"$BIN" cache info | sed -n 's/^  /  cache /p' | head -2
echo "  cached start, whole processes (bench/process_start.py):"
echo "$PRECISE" | sed 's/^/  /'
echo "  perf stat -r 30, cached: $PERF"
echo "  inside one process (Python dvfs_sim.run, cached): ${INPROC:-n/a}"
echo "  targets (issue 18): cold < 0.15 s, cached < 0.03 s; load now: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
