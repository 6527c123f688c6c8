#!/usr/bin/env bash
# Issue 9's recordings, for a machine with 2 or more GPUs (run from the repository root):
#   (a) data-parallel GPT-3 XL-shaped training (DDP, NCCL all-reduce of the gradients),
#   (b) tensor-parallel Llama-3.2-3B-shaped training (Megatron-style column/row split, NCCL all-reduce of
#       every layer's outputs),
# one rank<N>/ recording per GPU (trace, NVML telemetry, run.json), then `dvfs-sim validate` on each.
# Card settings are untouched (read-only NVML); NCCL's NVLink SHARP (NVLS) stays off.
set -u
OUT="${OUT:?set OUT to the output directory}"; GPUS="${GPUS:-2}"
export PYTHONPATH=python PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
mkdir -p "$OUT"
nvidia-smi -q > "$OUT/nvidia-smi-q.txt" 2>&1; nvidia-smi topo -m > "$OUT/nvidia-smi-topo.txt" 2>&1
run() {  # name, training arguments...
  local name=$1; shift
  timeout 420 python3 -m torch.distributed.run --standalone --nproc_per_node="$GPUS" -m dvfs_sim.record -o "$OUT/$name" \
    --steps 3:6 --sample-ms 5 --idle-s 1 -- python3 python/dvfs_sim/examples/train_gpt.py "$@" > "$OUT/$name.log" 2>&1
  echo "$name: rc $?" >> "$OUT/status.txt"
  [ -x build/dvfs-sim ] && build/dvfs-sim validate "$OUT/$name" --gpu h200 > "$OUT/$name.validate.txt" 2>&1
}
run "h200x${GPUS}-gpt3xl-ddp" --preset gpt3-xl --ddp --steps 30
run "h200x${GPUS}-llama3.2-3b-tp" --preset llama-3.2-3b --tp --steps 30
cat "$OUT/status.txt"
