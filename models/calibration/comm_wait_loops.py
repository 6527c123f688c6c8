#!/usr/bin/env python3
"""The fortieth round's loops (h200-power-split.json `communication_and_waiting`): each loop's measured steady power
beside what a GPU model prices it at, and the split's predictions checked.

    /usr/bin/python3 models/calibration/comm_wait_loops.py RECORDING_DIR [--gpu MODEL] [--dvfs-sim build/dvfs-sim] [--json OUT]

Measured: run.json `micro.steady` (NVML energy counter over the unprofiled steady window), its mean SM clock from
telemetry.csv. Model output: `dvfs-sim validate LOOP --gpu MODEL --json`, the profiled steps replayed at their recorded
clocks (the kernels as the trace sizes them, gaps between them at idle power). For the waiting loops a second model
figure: what the model's communication-class prior prices an NCCL kernel of the same grid at, at the steady clock
(the price a multi-rank replay gives a collective's wait), asked of the C++ model through the Python module (built
into build/python by ./setup.sh)."""
import argparse
import csv
import json
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def steady(loop_dir):
    run = json.load(open(os.path.join(loop_dir, "run.json")))
    s = run["micro"]["steady"]
    watts = s["energy_mj"] / (s["t1_ns"] - s["t0_ns"]) * 1e6
    clocks = []
    with open(os.path.join(loop_dir, "telemetry.csv")) as f:
        for row in csv.DictReader(f):
            t = int(row.get("t_ns") or row.get("host_ns") or 0)
            if s["t0_ns"] <= t <= s["t1_ns"] and row.get("sm_mhz"):
                clocks.append(float(row["sm_mhz"]))
    return watts, (sum(clocks) / len(clocks) if clocks else float("nan")), run["micro"]


def simulated(dvfs, loop_dir, gpu):
    out = subprocess.run([dvfs, "validate", loop_dir, "--gpu", gpu, "--json"], capture_output=True, text=True)
    if out.returncode != 0:
        return None
    rep = json.loads(out.stdout)
    for src in rep["clock_sources"]:
        if src["clock_source"] == "recorded":
            return src["total"]["simulated_mean_power_w"]
    return None


def communication_prior_w(model, blocks, sm_mhz):
    """What `model` (a dvfs_sim GpuModel) prices a communication-class kernel of `blocks` blocks at, at the supported SM
    clock nearest sm_mhz and the top memory clock."""
    clock = min(model.sm_clocks_mhz, key=lambda f: abs(f - sm_mhz))
    return model.kernel_power_w({"class": "communication", "sm_fill": min(1.0, blocks / model.sm_count)}, clock)


def round_arguments(doc, split_entry):
    """A round's script's command line (RECORDING [--gpu] [--dvfs-sim] [--json]): (the arguments, the GPU model's name,
    the model from the Python module built into build/python, the split file's entry of the round)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("recording")
    ap.add_argument("--gpu", default=None, help="default: h200 or h100-sxm from the folder's name")
    ap.add_argument("--dvfs-sim", default=os.path.join(ROOT, "build", "dvfs-sim"))
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    gpu = a.gpu or ("h100-sxm" if "h100" in os.path.basename(os.path.normpath(a.recording)) else "h200")
    sys.path.insert(0, os.path.join(ROOT, "build", "python"))
    import dvfs_sim
    split = json.load(open(os.path.join(ROOT, "models", "calibration", "h200-power-split.json")))[split_entry]
    return a, gpu, dvfs_sim.model(gpu), split


def main():
    a, gpu, model, split = round_arguments(__doc__, "communication_and_waiting")
    micro = os.path.join(a.recording, "micro")
    rows = {}
    for name in split["references_same_call"] + split["loops"]:
        d = os.path.join(micro, name)
        if not os.path.isdir(d):
            print(f"{name:26s} not recorded")
            continue
        w, mhz, info = steady(d)
        sim = simulated(a.dvfs_sim, d, gpu)
        prior = communication_prior_w(model, info["blocks"], mhz) if info.get("kind") == "wait" else None
        rows[name] = {"measured_w": w, "steady_sm_mhz": mhz, "simulated_recorded_clocks_w": sim, "nccl_prior_same_grid_w": prior}
        err = f"{(sim - w) / w * 100:+6.1f} %" if sim else "     -  "
        extra = f"  NCCL prior at this grid {prior:6.1f} W ({(prior - w) / w * 100:+.1f} %)" if prior else ""
        print(f"{name:26s} measured {w:6.1f} W at {mhz:6.0f} MHz | model (recorded clocks) "
              f"{sim if sim else float('nan'):6.1f} W {err}{extra}")
    after = os.path.join(a.recording, "idle-after", "micro", "idle")
    if os.path.isdir(after):
        rows["idle-after"] = {"measured_w": steady(after)[0]}
        print(f"{'idle (after)':26s} measured {rows['idle-after']['measured_w']:6.1f} W")
    if a.json:
        json.dump({"gpu": gpu, "recording": a.recording, "loops": rows}, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    sys.exit(main())
