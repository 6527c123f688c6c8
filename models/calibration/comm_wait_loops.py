#!/usr/bin/env python3
"""The fortieth round's loops (h200-power-split.json `communication_and_waiting`): each loop's measured steady power
beside what a GPU model prices it at, and the split's predictions checked.

    /usr/bin/python3 models/calibration/comm_wait_loops.py RECORDING_DIR [--gpu MODEL] [--dvfs-sim build/dvfs-sim] [--json OUT]

Measured: run.json `micro.steady` (NVML energy counter over the unprofiled steady window), its mean SM clock from
telemetry.csv. Model output: `dvfs-sim validate LOOP --gpu MODEL --json`, the profiled steps replayed at their recorded
clocks (the kernels as the trace sizes them, gaps between them at idle power). For the waiting loops a second model
figure: what the model's communication-class prior prices an NCCL kernel of the same grid at, at the steady clocks
(the price a multi-rank replay gives a collective's wait), from the model's JSON and the formula in models/README.md
("Equations")."""
import argparse
import csv
import json
import os
import subprocess
import sys

import numpy

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
    """idle(f) + fill x k_dyn x D(comm) x (s g(f) + (1 - s) m / m_max) at SM clock sm_mhz and the top memory clock."""
    p, c = model["power"], model["classes"]["communication"]
    sms = model["sm_count"]
    fmax = model["clocks"]["sm_mhz"]["max"]
    pts = sorted(model["voltage_curve"]["points"], key=lambda q: q[0])
    fs, vs = [q[0] for q in pts], [q[1] for q in pts]
    g = (numpy.interp(sm_mhz, fs, vs) / numpy.interp(fmax, fs, vs)) ** 2 * sm_mhz / fmax  # held constant outside
    a = p.get("idle_sm_fraction", 0.0)
    idle = p["idle_w"] * (1 - a + a * g)
    fill = min(1.0, blocks / sms)
    return idle + fill * p["dynamic_scale"] * c["dynamic_w"] * (c["sm_share"] * g + (1 - c["sm_share"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("recording")
    ap.add_argument("--gpu", default=None, help="default: h200 or h100-sxm from the folder's name")
    ap.add_argument("--dvfs-sim", default=os.path.join(ROOT, "build", "dvfs-sim"))
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    gpu = a.gpu or ("h100-sxm" if "h100" in os.path.basename(os.path.normpath(a.recording)) else "h200")
    model = json.load(open(os.path.join(ROOT, "models", "gpus", gpu + ".json")))
    split = json.load(open(os.path.join(ROOT, "models", "calibration", "h200-power-split.json")))["communication_and_waiting"]
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
