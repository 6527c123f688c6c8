#!/usr/bin/env python3
"""Derives models/gpus/a100-pcie.json: the A100 80 GB PCIe board (300 W) the Perseus A100 run sets ran on.

Same GA100 chip as a100-sxm4, so from models/gpus/a100-sxm4.json (fit on the Perseus A100 SXM stage profile
of GPT-3 175B) it keeps the voltage curve, the computations' time share, the static power split and the
governor's cap target fraction. From the A100 80GB PCIe datasheet [datasheet]: the 300 W board power, the
1512 MHz HBM2e clock (1,935 GB/s), PCIe Gen4 x16 (32 GB/s per direction) as the interconnect.

Calibrated [fit], on the Perseus A100 power-limit baselines (traces/perseus-baselines/A100/zeus_global.csv:
the whole pipeline's iteration time at power limits 300 -> 175 W, measured on these PCIe boards): the power
the computations draw at the top clock, uncapped, P0. Per workload, the P0 whose capped clocks
f_e(PL) (the clock where the model's power meets PL x target_fraction) give the measured time ratios
T(PL) / T(300 W) through the model's time shape b f_max / f + 1 - b, least squares on a 2.5 W grid; the
model's P0 is the median over the workloads. A workload whose run set perseus-split.json holds out (gpt3-xl:
a100_gpt3-xl_pp4) is never fitted: it is printed for comparison only. The computations' (and the kernel
classes', which are scaled with them) dynamic power is rescaled so that P(f_max) = P0: what sets the clock
the board sustains under its 300 W limit when every instruction asks for 1410 MHz.

  python3 models/calibration/a100_pcie.py [--check] [--out DIR]
"""
import copy
import csv
import json
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BASELINES = "traces/perseus-baselines/A100/zeus_global.csv"
SPLIT = "models/calibration/perseus-split.json"
CAP_W = 300.0


def relative_voltage(points, f):
    if f <= points[0][0]:
        return points[0][1]
    for (f0, v0), (f1, v1) in zip(points, points[1:]):
        if f <= f1:
            return v0 + (f - f0) / (f1 - f0) * (v1 - v0)
    return points[-1][1]


class Board:
    def __init__(self, m):
        self.points = m["voltage_curve"]["points"]
        c = m["clocks"]["sm_mhz"]
        self.fmax, self.fmin, self.step = c["max"], c["min"], c["step"]
        self.idle, self.isf = m["power"]["idle_w"], m["power"]["idle_sm_fraction"]
        self.target = m["native_governor"]["target_fraction"]
        self.b = m["computations"]["forward"]["time_sm"]
        self.clocks = [self.fmin + i * self.step for i in range(int(round((self.fmax - self.fmin) / self.step)) + 1)]

    def g(self, f):
        v = relative_voltage(self.points, f) / relative_voltage(self.points, self.fmax)
        return v * v * f / self.fmax

    def power(self, p0, f):  # GpuModel::coefficient_power_at with sm_share 1, P(f_max) = p0
        return self.idle * (1 - self.isf) + (p0 - self.idle * (1 - self.isf)) * self.g(f)

    def capped(self, p0, limit_w):  # capped_sm_mhz, on the clock table
        ok = [f for f in self.clocks if self.power(p0, f) <= limit_w * self.target]
        return max(ok) if ok else self.fmin

    def shape(self, f):
        return self.b * self.fmax / f + 1 - self.b


def fit_p0(board, rows):
    """rows: [(power limit W, iteration s)], highest limit first. Returns (P0, rms of the time ratios)."""
    t0, pl0 = rows[0][1], rows[0][0]
    best = None
    for i in range(int((700 - 150) / 2.5) + 1):
        p0 = 150 + 2.5 * i
        f0 = board.capped(p0, pl0)
        err = sum((board.shape(board.capped(p0, pl)) / board.shape(f0) - t / t0) ** 2 for pl, t in rows)
        if best is None or err < best[1] - 1e-15:
            best = (p0, err)
    return best[0], (best[1] / len(rows)) ** 0.5


def held_out_workloads():
    split = json.load(open(os.path.join(ROOT, SPLIT)))
    # Run set folder names are <gpu>_<workload>_<layout>.
    return sorted({name.split("_")[1] for name in split["held_out"] if name.startswith("a100")})


def derive():
    sxm = json.load(open(os.path.join(ROOT, "models/gpus/a100-sxm4.json")))
    board = Board(sxm)
    per = {}
    with open(os.path.join(ROOT, BASELINES)) as fh:
        for r in csv.DictReader(fh):
            per.setdefault(r["model_name"], []).append((float(r["power_limit_0"]), float(r["time"])))
    held = held_out_workloads()
    fits = {}
    for name, rows in sorted(per.items()):
        rows.sort(reverse=True)
        if rows[0][0] != CAP_W:
            sys.exit("%s: %s: expected a row at the %g W default limit" % (BASELINES, name, CAP_W))
        p0, rms = fit_p0(board, rows)
        fits[name] = {"p0_w": p0, "sustained_sm_mhz": board.capped(p0, CAP_W), "time_ratio_rms_pct": round(100 * rms, 2),
                      "fitted": name not in held}
    used = [v["p0_w"] for k, v in fits.items() if v["fitted"]]
    p0 = statistics.median(used)
    m = copy.deepcopy(sxm)
    m["name"], m["display_name"] = "a100-pcie", "NVIDIA A100 80GB PCIe"
    m["power"]["cap_w"] = CAP_W
    m["clocks"]["mem_mhz"] = [1512.0]
    m["clocks"]["default"]["mem_mhz"] = 1512.0
    m["specs"].update({"mem_bandwidth_gbs": 1935, "interconnect_gbs": 32})
    dyn_sxm = statistics.mean(m["computations"][k]["dynamic_w"] for k in ("forward", "backward"))
    scale = (p0 - board.idle) / dyn_sxm  # P(f_max) = idle_w + dynamic_w at sm_share 1
    for group in ("computations", "classes"):
        for cc in m[group].values():
            cc["dynamic_w"] = round(cc["dynamic_w"] * scale, 1)
    sustained = board.capped(p0, CAP_W)
    per_pass = {}
    for k in ("forward", "backward"):  # the clock where each computation meets the cap, off the table (capped_sm_mhz)
        p0_pass = board.idle + m["computations"][k]["dynamic_w"]
        lo, hi = board.fmin, board.fmax
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if board.power(p0_pass, mid) <= CAP_W * board.target:
                lo = mid
            else:
                hi = mid
        per_pass[k] = round(lo, 1)
    prov = m["provenance"]
    fitted_names = ", ".join(k for k, v in fits.items() if v["fitted"])
    prov["/power/cap_w"] = {"source": "datasheet", "ref": "NVIDIA A100 80GB PCIe datasheet: 300 W maximum board power (the Perseus A100 "
                            "power-limit baselines start at 300 W, traces/perseus-baselines/A100/zeus_global.csv)"}
    prov["/clocks/mem_mhz"] = {"source": "datasheet", "ref": "A100 80GB PCIe: HBM2e at 1512 MHz (1,935 GB/s); one memory clock"}
    prov["/specs"] = {"source": "datasheet", "ref": "NVIDIA A100 80GB PCIe datasheet (80 GB HBM2e, 1,935 GB/s, 312 TFLOP/s dense bf16, 108 SMs)"}
    prov["/specs/interconnect_gbs"] = {"source": "datasheet", "ref": "PCIe Gen4 x16, 32 GB/s per direction (an NVLink bridge pairs two "
                                       "boards at 600 GB/s; the Perseus artifact does not say one was fitted: not assumed)"}
    note = ("rescaled x %.4f from a100-sxm4 so the computations draw P0 = %.1f W at 1410 MHz uncapped: the median over the "
            "A100 PCIe power-limit baselines of %s (traces/perseus-baselines/A100/zeus_global.csv) of the P0 whose capped "
            "clocks under 300..175 W reproduce each workload's measured time ratios; sustained clock under 300 W: %d MHz; "
            "workloads of held-out run sets (models/calibration/perseus-split.json) not fitted; by models/calibration/a100_pcie.py"
            % (scale, p0, fitted_names, sustained))
    prov["/computations"] = {"source": "fit", "ref": "time_sm and the static power from a100-sxm4 (GPT-3 175B A100 SXM stage profile); "
                             "dynamic_w " + note}
    for k in list(prov):
        if k.startswith("/classes/") and k.endswith("/dynamic_w"):
            prov[k] = {"source": "estimate", "ref": "a100-sxm4's value (gemm = its fitted forward computation), " + note}
    prov["calibration"] = {"derived_from": "models/gpus/a100-sxm4.json", "data": BASELINES, "command": "python3 models/calibration/a100_pcie.py",
                           "p0_w": p0, "sustained_sm_mhz_at_cap": sustained, "capped_sm_mhz_per_computation": per_pass,
                           "per_workload": fits,
                           "held_out_workloads": held, "split": SPLIT}
    prov["summary"] = ("A100 80GB PCIe (300 W): a100-sxm4's chip model (GPT-3 175B SXM stage profile) with the PCIe board's datasheet "
                       "power limit and memory, and the computations' power fit on the A100 PCIe power-limit baselines so the "
                       "board sustains %d MHz under 300 W when 1410 MHz is asked for; no Perseus run set used" % sustained)
    prov["generated_by"] = "models/calibration/a100_pcie.py"
    return m


def main(argv):
    out = os.path.join(ROOT, "models/gpus")
    if "--out" in argv:
        out = argv[argv.index("--out") + 1]
    text = json.dumps(derive(), indent=2, sort_keys=True) + "\n"
    path = os.path.join(out, "a100-pcie.json")
    if "--check" in argv:
        shipped = open(os.path.join(ROOT, "models/gpus/a100-pcie.json")).read()
        if shipped != text:
            print("models/gpus/a100-pcie.json differs from its derivation (run models/calibration/regenerate.sh)", file=sys.stderr)
            return 1
        return 0
    open(path, "w").write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
