#!/usr/bin/env python3
"""Imports and replays every trace of traces/recordings/h100-profiler-options (record_profiler_options.py: the same
steps profiled with PyTorch's default options, with record_shapes, and with every option on) and prints, per trace,
what the import read (steps, kernels, device busy time, where the kernels' work came from) and what the replay gives
on the h100-sxm model (trace time, energy, mean power: model outputs). Variants of one workload should agree on the
kernels and their busy time; their trace times differ by the profiler's own host work.

    /usr/bin/python3 traces/recorder/compare_profiler_options.py [DIR] [--dvfs-sim build/dvfs-sim] [--json OUT]
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def replay(dvfs, trace, tmp):
    """summary.json of a native replay of `trace` on h100-sxm, and the warnings dvfs-sim printed."""
    name = os.path.basename(trace).split(".")[0]
    scenario = os.path.join(tmp, name + ".json")
    with open(scenario, "w") as f:
        json.dump({"name": name, "trace": os.path.abspath(trace), "gpu": "h100-sxm", "policy": "native"}, f)
    out = os.path.join(tmp, name)
    run = subprocess.run([dvfs, "run", scenario, "-o", out], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"{trace}: dvfs-sim run failed ({run.returncode}): {run.stderr.strip()}")
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f), [line for line in run.stderr.splitlines() if "warning" in line]


def row(label, summary, warnings):
    t, totals = summary["trace"], summary["totals"]
    w = t["work"]
    return {"trace": label, "steps": t["steps"], "kernels": totals["kernel_events"], "busy_ms": totals["busy_s"] * 1e3,
            "time_ms": totals["time_s"] * 1e3, "energy_j": totals["energy_j"], "mean_power_w": totals["mean_power_w"],
            "class_prior_kernel_time_share": w["class_prior_kernel_time_share"], "from_shapes": w["from_shapes"],
            "profiler_note": any("profiler's own host work" in x for x in warnings)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", nargs="?", default=os.path.join(ROOT, "traces/recordings/h100-profiler-options"))
    ap.add_argument("--dvfs-sim", default=os.path.join(ROOT, "build/dvfs-sim"))
    ap.add_argument("--json")
    a = ap.parse_args()
    traces = sorted(glob.glob(os.path.join(a.dir, "**/*.json.gz"), recursive=True))
    if not traces:
        sys.exit(f"{a.dir}: no *.json.gz traces")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, trace in enumerate(traces):
            label = os.path.relpath(trace, a.dir).replace(".pt.trace.json.gz", "").replace(".json.gz", "")
            work = os.path.join(tmp, str(i))  # one folder per trace: the scheduled cycles share a name stem
            os.makedirs(work)
            summary, warnings = replay(a.dvfs_sim, trace, work)
            rows.append(row(label, summary, warnings))
    print("Model output (h100-sxm, native governor) of traces measured on an H100 (traces/recordings/h100-profiler-options)")
    print(f"{'trace':52s} {'steps':>5s} {'kernels':>7s} {'busy ms':>8s} {'time ms':>8s} {'energy J':>8s} {'W':>6s} "
          f"{'prior share':>11s}  note")
    for r in rows:
        print(f"{r['trace'][:52]:52s} {r['steps']:5d} {r['kernels']:7d} {r['busy_ms']:8.2f} {r['time_ms']:8.2f} "
              f"{r['energy_j']:8.3f} {r['mean_power_w']:6.1f} {r['class_prior_kernel_time_share']:11.3f}  "
              f"{'profiler options' if r['profiler_note'] else ''}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
