#!/bin/bash
# One device call (twenty-eighth session), whichever card the device tool gives (models/calibration/h200-power-split.json):
#   an H200 -> third_card_memory_loops (record_round25_on_gpu.sh, unchanged)  -> OUT_DIR/h200-power-25.tgz
#   an H100 -> h100_missed_workloads: the seven H200 blind-set workloads the h200 model misses most, same scripts,
#              arguments and --steps as their H200 recordings (unseen_scripts/record_unseen_on_gpu.sh)
#              -> OUT_DIR/h100-missed.tar.part-*
# Usage (repository root, on the GPU machine): record_round28_on_gpu.sh OUT_DIR
# NVML and nvidia-smi are only read: no clock, power limit or card setting is changed.
: "${1:?usage: record_round28_on_gpu.sh OUT_DIR}"
. "$(cd "$(dirname "$0")" && pwd)/blind_set_on_card.sh"
blind_set_begin "$1" h100-missed 100
rec gpu-groupby-16m 5:40 -- python3 "$U/gpu_groupby.py"
rec gat-300k 10:60 -- python3 "$U/gat_train.py"
rec graph-decode-b16 30:500 -- python3 "$U/graph_decode.py"
rec gcn-train-200k 5:40 -- python3 "$U/gcn_train.py"
rec lightgcn-train-100k 10:300 -- python3 "$U/lightgcn_sparse_train.py"
rec two-tower-b8192 10:60 -- python3 "$U/two_tower_retrieval.py"
rec wavenet-b8 10:40 -- python3 "$U/wavenet_train.py"
blind_set_ship
