#!/usr/bin/env bash
# Runs the shipped scenarios and the validate/compare commands and keeps their outputs, so that a refactor can
# show "every output byte-identical before and after": run it on the old and the new build and diff the two folders.
#   bench/output_digest.sh BUILD_DIR OUT_DIR
# Wall-clock fields (seconds of the machine, not of the simulation) are removed by bench/strip_wall_clock.py.
set -u
BUILD="${1:?BUILD_DIR}"; OUT="${2:?OUT_DIR}"
BIN="$BUILD/dvfs-sim"
mkdir -p "$OUT"
run() {  # name, args...: the command's stdout/stderr, exit code and any -o folder
  local name="$1"; shift
  "$BIN" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"; echo "rc=$?" >>"$OUT/$name.out"
}
for s in scenarios/default.json scenarios/kernel-dvfs/*.json scenarios/multi-gpu/*.json scenarios/critical-path/*.json \
         scenarios/power-budget/llama-70b-128gpu-budget.json scenarios/lifecycle/*.json; do
  n=$(echo "$s" | tr '/' '_' | sed 's/.json$//')
  run "run_$n" run "$s" -o "$OUT/run_$n" --json
done
run compare_h200 compare scenarios/kernel-dvfs/h200.json --policies max,static-best,pass-level,per-kernel,per-kernel-online,latency-aware --budget 1 --latency 0 --json -o "$OUT/compare_h200"
run compare_3080 compare scenarios/kernel-dvfs/rtx-3080-ti.json --budget 1 --json -o "$OUT/compare_3080"
run validate_models validate --models --json
run validate_gpt3xl validate traces/recordings/h200-gpt3xl --gpu h200 --json
run validate_perseus_a100 validate --perseus traces/perseus-runs/a100_gpt3-xl_pp4 --no-frontier --json
run validate_perseus_runs validate --perseus-runs traces/perseus-runs/a100_gpt3-xl_pp4 --json
run synth_small synth --model gpt3-xl --tp 1 --pp 4 --dp 2 --json
run synth_cp synth --model llama-3.3-70b --tp 8 --pp 8 --dp 2 --policy critical-path --json
run control_7b control scenarios/power-budget/grpo-7b-16gpu.json --controller uncontrolled,static-cap,pid,rl --seed 7 --duration 60 --json
run fleet fleet scenarios/power-budget/fleet-mixed.json --json
python3 "$(dirname "$0")/strip_wall_clock.py" "$OUT"
