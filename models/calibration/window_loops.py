#!/usr/bin/env python3
"""Evidence, writes no model: the power suite's 45 capped loops measured two ways, and the window measurement
measured twice.

    python3 models/calibration/window_loops.py [--bin build/dvfs-sim]

Since the sixth round the loops that models/calibration/h200-power-split.json lists under `profiled_window` (every
loop whose steady window's mean SM clock was below 1965 MHz) are measured over their own profiled window
(traces/recordings/h200-power-window: the NVML energy counter over the same ~2 s whose 50 steps of kernels are
priced) instead of the suite's steady window, which at the cap ran at a lower clock than the profiled kernels
(docs/design-notes.md, "NVML's SM clock under the H200 cap"). This prints, with the shipped h200 model:
  1. each of those loops' energy error against both measurements (`validate --models --json`'s
     power_suite.steady_window_rows);
  2. the repeatability of the window measurement: ten of those loops were also recorded the same way in the fifth
     round (traces/recordings/h200-clock-probe/window-loops, another machine lease); the two measured mean powers
     side by side (model-independent);
  3. what the two measurements imply for the power drawn in the window's gaps, were the kernels drawing their steady
     power there (an inference from measured means, no model: docs/design-notes.md, "What the window recordings say
     about the gaps").
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
FIFTH_ROUND = os.path.join(ROOT, "traces", "recordings", "h200-clock-probe", "window-loops")
WINDOW = os.path.join(ROOT, "traces", "recordings", "h200-power-window")
sys.path.append(os.path.join(ROOT, "python"))  # the pure-Python parts; a built package on the path (build/python) wins


def models_report(binary, report=None, timeout=None, env=None):
    """`validate --models --json`'s report (a dict): `report` when the caller has read it already (the tests share one
    run), else the binary's (run with `env` when given). Used by gap_state.py, h200_clock_evidence.py and
    alu_pipe_diagnostic.py too."""
    if report is None:
        r = subprocess.run([binary, "validate", "--models", "--json"], capture_output=True, text=True, check=True,
                           timeout=timeout, env=env)
        report = json.loads(r.stdout)
    return report


def rows(binary, report=None):
    """`validate --models --json`'s power_suite.steady_window_rows as {loop: {"kind", "window": {...}, "suite": {...}}},
    each side with measured_mean_power_w, native_energy_error_pct and recorded_energy_error_pct (`report`: as
    models_report takes it)."""
    return {w["loop"]: w for w in models_report(binary, report)["power_suite"]["steady_window_rows"]}


def window_power_w(rec_dir):
    """Measured mean power over a recording's profiled steps: the NVML energy counter interpolated between the
    instants it advanced (each advance placed midway between the samples around it, as traces/src/recording.cpp
    does), first step's start to last step's end; and the window's length in seconds."""
    import csv
    from dvfs_sim.lifecycle_analysis import Counter
    with open(os.path.join(rec_dir, "run.json")) as f:
        steps = json.load(f)["run"]["profiled_steps"]
    t0, t1 = steps[0]["t0_ns"], steps[-1]["t1_ns"]
    with open(os.path.join(rec_dir, "telemetry.csv")) as f:
        samples = [(int(r["t_ns"]), float(r["energy_mj"])) for r in csv.DictReader(f)]
    points = samples[:1] + [(0.5 * (t + tp), e) for (tp, ep), (t, e) in zip(samples, samples[1:]) if e != ep]
    counter = Counter([t for t, _ in points], [e for _, e in points])
    return counter.delta(t0, t1) / (t1 - t0) * 1e6, (t1 - t0) / 1e9


def repeats():
    """{loop: (fifth-round W, s, sixth-round W, s)} for the loops recorded over their profiled window in both rounds."""
    out = {}
    for n in sorted(os.listdir(FIFTH_ROUND)):
        loop = n[len("window-"):]
        if os.path.isdir(os.path.join(WINDOW, loop)):
            out[loop] = window_power_w(os.path.join(FIFTH_ROUND, n)) + window_power_w(os.path.join(WINDOW, loop))
    return out


def device_spans(rec_dir, cats=("kernel",)):
    """A recording's device activities of the trace categories `cats` as [start, end] spans in seconds, overlapping
    ones merged, in time order."""
    import gzip
    with gzip.open(os.path.join(rec_dir, "trace.json.gz")) as f:
        spans = sorted((e["ts"] * 1e-6, (e["ts"] + e["dur"]) * 1e-6) for e in json.load(f)["traceEvents"]
                       if e.get("ph") == "X" and e.get("cat") in cats)
    merged = []
    for a, b in spans:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return merged


def busy_share(rec_dir):
    """The share of a recording's kernel span (first kernel's start to last kernel's end) that some kernel covers."""
    spans = device_spans(rec_dir)
    busy = sum(b - a for a, b in spans)
    return busy / (spans[-1][1] - spans[0][0]) if len(spans) > 1 else 1.0


def implied_gap_power(win):
    """{loop: (busy share, W)} for the capped loops that are not duty cycles: the power the window's gaps drew if its
    kernels drew the steady window's power, (P_window - b P_steady) / (1 - b)."""
    out = {}
    for loop, w in win.items():
        if loop.startswith("duty-"):
            continue
        b = busy_share(os.path.join(WINDOW, loop))
        ps, pw = w["suite"]["measured_mean_power_w"], w["window"]["measured_mean_power_w"]
        out[loop] = (b, (pw - b * ps) / (1 - b))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.environ.get("DVFS_SIM_BIN", os.path.join(ROOT, "build", "dvfs-sim")))
    a = ap.parse_args()
    win = rows(a.bin)
    print("capped loop                    role       measured W steady / window   energy error at the recorded clocks: "
          "steady -> window; native likewise")
    for loop, w in win.items():
        s, p = w["suite"], w["window"]
        print("%-30s %-9s %7.1f / %6.1f   recorded %+6.1f %% -> %+6.1f %%   native %+6.1f %% -> %+6.1f %%" % (
            loop, w["kind"], s["measured_mean_power_w"], p["measured_mean_power_w"], s["recorded_energy_error_pct"],
            p["recorded_energy_error_pct"], s["native_energy_error_pct"], p["native_energy_error_pct"]))
    n = len(win)
    print("mean |error| at the recorded clocks over these %d loops: steady window %.1f %%, profiled window %.1f %%" % (
        n, sum(abs(w["suite"]["recorded_energy_error_pct"]) for w in win.values()) / n,
        sum(abs(w["window"]["recorded_energy_error_pct"]) for w in win.values()) / n))
    print("\nthe window measurement twice (measured mean power over the profiled window; no model involved)")
    for loop, (p5, s5, p6, s6) in repeats().items():
        print("%-22s fifth round %6.1f W (%.2f s)   sixth round %6.1f W (%.2f s)   %+5.1f %%" % (
            loop, p5, s5, p6, s6, 100 * (p6 - p5) / p5))
    print("\npower in the window's gaps if the kernels drew their steady power there (inference; 123 W fully idle)")
    for loop, (b, g) in sorted(implied_gap_power(win).items(), key=lambda x: x[1][0]):
        print("%-30s kernels cover %.2f of the window   gaps %5.0f W" % (loop, b, g))


if __name__ == "__main__":
    main()
