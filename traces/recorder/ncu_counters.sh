#!/usr/bin/env bash
# Reads hardware counters of the power suite's kernel loops with Nsight Compute on the H200 machine (issue 16,
# twentieth round; traces/recorder/ncu_counters.py says what runs). Writes into OUT_DIR:
#   metrics.txt     the metrics asked for (the candidates below that this ncu knows for the GPU's chip)
#   counters-G.csv  ncu's raw page per group G (CSV after its ==PROF== lines), loops-G.log the loops in order
#   device.txt      ncu's version, the GPU and its clocks / power limit before and after (nvidia-smi, read only)
# Clocks are left alone: --clock-control none (ncu's default locks them to base). No card setting is changed.
#   traces/recorder/ncu_counters.sh OUT_DIR   (about 9 minutes; each group has its own time limit, since ncu writes a
#   group's file only when its process ends)
set -u
OUT_DIR=$1
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT_DIR"
{ ncu --version; nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.sm,clocks.mem,clocks.max.sm --format=csv; } \
  > "$OUT_DIR/device.txt" 2>&1
CHIP=$(ncu --list-chips 2>/dev/null | tr ', ' '\n\n' | grep -x 'gh100' || echo gh100)
ncu --query-metrics --chip "$CHIP" > /tmp/ncu_query.txt 2>&1
python3 - "$OUT_DIR/metrics.txt" <<'PY'
import re, sys
known = set(re.findall(r"^(\w+__\w+)", open("/tmp/ncu_query.txt").read(), re.M))
want = ["gpu__time_duration.sum", "sm__cycles_elapsed.avg.per_second", "dram__cycles_elapsed.avg.per_second",
        "smsp__inst_executed.sum", "smsp__thread_inst_executed.sum",
        "sm__inst_executed_pipe_alu.sum", "sm__inst_executed_pipe_fma.sum", "sm__inst_executed_pipe_fmaheavy.sum",
        "sm__inst_executed_pipe_xu.sum", "sm__inst_executed_pipe_lsu.sum", "sm__inst_executed_pipe_fp64.sum",
        "sm__inst_executed_pipe_tensor.sum", "sm__inst_executed_pipe_uniform.sum",
        "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
        "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum",
        "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum", "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum",
        "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum",
        "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum", "l1tex__t_bytes.sum",
        "sm__warps_active.avg.pct_of_peak_sustained_active", "sm__throughput.avg.pct_of_peak_sustained_elapsed"]
extra = sorted(b for b in known if re.match(r"sm__(inst_executed_pipe_tensor\w*|pipe_tensor\w*_cycles_active)$", b))
keep = [m for m in want if m.split(".")[0] in known] + [b + ".sum" for b in extra if b + ".sum" not in want]
open(sys.argv[1], "w").write(",".join(keep) + "\n")
print("metrics:", len(keep), "of", len(want) + len(extra), "missing:", [m for m in want if m.split(".")[0] not in known])
PY
METRICS=$(cat "$OUT_DIR/metrics.txt")
run_group() {  # GROUP FILTER LIMIT_S
  timeout "$3" ncu --clock-control none --profile-from-start off --csv --page raw --print-units base \
    --metrics "$METRICS" --log-file "$OUT_DIR/counters-$1.csv" \
    python3 "$HERE/ncu_counters.py" --filter "$2" 2> "$OUT_DIR/loops-$1.log"
  echo "group $1: exit $?, $(grep -c '^loop ' "$OUT_DIR/loops-$1.log") loops, $(grep -c '^failed ' "$OUT_DIR/loops-$1.log") failed"
}
run_group smoke '^add-bf16$' 60
if ! grep -q spin_kernel "$OUT_DIR/counters-smoke.csv" 2>/dev/null; then
  echo "smoke run read no kernel:"; head -c 3000 "$OUT_DIR/counters-smoke.csv"; head -c 2000 "$OUT_DIR/loops-smoke.log"; exit 1
fi
run_group matrix '^(gemm|conv|attn)' 190
run_group rest1 '^(?!gemm|conv|attn|cholesky|trsm)[a-m]' 150
run_group rest2 '^(?!gemm|conv|attn|cholesky|trsm)[n-z]' 150
nvidia-smi --query-gpu=name,power.limit,clocks.sm,clocks.mem --format=csv >> "$OUT_DIR/device.txt" 2>&1
ls -la "$OUT_DIR"
