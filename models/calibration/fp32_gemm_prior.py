#!/usr/bin/env python3
"""The class prior of CUDA-core fp32 GEMMs (split rule fp32_gemm_prior), derived, not fit.

A trace without operator shapes prices every GEMM at the gemm class prior, which comes from tensor-core GEMMs at the
power cap. cuBLAS / CUTLASS fp32 GEMMs on CUDA cores (`simt_sgemm`, `..._ffma_...`) do far less per second. Their
prior is set so that the fit-set loop gemm-fp32-4096 (in-sample in h200-power-split.json `fit.micro`), imported
without its shapes and replayed at its recorded clocks, draws what the activity model prices it at with its shapes:

    scale = (P_shapes - P_0) / (P_1 - P_0)

the simulated mean powers over its profiled steps with shapes, and with shapes withheld at scale 1 and 0 (the prior's
dynamic power is linear in the scale). Model output only: no measurement enters. Writes `class_prior_by_name` and its
provenance into the model file in place; run by regenerate.sh after calibrate --recording.
"""
import argparse
import json
import os
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOOP = "traces/recordings/h200-power/gemm-fp32-4096"
NAMES = ["simt_sgemm", "_ffma_", "sgemm_largek"]


def named_prior(scale):
    return [{"class": "gemm", "name_contains": NAMES, "scale": scale}]


def recorded_clock_power(binary, model, shapes_withheld):
    """Simulated mean power (W) over the loop's profiled steps at their recorded clocks."""
    with tempfile.TemporaryDirectory() as tmp:
        model_path, out = os.path.join(tmp, "model.json"), os.path.join(tmp, "validation.json")
        with open(model_path, "w") as fh:
            json.dump(model, fh)
        cmd = [binary, "validate", LOOP, "--gpu", model_path, "-o", out] + (["--shapes-withheld"] if shapes_withheld else [])
        subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, env=dict(os.environ, DVFS_SIM_NO_CACHE="1"))
        with open(out) as fh:
            report = json.load(fh)
    steps = next(s["steps"] for s in report["clock_sources"] if s["clock_source"] == "recorded")
    return sum(s["simulated_energy_j"] for s in steps) / sum(s["simulated_time_s"] for s in steps)


def derive(binary, model):
    base = {k: v for k, v in model.items() if k != "class_prior_by_name"}
    p_shapes = recorded_clock_power(binary, base, False)
    p_one = recorded_clock_power(binary, dict(base, class_prior_by_name=named_prior(1.0)), True)
    p_zero = recorded_clock_power(binary, dict(base, class_prior_by_name=named_prior(0.0)), True)
    scale = round((p_shapes - p_zero) / (p_one - p_zero), 3)
    out = dict(base, class_prior_by_name=named_prior(scale))
    out["provenance"] = dict(model["provenance"])
    out["provenance"]["/class_prior_by_name"] = {
        "ref": "models/calibration/fp32_gemm_prior.py (split rule fp32_gemm_prior): the share of the gemm prior at which "
               f"{LOOP}, shapes withheld, replays at its recorded clocks to the power the activity model prices it at with "
               f"its shapes: ({p_shapes:.1f} - {p_zero:.1f}) / ({p_one:.1f} - {p_zero:.1f}) W (model output, no measurement)",
        "source": "derived",
    }
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, help="the h200 model file calibrate --recording wrote (rewritten in place)")
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "dvfs-sim"))
    args = ap.parse_args()
    with open(args.model) as fh:
        model = json.load(fh)
    text = json.dumps(derive(args.bin, model), indent=2, sort_keys=True) + "\n"
    with open(args.model, "w") as fh:
        fh.write(text)


if __name__ == "__main__":
    main()
