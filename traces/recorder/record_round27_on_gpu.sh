#!/bin/bash
# One device call (twenty-seventh session), whichever card the device tool gives (models/calibration/h200-power-split.json):
#   an H200 -> third_card_memory_loops (record_round25_on_gpu.sh, unchanged)  -> OUT_DIR/h200-power-25.tgz
#   an H100 -> h100_whole_workloads: nine whole workloads of the H200 blind sets, same scripts, arguments and --steps
#              as their H200 recordings (unseen_scripts/record_unseen_on_gpu.sh)  -> OUT_DIR/h100-workloads.tar.part-*
# Usage (repository root, on the GPU machine): record_round27_on_gpu.sh OUT_DIR
# NVML and nvidia-smi are only read: no clock, power limit or card setting is changed.
# (traces/recordings/h100-workloads was recorded by this script as of 728b2b3, before its common part moved to
# blind_set_on_card.sh; what it runs is unchanged.)
: "${1:?usage: record_round27_on_gpu.sh OUT_DIR}"
. "$(cd "$(dirname "$0")" && pwd)/blind_set_on_card.sh"
blind_set_begin "$1" h100-workloads 120
rec lstm-lm-b64 5:25 -- python3 "$U/lstm_lm.py"
rec unet-denoise-b32 10:50 -- python3 "$U/unet_denoise.py"
rec dlrm-train-b4096 10:200 -- python3 "$U/dlrm_train.py"
rec r3d-video-b8 10:60 -- python3 "$U/conv3d_video_train.py"
rec vae-decode-b4 5:30 -- python3 "$U/vae_decode_infer.py"
rec pointcloud-knn-b32 10:60 -- python3 "$U/pointcloud_knn_train.py"
rec int8-mlp-infer-t4096 10:150 -- python3 "$U/int8_mlp_infer.py"
rec dcgan-train-b256 10:60 -- python3 "$U/dcgan_train.py"
rec unet-seg-train-b16 10:40 -- python3 "$U/unet_seg_train.py"
blind_set_ship
