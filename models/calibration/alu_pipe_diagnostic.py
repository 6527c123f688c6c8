#!/usr/bin/env python3
"""Evidence, writes no model: would energies by pipe (or per executed instruction) price the elementwise loops
better than one energy per estimated operation? (Twenty-first session; an exploration after the data were seen, not
a rule written first: nothing is fit into a shipped model.)

    python3 models/calibration/alu_pipe_diagnostic.py [--binary build/dvfs-sim]   (~2.5 min: two validate --models)

The activity model prices elementwise work as e_alu x A, A = output elements/s x an estimated instruction count per
element of the operator (kernel_activity.cpp's table). Nsight Compute measured, for one call of each power-suite
loop, the thread instructions executed and the warp instructions issued to each pipe (FMA, ALU, XU, LSU;
traces/recordings/h200-ncu, ncu_counters.py). For every loop below the cap (measured < 690 W: at the cap the
governor, not the energies, sets the power) whose ALU term is > 0.5 W this takes, from `validate --models` at the
recorded clocks (power model alone), the power the shipped model gives it with and without its ALU term (the second
run uses a copy of the model with alu_pj_per_op = 0); the ALU term's power over e_alu gives the loop's estimated
operations/s and so its elements/s (voltage weighting included), and the counters per element give its measured
rates. Three forms are then fit, by non-negative least squares on the relative error of the split's in-sample
loops only, with every other coefficient as shipped: one energy on the estimated count (the shipped form, refit
here), one energy per executed thread instruction, and one energy per warp instruction of each pipe. The held-out
loops are priced with each form; their measured counts are used for them too, as a trace of their operator would
carry an exact count (an upper bound on what any per-operator table could do).
"""
import argparse
import itertools
import json
import os
import shutil
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ncu_counters  # noqa: E402
from window_loops import models_report  # noqa: E402

ROOT = ncu_counters.ROOT
CAP_W = 690.0
PIPES = ("fma", "alu", "xu", "lsu")


def model_without_alu(binary):
    """validate --models --json with the h200 model's alu_pj_per_op set to 0 (a data folder of links to the source
    tree with a copy of models/gpus)."""
    with tempfile.TemporaryDirectory() as data:
        for name in os.listdir(ROOT):
            if name not in ("models", ".git"):
                os.symlink(os.path.join(ROOT, name), os.path.join(data, name))
        os.mkdir(os.path.join(data, "models"))
        for name in os.listdir(os.path.join(ROOT, "models")):
            if name != "gpus":
                os.symlink(os.path.join(ROOT, "models", name), os.path.join(data, "models", name))
        shutil.copytree(os.path.join(ROOT, "models", "gpus"), os.path.join(data, "models", "gpus"))
        path = os.path.join(data, "models", "gpus", "h200.json")
        with open(path) as f:
            model = json.load(f)
        model["activity"]["alu_pj_per_op"] = 0.0
        with open(path, "w") as f:
            json.dump(model, f, indent=2)
        return models_report(binary, env=dict(os.environ, DVFS_SIM_DATA=data, DVFS_SIM_NO_CACHE="1"))


def loop_powers(report):
    return {l["loop"]: (l["kind"], l["measured_mean_power_w"], l["recorded"]["mean_power_w"])
            for l in report["power_suite"]["loops"]}


def rows(binary):
    """One row per usable loop: name, side, measured W, priced W without ALU, and its rates (per second: estimated
    operations, thread instructions, warp instructions by pipe)."""
    with open(os.path.join(ROOT, "models", "gpus", "h200.json")) as f:
        e_alu = json.load(f)["activity"]["alu_pj_per_op"] * 1e-12
    shipped, without = loop_powers(models_report(binary)), loop_powers(model_without_alu(binary))
    out = []
    for r in ncu_counters.table():
        name, pipes = r["loop"], r["measured_warp_inst_by_pipe"]
        if name not in shipped or not r["elements"] or not pipes or not r["counted_alu_ops"]:
            continue
        kind, measured, priced = shipped[name]
        base = without[name][2]
        if measured >= CAP_W or priced - base <= 0.5:
            continue
        elements_per_s = (priced - base) / e_alu / (r["counted_alu_ops"] / r["elements"])
        per_element = lambda n: elements_per_s * n / r["elements"]  # noqa: E731
        rates = {"estimated": [per_element(r["counted_alu_ops"])],
                 "thread": [per_element(r["measured_thread_inst"])],
                 "pipes": [per_element(pipes[p]) for p in PIPES]}
        out.append({"loop": name, "side": kind, "measured_w": measured, "base_w": base, "rates": rates})
    return out


def nnls(a, y):
    """Non-negative least squares for a few unknowns: the best unconstrained solution over every subset of columns
    whose coefficients are all >= 0."""
    best, best_res = np.zeros(a.shape[1]), float(np.sum(y * y))
    for k in range(1, a.shape[1] + 1):
        for cols in itertools.combinations(range(a.shape[1]), k):
            c, *_ = np.linalg.lstsq(a[:, cols], y, rcond=None)
            if np.any(c < 0):
                continue
            res = float(np.sum((a[:, cols] @ c - y) ** 2))
            if res < best_res:
                best, best_res = np.zeros(a.shape[1]), res
                best[list(cols)] = c
    return best


def errors(form, coef, loops):
    return [100.0 * (l["base_w"] + float(np.dot(l["rates"][form], coef)) - l["measured_w"]) / l["measured_w"] for l in loops]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--binary", default=os.path.join(ROOT, "build", "dvfs-sim"))
    a = p.parse_args()
    loops = rows(a.binary)
    fit = [l for l in loops if l["side"] == "in-sample"]
    held = [l for l in loops if l["side"] == "held-out"]
    print(f"loops below {CAP_W:.0f} W with an ALU term: {len(fit)} in-sample (fit), {len(held)} held out; model output vs NVML,"
          " recorded clocks, energies refit on the in-sample loops only")
    results = {}
    for form, names in (("estimated", ["per estimated op"]), ("thread", ["per thread instruction"]),
                        ("pipes", [f"per {p.upper()} warp instruction" for p in PIPES])):
        w = np.array([1.0 / l["measured_w"] for l in fit])
        a_fit = np.array([l["rates"][form] for l in fit]) * w[:, None]
        y = np.array([l["measured_w"] - l["base_w"] for l in fit]) * w
        coef = nnls(a_fit, y)
        ef, eh = errors(form, coef, fit), errors(form, coef, held)
        results[form] = eh
        energies = ", ".join(f"{n} {c * 1e12:.2f} pJ" for n, c in zip(names, coef))
        print(f"  {form:9s}: {energies}; mean |error| in-sample {np.mean(np.abs(ef)):.2f} %, held out "
              f"{np.mean(np.abs(eh)):.2f} % ({sum(abs(e) <= 5 for e in eh)} of {len(eh)} within 5 %)")
    print("held-out loops (energy error, %):  estimated / thread / pipes")
    for i, l in enumerate(held):
        print(f"  {l['loop']:26s} {results['estimated'][i]:+6.1f} / {results['thread'][i]:+6.1f} / {results['pipes'][i]:+6.1f}")


if __name__ == "__main__":
    main()
