#!/usr/bin/env bash
# Nsight Compute on two held-out whole workloads the model over-prices (split h200-power-split.json
# `ncu_stalled_workloads`, a diagnostic): their scripts run unedited (group-by 3 steps, GAT 1), every kernel
# profiled once per counter pass with --clock-control none (clocks and every card setting untouched). Writes
# OUT_DIR/<name>.csv.gz (ncu's raw page) and OUT_DIR/metrics.txt. ONLY=gat-300k runs the GAT alone.
#   traces/recorder/ncu_workloads.sh OUT_DIR
set -u
OUT_DIR=$1
S=$(cd "$(dirname "$0")" && pwd)/unseen_scripts
mkdir -p "$OUT_DIR"
ncu --query-metrics --chip gh100 > /tmp/ncu_query.txt 2>&1
python3 - "$OUT_DIR/metrics.txt" <<'PY'
import re, sys
known = set(re.findall(r"^(\w+__\w+)", open("/tmp/ncu_query.txt").read(), re.M))
want = ["gpu__time_duration.sum", "sm__cycles_elapsed.avg.per_second", "smsp__issue_active.avg.pct_of_peak_sustained_active",
        "sm__warps_active.avg.pct_of_peak_sustained_active", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
        "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum", "lts__t_sectors_op_atom.sum",
        "lts__t_sectors_op_red.sum", "lts__t_sector_hit_rate.pct", "smsp__thread_inst_executed.sum"]
keep = [m for m in want if m.split(".")[0] in known]
open(sys.argv[1], "w").write(",".join(keep) + "\n")
print("metrics:", len(keep), "missing:", [m for m in want if m.split(".")[0] not in known])
PY
METRICS=$(cat "$OUT_DIR/metrics.txt")
run() {  # NAME LIMIT_S SCRIPT ARGS...
  local name=$1 limit=$2; shift 2
  timeout "$limit" ncu --clock-control none --csv --page raw --print-units base --metrics "$METRICS" \
    --log-file "/tmp/$name.csv" python3 "$@" > "/tmp/$name.out" 2>&1
  echo "$name: exit $?, $(grep -c '^"[0-9]' "/tmp/$name.csv") kernels"; tail -2 "/tmp/$name.out"
  gzip -9 -c "/tmp/$name.csv" > "$OUT_DIR/$name.csv.gz"
}
[ "${ONLY:-}" != gat-300k ] && run gpu-groupby-16m 240 "$S/gpu_groupby.py" --steps 3
run gat-300k 420 "$S/gat_train.py" --steps 1  # one step: ncu replays its ~hundreds of kernels slowly (3 steps outran 300 s)
ls -la "$OUT_DIR"
