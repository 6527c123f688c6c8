#!/usr/bin/env bash
# The exports at scale (docs/trace-export.md, docs/chakra.md): the 1,024-GPU synthesised Llama 3.3 70B iteration
# written as a Kineto-layout Chrome trace (gzip) and as per-GPU Chakra execution traces; prints each export's size
# and wall / CPU time against the 10 s target, with the machine's cores and load (a shared box shows in the wall time).
# usage: bench/trace_export.sh [BUILD_DIR] [OUT_DIR] [--no-chakra]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
OUT=${2:-$(mktemp -d)}
CHAKRA=(--chakra-out "$OUT/chakra")
[ "${3:-}" = "--no-chakra" ] && CHAKRA=()
"$BUILD/dvfs-sim" run scenarios/multi-gpu/llama-3.3-70b-1024.json -o "$OUT" --trace-out "$OUT/trace.json.gz" "${CHAKRA[@]}" > /dev/null
/usr/bin/python3 - "$OUT/timing.json" <<'PY'
import json, os, sys
timing = json.load(open(sys.argv[1]))
t = timing["trace_export"]
load = os.getloadavg()[0]
print(f"machine: {os.cpu_count()} cores, load average {load:.1f}")
print(f"trace export, 1,024 GPUs (128 simulated actors): {t['events']:,} events ({t['activities']:,} device activities), "
      f"{t['bytes'] / 1e6:,.0f} MB of JSON, {t['file_bytes'] / 1e6:,.0f} MB gzip")
print(f"  wall {t['seconds']:.2f} s, CPU {t['cpu_s']:.2f} s (of which deflate {t['compress_cpu_s']:.2f} s); target: under 10 s; "
      f"CPU / cores = {t['cpu_s'] / os.cpu_count():.2f} s (the wall time on free cores)")
if "chakra_export" in timing:
    c = timing["chakra_export"]
    print(f"chakra export: {c['ranks']} files, {c['nodes']:,} nodes, {c['bytes'] / 1e6:,.0f} MB; wall {c['seconds']:.2f} s, CPU {c['cpu_s']:.2f} s")
PY
rm -rf "$OUT/trace.json.gz" "$OUT/chakra"
