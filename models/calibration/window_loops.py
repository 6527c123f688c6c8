#!/usr/bin/env python3
"""Evidence, writes no model: the power suite's capped loops priced against the energy of the window whose kernels
the model prices (issue 16, fifth round).

    python3 models/calibration/window_loops.py [--bin build/dvfs-sim]

The suite's kernel loops (traces/recordings/h200-power) take their measured power from a steady window and their
kernels from a shorter profiled window that, at the cap, ran at a higher clock (docs/design-notes.md, "NVML's SM
clock under the H200 cap"). traces/recordings/h200-clock-probe/window-loops holds ten of those capped loops recorded
as workloads (record_power_suite.py --only windows): the NVML energy counter over the same ~2 s window as the
profiled kernels. `dvfs-sim validate --models --json` (the shipped model, nothing refitted) validates each and sets
its total-energy error at the recorded clocks and at the native governor beside the suite's row of the same loop and
its role in models/calibration/h200-power-split.json (`power_suite.window_loops`); this prints them.
"""
import argparse
import json
import os
import subprocess

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def rows(binary):
    """`validate --models --json`'s power_suite.window_loops (the window recordings, each with the suite's row of the
    same loop), as {loop: {"native": %, "recorded": %, "suite": (role, native %, recorded %)}}."""
    r = subprocess.run([binary, "validate", "--models", "--json"], capture_output=True, text=True, check=True)
    out = {}
    for w in json.loads(r.stdout)["power_suite"]["window_loops"]:
        s = w["suite"]
        out[w["loop"]] = {"native": w["total_energy_error_pct"], "recorded": w["recorded_clocks_total_energy_error_pct"],
                          "suite": (s["kind"], s["native_energy_error_pct"], s["recorded_energy_error_pct"])}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.environ.get("DVFS_SIM_BIN", os.path.join(ROOT, "build", "dvfs-sim")))
    a = ap.parse_args()
    win = rows(a.bin)
    print("capped loop             role       energy error at the recorded clocks: suite (steady-window power) -> "
          "window (counter over the profiled window); native governor likewise")
    for loop, w in win.items():
        role, nat, rec = w["suite"]
        print("%-22s %-9s recorded %+6.1f %% -> %+6.1f %%   native %+6.1f %% -> %+6.1f %%" % (
            loop, role, rec, w["recorded"], nat, w["native"]))
    n = len(win)
    print("mean |error| at the recorded clocks over these %d loops: suite %.1f %%, window %.1f %%" % (
        n, sum(abs(w["suite"][2]) for w in win.values()) / n, sum(abs(w["recorded"]) for w in win.values()) / n))


if __name__ == "__main__":
    main()
