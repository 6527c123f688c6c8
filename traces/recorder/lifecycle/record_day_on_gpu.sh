#!/bin/bash
# One recording day for issue 20: calibrate the node on the day, then record the jobs, in one device session on one
# machine. day2 (session 6), in this order:
#   1. node probe: staging_copies_job.py (unchanged: 12 staging copies, each os.sync()'d) and save_probe_job.py
#      (torch.save of GPU state dicts of 50 MB..2.2 GB, flushed and fsync'd, three of each; two diagnostic copies);
#   2. cnn_io_job.py and llm_finetune_job.py with their defaults (record_lifecycle_on_gpu.sh).
# day3 and later (session 9, split.json `day3`; SWEEP=0 gives day 2's order): no file is deleted before step 5, then
#   1. staging_copies_job.py (unchanged; its work folder kept);
#   2. folder_sweep_job.py: clean copies of 5k/20k/44k/88k files of 12 kB, their removal, recent copies (44k, 5k);
#   3. save_probe_job.py --no-diag (the 12 saves);
#   4. folder_sweep_job.py --aged: the 44k copy again >= 75 s after the removal;
#   5. the probe's work folders removed and synced (files, free inodes before / after: removal.log), then the jobs.
# Usage: record_day_on_gpu.sh PYTHONPATH_OF_DVFS_SIM OUT_DIR [NAME]
# Writes one file, OUT_DIR/NAME.tgz (default NAME day2): staging-copies/, save-probe/ (and from day 3 folder-sweep/,
# folder-sweep-aged/; each: recording/, job.json, env.log, job.log), jobs/ (cnn-io.tgz, llm-finetune.tgz, env.log,
# summary.log, <job>.log), day.log (from day 3 also fs.log and removal.log, and OUT_DIR/NAME-probe.tgz: the probe part,
# written before the jobs). Removes every generated file. Only reads
# NVML, /proc, sysfs and the disk's superblock (dumpe2fs -h): no card, CPU-frequency, power or kernel setting is changed.
PKG=$1; OUT=$2; NAME=${3:-day2}
case $NAME in day2) SWEEP=${SWEEP:-0} ;; *) SWEEP=${SWEEP:-1} ;; esac
S=$(cd "$(dirname "$0")" && pwd)
D=$(mktemp -d "$PWD/.record_day_XXXXXX")
mkdir -p "$OUT" "$D/$NAME"
R=$D/$NAME
export PYTHONUNBUFFERED=1
log() { echo "== $(date -u +%FT%TZ) $*" | tee -a "$R/day.log"; }
probe() {  # probe NAME TIMEOUT WORK SCRIPT ARGS...: one probe job, its recording and job.json kept under $R/NAME
  local name=$1 lim=$2 work=$3 script=$4; shift 4
  local t0=$SECONDS
  mkdir -p "$R/$name"; cp "$R/staging-copies/env.log" "$R/$name/env.log" 2>/dev/null
  PYTHONPATH=$PKG timeout "$lim" python3 "$S/$script" --out "$work" "$@" > "$R/$name/job.log" 2>&1
  log "$name rc=$? wall=$((SECONDS - t0)) s"; tail -12 "$R/$name/job.log"
  [ -d "$work/recording" ] && cp -r "$work/recording" "$R/$name/recording"
  [ -f "$work/job.json" ] && cp "$work/job.json" "$R/$name/job.json"
}
log "start on $(hostname); $(nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader 2>&1)"
if [ "$SWEEP" = 1 ]; then
  dev=$(df --output=source "$PWD" | tail -1)
  { echo "== $dev (read only)"; findmnt -no FSTYPE,OPTIONS -T "$PWD"
    echo "jbd2 journals (/proc/fs/jbd2): $(ls /proc/fs/jbd2/ 2>&1 | tr '\n' ' ')"  # empty: no ext4 journal is running
    echo "ext4 options: $(cat /proc/fs/ext4/"${dev#/dev/}"/options 2>&1 | tr '\n' ' ')"
    dumpe2fs -h "$dev" 2>&1 | grep -E "dumpe2fs:|features|Inode count|Free inodes|Inodes per group|Inode size|Flex block group|Block size|Journal|Filesystem state"
    df -i "$PWD"; } > "$R/fs.log" 2>&1
  cat "$R/fs.log"
fi
log "1a. staging-copies"
KEEP_WORK=$SWEEP bash "$S/record_staging_copies_on_gpu.sh" "$PKG" "$R/staging-copies" "$D/work-copies" > "$R/staging-copies.out" 2>&1
log "staging-copies rc=$?"; tail -3 "$R/staging-copies.out"
if [ "$SWEEP" = 1 ]; then
  log "1b. folder-sweep (clean, removal, recent)"
  probe folder-sweep 150 "$D/work-sweep" folder_sweep_job.py ${SWEEP_ARGS:-}
  log "1c. save-probe (saves only)"
  probe save-probe 100 "$D/work-save" save_probe_job.py --no-diag ${PROBE_ARGS:-}
  rm -rf "$D/work-save"
  log "1d. folder-sweep-aged"
  probe folder-sweep-aged 120 "$D/work-sweep-aged" folder_sweep_job.py --aged "$D/work-sweep" ${SWEEP_ARGS:-}
  log "1e. removal of the probe's work folders"
  { echo "files: $(find "$D/work-copies" "$D/work-sweep" "$D/work-sweep-aged" -type f 2>/dev/null | wc -l)"
    echo "folders: $(find "$D/work-copies" "$D/work-sweep" "$D/work-sweep-aged" -type d 2>/dev/null | wc -l)"
    echo "free_inodes_before: $(stat -f -c %d "$D")"; echo "t_before_ns: $(date +%s%N)"
    rm -rf "$D/work-copies" "$D/work-sweep" "$D/work-sweep-aged"; sync
    echo "t_synced_ns: $(date +%s%N)"; echo "free_inodes_after: $(stat -f -c %d "$D")"; } > "$R/removal.log" 2>&1
  cat "$R/removal.log" | tee -a "$R/day.log"
  tar czf "$OUT/$NAME-probe.tgz" -C "$D" "$NAME"  # the probe part now: it comes back even if the jobs overrun the call
else
  log "1b. save-probe"
  probe save-probe 200 "$D/work-save" save_probe_job.py ${PROBE_ARGS:-}
  rm -rf "$D/work-save"
fi
log "2. cnn-io and llm-finetune"
bash "$S/record_lifecycle_on_gpu.sh" "$PKG" "$R/jobs" "$D/work-jobs" > "$R/jobs.out" 2>&1
log "jobs rc=$?"; grep -E "rc=" "$R/jobs/summary.log"
rm -rf "$D/work-copies" "$D/work-save" "$D/work-sweep" "$D/work-sweep-aged" "$D/work-jobs"
tar czf "$OUT/$NAME.tgz" -C "$D" "$NAME"
rm -rf "$D"
ls -la "$OUT"
