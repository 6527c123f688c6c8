#!/usr/bin/env python3
"""Derives models/calibration/h200.base.json from the shipped H200 micro-benchmark recording.

Measured inputs (NVML energy counter over each micro-benchmark phase, clocks from telemetry):
idle power, bf16 tensor-core GEMM power at its power-capped clock, device-copy and elementwise
(addcmul) power at the maximum clock, the clock table and the power limit. What the recordings cannot
pin down (voltage curve shape, SM/memory split of dynamic power, governor gains, switch latency) is a
stated estimate, marked "estimate" in the provenance block. The base is then refined on the GPT-3 XL
training recording by `dvfs-sim calibrate --recording` (per-class time scaling from the GPU's own clock
changes, dynamic power scale), which writes models/gpus/h200.json; models/calibration/regenerate.sh
runs both steps.

  python3 models/calibration/h200.py            # print the derived numbers
  python3 models/calibration/h200.py --write    # regenerate models/calibration/h200.base.json
  python3 models/calibration/h200.py --check    # exit 1 if the shipped base differs
"""
import csv
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REC = os.path.join(ROOT, "traces", "recordings")
OUT = os.path.join(ROOT, "models", "calibration", "h200.base.json")

# Relative voltage vs SM clock [estimate]: flat floor below the knee, linear to the top clock. NVML
# exposes no voltage on H200; this shape follows published V-f curves of recent NVIDIA GPUs.
VOLTAGE_POINTS_ESTIMATE = [[345, 0.68], [1000, 0.68], [1980, 1.0]]
# Once `dvfs-sim calibrate --power-suite` has fit the curve on the H200 kernel loops (models/calibration/
# h200.activity.json, step 2 of regenerate.sh), the base uses that curve, so that the kernel-class priors below
# are anchored on the measured micro-benchmarks with the same curve the activity model uses. The fit keeps, among
# the curves that fit alike, the one nearest the base's: starting from the estimate, this is a fixed point.
ACTIVITY = os.path.join(ROOT, "models", "calibration", "h200.activity.json")
if os.path.exists(ACTIVITY):
    with open(ACTIVITY) as _f:
        VOLTAGE_POINTS = json.load(_f)["voltage_curve"]["points"]
    VOLTAGE_SOURCE = {"source": "fit", "ref": "dvfs-sim calibrate --power-suite on the H200 kernel loops "
                      "(models/calibration/h200.activity.json; fitted where the loops ran, >= ~1350 MHz; below that "
                      "the estimate " + json.dumps(VOLTAGE_POINTS_ESTIMATE) + " is the prior)"}
else:
    VOLTAGE_POINTS = VOLTAGE_POINTS_ESTIMATE
    VOLTAGE_SOURCE = {"source": "estimate", "ref": "no voltage read-out on H200; shape of published NVIDIA V-f curves"}

# Per-class priors [estimate]: share of a kernel's duration that scales with 1/f_sm and 1/f_mem, and
# the share of its dynamic power that scales with V^2 f of the SM domain.
TIME_SCALING = {
    "gemm": (0.92, 0.03), "attention": (0.85, 0.05), "elementwise": (0.15, 0.75),
    "reduction": (0.30, 0.60), "normalization": (0.30, 0.60), "copy": (0.05, 0.85),
    "optimizer": (0.15, 0.75), "communication": (0.10, 0.10), "other": (0.50, 0.30),
}
SM_SHARE = {
    "gemm": 0.85, "attention": 0.85, "elementwise": 0.40, "reduction": 0.45, "normalization": 0.45,
    "copy": 0.30, "optimizer": 0.40, "communication": 0.30, "other": 0.50,
}


# Governor loop constants [estimate] until models/calibration/governor_fit.py has fit them on the fit-set GPT-3 XL
# recording (models/calibration/h200.governor.json); the target fraction is measured either way.
GOVERNOR = os.path.join(ROOT, "models", "calibration", "h200.governor.json")
GOVERNOR_ESTIMATE = {"window_s": 0.05, "up_steps_per_period": 1, "up_margin_w": 10.0, "down_gain_steps_per_w": 0.05}
if os.path.exists(GOVERNOR):
    with open(GOVERNOR) as _f:
        GOVERNOR_CONSTANTS = json.load(_f)["chosen"]
    GOVERNOR_SOURCE = {"source": "fit", "ref": "window, climb steps, climb margin and down gain fit on the native-"
                       "governor replay of traces/recordings/h200-gpt3xl (fit set): models/calibration/governor_fit.py "
                       "-> h200.governor.json; control period estimated (NVIDIA's power-limit loop is undisclosed)"}
else:
    GOVERNOR_CONSTANTS = GOVERNOR_ESTIMATE
    GOVERNOR_SOURCE = {"source": "estimate", "ref": "control period, window and gains of NVIDIA's power-limit loop are undisclosed"}


def load(folder):
    with open(os.path.join(REC, folder, "run.json")) as f:
        run = json.load(f)
    with open(os.path.join(REC, folder, "telemetry.csv")) as f:
        rows = [{k: float(v) for k, v in r.items()} for r in csv.DictReader(f)]
    return run, rows


def phase_stats(run, rows, name, settle_ns=3e8):
    """Counter energy over the phase (J/s) and the mean telemetry SM clock after it settled."""
    p = next(p for p in run["phases"] if p["name"] == name)
    seconds = (p["t1_ns"] - p["t0_ns"]) / 1e9
    clocks = [r["sm_mhz"] for r in rows if p["t0_ns"] + settle_ns <= r["t_ns"] <= p["t1_ns"]]
    return p["energy_mj"] / 1e3 / seconds, sum(clocks) / len(clocks)


def rel_voltage(f):
    pts = VOLTAGE_POINTS
    if f <= pts[0][0]:
        return pts[0][1]
    for (f0, v0), (f1, v1) in zip(pts, pts[1:]):
        if f <= f1:
            return v0 + (v1 - v0) * (f - f0) / (f1 - f0)
    return pts[-1][1]


def g(f, fmax):
    v = rel_voltage(f) / rel_voltage(fmax)
    return v * v * f / fmax


def derive():
    micro, mrows = load("h200-micro")
    gpt, grows = load("h200-gpt3xl")
    dev = micro["device"]
    sm = sorted(dev["supported_sm_mhz"]["3201"])
    fmax = float(max(sm))
    mem = sorted(float(m) for m in dev["supported_mem_mhz"])

    idle_phases = [("h200-micro", "idle:start"), ("h200-micro", "idle:after_tiny"), ("h200-gpt3xl", "idle:after_gpt3xl")]
    idle_w = []
    for folder, name in idle_phases:
        run, rows = (micro, mrows) if folder == "h200-micro" else (gpt, grows)
        idle_w.append(phase_stats(run, rows, name)[0])
    idle = round(sum(idle_w) / len(idle_w), 1)

    gemm_w, gemm_f = phase_stats(micro, mrows, "micro:gemm_bf16_8192")
    copy_w, copy_f = phase_stats(micro, mrows, "micro:copy_2GiB")
    addc_w, addc_f = phase_stats(micro, mrows, "micro:addcmul_2GiB")
    tiny_w, _ = phase_stats(micro, mrows, "micro:tiny_kernels_x100")

    def dynamic(p_w, f, share):
        # P - idle = D * (s * g(f) + (1 - s) * m/m_max), at the maximum memory clock
        return round((p_w - idle) / (share * g(f, fmax) + (1 - share)), 1)

    d_gemm = dynamic(gemm_w, gemm_f, SM_SHARE["gemm"])
    d_copy = dynamic(copy_w, copy_f, SM_SHARE["copy"])
    d_elem = dynamic(addc_w, addc_f, SM_SHARE["elementwise"])
    dyn = {
        "gemm": d_gemm, "attention": d_gemm, "elementwise": d_elem, "reduction": d_elem,
        "normalization": d_elem, "copy": d_copy, "optimizer": d_elem,
        "communication": round(0.3 * d_copy, 1), "other": d_elem,
    }
    classes = {c: {"time_sm": TIME_SCALING[c][0], "time_mem": TIME_SCALING[c][1],
                   "dynamic_w": dyn[c], "sm_share": SM_SHARE[c]} for c in TIME_SCALING}

    measured = {
        "idle_w": {k[1]: round(v, 1) for k, v in zip(idle_phases, idle_w)},
        "gemm_bf16_8192": {"power_w": round(gemm_w, 1), "mean_sm_mhz": round(gemm_f, 0)},
        "copy_2GiB": {"power_w": round(copy_w, 1), "mean_sm_mhz": round(copy_f, 0)},
        "addcmul_2GiB": {"power_w": round(addc_w, 1), "mean_sm_mhz": round(addc_f, 0)},
        "tiny_kernels_x100": {"power_w": round(tiny_w, 1)},
    }
    src_micro = "traces/recordings/h200-micro (NVML energy counter over the phase; clocks from telemetry.csv)"
    model = {
        "name": "h200",
        "display_name": "NVIDIA H200 SXM 141GB",
        "status": "calibrated",
        "sm_count": int(gpt["device"]["sm_count"]),
        "clocks": {
            "sm_mhz": {"min": float(min(sm)), "max": fmax, "step": float(sm[1] - sm[0])},
            "mem_mhz": mem,
            "default": {"sm_mhz": fmax, "mem_mhz": max(mem)},
        },
        "voltage_curve": {"points": VOLTAGE_POINTS},
        "power": {"idle_w": idle, "idle_sm_fraction": 0.0, "cap_w": dev["power_limit_mw"] / 1000.0,
                  "dynamic_scale": 1.0},
        "classes": classes,
        "native_governor": {
            "control_period_s": 0.01, "window_s": GOVERNOR_CONSTANTS["window_s"], "target_fraction": 0.98,
            "down_gain_steps_per_w": GOVERNOR_CONSTANTS["down_gain_steps_per_w"],
            "up_steps_per_period": GOVERNOR_CONSTANTS["up_steps_per_period"],
            "up_margin_w": GOVERNOR_CONSTANTS["up_margin_w"],
        },
        "switch_latency": {
            "sm": {"mean_s": 0.05, "spread_s": 0.0, "target_scaling": [[345, 1.0], [1980, 1.0]], "energy_j": 0.0},
            "mem": {"mean_s": 0.05, "spread_s": 0.0},
            "firmware_s": 0.001,
        },
        "specs": {"memory_gb": 141, "mem_bandwidth_gbs": 4800, "bf16_dense_tflops": 989, "interconnect_gbs": 450, "nic_gbs": 50},
        "provenance": {
            "summary": "calibrated on one H200 (traces/recordings/h200-*): idle, GEMM, copy and elementwise power, "
                       "clock table and cap measured; " + ("activity power model and V-f curve (above ~1350 MHz) fit on "
                       "the power suite's kernel loops; governor gains " + ("fit on the GPT-3 XL recording" if os.path.exists(GOVERNOR) else "estimated") if os.path.exists(ACTIVITY) else
                       "V-f shape and governor gains estimated"),
            "generated_by": "models/calibration/h200.py, then dvfs-sim calibrate --power-suite and --recording "
                            "(models/calibration/regenerate.sh)",
            "measured_inputs": measured,
            "/clocks": {"source": "measured", "ref": "run.json device.supported_sm_mhz / supported_mem_mhz (NVML read-out)"},
            "/sm_count": {"source": "measured", "ref": "run.json device.sm_count"},
            "/power/cap_w": {"source": "measured", "ref": "run.json device.power_limit_mw (700 W, default, untouched)"},
            "/power/idle_w": {"source": "measured", "ref": "mean counter power of settled idle phases: " + src_micro},
            "/power/dynamic_scale": {"source": "fit", "ref": "set by dvfs-sim calibrate --recording"},
            "/power/idle_sm_fraction": {"source": "estimate", "ref": "idle power taken as clock-independent in P0 until measured"},
            "/voltage_curve": VOLTAGE_SOURCE,
            "/classes/gemm/dynamic_w": {"source": "fit", "ref": "bf16 GEMM 8192^3 power at its capped clock, " + src_micro},
            "/classes/attention/dynamic_w": {"source": "estimate", "ref": "taken equal to gemm (tensor-core bound)"},
            "/classes/elementwise/dynamic_w": {"source": "fit", "ref": "addcmul 2 GiB at 1980 MHz, " + src_micro},
            "/classes/reduction/dynamic_w": {"source": "estimate", "ref": "taken equal to elementwise"},
            "/classes/normalization/dynamic_w": {"source": "estimate", "ref": "taken equal to elementwise"},
            "/classes/optimizer/dynamic_w": {"source": "estimate", "ref": "taken equal to elementwise (streaming AdamW)"},
            "/classes/other/dynamic_w": {"source": "estimate", "ref": "taken equal to elementwise"},
            "/classes/copy/dynamic_w": {"source": "fit", "ref": "2 GiB device copy at 1980 MHz, " + src_micro},
            "/classes/communication/dynamic_w": {"source": "estimate", "ref": "0.3 x copy; no collective measured yet"},
            "/classes": {"source": "estimate", "ref": "time_sm, time_mem, sm_share: priors by kernel class (compute- vs memory-bound); dvfs-sim calibrate --recording replaces time_sm/time_mem where the recording has evidence"},
            "/native_governor/target_fraction": {"source": "measured", "ref": "counter mean power 686 W / 700 W cap in the timed gpt3xl phase"},
            "/native_governor": GOVERNOR_SOURCE,
            "/switch_latency/sm/mean_s": {"source": "literature", "ref": "order 10-100 ms for NVML clock changes on Ampere/Hopper, Velicka, Vysocky, Riha, \"LATEST\", IPDPSW 2025, arXiv 2502.20075 (GH200 among the GPUs measured); Zeus notes NVML calls take ~10-20 ms"},
            "/switch_latency/sm/spread_s": {"source": "estimate", "ref": "estimate: no published spread used"},
            "/switch_latency/sm/target_scaling": {"source": "estimate", "ref": "no dependence on the target clock (multiplier 1 over the SM clock range) until measured on this GPU; Velicka, Vysocky, Riha, \"LATEST\", IPDPSW 2025, arXiv 2502.20075 find the latency depends mostly on the target clock"},
            "/switch_latency/sm/energy_j": {"source": "estimate", "ref": "no published transition energy; not charged"},
            "/switch_latency/mem/mean_s": {"source": "estimate", "ref": "taken equal to the SM clock latency"},
            "/switch_latency/mem/spread_s": {"source": "estimate", "ref": "estimate: no published spread used"},
            "/switch_latency/firmware_s": {"source": "estimate", "ref": "firmware power-limit response well under the NVML path"},
            "/specs": {"source": "datasheet", "ref": "NVIDIA H200 SXM datasheet (141 GB HBM3e, 4.8 TB/s, 989 TFLOP/s dense bf16; NVLink 4, 900 GB/s per GPU = 450 GB/s each direction)"},
            "/specs/nic_gbs": {"source": "estimate", "ref": "typical deployment: HGX H200 with one 400 Gb/s NDR InfiniBand NIC per GPU (50 GB/s)"},
        },
    }
    return model


def main():
    model = derive()
    text = json.dumps(model, indent=2) + "\n"
    if "--write" in sys.argv:
        with open(OUT, "w") as f:
            f.write(text)
        print("wrote", OUT)
    elif "--check" in sys.argv:
        with open(OUT) as f:
            shipped = f.read()
        if shipped != text:
            print(OUT + " differs from what models/calibration/h200.py derives", file=sys.stderr)
            sys.exit(1)
        print(OUT + " matches its derivation")
    else:
        print(json.dumps(model["provenance"]["measured_inputs"], indent=2))
        print(json.dumps(model["classes"], indent=2))
        print("idle_w", model["power"]["idle_w"])


if __name__ == "__main__":
    main()
