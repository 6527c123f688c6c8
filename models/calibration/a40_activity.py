#!/usr/bin/env python3
"""Evidence, writes no model: can the A40 GPT-3 2.7B energy miss of `validate --perseus` (models only, 7.64 %,
issue 22) be closed by physics from the workload, i.e. power from each pipeline computation's tensor work rate
(the H200's activity power model, models/README.md) instead of the a40 model's one power per computation?
See docs/validation.md ("A40 GPT-3 2.7B energy: activity power and head dimension").

  python3 models/calibration/a40_activity.py [--runs]

1. Tensor energy per FLOP on the A40, fit on the A40 stage profiles only (traces/profiles/perseus/*+a40_bf16.csv,
   GPT-3 175B and BLOOM 176B, no run set): at each requested clock below the cap, the spread of the 16 computations'
   power against their tensor rate F / t (F counted from stage_workloads.json), P = c(f) + e_t (V(f)/V_max)^2 F / t,
   one intercept per clock, e_t shared; printed per range of clocks.
2. Each A40 run set's computations (a middle stage, no LM head): FLOPs counted from the workload (workloads.json's
   layers / pp blocks; heads from Merak's config.py; sequence 1024 as Merak's utils.py caps it, 2048 beside it;
   Merak recomputes, so a backward is 3 forwards' FLOPs) over the models-only anchor's time (`validate --perseus`,
   nothing from the run set), against the a40 model's calibration workload (GPT-3 175B profile, stages 0-6 at the top
   clock). The activity model then lowers each computation's SM-dependent power by e_t (T_ref - T_w) f_max / f_cap.
3. Evaluation only (nothing fitted on a run set): each A40 run set's measured busy power (per rank, per plan, the
   NVML energy less P_blocking for the time outside its computations) at requested clocks 1080-1260 MHz, against the
   GPT-3 175B profile's power at the same clock; the activity model's predicted gap beside it.
4. The head-dimension hypothesis (GPT-3 2.7B: 2560 / 32 heads = 80, the others 128): the power-limit baselines of
   BLOOM-3B (hidden 2560, 32 heads: head dimension 80 too, the same per-block counts) against GPT-3 2.7B and 6.7B, and
   the counted score-matrix bytes per FLOP.
5. --runs: the models-only time / energy MAPE of both A40 run sets with the activity power (each e_t of 1.;
   evaluation only), via `build/dvfs-sim validate --perseus DIR --gpu FILE --no-fits --no-frontier`; then e_t fit on
   the 3D set's models-only energy MAPE (allowed: a development set, not the 2.7B) and both sets at that e_t.
"""
import csv
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the sibling evidence / derivation scripts
from a40_sustained_clock import FMAX, MODEL, ROOT, RUN_SETS, mape, scale_sm_power, voltage  # noqa: E402

PROFILES = ("gpt3-175b", "bloom")
RANGES = ((0, 1200), (600, 1290), (0, 1380), (1110, 1380), (900, 1440))  # requested MHz, inclusive
# Merak's config.py (Perseus artifact, ml-energy/zeus branch kronos, merak/examples/language-modeling/config.py):
# n_head per model; utils.py caps the sequence at min(tokenizer max length, 1024) = 1024 for GPT-2's tokenizer.
HEADS = {"gpt3-xl": 16, "gpt3-2.7b": 32, "gpt3-6.7b": 32, "bloom-3b": 32}
MERAK_SEQ = 1024
P_BLOCKING = MODEL["power"]["idle_w"]


def v2(f):
    return (voltage(MODEL["voltage_curve"]["points"], f) / voltage(MODEL["voltage_curve"]["points"], FMAX)) ** 2


def block_flops(h, seq, mb, tp):
    """One transformer block's forward on one shard (models/src/computation_work.cpp): 24 t h^2 / tp + 4 t s h / tp."""
    t = mb * seq
    return 24 * t * h * h / tp + 4 * t * seq * h / tp


def profile_rows():
    """[(workload, stage, instruction, requested MHz, time s, power W, tensor TFLOP/s)] of the A40 stage profiles."""
    spec = json.load(open(os.path.join(ROOT, "traces/profiles/perseus/stage_workloads.json")))["workloads"]
    rows = []
    for name in PROFILES:
        w = spec[name]
        layers, head = {}, {}
        for grp in w["stages"]:
            for s in grp["stages"]:
                layers[s], head[s] = grp["layers"], grp["lm_head"]
        for r in csv.DictReader(open(os.path.join(ROOT, "traces/profiles/perseus/%s+a40_bf16.csv" % name))):
            s = int(r["stage"])
            f = block_flops(w["hidden"], w["seq"], w["micro_batch"], w["tp"]) * layers[s]
            if head[s]:
                f += 2 * w["micro_batch"] * w["seq"] * w["hidden"] * w["vocab"] / w["tp"]
            if r["instruction"] == "backward":
                f *= 2  # no recompute (stage_workloads.json)
            t = float(r["time"])
            rows.append((name, s, r["instruction"], float(r["frequency"]), t, float(r["energy"]) / t, f / t / 1e12))
    return rows


def lstsq(xs, ys):
    """Least squares y = X c by the normal equations (Gaussian elimination; no numpy needed)."""
    n = len(xs[0])
    a = [[sum(x[i] * x[j] for x in xs) for j in range(n)] + [sum(x[i] * y for x, y in zip(xs, ys))] for i in range(n)]
    for i in range(n):
        p = max(range(i, n), key=lambda k: abs(a[k][i]))
        a[i], a[p] = a[p], a[i]
        for k in range(n):
            if k != i and a[i][i] != 0:
                q = a[k][i] / a[i][i]
                a[k] = [u - q * w for u, w in zip(a[k], a[i])]
    return [a[i][n] / a[i][i] for i in range(n)]


def fit_tensor_energy(lo, hi, rows=None):
    """(e_t pJ/FLOP at V_max, rms W, rows used): P = c(f) + e_t (V/V_max)^2 T over the profile rows lo <= f <= hi."""
    sel = [r for r in (rows or profile_rows()) if lo <= r[3] <= hi]
    clocks = sorted({r[3] for r in sel})
    xs = [[1.0 if r[3] == c else 0.0 for c in clocks] + [v2(r[3]) * r[6]] for r in sel]
    ys = [r[5] for r in sel]
    c = lstsq(xs, ys)
    rms = (sum((sum(ci * xi for ci, xi in zip(c, x)) - y) ** 2 for x, y in zip(xs, ys)) / len(ys)) ** 0.5
    return c[-1], rms, len(sel)


def reference_rates(rows=None):
    """The a40 model's calibration workload (GPT-3 175B profile), stages 0-6 at the top clock: TFLOP/s per pass."""
    out = {}
    for inst in ("forward", "backward"):
        sel = [r for r in (rows or profile_rows()) if r[0] == "gpt3-175b" and r[1] < 7 and r[2] == inst and r[3] == FMAX]
        out[inst] = sum(r[6] for r in sel) / len(sel)
    return out


def models_only(run_set, model_file=None, binary=None):
    """The shipped models-only variant of `validate --perseus` (JSON) for a run set."""
    binary = binary or os.environ.get("DVFS_SIM_BIN", os.path.join(ROOT, "build/dvfs-sim"))
    cmd = [binary, "validate", "--perseus", os.path.join(ROOT, "traces/perseus-runs", run_set), "--no-fits", "--no-frontier", "--json"]
    if model_file:
        cmd += ["--gpu", model_file]
    return json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)


def workload_rates(run_set, seq=MERAK_SEQ, binary=None):
    """{pass: (TFLOP/s at the models-only anchor, TFLOP, anchor s)} of a middle stage's computations."""
    wl_doc = json.load(open(os.path.join(ROOT, "traces/perseus-baselines/workloads.json")))
    w, pm = wl_doc["run_sets"][run_set], wl_doc["pipeline_model"]
    v = models_only(run_set, binary=binary)["variants"][0]
    r = pm["backward_over_forward"]
    fw_s = v["per_rank"][0]["busy_share"] * w["default_run"]["iteration_s"] / (w["microbatches"] * (1 + r))
    fwd = block_flops(w["hidden"], seq, w["microbatch_size"], w["tp"]) * w["layers"] / w["pp"]
    return {"forward": (fwd / fw_s / 1e12, fwd / 1e12, fw_s), "backward": (3 * fwd / (r * fw_s) / 1e12, 3 * fwd / 1e12, r * fw_s)}


def anchor_clocks(binary=None):
    return models_only(RUN_SETS[0], binary=binary)["variants"][0]["anchor_sm_mhz"]


def activity_factors(e_t, rates, ref, clocks):
    """Per pass, the factor on the a40 computation's SM-dependent power: 1 - e_t (T_ref - T_w) f_max / f_cap / (D s)."""
    out = {}
    for inst in ("forward", "backward"):
        cc = MODEL["computations"][inst]
        drop = e_t * (ref[inst] - rates[inst][0]) * FMAX / clocks[inst]
        out[inst] = 1 - drop / (cc["dynamic_w"] * cc["sm_share"])
    return out


def activity_variant(factors):
    m = json.loads(json.dumps(MODEL))
    for inst, k in factors.items():
        scale_sm_power(m["computations"][inst], k)
    return m


def measured_power_gap(run_set, e_t, rates, lo=1080, hi=1260):
    """Evaluation only: (mean measured busy power - GPT-3 175B profile power at the same clock, predicted gap, samples)
    over the (plan, rank) pairs of a run set whose computations all ran at requested clocks in [lo, hi]."""
    import gzip
    prof = {}
    for r in profile_rows():
        if r[0] == "gpt3-175b" and r[1] < 7:
            prof.setdefault(r[3], {}).setdefault(r[2], []).append((r[4], r[5], r[6]))
    base = os.path.join(ROOT, "traces/perseus-runs", run_set)
    gaps, preds = [], []
    for name in sorted(os.listdir(base)):
        if not name.endswith(".prof.json.gz"):
            continue
        meas = json.load(gzip.open(os.path.join(base, name)))
        sched = json.load(gzip.open(os.path.join(base, name.replace(".prof.", ".sched."))))
        for r, sc in zip(meas, sched):
            clocks = sc["power_states"]
            if not clocks or min(clocks) < lo or max(clocks) > hi:
                continue
            f = min(prof, key=lambda c: abs(c - sorted(clocks)[len(clocks) // 2]))
            tb = r["time_breakdown"]
            busy = sum(sum(x) for p in ("forward", "backward") for x in tb[p][1:]) / (len(tb["forward"]) - 1)
            t = sum(r["iter_time"][1:]) / (len(r["iter_time"]) - 1)
            e = sum(r["iter_energy"][1:]) / (len(r["iter_energy"]) - 1)
            tw = {p: sum(x[0] for x in prof[f][p]) / len(prof[f][p]) for p in prof[f]}
            ref_p = sum(tw[p] * sum(x[1] for x in prof[f][p]) / len(prof[f][p]) for p in tw) / sum(tw.values())
            gaps.append((e - P_BLOCKING * (t - busy)) / busy - ref_p)
            # Predicted: e_t V^2 (T_w - T_ref) at that clock, each rate moved from its anchor by the profile's slowdown.
            slow = {p: tw[p] / (sum(x[0] for x in prof[FMAX][p]) / len(prof[FMAX][p])) for p in tw}
            ref_rate = {p: sum(x[2] for x in prof[f][p]) / len(prof[f][p]) for p in tw}
            pred = sum(tw[p] * e_t * v2(f) * (rates[p][0] / slow[p] - ref_rate[p]) for p in tw) / sum(tw.values())
            preds.append(pred)
    if not gaps:
        return None
    return sum(gaps) / len(gaps), sum(preds) / len(preds), len(gaps)


def baseline_slowdowns(models=("gpt3-2.7b", "bloom-3b", "gpt3-6.7b", "bert-huge-uncased"), limits=(250, 225, 200)):
    """{model: [T(limit) / T(300 W)]} from the A40 power-limit baselines (zeus_global.csv)."""
    per = {}
    for r in csv.DictReader(open(os.path.join(ROOT, "traces/perseus-baselines/A40/zeus_global.csv"))):
        per.setdefault(r["model_name"], {})[float(r["power_limit_0"])] = float(r["time"])
    return {m: [per[m][pl] / per[m][300.0] for pl in limits] for m in models}


def score_bytes_per_flop(h, heads, seq, mb, tp):
    """The score matrix's bytes (8 bf16 passes + a 1-byte mask, computation_work.cpp) per forward block FLOP."""
    return heads / tp * mb * seq * seq * 17 / block_flops(h, seq, mb, tp)


def fit_on_3d(rates, ref, clocks, binary, grid=tuple(i / 20 for i in range(0, 21))):
    """e_t in [0, 1] pJ/FLOP minimising the 3D set's models-only energy MAPE, and both sets' (time, energy) MAPE there."""
    best = None
    for e_t in grid:
        t, e, _ = mape(activity_variant(activity_factors(e_t, rates[RUN_SETS[1]], ref, clocks)), RUN_SETS[1], binary)
        if best is None or e < best[1]:
            best = (e_t, e)
    res = {rs: mape(activity_variant(activity_factors(best[0], rates[rs], ref, clocks)), rs, binary)[:2] for rs in RUN_SETS}
    return best[0], res


def main():
    rows = profile_rows()
    print("1. tensor energy per FLOP e_t (pJ at V_max) fit on the A40 stage profiles, by requested clocks (MHz):")
    fits = {}
    for lo, hi in RANGES:
        e_t, rms, n = fit_tensor_energy(lo, hi, rows)
        fits[(lo, hi)] = e_t
        print("  %4d-%4d: e_t %.2f  rms %.2f W  (%d rows)" % (lo, hi, e_t, rms, n))
    ref = reference_rates(rows)
    clocks = anchor_clocks()
    print("2. tensor rate at the anchor (TFLOP/s): GPT-3 175B profile (a40's calibration) forward %.1f, backward %.1f" % (ref["forward"], ref["backward"]))
    rates = {}
    for rs in RUN_SETS:
        rates[rs] = workload_rates(rs)
        r2048 = workload_rates(rs, seq=2048)
        print("  %-26s forward %.1f (%.2f TFLOP / %.3f s), backward %.1f;  at sequence 2048: %.1f / %.1f" % (
            rs, rates[rs]["forward"][0], rates[rs]["forward"][1], rates[rs]["forward"][2], rates[rs]["backward"][0],
            r2048["forward"][0], r2048["backward"][0]))
    print("3. evaluation: measured busy power minus the GPT-3 175B profile's at the same clock (1080-1260 MHz), W:")
    for rs in RUN_SETS:
        for e_t in (fits[(0, 1200)], fits[(0, 1380)]):
            g = measured_power_gap(rs, e_t, rates[rs])
            print("  %-26s measured %+.1f  activity model (e_t %.2f) %+.1f  (%d plan-ranks)" % (rs, g[0], e_t, g[1], g[2]))
    print("4. head dimension: A40 power-limit baselines, T(PL) / T(300 W) at 250 / 225 / 200 W; score bytes per FLOP")
    shapes = {"gpt3-2.7b": (2560, 32, 1, 4), "bloom-3b": (2560, 32, 1, 4), "gpt3-6.7b": (4096, 32, 2, 4)}
    for m, s in baseline_slowdowns().items():
        extra = ""
        if m in shapes:
            h, heads, tp, mb = shapes[m]
            extra = "  head dim %d, score bytes / FLOP %.4f" % (h // heads, score_bytes_per_flop(h, heads, MERAK_SEQ, mb, tp))
        print("  %-18s %s%s" % (m, " ".join("%.3f" % x for x in s), extra))
    if "--runs" in sys.argv[1:]:
        binary = os.environ.get("DVFS_SIM_BIN", os.path.join(ROOT, "build/dvfs-sim"))
        print("5. models-only time / energy MAPE %% with activity power (nothing fitted on a run set): %s" % " | ".join(RUN_SETS))
        print("  %-28s %s" % ("as shipped", " | ".join("%.2f / %.2f" % mape(MODEL, rs, binary)[:2] for rs in RUN_SETS)))
        for (lo, hi), e_t in fits.items():
            cells = []
            for rs in RUN_SETS:
                k = activity_factors(e_t, rates[rs], ref, clocks)
                t, e, c = mape(activity_variant(k), rs, binary)
                cells.append("%.2f / %.2f (k %.2f/%.2f, %d/%d MHz)" % (t, e, k["forward"], k["backward"], c["forward"], c["backward"]))
            print("  e_t %.2f (fit %d-%d MHz)  %s" % (e_t, lo, hi, " | ".join(cells)))
        e_3d, res = fit_on_3d(rates, ref, clocks, binary)
        print("  e_t %.2f fit on the 3D set's models-only energy MAPE (a development set, allowed): %s" % (
            e_3d, " | ".join("%.2f / %.2f" % res[rs] for rs in RUN_SETS)))


if __name__ == "__main__":
    main()
