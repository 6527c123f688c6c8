#!/bin/bash
# One device call (issue 16, twenty-fifth session): the power suite's fit loops (models/calibration/h100-power-split.json
# fit: the H200 split's fit lists) with idle before and after, for an H100 activity fit checked on the held-out loops of
# traces/recordings/h100-power-22; the card's identity read before and after (nvidia-smi queries only). If the call
# lands on an H200 the recording is diagnostic only (the split's rule).
# Usage (repository root, on the GPU machine): record_h100_fit_on_gpu.sh OUT_DIR  -> OUT_DIR/h100-power-23.tgz
# NVML and nvidia-smi are only read: no clock, power limit or card setting is changed.
OUT=$1
S=$(cd "$(dirname "$0")" && pwd)
R=$(mktemp -d)/h100-power-23
mkdir -p "$R" "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=$S/../../python
identity() {
  echo "== $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,serial,uuid,pci.bus_id,vbios_version,driver_version,power.limit,clocks.max.sm,clocks.max.mem,temperature.gpu,power.draw --format=csv 2>&1
}
{ identity; python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"; } > "$R/env.txt" 2>&1
LOOPS=$(python3 -c "import json; f=json.load(open('$S/../../models/calibration/h100-power-split.json'))['fit']; print('|'.join(n for k in f for n in f[k] if n != 'idle'))")
python3 "$S/record_power_suite.py" --only micro --filter "^idle\$" --out "$R/idle-before" > "$R/record-idle-before.log" 2>&1
python3 "$S/record_power_suite.py" --only micro --filter "^($LOOPS)\$" --out "$R" > "$R/record.log" 2>&1
python3 "$S/record_power_suite.py" --only micro --filter "^idle\$" --out "$R/idle-after" > "$R/record-idle-after.log" 2>&1
identity >> "$R/env.txt" 2>&1
grep -h "steady\|failed" "$R"/record*.log
tar czf "$OUT/h100-power-23.tgz" -C "$(dirname "$R")" h100-power-23
ls -la "$OUT"
