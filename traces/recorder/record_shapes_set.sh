#!/usr/bin/env bash
# Re-records, with operator input shapes (the recorder's record_shapes=True, issue 16), the two workloads the
# studies replay: GPT-3 XL training at batch 8 (the per-kernel DVFS study) and Qwen2.5-7B-shaped decode at batch
# 16 / 64 / 256 (the GRPO generation phase of the power-budget and fleet studies). Same commands as the
# shape-less recordings of 2026-11-29 / 2026-12-01 (traces/recordings/PROVENANCE.md). Card settings untouched.
set -u
OUT="${OUT:?set OUT to the output directory}"
export PYTHONPATH=python PYTHONUNBUFFERED=1
mkdir -p "$OUT"
R=h200-gpt3xl-shapes
timeout 300 python3 -m dvfs_sim.record -o "$OUT/$R" --steps 3:6 --sample-ms 5 --idle-s 2 -- \
  python3 python/dvfs_sim/examples/train_gpt.py --preset gpt3-xl --steps 30 > "$OUT/$R.log" 2>&1
echo "gpt3xl: rc $?" >> "$OUT/status.txt"
timeout 300 python3 python/dvfs_sim/examples/generate.py --preset qwen2.5-7b --batch 16 64 256 --prompt 512 \
  --warmup 5 --profiled 20 --idle-s 1 -o "$OUT/h200-decode-shapes" > "$OUT/decode.log" 2>&1
echo "decode: rc $?" >> "$OUT/status.txt"
cat "$OUT/status.txt"
