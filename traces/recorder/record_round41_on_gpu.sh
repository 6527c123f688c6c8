#!/bin/bash
# One device call (forty-first session): the split file's nccl_transfers_by_bytes loops (record_power_suite.py --only
# round41: NCCL exchanges of a one-rank group with itself, each measured over one long profiled window), one process
# per loop (NCCL reads its channel settings once per process), and in the same call the suite's references idle and
# copy-d2d-1g (builders unchanged), idle again at the end, the card's identity before and after. Role written first in
# models/calibration/h200-power-split.json (nccl_transfers_by_bytes). Whichever card the device tool gives:
# OUT_DIR/<h200|h100>-power-41.tgz and one OUT_DIR/<h200|h100>-power-41-chN.tgz per channel loop (apart: each
# archive under the device tool's 16 MiB)
# Usage (repository root, on the GPU machine): record_round41_on_gpu.sh OUT_DIR
# NVML and nvidia-smi are only read: no clock, power limit or card setting is changed.
: "${1:?usage: record_round41_on_gpu.sh OUT_DIR}"
OUT=$1
S=$(cd "$(dirname "$0")" && pwd)
. "$S/card_identity.sh"
start_recording power-41 "$OUT"
python3 "$S/record_power_suite.py" --only micro --filter '^(idle|copy-d2d-1g)$' --out "$R" > "$R/record.log" 2>&1
for LOOP in 2g 512m 64m 1g-ch1 1g-ch2 1g-ch4 1g-ch8; do
  python3 "$S/record_power_suite.py" --only round41 --filter "^nccl41-sendrecv-$LOOP\$" --out "$R" >> "$R/record.log" 2>&1
done
python3 "$S/record_power_suite.py" --only micro --filter '^idle$' --out "$R/idle-after" >> "$R/record.log" 2>&1
identity >> "$R/env.txt" 2>&1
grep -h "calls\|steady\|failed\|FAILED" "$R"/record.log
du -sh "$R"/*
tar czf "$OUT/$NAME.tgz" -C "$(dirname "$R")" --exclude="$NAME/nccl41-sendrecv-1g-ch*" "$NAME"
for C in 1 2 4 8; do tar czf "$OUT/$NAME-ch$C.tgz" -C "$(dirname "$R")" "$NAME/nccl41-sendrecv-1g-ch$C"; done
ls -la "$OUT"
