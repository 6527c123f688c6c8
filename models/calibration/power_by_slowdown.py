#!/usr/bin/env python3
"""Evidence, writes no model: candidate `power_by_slowdown` of models/calibration/perseus-split.json (issue 22, s9_22).

  /usr/bin/python3 models/calibration/power_by_slowdown.py [DVFS_SIM]

The models-only prediction of `dvfs-sim validate --perseus` prices a computation's busy power at a lowered clock by
the GPU model's g(f)/g(f_anchor). The candidate takes it instead from the same workload's global power-limit
baseline (traces/perseus-baselines/<GPU>/zeus_global.csv, a separate experiment): at limit L the iteration is
R_L = T_L / T_300 slower and each GPU's busy power is B_L = (E_L / GPUs - P_blocking (T_L - busy_L)) / busy_L with
busy_L = busy_300 R_L; a computation slowed by r (the model's time, unchanged) draws B interpolated at r.

Estimate, not the implementation: each rank's busy-time ratio (predicted busy time over the anchor's) stands in
for each of its computations' ratio, from the per-rank composition `validate --perseus --json` writes
(rank_busy_s, rank_compute_energy_j, rank_blocking_energy_j). Prints, per run set, the models-only MAPE as shipped
(recomputed from the composition, which checks it) and with the candidate. Nothing is fitted.
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# run set -> (GPU folder, model_name, dp, tp, pp) of its rows in zeus_global.csv
RUN_SETS = {
    "a40_gpt3-2.7b_pp8": ("A40", "gpt3-2.7b", 1, 1, 8),
    "a40_gpt3-6.7b_dp2pp4tp2": ("A40", "gpt3-6.7b", 2, 2, 4),
    "a100_gpt3-xl_pp4": ("A100", "gpt3-xl", 1, 1, 4),
}


def baseline_rows(gpu, model, dp, tp, pp):
    """[(limit W, time s, energy J)] of the workload's uniform-limit rows, highest limit first."""
    path = os.path.join(ROOT, "traces/perseus-baselines", gpu, "zeus_global.csv")
    out = []
    for r in csv.DictReader(open(path)):
        if (r["model_name"], int(r["dp"]), int(r["tp"]), int(r["pp"])) == (model, dp, tp, pp):
            out.append((float(r["power_limit_0"]), float(r["time"]), float(r["energy"])))
    if not out:
        sys.exit("%s: no rows for %s dp%d tp%d pp%d" % (path, model, dp, tp, pp))
    return sorted(out, reverse=True)


def power_by_ratio(rows, gpus, busy_300, pb):
    """[(R_L, B_L)] sorted by R: the busy power a GPU draws when its computations run R_L times slower."""
    _, t300, _ = rows[0]
    pts = []
    for _, t, e in rows:
        r = t / t300
        busy = busy_300 * r
        pts.append((r, (e / gpus - pb * (t - busy)) / busy))
    return sorted(pts)


def interp(pts, r):
    if r <= pts[0][0]:
        return pts[0][1]
    for (r0, b0), (r1, b1) in zip(pts, pts[1:]):
        if r <= r1:
            return b0 + (b1 - b0) * (r - r0) / (r1 - r0)
    (r0, b0), (r1, b1) = pts[-2], pts[-1]
    return b0 + (b1 - b0) * (r - r0) / (r1 - r0)


def evaluate(sim, name):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        subprocess.run([sim, "validate", "--perseus", os.path.join(ROOT, "traces/perseus-runs", name), "--no-fits",
                        "--no-frontier", "--json", "-o", out], check=True, stdout=subprocess.DEVNULL)
        rep = json.load(open(out))
    v = rep["variants"][0]
    g, pb = rep["gpus_per_stage"], rep["p_blocking_w"]
    gpu, model, dp, tp, pp = RUN_SETS[name]
    rows = baseline_rows(gpu, model, dp, tp, pp)
    t300 = rows[0][1]
    shares = [r["busy_share"] for r in v["per_rank"]]
    busy_300 = sum(shares) / len(shares) * t300
    pts = power_by_ratio(rows, g * len(shares), busy_300, pb)
    acc = {"shipped": [0, 0], "candidate": [0, 0]}
    worst = 0
    for row in v["rows"]:
        me, mt = row["measured_energy_j"], row["measured_iteration_s"]
        shipped = g * sum(c + b for c, b in zip(row["rank_compute_energy_j"], row["rank_blocking_energy_j"]))
        cand = 0
        for s, (busy, blk) in enumerate(zip(row["rank_busy_s"], row["rank_blocking_energy_j"])):
            cand += g * (interp(pts, busy / (shares[s] * t300)) * busy + blk)
        te = abs(row["predicted_iteration_s"] - mt) / mt
        acc["shipped"][0] += te; acc["candidate"][0] += te
        acc["shipped"][1] += abs(shipped - me) / me
        acc["candidate"][1] += abs(cand - me) / me
        worst = max(worst, abs(cand - me) / me)
    n = len(v["rows"])
    print("%s (%d plans; %s %s rows: %s)" % (name, n, gpu, model,
                                               ", ".join("R %.3f B %.1f W" % p for p in pts)))
    print("  shipped (recomputed): time %.2f %%, energy %.2f %% (validate says %.2f %%)" %
          (100 * acc["shipped"][0] / n, 100 * acc["shipped"][1] / n, v["energy_mape_pct"]))
    print("  power_by_slowdown:    time %.2f %%, energy %.2f %% (worst plan %.2f %%)" %
          (100 * acc["candidate"][0] / n, 100 * acc["candidate"][1] / n, 100 * worst))


if __name__ == "__main__":
    sim = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build/dvfs-sim")
    for name in RUN_SETS:
        evaluate(sim, name)
