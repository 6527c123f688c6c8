#!/bin/bash
# One device call (issue 16, twenty-sixth session): the split file's third_card_memory_loops - idle, the nine held-out
# loops that drew 8 % or more on the second H200 card, and three controls (record_power_suite.py --only micro --filter,
# builders unchanged), with the card's identity read before and after. Role written first in
# models/calibration/h200-power-split.json (third_card_memory_loops).
# Usage (repository root, on the GPU machine): record_round25_on_gpu.sh OUT_DIR  -> OUT_DIR/h200-power-25.tgz
# NVML and nvidia-smi are only read: no clock, power limit or card setting is changed.
: "${1:?usage: record_round25_on_gpu.sh OUT_DIR}"
OUT=$1
# The rule asks for an H200: the device tool may give an H100 for a one-GPU call
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { echo "not an H200: nothing recorded" >&2; exit 2; }
S=$(cd "$(dirname "$0")" && pwd)
R=$(mktemp -d)/h200-power-25
mkdir -p "$R" "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=$S/../../python
. "$S/card_identity.sh"
{ identity; python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"; } > "$R/env.txt" 2>&1
LOOPS="memset-2g|rmsnorm-fp32-fwdbwd|mul-fp32|cumsum-fp32|conv-7x7-s2-3c-224-b64|adamw-fused-200m|argmax-bf16|cross-entropy-50k|conv-dw3x3-256c-28-b64|gemm-bf16-4096|gelu-fp16|cos-bf16"
python3 "$S/record_power_suite.py" --only micro --filter "^(idle|$LOOPS)\$" --out "$R" > "$R/record.log" 2>&1
identity >> "$R/env.txt" 2>&1
grep -h "steady\|failed" "$R"/record.log
tar czf "$OUT/h200-power-25.tgz" -C "$(dirname "$R")" h200-power-25
ls -la "$OUT"
