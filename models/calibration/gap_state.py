#!/usr/bin/env python3
"""Evidence, writes no model: what the H200 draws between kernels, and what a byte costs with its data.

    python3 models/calibration/gap_state.py [--bin build/dvfs-sim]

Seventh round of issue 16; the questions, recordings and rules were written before recording in
models/calibration/h200-power-split.json (`gap_state`, `copy_data`). Prints:
  1. the gap state, model-free (the rule's fit): power in a gap t after the last kernel = idle(f) + alpha (P_last -
     idle(f)) exp(-t / tau), alpha and tau by least squares of the relative error of the fit loops' measured mean
     power (kernels' busy time and gaps from the trace, P_last from the same kernel's `-none` reference of the same
     call, idle(f) the h200 model's at the top clock the gaps ran at), then every gap loop with and without the term,
     fit and held out;
  2. the shipped h200 model on every gap_state loop (native governor and recorded clocks: `dvfs-sim validate`);
  3. the copy_data loops: measured power (no model) and the shipped model's error;
  4. the diagnostic gapless capped loops (one long profiled step: kernels and counter from the same seconds, no step
     gaps) at the recorded clocks, beside the same loops measured by the suite's steady window.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.append(os.path.join(ROOT, "python"))  # the pure-Python parts; a built package on the path (build/python) wins
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from window_loops import device_spans, models_report, window_power_w  # noqa: E402

SPLIT = os.path.join(ROOT, "models", "calibration", "h200-power-split.json")


def split():
    with open(SPLIT) as f:
        return json.load(f)


def busy_and_gaps(rec_dir):
    """(busy seconds, [gap seconds], kernel span seconds) of a recording's device activities (kernels, copies, memsets),
    overlapping ones merged."""
    merged = device_spans(rec_dir, ("kernel", "gpu_memcpy", "gpu_memset"))
    gaps = [b[0] - a[1] for a, b in zip(merged, merged[1:])]
    return sum(b - a for a, b in merged), gaps, merged[-1][1] - merged[0][0]


class GapLoop:
    """One gap_state recording reduced to what the model-free fit needs."""

    def __init__(self, name, folder):
        self.name = name
        self.kernel = name.split("-")[1]  # gap-<kernel>-bf16-<wait>
        d = os.path.join(folder, name)
        self.power_w, self.seconds = window_power_w(d)
        self.busy_s, self.gaps_s, span = busy_and_gaps(d)
        self.edge_s = max(0.0, self.seconds - span)  # the window's ends outside the first and last activity


def idle_w():
    """The h200 model's idle power (its idle_sm_fraction is 0: the same at every clock; the gaps ran at 1980 MHz)."""
    with open(os.path.join(ROOT, "models", "gpus", "h200.json")) as f:
        power = json.load(f)["power"]
    assert power.get("idle_sm_fraction", 0) == 0, "idle(f) moves with the clock: price it at 1980 MHz"
    return float(power["idle_w"])


def decay_s(gaps, tau):
    """sum over gaps of tau (1 - exp(-g / tau)): the seconds of full excess the decaying term adds."""
    return tau * float(np.sum(-np.expm1(-np.asarray(gaps) / tau)))


def kernel_power(ref, alpha, s_ref, idle):
    """The kernel's power from its back-to-back reference, the gap term taken out of the reference's own small gaps:
    P T = Pk busy + idle (G + edge) + alpha (Pk - idle) S."""
    idle_s = sum(ref.gaps_s) + ref.edge_s
    return (ref.power_w * ref.seconds - idle * idle_s + alpha * idle * s_ref) / (ref.busy_s + alpha * s_ref)


def predicted_w(loop, ref, alpha, s_loop, s_ref, idle):
    pk = kernel_power(ref, alpha, s_ref, idle)
    return (pk * loop.busy_s + idle * (sum(loop.gaps_s) + loop.edge_s) + alpha * (pk - idle) * s_loop) / loop.seconds


def errors_pct(loops, refs, alpha, tau, idle):
    out = {}
    for n, l in loops.items():
        ref = refs[l.kernel]
        p = predicted_w(l, ref, alpha, decay_s(l.gaps_s, tau), decay_s(ref.gaps_s, tau), idle)
        out[n] = 100 * (p - l.power_w) / l.power_w
    return out


TAUS = [10 ** (x / 20) for x in range(-120, -19)]  # 1 us .. 100 ms
ALPHAS = [a / 100 for a in range(101)]


def fit_gap_state(fit_loops, refs, idle):
    """(alpha, tau) minimising the sum of squared relative errors over the fit loops, by grid."""
    best = None
    for tau in TAUS:
        s_loop = {n: decay_s(l.gaps_s, tau) for n, l in fit_loops.items()}
        s_ref = {k: decay_s(r.gaps_s, tau) for k, r in refs.items()}
        for alpha in ALPHAS:
            sq = sum((100 * (predicted_w(l, refs[l.kernel], alpha, s_loop[n], s_ref[l.kernel], idle) - l.power_w) / l.power_w) ** 2
                     for n, l in fit_loops.items())
            if best is None or sq < best[0]:
                best = (sq, alpha, tau)
    return best[1], best[2]


def gap_excess_w(loop, ref, alpha, tau, idle):
    """The fitted term's mean power above idle over a loop's gaps."""
    pk = kernel_power(ref, alpha, decay_s(ref.gaps_s, tau), idle)
    return alpha * (pk - idle) * decay_s(loop.gaps_s, tau) / max(sum(loop.gaps_s), 1e-12)


def load_gap_loops(g):
    folder = os.path.join(ROOT, g["folder"])
    refs = {GapLoop(n, folder).kernel: GapLoop(n, folder) for n in g["references"]}
    fit = {n: GapLoop(n, folder) for n in g["fit"]}
    held = {n: GapLoop(n, folder) for n in g["held_out"]}
    return refs, fit, held


def model_errors(binary, rec_dir):
    """The shipped h200 model on one recording: {clock source: (measured W, simulated W, energy error %)}."""
    r = subprocess.run([binary, "validate", rec_dir, "--gpu", "h200", "--json"], capture_output=True, text=True,
                       check=True)
    out = {}
    for c in json.loads(r.stdout)["clock_sources"]:
        t = c["total"]
        out[c["clock_source"]] = (t["measured_mean_power_w"], t["simulated_mean_power_w"], t["energy_error_pct"])
    return out


def suite_rows(binary, report=None):
    """`validate --models --json`'s power-suite loop rows by loop (`report`: as window_loops.models_report takes it)."""
    return {row["loop"]: row for row in models_report(binary, report)["power_suite"]["loops"]}


def mean_abs(d):
    return sum(abs(v) for v in d.values()) / len(d)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.environ.get("DVFS_SIM_BIN", os.path.join(ROOT, "build", "dvfs-sim")))
    a = ap.parse_args()
    sp = split()
    g, cd = sp["gap_state"], sp["copy_data"]
    idle = idle_w()
    refs, fit, held = load_gap_loops(g)

    alpha, tau = fit_gap_state(fit, refs, idle)
    print("1. the gap state, model-free (h200-power-split.json gap_state; idle(1980 MHz) = %.1f W from the h200 model)" % idle)
    print("   fitted on %d loops: alpha %.2f, tau %.3g s (%s); the gaps' mean excess over idle in the fit loops: %s"
          % (len(fit), alpha, tau, "the grid's longest: a constant offset" if tau >= TAUS[-1] else "inside the grid",
             ", ".join("%s %.1f W" % (n.replace("gap-", ""), gap_excess_w(l, refs[l.kernel], alpha, tau, idle))
                       for n, l in fit.items())))
    print("   rule: alpha < 0.05 -> 'gaps draw idle power', nothing changes: %s" % ("so" if alpha < 0.05 else "NOT so"))
    for label, (al, ta) in (("gaps at idle", (0.0, 1e-3)), ("fitted term", (alpha, tau))):
        for side, loops in (("fit", fit), ("held out", held)):
            e = errors_pct(loops, refs, al, ta, idle)
            print("   %-12s %-8s mean |error| %.2f %%   %s" % (label, side, mean_abs(e), "  ".join(
                "%s %+.1f" % (n.replace("gap-", "").replace("-bf16", ""), v) for n, v in e.items())))

    print("\n2. the shipped h200 model on every gap loop (energy error over the ~3 s window: native / recorded clocks)")
    folder = os.path.join(ROOT, g["folder"])
    for side, names in (("reference", g["references"]), ("fit", g["fit"]), ("held out", g["held_out"])):
        for n in names:
            m = model_errors(a.bin, os.path.join(folder, n))
            print("   %-22s %-9s measured %6.1f W  native %+6.1f %%  recorded %+6.1f %%" % (
                n, side, m["native"][0], m["native"][2], m["recorded"][2]))

    print("\n3. a byte's cost depends on its bits (h200-power-split.json copy_data; measured, then the shipped model)")
    cfolder = os.path.join(ROOT, cd["folder"])
    for n in cd["loops"]:
        m = model_errors(a.bin, os.path.join(cfolder, n))
        print("   %-22s measured %6.1f W   model (recorded clocks) %6.1f W  %+6.1f %%" % (
            n, m["recorded"][0], m["recorded"][1], m["recorded"][2]))

    print("\n4. capped loops over one long profiled step (diagnostic; recorded clocks, then native)")
    rows = suite_rows(a.bin)
    for n in g["diagnostic_gapless"]["loops"]:
        m = model_errors(a.bin, os.path.join(folder, "gapless-" + n))
        s = rows[n]
        print("   %-20s %-9s suite steady window %6.1f W: recorded %+6.1f %%, native %+6.1f %%   one long step %6.1f W: "
              "recorded %+6.1f %%, native %+6.1f %%" % (n, s["kind"], s["measured_mean_power_w"], s["recorded"]["energy_error_pct"],
                                                       s["native"]["energy_error_pct"], m["recorded"][0], m["recorded"][2], m["native"][2]))


if __name__ == "__main__":
    main()
