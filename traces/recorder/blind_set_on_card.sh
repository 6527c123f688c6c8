# Sourced by record_round27_on_gpu.sh and record_round28_on_gpu.sh: one device call, whichever card comes; an H200
# runs third_card_memory_loops (record_round25_on_gpu.sh), an H100 records a set of the H200 blind-set workloads with
# the commands of unseen_scripts/record_unseen_on_gpu.sh. NVML and nvidia-smi are only read.
#   blind_set_begin OUT NAME TIMEOUT_S   exec's the H200 script on an H200; on an H100 opens $W (NAME) and its logs
#   rec NAME WARMUP:PROFILED -- python3 SCRIPT ARGS...   (with ONLY="NAME ..." set, the jobs named there only)
#   blind_set_ship                        gzips the telemetry (unzipped when shipped), OUT/NAME.tar.part-* under 16 MiB
BLIND_S=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
U=$BLIND_S/unseen_scripts
blind_set_begin() {
  OUT=$1 BLIND_NAME=$2 BLIND_TIMEOUT=$3
  local card
  card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  case "$card" in
    *H200*) exec bash "$BLIND_S/record_round25_on_gpu.sh" "$OUT" ;;
    *H100*) ;;
    *) echo "neither an H200 nor an H100 ($card): nothing recorded" >&2; exit 2 ;;
  esac
  W=$(mktemp -d)/$BLIND_NAME
  mkdir -p "$W/logs" "$OUT"
  export PYTHONUNBUFFERED=1
  . "$BLIND_S/card_identity.sh"
  { identity; python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'cudnn', torch.backends.cudnn.version())"; } > "$W/logs/env.log" 2>&1
}
rec() {  # rec NAME WARMUP:PROFILED -- python3 SCRIPT ARGS... (as record_unseen_on_gpu.sh records them); ONLY="NAME ..." records those only
  local name=$1 steps=$2; shift 3
  [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]] && return 0
  local t0=$SECONDS
  PYTHONPATH=$BLIND_S/../../python timeout "$BLIND_TIMEOUT" python3 -m dvfs_sim.record -o "$W/$name" --steps "$steps" -- "$@" > "$W/logs/$name.log" 2>&1
  echo "$name rc=$? wall=$((SECONDS - t0)) s" | tee -a "$W/logs/summary.log"
  tail -3 "$W/logs/$name.log" | tee -a "$W/logs/summary.log"
}
blind_set_ship() {
  identity >> "$W/logs/env.log" 2>&1
  du -sh "$W"/* | tee -a "$W/logs/summary.log"
  for f in "$W"/*/telemetry.csv; do gzip -9 "$f"; done  # for the transfer; unzipped when shipped
  tar cf - -C "$(dirname "$W")" "$BLIND_NAME" | split -b 15m - "$OUT/$BLIND_NAME.tar.part-"
  ls -la "$OUT"
}
