#!/usr/bin/env python3
"""Evidence, writes no model: the power suite's capped loops priced against the energy of the window whose kernels
the model prices (issue 16, fifth round).

    python3 models/calibration/window_loops.py [--bin build/dvfs-sim]

The suite's kernel loops (traces/recordings/h200-power) take their measured power from a steady window and their
kernels from a shorter profiled window that, at the cap, ran at a higher clock (docs/design-notes.md, "NVML's SM
clock under the H200 cap"). traces/recordings/h200-clock-probe/window-loops holds ten of those capped loops recorded
as workloads (record_power_suite.py --only windows): the NVML energy counter over the same ~2 s window as the
profiled kernels. For each, `dvfs-sim validate DIR --gpu h200 --json` (the shipped model, nothing refitted) gives
the total-energy error at the recorded clocks and at the native governor, printed beside the suite's figures for
the same loop (`validate --models --json`) and its role in models/calibration/h200-power-split.json.
"""
import argparse
import json
import os
import subprocess

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
WINDOWS = os.path.join(ROOT, "traces", "recordings", "h200-clock-probe", "window-loops")


def window_errors(binary):
    """{loop: {"native": %, "recorded": %}} of the window recordings (the loop's name without "window-")."""
    out = {}
    for name in sorted(os.listdir(WINDOWS)):
        r = subprocess.run([binary, "validate", os.path.join(WINDOWS, name), "--gpu", "h200", "--json"],
                           capture_output=True, text=True, check=True)
        rep = json.loads(r.stdout)
        out[name[len("window-"):]] = {s["clock_source"]: s["total"]["energy_error_pct"] for s in rep["clock_sources"]}
    return out


def suite_errors(binary):
    """{loop: (role, native %, recorded %)} from `validate --models --json`."""
    r = subprocess.run([binary, "validate", "--models", "--json"], capture_output=True, text=True, check=True)
    return {x["loop"]: (x["kind"], x["native"]["energy_error_pct"], x["recorded"]["energy_error_pct"])
            for x in json.loads(r.stdout)["power_suite"]["loops"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.environ.get("DVFS_SIM_BIN", os.path.join(ROOT, "build", "dvfs-sim")))
    a = ap.parse_args()
    win, suite = window_errors(a.bin), suite_errors(a.bin)
    print("capped loop             role       energy error at the recorded clocks: suite (steady-window power) -> "
          "window (counter over the profiled window); native governor likewise")
    for loop, w in win.items():
        role, nat, rec = suite[loop]
        print("%-22s %-9s recorded %+6.1f %% -> %+6.1f %%   native %+6.1f %% -> %+6.1f %%" % (
            loop, role, rec, w["recorded"], nat, w["native"]))
    n = len(win)
    print("mean |error| at the recorded clocks over these %d loops: suite %.1f %%, window %.1f %%" % (
        n, sum(abs(suite[k][2]) for k in win) / n, sum(abs(w["recorded"]) for w in win.values()) / n))


if __name__ == "__main__":
    main()
