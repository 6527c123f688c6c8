#!/bin/bash
# One device call (issue 16, twenty-fifth session): the split file's repeat_missed_workloads - the nine held-out whole
# workloads that miss the 8 % native target, each recorded once more by the same command as its shipped recording
# (scripts, arguments and recorder steps unchanged: unseen_scripts/record_unseen_on_gpu.sh, user_scripts/record_all_on_gpu.sh,
# record_power_suite.py --only workloads), with the card's identity read before and after (nvidia-smi queries only).
# Usage (repository root, on the GPU machine): record_repeat_workloads_on_gpu.sh OUT_DIR
#   -> OUT_DIR/h200-repeat-workloads.tar.part-* (split under the device tool's 16 MiB file limit)
# NVML and nvidia-smi are only read: no clock, power limit or card setting is changed.
OUT=$1
S=$(cd "$(dirname "$0")" && pwd)
PKG=$S/../../python
W=$(mktemp -d)/h200-repeat-workloads
mkdir -p "$W/logs" "$OUT"
export PYTHONUNBUFFERED=1
identity() {
  echo "== $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,serial,uuid,pci.bus_id,vbios_version,driver_version,power.limit,clocks.max.sm,clocks.max.mem,temperature.gpu,power.draw --format=csv 2>&1
}
{ identity; python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'cudnn', torch.backends.cudnn.version())"; } > "$W/logs/env.log" 2>&1
rec() {  # rec NAME RECORDER_ARGS... -- python3 SCRIPT ARGS... (as the shipped recordings' scripts call the recorder)
  local name=$1; shift
  local t0=$SECONDS
  PYTHONPATH=$PKG timeout 240 python3 -m dvfs_sim.record -o "$W/$name" "$@" > "$W/logs/$name.log" 2>&1
  echo "$name rc=$? wall=$((SECONDS - t0)) s" | tee -a "$W/logs/summary.log"
  tail -3 "$W/logs/$name.log" | tee -a "$W/logs/summary.log"
}
U=$S/unseen_scripts
rec gat-300k --steps 10:60 -- python3 "$U/gat_train.py"
rec gpu-groupby-16m --steps 5:40 -- python3 "$U/gpu_groupby.py"
rec gcn-train-200k --steps 5:40 -- python3 "$U/gcn_train.py"
rec graph-decode-b16 --steps 30:500 -- python3 "$U/graph_decode.py"
rec gp-fp64-n10k --steps 10:40 -- python3 "$U/gp_fp64_train.py"
rec two-tower-b8192 --steps 10:60 -- python3 "$U/two_tower_retrieval.py"
rec vit-b256 -- python3 "$S/user_scripts/vit_user_train.py" --steps 14 --batch 256
t0=$SECONDS
PYTHONPATH=$PKG timeout 240 python3 "$S/record_power_suite.py" --only workloads --filter '^gpt3xl-train-b2$' --out "$W/suite" > "$W/logs/gpt3xl-train-b2.log" 2>&1
echo "gpt3xl-train-b2 rc=$? wall=$((SECONDS - t0)) s" | tee -a "$W/logs/summary.log"
[ -d "$W/suite/workloads/gpt3xl-train-b2" ] && mv "$W/suite/workloads/gpt3xl-train-b2" "$W/gpt3xl-train-b2" && rm -rf "$W/suite"
rec lightgcn-train-100k --steps 10:300 -- python3 "$U/lightgcn_sparse_train.py"
identity >> "$W/logs/env.log" 2>&1
tar cf - -C "$(dirname "$W")" h200-repeat-workloads | split -b 15m - "$OUT/h200-repeat-workloads.tar.part-"
ls -la "$OUT"
