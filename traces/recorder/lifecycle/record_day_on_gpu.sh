#!/bin/bash
# One recording day for issue 20 (session 6): calibrate the node on the day, then record the jobs. In this order, in
# one device session on one machine:
#   1. node probe: staging_copies_job.py (unchanged: 12 staging copies, each os.sync()'d) and save_probe_job.py
#      (torch.save of GPU state dicts of 50 MB..2.2 GB, flushed and fsync'd, three of each; two diagnostic copies);
#   2. cnn_io_job.py and llm_finetune_job.py with their defaults (record_lifecycle_on_gpu.sh).
# Usage: record_day_on_gpu.sh PYTHONPATH_OF_DVFS_SIM OUT_DIR [NAME]
# Writes one file, OUT_DIR/NAME.tgz (default NAME day2): staging-copies/, save-probe/ (each: recording/, job.json,
# env.log, job.log), jobs/ (cnn-io.tgz, llm-finetune.tgz, env.log, summary.log, <job>.log) and day.log. Removes every
# generated file. Only reads NVML, /proc and sysfs: no card, CPU-frequency, power or kernel setting is changed.
PKG=$1; OUT=$2; NAME=${3:-day2}
S=$(cd "$(dirname "$0")" && pwd)
D=$(mktemp -d "$PWD/.record_day_XXXXXX")
mkdir -p "$OUT" "$D/$NAME"
R=$D/$NAME
export PYTHONUNBUFFERED=1
log() { echo "== $(date -u +%FT%TZ) $*" | tee -a "$R/day.log"; }
log "start on $(hostname); $(nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader 2>&1)"
log "1a. staging-copies"
bash "$S/record_staging_copies_on_gpu.sh" "$PKG" "$R/staging-copies" "$D/work-copies" > "$R/staging-copies.out" 2>&1
log "staging-copies rc=$?"; tail -3 "$R/staging-copies.out"
log "1b. save-probe"
mkdir -p "$R/save-probe"; W=$D/work-save; t0=$SECONDS
cp "$R/staging-copies/env.log" "$R/save-probe/env.log" 2>/dev/null
PYTHONPATH=$PKG timeout 200 python3 "$S/save_probe_job.py" --out "$W" ${PROBE_ARGS:-} > "$R/save-probe/job.log" 2>&1
log "save-probe rc=$? wall=$((SECONDS - t0)) s"; tail -12 "$R/save-probe/job.log"
[ -d "$W/recording" ] && cp -r "$W/recording" "$R/save-probe/recording"
[ -f "$W/job.json" ] && cp "$W/job.json" "$R/save-probe/job.json"
rm -rf "$W"
log "2. cnn-io and llm-finetune"
bash "$S/record_lifecycle_on_gpu.sh" "$PKG" "$R/jobs" "$D/work-jobs" > "$R/jobs.out" 2>&1
log "jobs rc=$?"; grep -E "rc=" "$R/jobs/summary.log"
rm -rf "$D/work-copies" "$D/work-save" "$D/work-jobs"
tar czf "$OUT/$NAME.tgz" -C "$D" "$NAME"
rm -rf "$D"
ls -la "$OUT"
