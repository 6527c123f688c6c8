#!/usr/bin/env bash
# The recordings of 2026-12-01 on one H200 (run from the repository root; OUT = where to write them):
#   1. a Llama-3.2-3B-shaped training run through `python3 -m dvfs_sim.record` (issue 7's recorder),
#   2. data-parallel training under torchrun with NCCL, one rank (the multi-GPU layout rank<N>/ and real
#      NCCL kernel arguments; a single GPU cannot record more ranks),
#   3. decode (generation) with a KV cache for a Qwen2.5-7B-shaped model at batch sizes 16, 64, 256.
# Card settings are untouched: the recorder only reads NVML; nothing here sets clocks or power limits.
set -u
OUT="${OUT:?set OUT to the output directory}"
export PYTHONPATH=python PYTHONUNBUFFERED=1
mkdir -p "$OUT"
nvidia-smi -q > "$OUT/nvidia-smi-q.txt" 2>&1
python3 -c "import torch, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'nccl', torch.cuda.nccl.version())" > "$OUT/versions.txt" 2>&1
python3 -c "import pynvml; print('pynvml', getattr(pynvml, '__version__', '?'))" >> "$OUT/versions.txt" 2>&1

R=h200-llama3.2-3b
timeout 300 python3 -m dvfs_sim.record -o "$OUT/$R" --steps 3:6 --sample-ms 5 --idle-s 2 -- \
  python3 python/dvfs_sim/examples/train_gpt.py --preset llama-3.2-3b --steps 40 > "$OUT/$R.log" 2>&1
echo "training: rc $?" >> "$OUT/status.txt"

R=h200-gpt3xl-ddp1
timeout 240 python3 -m torch.distributed.run --standalone --nproc_per_node=1 -m dvfs_sim.record -o "$OUT/$R" \
  --steps 3:6 --sample-ms 5 --idle-s 1 -- python3 python/dvfs_sim/examples/train_gpt.py --preset gpt3-xl --ddp --steps 30 \
  > "$OUT/$R.log" 2>&1
echo "ddp: rc $?" >> "$OUT/status.txt"

timeout 300 python3 python/dvfs_sim/examples/generate.py --preset qwen2.5-7b --batch 16 64 256 --prompt 512 \
  --warmup 5 --profiled 20 --idle-s 1 -o "$OUT/decode" > "$OUT/decode.log" 2>&1
echo "decode: rc $?" >> "$OUT/status.txt"
cat "$OUT/status.txt"
