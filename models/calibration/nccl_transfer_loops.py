#!/usr/bin/env python3
"""The forty-first round's loops (h200-power-split.json `nccl_transfers_by_bytes`): each NCCL exchange's measured power
over its long profiled window beside what a GPU model prices it at, and the split's predictions checked.

    /usr/bin/python3 models/calibration/nccl_transfer_loops.py RECORDING_DIR [--gpu MODEL] [--dvfs-sim build/dvfs-sim] [--json OUT]

Measured: the NVML energy counter over the loop's one profiled window (run.json `micro.window` = "profiled"), as
`dvfs-sim validate LOOP` reads it. Model output: `dvfs-sim validate LOOP --gpu MODEL --json`, the window's kernels
replayed at their recorded clocks with the gaps between them (an NCCL kernel of sized sends / receives priced by its
bytes: idle + copy_engine_pj_per_byte x bytes / s). Beside it, what the communication-class prior prices one kernel of
the loop's grid at, at the window's mean SM clock (the price every NCCL kernel had before this round), asked of the
C++ model through the Python module (built into build/python by ./setup.sh)."""
import csv
import gzip
import json
import os
import re
import sys

from comm_wait_loops import communication_prior_w, round_arguments


def window(loop_dir, dvfs, gpu):
    """(measured W, model W, window s) from `dvfs-sim validate LOOP --json` at recorded clocks."""
    import subprocess
    out = subprocess.run([dvfs, "validate", loop_dir, "--gpu", gpu, "--json"], capture_output=True, text=True, check=True)
    total = next(s for s in json.loads(out.stdout)["clock_sources"] if s["clock_source"] == "recorded")["total"]
    return total["measured_mean_power_w"], total["simulated_mean_power_w"], total["measured_time_s"]


NCCL_KERNEL = re.compile(r'"cat":\s*"kernel",\s*"name":\s*"nccl')
GRID = re.compile(r'"grid":\s*\[(\d+),\s*(\d+),\s*(\d+)\]')


def grid_blocks(loop_dir):
    """Blocks per NCCL kernel of the loop (its first kernel's grid) and the number of NCCL kernels, read from the
    trace's text as Kineto writes it (a regular expression: parsing the ~100 MB of JSON of the longest loops takes tens
    of seconds in Python)."""
    text = gzip.open(os.path.join(loop_dir, "trace.json.gz")).read().decode()
    first = NCCL_KERNEL.search(text)
    g = GRID.search(text, first.end())
    return int(g[1]) * int(g[2]) * int(g[3]), len(NCCL_KERNEL.findall(text))


def mean_sm_mhz(loop_dir):
    clocks = []
    with open(os.path.join(loop_dir, "telemetry.csv")) as f:
        for row in csv.DictReader(f):
            if row.get("sm_mhz"):
                clocks.append(float(row["sm_mhz"]))
    return sum(clocks) / len(clocks) if clocks else float("nan")


def main():
    a, gpu, model, split = round_arguments(__doc__, "nccl_transfers_by_bytes")
    rows = {}
    for name in split["loops"]:
        d = os.path.join(a.recording, name)
        if not os.path.isdir(d):
            print(f"{name:24s} not recorded")
            continue
        measured, simulated, seconds = window(d, a.dvfs_sim, gpu)
        blocks, kernels = grid_blocks(d)
        prior = communication_prior_w(model, blocks, mean_sm_mhz(d))
        err = (simulated - measured) / measured * 100
        rows[name] = {"measured_w": measured, "simulated_recorded_clocks_w": simulated, "energy_error_pct": err,
                      "window_s": seconds, "blocks": blocks, "kernels": kernels, "nccl_prior_one_kernel_w": prior}
        print(f"{name:24s} {blocks:3d} blocks, {kernels:5d} kernels in {seconds:6.2f} s | measured {measured:6.1f} W | "
              f"model {simulated:6.1f} W ({err:+5.1f} %) | NCCL prior per kernel {prior:6.1f} W "
              f"({(prior - measured) / measured * 100:+.1f} %)")
    held = rows and all(abs(r["energy_error_pct"]) <= 10 for r in rows.values())
    print(f"prediction (1), every loop within 10 %: {'held' if held else 'MISSED'}")
    for ref, sub in (("idle", os.path.join("micro", "idle")), ("idle-after", os.path.join("idle-after", "micro", "idle"))):
        run = os.path.join(a.recording, sub, "run.json")
        if os.path.isfile(run):
            s = json.load(open(run))["micro"]["steady"]
            rows[ref] = {"measured_w": s["energy_mj"] / (s["t1_ns"] - s["t0_ns"]) * 1e6}
            print(f"{ref:24s} measured {rows[ref]['measured_w']:6.1f} W (steady window)")
    if a.json:
        json.dump({"gpu": gpu, "recording": a.recording, "loops": rows}, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    sys.exit(main())
