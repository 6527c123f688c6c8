#!/usr/bin/env python3
"""Diagnosis, writes and fits nothing: where a Perseus run set's models-only energy error comes from (issue 22, s9_22).

  /usr/bin/python3 models/calibration/perseus_energy_decomposition.py RUN_DIR [DVFS_SIM] [-- extra validate options]

Runs `dvfs-sim validate --perseus RUN_DIR --no-fits --no-frontier --json` and splits each plan's energy error, per
rank, into P_blocking x (predicted - measured waiting), the predicted busy power x (predicted - measured busy time)
and (predicted - measured busy power) x measured busy time, where the measured busy time is the rank's forward +
backward timers and its measured busy power (NVML energy - P_blocking x waiting) / busy time. Then the busy
power by the rank's time-weighted requested clock (from the plan's N.sched.json, Merak's 1F1B instruction order,
as sim/critical_path/plan_file.cpp). One-GPU-per-stage run sets only (not the 3D set).
"""
import gzip
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def merak_instructions(s, S, M):
    """Stage s's instructions in Merak's 1F1B order: 'p' transfer, 'l' load, ('f'|'b', micro-batch), 'r', 'o'."""
    def valid(m):
        return 0 <= m < M
    out, prev = [], -1
    steps = 2 * (M + S - 1)
    for k in range(steps):
        fw = (k % 2 == 0) == (s % 2 == 0)
        if fw:
            mb = (k // 2 if k % 2 == 0 else (k - 1) // 2) - s // 2
        elif k % 2 == 0:
            mb = k // 2 - S + (s + 1) // 2
        else:
            mb = (k - 1) // 2 - S + 1 + s // 2
        if fw and s > 0 and (valid(mb) or valid(prev)):
            out.append("p")
        if not fw and s < S - 1 and (valid(prev) or valid(mb)):
            out.append("p")
        if (s == 0 or s == S - 1) and fw and valid(mb):
            out.append("l")
        if valid(mb):
            out.append(("f" if fw else "b", mb))
        if k == steps - 1:
            out += ["r", "r", "o"]
        prev = mb
    return out


def measured(runs):
    """{(plan, rank): T, E, busy (forward + backward timers), clk {requested MHz: seconds}}, iterations after the warm-up."""
    out = {}
    for f in sorted(os.listdir(runs)):
        if not f.endswith(".prof.json.gz"):
            continue
        n = int(f.split(".")[0])
        prof = json.load(gzip.open(os.path.join(runs, f)))
        sched = json.load(gzip.open(os.path.join(runs, "%d.sched.json.gz" % n)))
        S = len(prof)
        for s, (r, sc) in enumerate(zip(prof, sched)):
            tb = r["time_breakdown"]
            M = len(tb["forward"][1])
            its = range(1, len(r["iter_time"]))
            clk = {}
            ins = merak_instructions(s, S, M)
            if len(sc["power_states"]) == len(ins):
                for f_mhz, x in zip(sc["power_states"], ins):
                    if isinstance(x, tuple):
                        key = "forward" if x[0] == "f" else "backward"
                        clk[f_mhz] = clk.get(f_mhz, 0.0) + np.mean([tb[key][it][x[1]] for it in its])
            out[(n, s)] = dict(T=np.mean([r["iter_time"][i] for i in its]), E=np.mean([r["iter_energy"][i] for i in its]),
                               busy=np.mean([sum(tb["forward"][i][:M]) + sum(tb["backward"][i][:M]) for i in its]), clk=clk)
    return out


def main():
    args = sys.argv[1:]
    extra = args[args.index("--") + 1:] if "--" in args else []
    args = args[:args.index("--")] if "--" in args else args
    if not args:
        sys.exit(__doc__)
    runs = args[0]
    sim = args[1] if len(args) > 1 else os.path.join(ROOT, "build/dvfs-sim")
    with tempfile.TemporaryDirectory() as tmp:
        js = os.path.join(tmp, "r.json")
        subprocess.run([sim, "validate", "--perseus", runs, "--no-fits", "--no-frontier", "--json", "-o", js] + extra,
                       check=True, stdout=subprocess.DEVNULL)
        d = json.load(open(js))
    if d.get("gpus_per_stage", 1) != 1:
        sys.exit("%s: %d GPUs per stage; this diagnosis reads one GPU per stage" % (runs, d["gpus_per_stage"]))
    v, pb = d["variants"][0], d["p_blocking_w"]
    meas = measured(runs)
    bins, perplan = {}, []
    for row in v["rows"]:
        n, tp = row["plan"], row["predicted_iteration_s"]
        blk = dt = dp = 0.0
        for s, (ec, bp) in enumerate(zip(row["rank_compute_energy_j"], row["rank_busy_s"])):
            m = meas[(n, s)]
            pm, pp = (m["E"] - pb * (m["T"] - m["busy"])) / m["busy"], ec / bp
            blk += pb * ((tp - bp) - (m["T"] - m["busy"]))
            dt += pp * (bp - m["busy"])
            dp += (pp - pm) * m["busy"]
            if m["clk"]:
                fm = sum(k * w for k, w in m["clk"].items()) / sum(m["clk"].values())
                bins.setdefault(int(fm // 50 * 50), []).append((pp, pm))
        me = row["measured_energy_j"]
        perplan.append((n, row["energy_error_pct"], 100 * blk / me, 100 * dt / me, 100 * dp / me, row["measured_iteration_s"]))
    print("plan  error % = blocking + busy time + busy power   (measured iteration s)")
    for p in perplan:
        print("%4d %7.2f = %6.2f + %6.2f + %6.2f   (%.1f)" % p)
    a = np.array([p[1:5] for p in perplan if p[0] > 1])  # plans 0, 1: every instruction at the top clock
    print("mean over the plans after 0 and 1: error %.2f = blocking %.2f + busy time %.2f + busy power %.2f" % tuple(a.mean(0)))
    print("busy power (W) by the rank's time-weighted requested clock, P_blocking %.1f W: predicted, measured, difference" % pb)
    for b in sorted(bins):
        x = np.array(bins[b])
        print("  %4d-%4d MHz  n %3d  %6.1f  %6.1f  %+6.1f" % (b, b + 50, len(x), x[:, 0].mean(), x[:, 1].mean(), (x[:, 0] - x[:, 1]).mean()))


if __name__ == "__main__":
    main()
