#!/usr/bin/env python3
"""Fits the H200 class priors below the power cap (split rules class_priors_below_cap and
class_priors_by_recorded_clock, models/calibration/h200-power-split.json) -> models/calibration/h200.class-priors.json,
which h200.py reads.

The class priors price kernels without counted work (a trace recorded without operator shapes, or kernels no
operator sizes). classes.<c>.dynamic_w and power.dynamic_scale were set on kernels the GPU ran throttled under its cap;
for kernels recorded at the top clock a fitted scale multiplies the streaming classes' priors, and the gemm-class
kernels whose name says CUDA-core fp32 get a prior of their own in both regimes (a fitted share of the gemm prior, the
model's class_prior_by_name). The tensor-core classes are not scaled: the ten hold too little of their energy to set
it (split class_priors_by_recorded_clock's outcome). They are fit by least squares on the recorded-clock total energy of the ten h200-prior-fit
workloads with their operator shapes withheld (`dvfs-sim validate DIR --shapes-withheld`). At recorded clocks a
recording's simulated energy is linear in each prior, so three replays per recording give it: the model without the
scales, without the fp32-GEMM prior, and without the streaming classes' below-cap part. No held-out recording is read.

  class_priors.py [--bin build/dvfs-sim] [--write | --check]   (no flag: print the fit)
"""
import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "models", "calibration", "h200.class-priors.json")
SPLIT = os.path.join(ROOT, "models", "calibration", "h200-power-split.json")
GROUPS = {"streaming": ["elementwise", "normalization", "reduction", "copy", "other"]}
FP32_GEMM = {"class": "gemm", "name_contains": ["sgemm", "_ffma", "simt_"]}
BLEND_MHZ = (1800.0, 1950.0)  # as models/calibration/h200.py writes them (split class_priors_by_recorded_clock)
TOLERANCE = 0.005  # --check: a refit within this of the shipped scales is the same fit (the chain rounds D to 0.1 W)


def unscaled_model():
    """models/gpus/h200.json with the below-cap scales at 1 and no named prior (power.dynamic_scale, fit on GPT-3 XL in
    the cap regime, kept: the scales multiply it, as the model does)."""
    with open(os.path.join(ROOT, "models", "gpus", "h200.json")) as f:
        m = json.load(f)
    m.pop("class_prior_by_name", None)
    m["class_prior_below_cap"] = {"scales": {}, "from_mhz": BLEND_MHZ[0], "to_mhz": BLEND_MHZ[1]}
    return m


def variants(base):
    """The three models whose replays give the fp32 GEMMs' and the streaming classes' prior energy by difference."""
    no_fp32 = copy.deepcopy(base)
    no_fp32["class_prior_by_name"] = [dict(FP32_GEMM, scale=0.0)]
    no_stream = copy.deepcopy(base)
    no_stream["class_prior_below_cap"]["scales"] = {c: 0.0 for c in GROUPS["streaming"]}
    return {"base": base, "no_fp32": no_fp32, "no_stream": no_stream}


def recorded_energy(binary, recording, model_file, withheld):
    cmd = [binary, "validate", recording, "--gpu", model_file, "--json"] + (["--shapes-withheld"] if withheld else [])
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, DVFS_SIM_NO_CACHE="1"))
    if r.returncode != 0:
        sys.exit("class_priors.py: %s failed: %s" % (" ".join(cmd), r.stderr.strip()))
    for src in json.loads(r.stdout)["clock_sources"]:
        if src["clock_source"] == "recorded":
            return src["total"]["simulated_energy_j"], src["total"]["measured_energy_j"]
    sys.exit("class_priors.py: no recorded-clock source in validate's report of " + recording)


def fit(binary):
    with open(SPLIT) as f:
        split = json.load(f)["shapeless_prior_fit_workloads"]
    rows = [(os.path.join(split["folder"], w), True, 1.0) for w in split["fit"]]
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for name, m in variants(unscaled_model()).items():
            files[name] = os.path.join(tmp, name + ".json")
            with open(files[name], "w") as f:
                json.dump(m, f)
        jobs = [(rec, withheld, v) for rec, withheld, _ in rows for v in files]
        with ThreadPoolExecutor(2) as ex:
            got = list(ex.map(lambda j: recorded_energy(binary, os.path.join(ROOT, j[0]), files[j[2]], j[1]), jobs))
    energy = {(j[0], j[2]): g for j, g in zip(jobs, got)}
    a, b, w, table = [], [], [], []
    for rec, _, weight in rows:
        e0, measured = energy[(rec, "base")]
        s_fp32 = e0 - energy[(rec, "no_fp32")][0]
        s_stream = e0 - energy[(rec, "no_stream")][0]
        rest = e0 - s_fp32 - s_stream
        a.append([s_stream / measured, s_fp32 / measured])
        b.append(1.0 - rest / measured)
        w.append(weight)
        table.append({"recording": rec, "measured_energy_j": round(measured, 3),
                      "error_pct_unscaled": round(100 * (e0 / measured - 1), 2)})
    a, b, w = np.array(a), np.array(b), np.array(w)
    x = np.linalg.lstsq(a * w[:, None], b * w, rcond=None)[0]
    if (x <= 0).any():
        sys.exit("class_priors.py: a fitted scale is not positive: %s" % x)
    for t, e in zip(table, a @ x - b):
        t["error_pct_fitted"] = round(100 * e, 2)
    return {"streaming": round(float(x[0]), 3), "cuda_core_fp32_gemm": round(float(x[1]), 3)}, table


def document(scales, table):
    ten = [abs(t["error_pct_fitted"]) for t in table]
    ten0 = [abs(t["error_pct_unscaled"]) for t in table]
    return {
        "about": "Scales of the H200 class priors fit below the cap (split rule class_priors_below_cap); read by "
                 "models/calibration/h200.py. Written by models/calibration/class_priors.py; do not edit by hand.",
        "groups": GROUPS,
        "named_prior": dict(FP32_GEMM, scale_of="the gemm prior (both regimes)"),
        "scales": scales,
        "fit": {"rows": table,
                "clock_source": "recorded (the power model alone)",
                "ten_mean_abs_error_pct_unscaled": round(sum(ten0) / len(ten0), 2),
                "ten_mean_abs_error_pct_fitted": round(sum(ten) / len(ten), 2),
                "note": "in-sample figures of the fit (model output vs the NVML counter); the held-out figures are "
                        "validate --models' shapes-withheld column"},
        "provenance": {"source": "fit", "ref": "traces/recordings/h200-prior-fit (ten whole workloads, shapes withheld), "
                       "recorded-clock total energy against the NVML energy counter"},
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.environ.get("DVFS_SIM_BIN", os.path.join(ROOT, "build", "dvfs-sim")))
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    args = ap.parse_args()
    scales, table = fit(args.bin)
    if args.check:
        with open(OUT) as f:
            shipped = json.load(f)["scales"]
        off = {k: (shipped.get(k), v) for k, v in scales.items() if shipped.get(k) is None or abs(shipped[k] - v) > TOLERANCE}
        if off:
            sys.exit(OUT + " differs from its fit (shipped, refit): %s (run models/calibration/regenerate.sh)" % off)
        print(OUT + " matches its fit")
        return
    doc = document(scales, table)
    if args.write:
        with open(OUT, "w") as f:
            f.write(json.dumps(doc, indent=2) + "\n")
        print("wrote", OUT)
    else:
        print(json.dumps(doc, indent=2))


if __name__ == "__main__":
    main()
