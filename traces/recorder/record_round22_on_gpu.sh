#!/bin/bash
# One device call (issue 16, twenty-fifth session): the split file's repeat_held_out - every held-out kernel loop once
# more (record_power_suite.py --only micro --filter, builders unchanged) with idle before and after as a control of the
# card's state, and the card's identity read before and after (nvidia-smi queries only). Roles written first in
# models/calibration/h200-power-split.json (repeat_held_out).
# Usage (repository root, on the GPU machine): record_round22_on_gpu.sh OUT_DIR  -> OUT_DIR/h200-power-22.tgz
# NVML and nvidia-smi are only read: no clock, power limit or card setting is changed.
OUT=$1
S=$(cd "$(dirname "$0")" && pwd)
R=$(mktemp -d)/h200-power-22
mkdir -p "$R" "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=$S/../../python
identity() {
  echo "== $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,serial,uuid,pci.bus_id,vbios_version,driver_version,power.limit,clocks.max.sm,clocks.max.mem,temperature.gpu,power.draw --format=csv 2>&1
}
{ identity; python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"; } > "$R/env.txt" 2>&1
LOOPS=$(python3 -c "import json; print('|'.join(json.load(open('$S/../../models/calibration/h200-power-split.json'))['repeat_held_out']['loops']))")
python3 "$S/record_power_suite.py" --only micro --filter "^idle\$" --out "$R/idle-before" > "$R/record-idle-before.log" 2>&1
python3 "$S/record_power_suite.py" --only micro --filter "^($LOOPS)\$" --out "$R/repeat-c" > "$R/record-c.log" 2>&1
python3 "$S/record_power_suite.py" --only micro --filter "^idle\$" --out "$R/idle-after" > "$R/record-idle-after.log" 2>&1
identity >> "$R/env.txt" 2>&1
grep -h "steady\|failed" "$R"/record*.log
tar czf "$OUT/h200-power-22.tgz" -C "$(dirname "$R")" h200-power-22
ls -la "$OUT"
