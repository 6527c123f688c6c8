#!/bin/bash
# Records the two lifecycle jobs of issue 20 on one NVIDIA GPU: the I/O-heavy CNN job and the GPU-bound LLM
# fine-tune, each with phase markers, NVML telemetry and host counters (python3 -m dvfs_sim.record layout).
# Usage: record_lifecycle_on_gpu.sh PYTHONPATH_OF_DVFS_SIM OUT_DIR [WORK_DIR]
# Writes OUT_DIR/<job>.tgz (the recording and job.json; not the generated datasets or checkpoints) and
# OUT_DIR/logs.tgz. Only reads NVML, /proc and sysfs: no card, CPU-frequency or power setting is changed.
PKG=$1; OUT=$2; WORK=${3:-$PWD/.lifecycle_work}
S=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$WORK" "$OUT"
export PYTHONUNBUFFERED=1
{
  echo "== RAPL powercap (read-only check)"
  ls -la /sys/class/powercap/ 2>&1 | head -20
  for z in /sys/class/powercap/intel-rapl* /sys/class/powercap/amd-rapl*; do
    [ -e "$z/energy_uj" ] || continue
    echo "$z name=$(cat $z/name 2>&1) energy_uj=$(cat $z/energy_uj 2>&1) max=$(cat $z/max_energy_range_uj 2>&1)"
  done
  echo "id: $(id)"
  echo "== CPU"; lscpu 2>&1 | head -30
  echo "cpufreq governor: $(cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>&1)"
  echo "cpufreq cur/min/max kHz: $(cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq /sys/devices/system/cpu/cpu0/cpufreq/scaling_min_freq /sys/devices/system/cpu/cpu0/cpufreq/scaling_max_freq 2>&1 | tr '\n' ' ')"
  echo "== memory"; free -g
  echo "== storage"; df -hT "$WORK" /tmp 2>&1; lsblk -o NAME,TYPE,SIZE,ROTA,MODEL 2>&1 | head; cat /proc/diskstats | awk '{print $3}' | tr '\n' ' '; echo
  echo "== network"; cat /proc/net/dev | awk 'NR>2{print $1}' | tr '\n' ' '; echo
  echo "== python"; python3 -c "import torch, numpy; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'numpy', numpy.__version__)"
  python3 -c "import PIL; print('PIL', PIL.__version__)" 2>&1 | tail -1
  python3 -c "import pynvml; print('pynvml ok')" 2>&1 | tail -1
  nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.mem,clocks_throttle_reasons.active --format=csv
} > "$OUT/env.log" 2>&1
cat "$OUT/env.log" | head -60
job() {  # job NAME TIMEOUT SCRIPT ARGS...
  local name=$1 lim=$2 script=$3; shift 3
  local t0=$SECONDS
  PYTHONPATH=$PKG timeout "$lim" python3 "$S/$script" --out "$WORK/$name" "$@" > "$OUT/$name.log" 2>&1
  echo "$name rc=$? wall=$((SECONDS - t0)) s" | tee -a "$OUT/summary.log"
  tail -5 "$OUT/$name.log"
  du -sh "$WORK/$name"/* 2>&1 | tee -a "$OUT/summary.log"
  [ -d "$WORK/$name/recording" ] && tar czf "$OUT/$name.tgz" -C "$WORK/$name" recording $(cd "$WORK/$name" && ls job.json 2>/dev/null)
  rm -rf "$WORK/$name"
}
job cnn-io 200 cnn_io_job.py ${CNN_ARGS:-}
job llm-finetune 200 llm_finetune_job.py ${LLM_ARGS:-}
ls -la "$OUT"
