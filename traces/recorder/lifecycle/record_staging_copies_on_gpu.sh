#!/bin/bash
# Records staging_copies_job.py (issue 20, session 5: staging copies of 1 GiB, 8 x 128 MiB, 2,000 x 256 KiB and
# 20,000 x 12 kB files, each then os.sync()'d, three times each) on the machine the lifecycle jobs were recorded on,
# with NVML telemetry and host counters (python3 -m dvfs_sim.record layout). ~60 s.
# Usage: record_staging_copies_on_gpu.sh PYTHONPATH_OF_DVFS_SIM OUT_DIR [WORK_DIR]
# Writes OUT_DIR/recording/ (unpacked), OUT_DIR/job.json, OUT_DIR/env.log, OUT_DIR/job.log; removes WORK_DIR's
# generated files (kept when KEEP_WORK=1: the day-3 recording removes them later, so that no deletion precedes its
# folder sweep). Only reads NVML, /proc and sysfs: no card, CPU-frequency, power or kernel setting is changed.
PKG=$1; OUT=$2; WORK=${3:-$PWD/.staging_copies_work}
S=$(cd "$(dirname "$0")" && pwd)
if [ -e "$WORK" ] && [ -n "$(ls -A "$WORK" 2>/dev/null)" ] && [ ! -f "$WORK/job.json" ] && [ ! -d "$WORK/recording" ]; then
  echo "$WORK exists and is not a staging-copies work folder: refusing to delete it" >&2; exit 2
fi
rm -rf "$WORK"; mkdir -p "$WORK" "$OUT"
export PYTHONUNBUFFERED=1
{
  echo "== date: $(date -u +%FT%TZ)"
  echo "== RAPL powercap (read-only check)"; ls /sys/class/powercap/ 2>&1 | head -5
  echo "== CPU"; lscpu 2>&1 | grep -E "^(CPU\(s\)|Model name|Model:|Hypervisor)"
  echo "== memory"; free -g; grep -E "^(Dirty|Writeback|MemTotal|MemAvailable|Cached):" /proc/meminfo
  echo "== dirty-page settings (read only)"
  for k in dirty_ratio dirty_background_ratio dirty_bytes dirty_background_bytes dirty_expire_centisecs dirty_writeback_centisecs; do
    echo "vm.$k = $(cat /proc/sys/vm/$k 2>&1)"; done
  echo "== storage"; df -hT "$WORK" 2>&1; lsblk -o NAME,TYPE,SIZE,ROTA,MODEL 2>&1 | head
  d=$(df --output=source "$WORK" | tail -1 | sed 's|/dev/||; s|[0-9]*$||')
  for k in scheduler nr_requests max_sectors_kb rotational; do echo "queue/$k ($d): $(cat /sys/block/$d/queue/$k 2>&1)"; done
  findmnt -no FSTYPE,OPTIONS -T "$WORK" 2>&1
  echo "== python"; python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"
  nvidia-smi --query-gpu=name,driver_version,power.draw,clocks.sm --format=csv 2>&1
} > "$OUT/env.log" 2>&1
t0=$SECONDS
PYTHONPATH=$PKG timeout 170 python3 "$S/staging_copies_job.py" --out "$WORK" ${COPIES_ARGS:-} > "$OUT/job.log" 2>&1
rc=$?
echo "staging-copies rc=$rc wall=$((SECONDS - t0)) s" | tee -a "$OUT/job.log"
du -sh "$WORK"/* 2>&1 | tee -a "$OUT/job.log"
tail -20 "$OUT/job.log"
[ -d "$WORK/recording" ] && cp -r "$WORK/recording" "$OUT/recording"
[ -f "$WORK/job.json" ] && cp "$WORK/job.json" "$OUT/job.json"
[ "${KEEP_WORK:-0}" = 1 ] || rm -rf "$WORK"
ls -la "$OUT" "$OUT/recording" 2>&1
exit $rc
