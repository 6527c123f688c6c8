#!/usr/bin/env bash
# Regenerates the calibrated model files from the data shipped in this repository, or (--check)
# verifies that the shipped files are exactly what their derivation gives. Run from anywhere after
# building (./setup.sh --build-only). The fit dates are fixed so a re-run reproduces the files.
#   1. models/calibration/h200.py: the H200 base from the micro-benchmark recording (idle, cap, clocks);
#   2. calibrate --power-suite: the activity power model and voltage curve, fit on the kernel loops that
#      models/calibration/h200-power-split.json lists under fit.micro -> models/calibration/h200.activity.json;
#   3. calibrate --recording: time scaling and the class priors' power scale on the GPT-3 XL recording -> h200;
#      then fp32_gemm_prior.py: the CUDA-core fp32 GEMMs' share of the gemm prior, derived from the fit-set fp32
#      GEMM loop's shaped price (split rule fp32_gemm_prior);
#   4. calibrate --profile: a100-sxm4 and a40 on the Perseus stage profiles;
#   5. siblings.py: the datasheet models rtx-3080-ti, b200-like and h100-sxm (b200-like with the h200 activity
#      block scaled, h100-sxm with it copied: the same chip);
#   6. a100_pcie.py: the A100 80GB PCIe board from a100-sxm4 and the A100 power-limit baselines (issue 22);
#   7. governor_fit.py: the H200 native governor's loop constants, fit on the native replay of the GPT-3 XL
#      recording (fit set) -> models/calibration/h200.governor.json, which step 1 reads; the governor plays no
#      part in steps 2-3 (they replay at the recorded clocks), so one pass of 1-3 after it is a fixed point;
#   8. calibrate --stream-pairs: the contention model of concurrent streams (models/contention/h200-streams.json),
#      fit on the two-stream pairs stream-pairs-split.json lists under fit, read from a directory that holds only
#      those pairs (so the held-out ones cannot reach the fit).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BIN="${DVFS_SIM_BIN:-$ROOT/build/dvfs-sim}"
DATE=2026-11-29
POWER_DATE=2026-12-01
MODE="${1:-}"
cd "$ROOT"
OUT=models/gpus
CAL=models/calibration
if [ "$MODE" = "--check" ]; then OUT="$(mktemp -d)"; CAL="$OUT"; trap 'rm -rf "$OUT"' EXIT; fi
status=0
same() {  # fresh shipped
  if ! cmp -s "$1" "$2"; then
    echo "$2 differs from its derivation (run models/calibration/regenerate.sh)" >&2
    status=1
  fi
}

h200_chain() {  # steps 1-3
  /usr/bin/python3 models/calibration/h200.py ${MODE:---write} >/dev/null || status=1
  "$BIN" calibrate --power-suite traces/recordings/h200-power --power-window traces/recordings/h200-power-window --split models/calibration/h200-power-split.json \
    --base models/calibration/h200.base.json --date "$POWER_DATE" -o "$CAL/h200.activity.json" >/dev/null
  [ "$MODE" = "--check" ] && same "$CAL/h200.activity.json" models/calibration/h200.activity.json
  "$BIN" calibrate --recording traces/recordings/h200-gpt3xl --base models/calibration/h200.activity.json \
    --date "$DATE" -o "$OUT/h200.json" >/dev/null
  /usr/bin/python3 models/calibration/fp32_gemm_prior.py --model "$OUT/h200.json" --bin "$BIN"
}
h200_chain
"$BIN" calibrate --profile traces/profiles/perseus/gpt3-175b+a100_sxm_bf16.csv \
  --base models/calibration/a100-sxm4.base.json --date "$DATE" -o "$OUT/a100-sxm4.json" >/dev/null
"$BIN" calibrate --profile traces/profiles/perseus/gpt3-175b+a40_bf16.csv \
  --base models/calibration/a40.base.json --date "$DATE" -o "$OUT/a40.json" >/dev/null

PAIRS="$(mktemp -d)"
for p in $(/usr/bin/python3 -c 'import json; print(" ".join(json.load(open("models/calibration/stream-pairs-split.json"))["fit"]))'); do
  for part in a b ab; do ln -s "$ROOT/traces/recordings/h200-stream-pairs/$p-$part" "$PAIRS/$p-$part"; done
done
CONTENTION=models/contention/h200-streams.json
[ "$MODE" = "--check" ] && CONTENTION="$OUT/h200-streams.json"
"$BIN" calibrate --stream-pairs "$PAIRS" --split models/calibration/stream-pairs-split.json --base h200 \
  --date "$POWER_DATE" -o "$CONTENTION" >/dev/null
rm -rf "$PAIRS"

if [ "$MODE" = "--check" ]; then
  same "$CONTENTION" models/contention/h200-streams.json
  /usr/bin/python3 models/calibration/siblings.py --check --out "$OUT" || status=1
  /usr/bin/python3 models/calibration/a100_pcie.py --check || status=1
  for m in h200 a100-sxm4 a40; do same "$OUT/$m.json" "models/gpus/$m.json"; done
  /usr/bin/python3 models/calibration/governor_fit.py --check >/dev/null || status=1
  [ $status = 0 ] && echo "calibrated models match their derivation"
  exit $status
fi
# Step 7, then steps 1-3 again so the base carries the fitted governor.
/usr/bin/python3 models/calibration/governor_fit.py --write >/dev/null
h200_chain
/usr/bin/python3 models/calibration/siblings.py
/usr/bin/python3 models/calibration/a100_pcie.py
echo "regenerated models/calibration/h200.activity.json, models/contention/h200-streams.json and models/gpus/{h200,a100-sxm4,a40,rtx-3080-ti,b200-like,a100-pcie}.json"
