#!/bin/bash
# Ships one recording day made by record_day_on_gpu.sh (issue 20): unpacks SRC (the folder NAME.tgz unpacked to, holding
# staging-copies/, save-probe/, jobs/, day.log; from day 3 folder-sweep/, folder-sweep-aged/, fs.log, removal.log)
# into traces/recordings/h200-lifecycle/NAME/ as
#   staging-copies/ save-probe/ [folder-sweep/ folder-sweep-aged/] cnn-io/ llm-finetune/   (each: job.json, recording/)
#   logs/                            (env logs, job logs, day.log, summary.log; fs.log and removal.log where recorded)
# and appends their SHA-256 to traces/recordings/SHA256SUMS.lifecycle. Run from the repository root.
# Usage: import_day.sh SRC NAME
set -e
SRC=$1; NAME=$2
DST=traces/recordings/h200-lifecycle/$NAME
[ -e "$DST" ] && { echo "$DST exists: refusing to overwrite it" >&2; exit 2; }
mkdir -p "$DST/logs"
for n in staging-copies save-probe folder-sweep folder-sweep-aged; do
  [ -d "$SRC/$n/recording" ] || { case $n in folder-sweep*) [ -f "$SRC/fs.log" ] || continue ;; esac
                                  echo "missing: $SRC/$n/recording" >&2; continue; }
  mkdir -p "$DST/$n"; cp -r "$SRC/$n/recording" "$DST/$n/"; cp "$SRC/$n/job.json" "$DST/$n/"
  cp "$SRC/$n/env.log" "$DST/logs/$n-env.log"; cp "$SRC/$n/job.log" "$DST/logs/$n.log"
done
for n in cnn-io llm-finetune; do
  [ -f "$SRC/jobs/$n.tgz" ] || { echo "missing: $SRC/jobs/$n.tgz" >&2; continue; }
  mkdir -p "$DST/$n"; tar xzf "$SRC/jobs/$n.tgz" -C "$DST/$n"; cp "$SRC/jobs/$n.log" "$DST/logs/"
done
cp "$SRC/jobs/env.log" "$DST/logs/jobs-env.log"; cp "$SRC/jobs/summary.log" "$SRC/day.log" "$DST/logs/"
for f in fs.log removal.log; do if [ -f "$SRC/$f" ]; then cp "$SRC/$f" "$DST/logs/"; fi; done
(cd traces/recordings && find "h200-lifecycle/$NAME" -type f | sort | xargs sha256sum >> SHA256SUMS.lifecycle)
du -sh "$DST"/*
