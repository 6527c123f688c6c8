#!/usr/bin/env python3
"""Evidence, writes no model: what the data outside Perseus's A40 run sets says about the clock an A40 sustains
under its 300 W limit, the number the models-only prediction of `dvfs-sim validate --perseus` misses on
traces/perseus-runs/a40_gpt3-2.7b_pp8 (energy MAPE 7.64 %, issue 22). See docs/validation.md ("A40 GPT-3 2.7B").

  python3 models/calibration/a40_sustained_clock.py [--runs]

1. The A40 stage profiles (traces/profiles/perseus/{gpt3-175b,bloom}+a40_bf16.csv, the artifact's): per
   requested clock from 1380 MHz up, the measured power and the time relative to the 1740 MHz row, mean over the
   8 stages. Both draw 286-299 W from 1500 MHz up; their time stops falling by ~1440-1560 MHz: no A40 data runs uncapped above ~1500 MHz.
2. The A40 power-limit baselines (traces/perseus-baselines/A40/zeus_global.csv, a separate experiment: the
   iteration at 300 W down to 125 W): per workload, the computations' uncapped top-clock power P0 (and, in the
   second table, the time share b too) whose capped clocks through the a40 model's V-f curve reproduce the measured
   time ratios T(PL) / T(300 W), least squares over the highest n limits; printed: the clock sustained at 300 W.
   T5 is left out: it never slows under a limit down to 175 W (its GPUs average 161 W at 300 W).
3. --runs (evaluation only, nothing is fitted): the models-only time / energy MAPE of both A40 run sets with the
   a40 model changed in two ways, via `build/dvfs-sim validate --perseus DIR --gpu FILE --no-fits --no-frontier`:
   a steeper V-f curve above 1455 MHz (power at and below 1455 MHz kept), and the computations' SM-dependent
   power scaled by k with time share b (k 1: the model's power with another time share).
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the sibling derivation scripts
from a100_pcie import relative_voltage as voltage  # noqa: E402  (the V-f curve's interpolation, one copy)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL = json.load(open(os.path.join(ROOT, "models/gpus/a40.json")))
FMAX = MODEL["clocks"]["sm_mhz"]["max"]
CLOCKS = [MODEL["clocks"]["sm_mhz"]["min"] + MODEL["clocks"]["sm_mhz"]["step"] * i
          for i in range(int(round((FMAX - MODEL["clocks"]["sm_mhz"]["min"]) / MODEL["clocks"]["sm_mhz"]["step"])) + 1)]
CAP = MODEL["power"]["cap_w"] * MODEL["native_governor"]["target_fraction"]
IDLE = MODEL["power"]["idle_w"]
RUN_SETS = ["a40_gpt3-2.7b_pp8", "a40_gpt3-6.7b_dp2pp4tp2"]




def g(f, points=MODEL["voltage_curve"]["points"]):
    return (voltage(points, f) / voltage(points, FMAX)) ** 2 * f / FMAX


def stage_profiles():
    """{(profile, instruction): [(requested MHz, mean measured power W, mean time / time at the top clock)]}, 1380 MHz up."""
    out = {}
    for name in ("gpt3-175b", "bloom"):
        rows = list(csv.DictReader(open(os.path.join(ROOT, "traces/profiles/perseus/%s+a40_bf16.csv" % name))))
        for inst in ("forward", "backward"):
            by = {}
            for r in rows:
                if r["instruction"] == inst:
                    by.setdefault(float(r["frequency"]), []).append((float(r["time"]), float(r["energy"])))
            top = sum(t for t, _ in by[FMAX]) / len(by[FMAX])
            out[(name, inst)] = [(f, sum(e / t for t, e in v) / len(v), sum(t for t, _ in v) / len(v) / top)
                                 for f, v in sorted(by.items()) if f >= 1380]
    return out


def print_stage_profiles():
    print("1. A40 stage profiles: measured power W / time relative to the 1740 MHz row (mean of 8 stages)")
    for (name, inst), cells in stage_profiles().items():
        print("  %-10s %-8s %s" % (name, inst, " ".join("%d:%.0f/%.3f" % c for c in cells if c[0] % 60 == 0 or c[0] == FMAX)))


def fit_baseline(rows, n, b_grid):
    """rows: [(limit W, iteration s)], 300 W first. Best (squared error, P0, b, clock at 300 W) over P0 and b."""
    cc = MODEL["computations"]["backward"]
    s = IDLE + cc["dynamic_w"] * (1 - cc["sm_share"])
    gt = {f: g(f) for f in CLOCKS}
    best = None
    for p0 in range(150, 700):
        capped = []
        for pl, _ in rows[:n]:
            ok = [f for f in CLOCKS if s + (p0 - s) * gt[f] <= pl * CAP / MODEL["power"]["cap_w"]]
            capped.append(max(ok) if ok else CLOCKS[0])
        for b in b_grid:
            shape = lambda f: b * FMAX / f + 1 - b
            err = sum((shape(f) / shape(capped[0]) - t / rows[0][1]) ** 2 for f, (_, t) in zip(capped, rows[:n]))
            if best is None or err < best[0] - 1e-15:
                best = (err, p0, b, capped[0])
    return best


def baseline_fits(fit_time_share, only=None):
    """{workload: [(n, clock sustained at 300 W, P0, b, rms % of the time ratios)] for n = 3..7 highest limits}."""
    per = {}
    for r in csv.DictReader(open(os.path.join(ROOT, "traces/perseus-baselines/A40/zeus_global.csv"))):
        per.setdefault(r["model_name"], []).append((float(r["power_limit_0"]), float(r["time"])))
    grid = [x / 100 for x in range(20, 71)] if fit_time_share else [MODEL["computations"]["backward"]["time_sm"]]
    out = {}
    for name, rows in sorted(per.items()):
        if name == "t5-3b" or only and name != only:
            continue
        rows.sort(reverse=True)
        out[name] = []
        for n in (3, 4, 5, 6, 7):
            err, p0, b, f300 = fit_baseline(rows, n, grid)
            out[name].append((n, f300, p0, b, 100 * (err / n) ** 0.5))
    return out


def print_baselines():
    for fit_b in (False, True):
        print("2. A40 power-limit baselines, %s: clock sustained at 300 W (MHz) / P0 W / b / rms %% of the time ratios,"
              " fit over the highest n limits" % ("time share fitted too" if fit_b else
                                                  "time share the model's (%.3f)" % MODEL["computations"]["backward"]["time_sm"]))
        for name, fits in baseline_fits(fit_b).items():
            print("  %-18s %s" % (name, "  ".join("n=%d %d/%d/%.2f/%.2f" % c for c in fits)))


def scale_sm_power(cc, factor):
    """Multiplies a coefficient set's SM-dependent power (dynamic_w x sm_share) by factor, the rest kept."""
    a, rest = cc["dynamic_w"] * cc["sm_share"] * factor, cc["dynamic_w"] * (1 - cc["sm_share"])
    cc["dynamic_w"], cc["sm_share"] = a + rest, a / (a + rest)


def variant(k=1.0, b=None, vtop=None, knee2=1455.0):
    m = json.loads(json.dumps(MODEL))
    if vtop is not None:  # a point at knee2 on the fitted line, then up to vtop at the top clock (renormalised to 1)
        pts = m["voltage_curve"]["points"]
        m["voltage_curve"]["points"] = [[pts[0][0], pts[0][1] / vtop], [knee2, voltage(pts, knee2) / vtop], [FMAX, 1.0]]
        for grp in ("computations", "classes"):  # power at and below knee2 unchanged
            for cc in m[grp].values():
                scale_sm_power(cc, vtop ** 2)
    for cc in m["computations"].values():
        scale_sm_power(cc, k)
        if b is not None:
            cc["time_sm"] = b
    return m


def mape(model, run_set, binary):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(model, fh)
    try:
        out = subprocess.run([binary, "validate", "--perseus", os.path.join(ROOT, "traces/perseus-runs", run_set), "--gpu", fh.name,
                              "--no-fits", "--no-frontier", "--json"], capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(fh.name)
    v = json.loads(out)["variants"][0]
    return v["time_mape_pct"], v["energy_mape_pct"], v.get("anchor_sm_mhz", {})


def run_cases(binary):
    """[(label, {run set: (time MAPE %, energy MAPE %)}, (forward, backward) clock at the top request)]."""
    cases = [("as shipped", variant())]
    cases += [("V-f top: v(1740) x %.2f above 1455 MHz" % vt, variant(vtop=vt)) for vt in (1.1, 1.2, 1.3)]
    cases += [("k %.2f, b %.3f" % (k, b), variant(k=k, b=b)) for k in (0.85, 0.9, 0.95) for b in (0.334, 0.36, 0.408)]
    cases += [("k 1.00, b %.3f" % b, variant(b=b)) for b in (0.334, 0.345, 0.35, 0.36, 0.408)]
    out = []
    for label, m in cases:
        res = {}
        for rs in RUN_SETS:
            t, e, clocks = mape(m, rs, binary)
            res[rs] = (t, e)
        out.append((label, res, (clocks["forward"], clocks["backward"])))
    return out


def print_runs():
    binary = os.environ.get("DVFS_SIM_BIN", os.path.join(ROOT, "build/dvfs-sim"))
    print("3. evaluation on the A40 run sets (models only; nothing fitted): time / energy MAPE %%, %s" % " | ".join(RUN_SETS))
    for label, res, clocks in run_cases(binary):
        print("  %-40s %s   (top clock runs at %.0f / %.0f MHz)" % (label, " | ".join("%.2f / %.2f" % res[rs] for rs in RUN_SETS),
                                                                     clocks[0], clocks[1]))


if __name__ == "__main__":
    print_stage_profiles()
    print_baselines()
    if "--runs" in sys.argv[1:]:
        print_runs()
