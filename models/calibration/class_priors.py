#!/usr/bin/env python3
"""Fits the H200 class priors below the power cap (split rule class_priors_below_cap,
models/calibration/h200-power-split.json) -> models/calibration/h200.class-priors.json, which h200.py reads.

The class priors price kernels without counted work (a trace recorded without operator shapes, or kernels no
operator sizes). Three scales multiply them: the tensor-core classes, the streaming classes, and the gemm-class
kernels whose name says CUDA-core fp32 (a prior of their own, the model's class_prior_by_name). They are fit by
weighted least squares on the recorded-clock total energy of the ten h200-prior-fit workloads with their operator
shapes withheld (`dvfs-sim validate DIR --shapes-withheld`) and of the GPT-3 XL recording at the cap (the fit
recording of power.dynamic_scale; weight 3). At recorded clocks a recording's simulated energy is linear in each
prior, so four replays per recording give it: the model without the scales, without the fp32-GEMM prior, without
that and the tensor classes, and without the streaming classes. No held-out recording is read.

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
GROUPS = {"tensor": ["gemm", "attention"],
          "streaming": ["elementwise", "normalization", "reduction", "copy", "other"]}
FP32_GEMM = {"class": "gemm", "name_contains": ["sgemm", "_ffma", "simt_"]}
CAP_RECORDING = "traces/recordings/h200-gpt3xl"
CAP_WEIGHT = 3.0
TOLERANCE = 0.005  # --check: a refit within this of the shipped scales is the same fit (the chain rounds D to 0.1 W)


def unscaled_model():
    """models/gpus/h200.json with the shipped scales divided out, no named prior and power.dynamic_scale 1: the fit's
    scales are then absolute (the chain's later fit of dynamic_scale on GPT-3 XL, which this fit holds to a fraction
    of a per cent, stays near 1), and a refit of the regenerated model gives the same scales."""
    with open(os.path.join(ROOT, "models", "gpus", "h200.json")) as f:
        m = json.load(f)
    if os.path.exists(OUT):
        with open(OUT) as f:
            shipped = json.load(f)
        for g, classes in GROUPS.items():
            for c in classes:
                m["classes"][c]["dynamic_w"] /= shipped["scales"][g]
    m.pop("class_prior_by_name", None)
    m["power"]["dynamic_scale"] = 1.0
    return m


def variants(base):
    """The four models whose replays give each group's prior energy by difference."""
    no_fp32 = copy.deepcopy(base)
    no_fp32["class_prior_by_name"] = [dict(FP32_GEMM, scale=0.0)]
    no_tensor = copy.deepcopy(no_fp32)
    no_stream = copy.deepcopy(base)
    for c in GROUPS["tensor"]:
        no_tensor["classes"][c]["dynamic_w"] = 0.0
    for c in GROUPS["streaming"]:
        no_stream["classes"][c]["dynamic_w"] = 0.0
    return {"base": base, "no_fp32": no_fp32, "no_tensor": no_tensor, "no_stream": no_stream}


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
    rows = [(os.path.join(split["folder"], w), True, 1.0) for w in split["fit"]] + [(CAP_RECORDING, False, CAP_WEIGHT)]
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
        s_tensor = energy[(rec, "no_fp32")][0] - energy[(rec, "no_tensor")][0]
        s_stream = e0 - energy[(rec, "no_stream")][0]
        rest = e0 - s_fp32 - s_tensor - s_stream
        a.append([s_tensor / measured, s_stream / measured, s_fp32 / measured])
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
    return {"tensor": round(float(x[0]), 3), "streaming": round(float(x[1]), 3),
            "cuda_core_fp32_gemm": round(float(x[2]), 3)}, table


def document(scales, table):
    ten = [abs(t["error_pct_fitted"]) for t in table if t["recording"] != CAP_RECORDING]
    ten0 = [abs(t["error_pct_unscaled"]) for t in table if t["recording"] != CAP_RECORDING]
    return {
        "about": "Scales of the H200 class priors fit below the cap (split rule class_priors_below_cap); read by "
                 "models/calibration/h200.py. Written by models/calibration/class_priors.py; do not edit by hand.",
        "groups": GROUPS,
        "named_prior": dict(FP32_GEMM, scale_of="the gemm prior before the tensor scale"),
        "scales": scales,
        "fit": {"rows": table, "cap_recording_weight": CAP_WEIGHT,
                "clock_source": "recorded (the power model alone)",
                "ten_mean_abs_error_pct_unscaled": round(sum(ten0) / len(ten0), 2),
                "ten_mean_abs_error_pct_fitted": round(sum(ten) / len(ten), 2),
                "note": "in-sample figures of the fit (model output vs the NVML counter); the held-out figures are "
                        "validate --models' shapes-withheld column"},
        "provenance": {"source": "fit", "ref": "traces/recordings/h200-prior-fit (ten whole workloads, shapes withheld) "
                       "and traces/recordings/h200-gpt3xl, recorded-clock total energy against the NVML energy counter"},
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
