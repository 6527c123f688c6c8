#!/bin/bash
# One device call (twenty-eighth session), whichever card the device tool gives (models/calibration/h200-power-split.json):
#   an H200 -> third_card_memory_loops (record_round25_on_gpu.sh, unchanged)  -> OUT_DIR/h200-power-25.tgz
#   an H100 -> h100_missed_workloads: the seven H200 blind-set workloads the h200 model misses most, same scripts,
#              arguments and --steps as their H200 recordings (unseen_scripts/record_unseen_on_gpu.sh)
#              -> OUT_DIR/h100-missed.tar.part-*
# Usage (repository root, on the GPU machine): record_round28_on_gpu.sh OUT_DIR
# NVML and nvidia-smi are only read: no clock, power limit or card setting is changed.
: "${1:?usage: record_round28_on_gpu.sh OUT_DIR}"
OUT=$1
S=$(cd "$(dirname "$0")" && pwd)
CARD=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$CARD" in
  *H200*) exec bash "$S/record_round25_on_gpu.sh" "$OUT" ;;
  *H100*) ;;
  *) echo "neither an H200 nor an H100 ($CARD): nothing recorded" >&2; exit 2 ;;
esac
W=$(mktemp -d)/h100-missed
mkdir -p "$W/logs" "$OUT"
export PYTHONUNBUFFERED=1
. "$S/card_identity.sh"
{ identity; python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'cudnn', torch.backends.cudnn.version())"; } > "$W/logs/env.log" 2>&1
U=$S/unseen_scripts
rec() {  # rec NAME WARMUP:PROFILED -- python3 SCRIPT ARGS... (as record_unseen_on_gpu.sh records them)
  local name=$1 steps=$2; shift 3
  local t0=$SECONDS
  PYTHONPATH=$S/../../python timeout 100 python3 -m dvfs_sim.record -o "$W/$name" --steps "$steps" -- "$@" > "$W/logs/$name.log" 2>&1
  echo "$name rc=$? wall=$((SECONDS - t0)) s" | tee -a "$W/logs/summary.log"
  tail -3 "$W/logs/$name.log" | tee -a "$W/logs/summary.log"
}
rec gpu-groupby-16m 5:40 -- python3 "$U/gpu_groupby.py"
rec gat-300k 10:60 -- python3 "$U/gat_train.py"
rec graph-decode-b16 30:500 -- python3 "$U/graph_decode.py"
rec gcn-train-200k 5:40 -- python3 "$U/gcn_train.py"
rec lightgcn-train-100k 10:300 -- python3 "$U/lightgcn_sparse_train.py"
rec two-tower-b8192 10:60 -- python3 "$U/two_tower_retrieval.py"
rec wavenet-b8 10:40 -- python3 "$U/wavenet_train.py"
identity >> "$W/logs/env.log" 2>&1
du -sh "$W"/* | tee -a "$W/logs/summary.log"
for f in "$W"/*/telemetry.csv; do gzip -9 "$f"; done  # for the transfer; unzipped when shipped
tar cf - -C "$(dirname "$W")" h100-missed | split -b 15m - "$OUT/h100-missed.tar.part-"
ls -la "$OUT"
