#!/usr/bin/env bash
# Regenerates the calibrated model files from the data shipped in this repository, or (--check)
# verifies that the shipped files are exactly what their derivation gives. Run from anywhere after
# building (./setup.sh --build-only). The fit date is fixed so a re-run reproduces the files.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BIN="${DVFS_SIM_BIN:-$ROOT/build/dvfs-sim}"
DATE=2026-11-29
MODE="${1:-}"
cd "$ROOT"
OUT=models/gpus
if [ "$MODE" = "--check" ]; then OUT="$(mktemp -d)"; trap 'rm -rf "$OUT"' EXIT; fi

/usr/bin/python3 models/calibration/h200.py ${MODE:---write} >/dev/null
"$BIN" calibrate --recording traces/recordings/h200-gpt3xl --base models/calibration/h200.base.json \
  --date "$DATE" -o "$OUT/h200.json" >/dev/null
"$BIN" calibrate --profile traces/profiles/perseus/gpt3-175b+a100_sxm_bf16.csv \
  --base models/calibration/a100-sxm4.base.json --date "$DATE" -o "$OUT/a100-sxm4.json" >/dev/null
"$BIN" calibrate --profile traces/profiles/perseus/gpt3-175b+a40_bf16.csv \
  --base models/calibration/a40.base.json --date "$DATE" -o "$OUT/a40.json" >/dev/null

if [ "$MODE" = "--check" ]; then
  status=0
  /usr/bin/python3 models/calibration/siblings.py --check --out "$OUT" || status=1
  for m in h200 a100-sxm4 a40; do
    if ! cmp -s "$OUT/$m.json" "models/gpus/$m.json"; then
      echo "models/gpus/$m.json differs from its derivation (run models/calibration/regenerate.sh)" >&2
      status=1
    fi
  done
  [ $status = 0 ] && echo "calibrated models match their derivation"
  exit $status
fi
/usr/bin/python3 models/calibration/siblings.py
echo "regenerated models/gpus/{h200,a100-sxm4,a40,rtx-3080-ti,b200-like}.json"
