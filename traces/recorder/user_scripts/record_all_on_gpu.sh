#!/bin/bash
# Records every script of this folder with `python3 -m dvfs_sim.record` (no script edited), as issue 23's
# end-to-end test on an NVIDIA GPU. Usage: record_all_on_gpu.sh PYTHONPATH_OF_DVFS_SIM OUT_DIR [OLD_PYTHONPATH]
# Writes OUT_DIR/<name>.tgz (one recording each) and OUT_DIR/logs.tgz. Only reads NVML; changes no card setting.
PKG=$1; OUT=$2; OLD=$3
S=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d)
export PYTHONUNBUFFERED=1
{ python3 -c "import torch, pynvml; print('torch', torch.__version__, 'cuda', torch.version.cuda)"
  nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.mem --format=csv; } > "$W/env.log" 2>&1
rec() {  # rec NAME RECORDER_ARGS... -- python3 SCRIPT ARGS...
  local name=$1; shift
  local t0=$SECONDS
  PYTHONPATH=$PKG timeout 200 python3 -m dvfs_sim.record -o "$W/$name" "$@" > "$W/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc wall=$((SECONDS - t0)) s" | tee -a "$W/summary.log"
  tail -4 "$W/$name.log" | tee -a "$W/summary.log"
  [ -d "$W/$name" ] && tar czf "$OUT/$name.tgz" -C "$W" "$name"
}
if [ -n "$OLD" ]; then  # the recorder before issue 23, on the issue's own command, for the before/after
  PYTHONPATH=$OLD timeout 200 python3 -m dvfs_sim.record -o "$W/old-vit-b32" -- python3 "$S/vit_user_train.py" --steps 14 --batch 32 > "$W/old-vit-b32.log" 2>&1
  echo "old recorder rc=$?" >> "$W/summary.log"
  PYTHONPATH=$PKG python3 -c "
import gzip, json, collections, sys
d = json.load(gzip.open('$W/old-vit-b32/trace.json.gz'))
ev = d['traceEvents'] if isinstance(d, dict) else d
c = collections.Counter((e.get('cat'), e['name']) for e in ev if str(e.get('name', '')).startswith('step'))
print('old recorder step ranges:', sorted(c.items()))" >> "$W/summary.log" 2>&1
fi
if [ "${ONLY:-}" != second ]; then  # the first run of 2026-12-01
  rec vit-b32 -- python3 "$S/vit_user_train.py" --steps 14 --batch 32
  rec vit-b256 -- python3 "$S/vit_user_train.py" --steps 14 --batch 256
  rec cnn -- python3 "$S/cnn_train.py"
  rec lm-accum -- python3 "$S/lm_grad_accum.py"
  rec infer -- python3 "$S/infer_loop.py"
  rec infer-60 --steps 10:60 -- python3 "$S/infer_loop.py"
else  # the second: a profiled window the counter resolves for the CNN, and a smaller LM trace to ship
  rec cnn-60 --steps 5:60 -- python3 "$S/cnn_train.py"
  rec lm-accum-small -- python3 "$S/lm_grad_accum.py" --layers 4 --per-device-batch 32 --gradient-accumulation-steps 6
fi
tar czf "$OUT/logs.tgz" -C "$W" $(cd "$W" && ls *.log)
cat "$W/env.log" "$W/summary.log"
ls -la "$OUT"
