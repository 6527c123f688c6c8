#!/bin/bash
# One device call (fortieth session): the split file's communication_and_waiting loops (record_power_suite.py --only
# round40: NCCL exchanges of a one-rank group with itself, NCCL-like waiting kernels, duty cycles that wait on the GPU)
# and, in the same call, the suite's references idle, duty-20ms-50pct, duty-100ms-20pct and copy-d2d-1g (builders
# unchanged), idle again at the end, the card's identity before and after. Role written first in
# models/calibration/h200-power-split.json (communication_and_waiting). Whichever card the device tool gives:
# OUT_DIR/<h200|h100>-power-40.tgz
# Usage (repository root, on the GPU machine): record_round40_on_gpu.sh OUT_DIR
# NVML and nvidia-smi are only read: no clock, power limit or card setting is changed.
: "${1:?usage: record_round40_on_gpu.sh OUT_DIR}"
OUT=$1
S=$(cd "$(dirname "$0")" && pwd)
. "$S/card_identity.sh"
start_recording power-40 "$OUT"
python3 "$S/record_power_suite.py" --only micro --filter '^(idle|duty-20ms-50pct|duty-100ms-20pct|copy-d2d-1g)$' --out "$R" > "$R/record.log" 2>&1
python3 "$S/record_power_suite.py" --only round40 --out "$R" >> "$R/record.log" 2>&1
python3 "$S/record_power_suite.py" --only micro --filter '^idle$' --out "$R/idle-after" >> "$R/record.log" 2>&1
identity >> "$R/env.txt" 2>&1
grep -h "steady\|failed\|FAILED" "$R"/record.log
tar czf "$OUT/$NAME.tgz" -C "$(dirname "$R")" "$NAME"
ls -la "$OUT"
