#!/usr/bin/env python3
"""Derives the datasheet models from their nearest calibrated sibling.

A GPU we hold no measurement of keeps what its datasheet says (clock tables, SM count, cap, specs) and
its stated estimates (idle power, switch latency) from models/calibration/<name>.base.json; the
shape of its behaviour comes from the calibrated sibling of the closest architecture:

  rtx-3080-ti  <- a100-sxm4  (Ampere, fit on the Perseus A100 stage profile)
  b200-like    <- h200       (Hopper -> Blackwell, fit on the H200 recordings)
  h100-sxm     <- h200       (the same GH100 chip with HBM3 instead of HBM3e)

Copied from the sibling: the voltage curve (knee and points at the same fraction of the top clock),
power.idle_sm_fraction, power.dynamic_scale, each kernel class's time_sm/time_mem and the native
governor. Kept from the base: each class's sm_share (how power splits between the SM and memory clocks). Scaled: every class's dynamic_w by the boards' dynamic headroom (cap - idle) ratio.
Not copied: per-kernel shares (the sibling's kernel names) and stage computations (its workload's).

A datasheet model derived from the H200 also gets the activity power model (models/README.md, "Activity power"):
the block fit on the H200 kernel loops, scaled to its datasheet [estimate]: energy per operation by the ratio of
dynamic headroom per unit of dense bf16 throughput, (cap - idle) / TFLOP/s, energy per DRAM byte by
(cap - idle) / bandwidth, watts (busy, copy engine) by (cap - idle). The Ampere boards do not get it: scaled to them
the rule prices a retargeted GEMM far above their caps (the RTX 3080 Ti ran a GPT-3 XL step 55 % slower under its
simulated 350 W cap than at its top clocks), so a100-sxm4, a40 and rtx-3080-ti keep their kernel-class priors
(A100/A40: fit on measured stage profiles) until their kernels' power is measured. A model on the same chip as the
fit one (SAME_CHIP: h100-sxm) gets the block unscaled instead: the same SMs at the same clocks and voltages
[estimate: its memory's energy per byte is taken equal to the H200's HBM3e, not measured].

  python3 models/calibration/siblings.py [--check] [--out DIR]
"""
import copy
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAIRS = [("rtx-3080-ti", "a100-sxm4"), ("b200-like", "h200"), ("h100-sxm", "h200")]
ACTIVITY_SOURCE = "h200"            # the model whose activity block was fit on measurements
SAME_CHIP = {"h100-sxm"}            # models of ACTIVITY_SOURCE's chip: its activity block copied, not scaled


def scaled_activity(m, ref):
    """ref's activity block scaled to m's datasheet, and the provenance entry saying how [estimate]."""
    a = ref["activity"]

    def headroom(model):
        return model["power"]["cap_w"] - model["power"]["idle_w"]
    per_op = (headroom(m) / m["specs"]["bf16_dense_tflops"]) / (headroom(ref) / ref["specs"]["bf16_dense_tflops"])
    per_byte = (headroom(m) / m["specs"]["mem_bandwidth_gbs"]) / (headroom(ref) / ref["specs"]["mem_bandwidth_gbs"])
    watts = headroom(m) / headroom(ref)
    block = {"busy_w": round(a["busy_w"] * watts, 3),
             "tensor_pj_per_flop": {k: round(v * per_op, 3) for k, v in a["tensor_pj_per_flop"].items()},
             "fma_pj_per_flop": round(a["fma_pj_per_flop"] * per_op, 3),
             "alu_pj_per_op": round(a["alu_pj_per_op"] * per_op, 3),
             "memory_pj_per_byte": round(a["memory_pj_per_byte"] * per_byte, 3),
             "memory_fill_pj_per_byte": round(a.get("memory_fill_pj_per_byte", a["memory_pj_per_byte"]) * per_byte, 3),
             "copy_engine_w": round(a["copy_engine_w"] * watts, 3)}
    if "copy_engine_pj_per_byte" in a:
        block["copy_engine_pj_per_byte"] = round(a["copy_engine_pj_per_byte"] * per_byte, 3)
    if "mma_sync_extra_pj_per_flop" in a:  # energy per tensor FLOP issued with mma.sync, beside the warpgroup MMA's
        block["mma_sync_extra_pj_per_flop"] = round(a["mma_sync_extra_pj_per_flop"] * per_op, 3)
    ref_note = {"source": "estimate",
                "ref": "the activity block of models/gpus/%s.json (fit on its kernel loops) scaled to this GPU's datasheet by "
                       "models/calibration/siblings.py: energy per operation x %.4f ((cap - idle) per dense bf16 TFLOP/s), "
                       "per DRAM byte x %.4f ((cap - idle) per GB/s), busy and copy-engine watts x %.4f (cap - idle); "
                       "no measurement of this GPU's kernels" % (ACTIVITY_SOURCE, per_op, per_byte, watts)}
    return block, ref_note


def fmax(model):
    c = model["clocks"]["sm_mhz"]
    return float(c["max"]) if isinstance(c, dict) else float(max(c))


def name_of(model):
    return model["name"]


def derive(name, sibling_name, models_dir):
    with open(os.path.join(ROOT, "models", "calibration", name + ".base.json")) as f:
        m = json.load(f)
    with open(os.path.join(models_dir, sibling_name + ".json")) as f:
        s = json.load(f)
    ratio = fmax(m) / fmax(s)
    head = (m["power"]["cap_w"] - m["power"]["idle_w"]) / (s["power"]["cap_w"] - s["power"]["idle_w"])
    label = "scaled from " + sibling_name
    m["derived_from"] = sibling_name
    m["status"] = "datasheet"
    m["voltage_curve"] = {"points": [[round(f * ratio, 1), v] for f, v in s["voltage_curve"]["points"]]}
    m["power"]["idle_sm_fraction"] = s["power"].get("idle_sm_fraction", 0.0)
    m["power"]["dynamic_scale"] = s["power"].get("dynamic_scale", 1.0)
    own = m["classes"]
    m["classes"] = copy.deepcopy(s["classes"])
    for name, c in m["classes"].items():
        c["dynamic_w"] = round(c["dynamic_w"] * head, 1)
        # sm_share stays the target's own: a sibling fit at one memory clock (the A100 profiles) says
        # nothing about how power moves with the memory clock, which this GPU may change.
        c["sm_share"] = own[name]["sm_share"]
    # Not copied: per-kernel shares (keyed on the sibling's kernel names, which another architecture's
    # libraries do not launch) and stage computations (a pipeline stage of the sibling's workload).
    m.pop("kernels", None)
    m.pop("computations", None)
    # Named class priors (the h200's CUDA-core fp32 GEMMs): a share of a class prior, copied with the classes.
    if "class_prior_by_name" in s:
        m["class_prior_by_name"] = copy.deepcopy(s["class_prior_by_name"])
    m["native_governor"] = copy.deepcopy(s["native_governor"])
    p = m["provenance"]
    for k in list(p):
        if k.startswith(("/voltage_curve", "/classes", "/class_prior_by_name", "/computations", "/kernels", "/native_governor",
                         "/power/idle_sm_fraction", "/power/dynamic_scale")):
            del p[k]
    ref = "models/gpus/%s.json (calibrated sibling), by models/calibration/siblings.py" % sibling_name
    p["/voltage_curve"] = {"source": label, "ref": "sibling's fitted/estimated curve with every clock x %.4f (same fraction of the top clock), %s" % (ratio, ref)}
    p["/power/idle_sm_fraction"] = {"source": label, "ref": "copied, " + ref}
    p["/power/dynamic_scale"] = {"source": label, "ref": "copied, " + ref}
    p["/classes"] = {"source": label, "ref": "time_sm, time_mem copied; dynamic_w x %.4f = (%g W cap - %g W idle) / (sibling %g - %g), %s" % (
        head, m["power"]["cap_w"], m["power"]["idle_w"], s["power"]["cap_w"], s["power"]["idle_w"], ref)}
    for name in m["classes"]:
        p["/classes/%s/sm_share" % name] = {"source": "estimate", "ref": "prior by kernel class (compute- vs memory-bound), "
                                            "kept from models/calibration/%s.base.json: the sibling's value cannot say how "
                                            "power moves with this GPU's memory clock" % name_of(m)}
    p["/native_governor"] = {"source": label, "ref": "copied (the sibling's own provenance says what each value rests on), " + ref}
    if "class_prior_by_name" in m:
        p["/class_prior_by_name"] = {"source": "estimate", "ref": "copied: each named kernel's share of its class prior, "
                                     "assumed the same on this GPU as on the sibling (whose own provenance says how it was "
                                     "derived), " + ref}
    if sibling_name == ACTIVITY_SOURCE:
        with open(os.path.join(models_dir, ACTIVITY_SOURCE + ".json")) as f:
            ref_model = json.load(f)
        if m["name"] in SAME_CHIP:
            m["activity"] = copy.deepcopy(ref_model["activity"])
            p["/activity"] = {"source": "estimate", "ref": "copied unscaled from models/gpus/%s.json (fit on its kernel loops): "
                              "the same chip at the same clocks and voltages; its DRAM energy per byte taken equal to "
                              "the H200's HBM3e (not measured on this GPU's HBM3)" % ACTIVITY_SOURCE}
        else:
            m["activity"], p["/activity"] = scaled_activity(m, ref_model)
    read_out = p.get("/clocks/sm_mhz", {}).get("source") == "measured"  # the base holds the part's NVML read-out
    p["summary"] = ("datasheet, not yet calibrated: scaled from the calibrated %s (V-f shape, time scaling, "
                    "governor, power per class x %.3f); %s; idle power and switch latency estimated"
                    % (sibling_name, head, "clock tables and power limit read out by NVML on the part, specs from "
                       "datasheets" if read_out else "clock tables, cap and specs from datasheets"))
    p["generated_by"] = "models/calibration/siblings.py"
    return m


def emit(path, text, check):
    """Writes text to path, or (check) says whether path already holds it."""
    if check:
        with open(path) as f:
            if f.read() != text:
                print(path + " differs from what models/calibration/siblings.py derives", file=sys.stderr)
                return 1
        return 0
    with open(path, "w") as f:
        f.write(text)
    return 0


def main():
    """Derives the datasheet models; --check: compare instead of writing."""
    check = "--check" in sys.argv
    models_dir = os.path.join(ROOT, "models", "gpus")
    out_dir = sys.argv[sys.argv.index("--out") + 1] if "--out" in sys.argv else models_dir
    status = 0
    for name, sibling in PAIRS:
        text = json.dumps(derive(name, sibling, out_dir), indent=2) + "\n"
        status |= emit(os.path.join(models_dir if check else out_dir, name + ".json"), text, check)
    sys.exit(status)


if __name__ == "__main__":
    main()
