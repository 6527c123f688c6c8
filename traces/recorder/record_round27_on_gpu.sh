#!/bin/bash
# One device call (twenty-seventh session), whichever card the device tool gives (models/calibration/h200-power-split.json):
#   an H200 -> third_card_memory_loops (record_round25_on_gpu.sh, unchanged)  -> OUT_DIR/h200-power-25.tgz
#   an H100 -> h100_whole_workloads: nine whole workloads of the H200 blind sets, same scripts, arguments and --steps
#              as their H200 recordings (unseen_scripts/record_unseen_on_gpu.sh)  -> OUT_DIR/h100-workloads.tar.part-*
# Usage (repository root, on the GPU machine): record_round27_on_gpu.sh OUT_DIR
# NVML and nvidia-smi are only read: no clock, power limit or card setting is changed.
: "${1:?usage: record_round27_on_gpu.sh OUT_DIR}"
OUT=$1
S=$(cd "$(dirname "$0")" && pwd)
CARD=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$CARD" in
  *H200*) exec bash "$S/record_round25_on_gpu.sh" "$OUT" ;;
  *H100*) ;;
  *) echo "neither an H200 nor an H100 ($CARD): nothing recorded" >&2; exit 2 ;;
esac
W=$(mktemp -d)/h100-workloads
mkdir -p "$W/logs" "$OUT"
export PYTHONUNBUFFERED=1
. "$S/card_identity.sh"
{ identity; python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'cudnn', torch.backends.cudnn.version())"; } > "$W/logs/env.log" 2>&1
U=$S/unseen_scripts
rec() {  # rec NAME WARMUP:PROFILED -- python3 SCRIPT ARGS... (as record_unseen_on_gpu.sh records them)
  local name=$1 steps=$2; shift 3
  local t0=$SECONDS
  PYTHONPATH=$S/../../python timeout 120 python3 -m dvfs_sim.record -o "$W/$name" --steps "$steps" -- "$@" > "$W/logs/$name.log" 2>&1
  echo "$name rc=$? wall=$((SECONDS - t0)) s" | tee -a "$W/logs/summary.log"
  tail -3 "$W/logs/$name.log" | tee -a "$W/logs/summary.log"
}
rec lstm-lm-b64 5:25 -- python3 "$U/lstm_lm.py"
rec unet-denoise-b32 10:50 -- python3 "$U/unet_denoise.py"
rec dlrm-train-b4096 10:200 -- python3 "$U/dlrm_train.py"
rec r3d-video-b8 10:60 -- python3 "$U/conv3d_video_train.py"
rec vae-decode-b4 5:30 -- python3 "$U/vae_decode_infer.py"
rec pointcloud-knn-b32 10:60 -- python3 "$U/pointcloud_knn_train.py"
rec int8-mlp-infer-t4096 10:150 -- python3 "$U/int8_mlp_infer.py"
rec dcgan-train-b256 10:60 -- python3 "$U/dcgan_train.py"
rec unet-seg-train-b16 10:40 -- python3 "$U/unet_seg_train.py"
identity >> "$W/logs/env.log" 2>&1
du -sh "$W"/* | tee -a "$W/logs/summary.log"
for f in "$W"/*/telemetry.csv; do gzip -9 "$f"; done  # for the transfer; unzipped when shipped
tar cf - -C "$(dirname "$W")" h100-workloads | split -b 15m - "$OUT/h100-workloads.tar.part-"
ls -la "$OUT"
