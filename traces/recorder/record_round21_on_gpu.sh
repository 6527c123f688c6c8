#!/bin/bash
# One device call (issue 16, twenty-third session): the split file's repeat_loops (repeat-a), its operand_content_gemms
# (record_power_suite.py --only round21), then repeat_loops again (repeat-b), with the card's identity read before and
# after (nvidia-smi queries only). Roles written first in models/calibration/h200-power-split.json.
# Usage (repository root, on the GPU machine): record_round21_on_gpu.sh OUT_DIR  -> OUT_DIR/h200-power-21.tgz
# NVML and nvidia-smi are only read: no clock, power limit or card setting is changed.
OUT=$1
S=$(cd "$(dirname "$0")" && pwd)
R=$(mktemp -d)/h200-power-21
mkdir -p "$R" "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=$S/../../python
identity() {
  echo "== $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,serial,uuid,pci.bus_id,vbios_version,driver_version,power.limit,clocks.max.sm,clocks.max.mem,temperature.gpu,power.draw --format=csv 2>&1
}
{ identity; python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"; } > "$R/env.txt" 2>&1
LOOPS=$(python3 -c "import json; print('|'.join(json.load(open('$S/../../models/calibration/h200-power-split.json'))['repeat_loops']['loops']))")
python3 "$S/record_power_suite.py" --only micro --filter "^($LOOPS)\$" --out "$R/repeat-a" > "$R/record-a.log" 2>&1
python3 "$S/record_power_suite.py" --only round21 --out "$R" > "$R/record.log" 2>&1
python3 "$S/record_power_suite.py" --only micro --filter "^($LOOPS)\$" --out "$R/repeat-b" > "$R/record-b.log" 2>&1
identity >> "$R/env.txt" 2>&1
grep -h "steady\|failed" "$R"/record*.log
tar czf "$OUT/h200-power-21.tgz" -C "$(dirname "$R")" h200-power-21
ls -la "$OUT"
