#!/usr/bin/env python3
"""Evidence, writes no model: is the H200's effective SM clock at the 700 W cap below the clock NVML reports, and is
that why `validate --models` over-predicts some capped kernel loops at their recorded clocks (issue 16, fifth round;
docs/design-notes.md, "NVML's SM clock under the cap")? Reads only traces/recordings/h200-power (trace.json.gz,
telemetry.csv, run.json) and, for claim 5, the binary's `validate --models --json`.

  python3 models/calibration/h200_clock_evidence.py [--bin build/dvfs-sim] [--json]

1. Inside one loop's profiled window (0.15 s, three steps): does a kernel's duration follow the clock reported when it
   started? Per capped loop (throttle reason 4), the slope of log duration on log reported clock over its dominant
   kernel's launches. A kernel that slows with the clock gives a negative slope (-1 if wholly SM-bound).
2. The profiled window against the steady window: the kernel-time-weighted reported clock of the profiled kernels over
   the steady window's time-weighted mean (the window whose counter energy is the measurement, ~25 readings).
3. One kernel across loops: cuBLAS's nvjet 256x128 bf16 kernel (grid 2x66, 137.4 GFLOP: gemm-bf16-4096 and
   gemm-bf16-m1024, the same FLOPs) runs in the duty-cycle loops and in the continuous capped loops. Its median
   duration, duration x steady reported clock (cycles) and the share of the tensor peak at the reported clock.
4. The tensor-peak bound: a kernel cannot run above the tensor cores' peak at its effective clock, so the effective
   clock is at least (achieved FLOP/s) / (peak FLOP/s per MHz); where the reported clock sits near that floor, the
   effective clock cannot be much below it.
5. The held-out gemm-bf16-m1024 against gemm-bf16-4096: same kernel, durations and steady clock, different profiled
   readings; the model's power at the recorded clocks for each (binary's validate --models).
6. Energy per FLOP of the same GEMM in bursts (duty loops) and continuous at the cap, and fp16 against bf16.
7. The throttle-reason bitmask over every H200 recording: which reasons NVML ever gave.
8. Lag: per capped GEMM / attention loop, the correlation of log duration with the log of the reading taken 0 and
   60-120 ms after each kernel started (does the field describe an earlier stretch of time?).
--probes DIR: the clock-probe loops (traces/recorder/record_power_suite.py --only probes; not recorded yet): each
   spin kernel's SM clock from its cycle count and duration (probe_clocks) against NVML's reading and the steady mean.
"""
import argparse
import csv
import gzip
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from window_loops import models_report  # noqa: E402  (the validate --models report, read once where a caller has it)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SUITE = os.path.join(ROOT, "traces/recordings/h200-power")
# Dense bf16/fp16 tensor FLOP per clock per SM: the H100/H200 datasheet's 989.4 TFLOP/s dense on 132 SMs at the 1830 MHz
# boost clock the datasheet computes it at (989.4e12 / (132 x 1.83e9) = 4096, twice the A100's 2048) [datasheet-derived].
TENSOR_FLOP_PER_CLOCK_PER_SM = 4096
SM_COUNT = 132
SW_POWER_CAP = 4  # NVML clocks-event reason bit: software power cap
IDLE_W = 123.2    # the suite's idle loop, steady counter mean (validate --models, `idle`, measured)
NVJET_4096 = ("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", "[2, 66, 1]")
FAMILY_4096 = ("duty-100ms-10pct", "duty-100ms-20pct", "duty-20ms-50pct", "duty-100ms-30pct", "duty-50ms-50pct",
               "duty-5ms-80pct", "gemm-bf16-4096", "gemm-bf16-m1024")
GEMM_FLOPS = {"gemm-bf16-4096": 2 * 4096 ** 3, "gemm-bf16-m1024": 2 * 1024 * 8192 * 8192, "gemm-bf16-8192": 2 * 8192 ** 3,
              "gemm-fp16-4096": 2 * 4096 ** 3, "gemm-fp16-8192": 2 * 8192 ** 3, "duty-50ms-20pct-8192": 2 * 8192 ** 3,
              "duty-100ms-35pct-8192": 2 * 8192 ** 3}
for _n in FAMILY_4096[:6]:
    GEMM_FLOPS[_n] = 2 * 4096 ** 3


class Loop:
    """One power-suite loop: its kernels (name, grid, start epoch ns, duration us), telemetry and run.json."""

    def __init__(self, name, suite=SUITE):
        d = os.path.join(suite, name)
        self.name = name
        self.run = json.load(open(os.path.join(d, "run.json")))
        trace = json.load(gzip.open(os.path.join(d, "trace.json.gz")))
        base = trace["baseTimeNanoseconds"]  # Kineto ts (us) + this = epoch ns, the telemetry's clock (time.time_ns)
        self.kernels = sorted((e["name"], str(e["args"].get("grid")), base + e["ts"] * 1e3, e["dur"])
                              for e in trace["traceEvents"] if e.get("cat") == "kernel")
        with open(os.path.join(d, "telemetry.csv")) as f:
            rows = list(csv.DictReader(f))
        self.t = [float(r["t_ns"]) for r in rows]
        self.sm = [float(r["sm_mhz"]) for r in rows]
        self.reason = [int(r["throttle_reasons"]) for r in rows]
        st = self.run["micro"]["steady"]
        self.steady = (st["t0_ns"], st["t1_ns"])
        self.steady_w = st["energy_mj"] / ((st["t1_ns"] - st["t0_ns"]) * 1e-9) / 1e3
        self.steady_step_s = (st["t1_ns"] - st["t0_ns"]) * 1e-9 / st["steps"]
        self.profiled_steps = len(self.run["run"]["profiled_steps"])

    def clock_at(self, t_ns):
        """The reading in force at t_ns (each sample holds until the next, as traces/src/recording.cpp reads it)."""
        lo, hi = 0, len(self.t)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.t[mid] <= t_ns:
                lo = mid
            else:
                hi = mid
        return self.sm[lo]

    def steady_clock(self):
        """Time-weighted mean reported SM clock over the steady window."""
        t0, t1 = self.steady
        acc, t, f = 0.0, t0, self.clock_at(t0)
        for ti, fi in zip(self.t, self.sm):
            if ti <= t0:
                continue
            if ti >= t1:
                break
            acc += f * (ti - t)
            t, f = ti, fi
        acc += f * (t1 - t)
        return acc / (t1 - t0)

    def capped(self):
        t0, t1 = self.steady
        return any(r & SW_POWER_CAP for ti, r in zip(self.t, self.reason) if t0 <= ti <= t1)

    def dominant(self):
        """(name, grid) of the kernel that takes most of the profiled kernel time."""
        time = {}
        for n, g, _, d in self.kernels:
            time[(n, g)] = time.get((n, g), 0.0) + d
        return max(time, key=time.get)

    def launches(self, key):
        return [(t, d) for n, g, t, d in self.kernels if (n, g) == key]

    def profiled_clock(self):
        """Kernel-time-weighted reported clock of the profiled kernels."""
        w = sum(d for *_, d in self.kernels)
        return sum(self.clock_at(t) * d for _, _, t, d in self.kernels) / w

    def busy_share(self):
        """Kernel time per profiled step over the steady step."""
        return sum(d for *_, d in self.kernels) * 1e-6 / self.profiled_steps / self.steady_step_s


def loop_names():
    return sorted(n for n in os.listdir(SUITE) if os.path.exists(os.path.join(SUITE, n, "trace.json.gz")))


def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def slope(xs, ys):
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx > 0 else float("nan")


def within_loop_slopes(loops):
    """Claim 1: per capped loop with >= 2 readings under its dominant kernel (>= 10 launches), d log(dur) / d log(clock)."""
    out = []
    for lp in loops:
        if not lp.capped():
            continue
        key = lp.dominant()
        ls = lp.launches(key)
        clocks = [lp.clock_at(t) for t, _ in ls]
        if len(ls) < 10 or len(set(clocks)) < 2:
            continue
        out.append({"loop": lp.name, "kernel": key[0][:40], "launches": len(ls), "clock_lo": min(clocks),
                    "clock_hi": max(clocks), "slope": slope([math.log(c) for c in clocks], [math.log(d) for _, d in ls])})
    return out


def clock_windows(loops):
    """Claim 2: per capped loop, the profiled kernels' reported clock over the steady window's mean."""
    return [{"loop": lp.name, "steady_mhz": lp.steady_clock(), "profiled_mhz": lp.profiled_clock(),
             "ratio": lp.profiled_clock() / lp.steady_clock()} for lp in loops if lp.capped()]


def peak_tflops(mhz):
    return TENSOR_FLOP_PER_CLOCK_PER_SM * SM_COUNT * mhz * 1e6 / 1e12


def same_kernel_rows(by_name, names=FAMILY_4096, key=NVJET_4096):
    """Claim 3/4: one kernel across loops: median duration, cycles at the steady clock, share of the tensor peak."""
    rows = []
    for n in names:
        lp = by_name[n]
        ds = [d for _, d in lp.launches(key)]
        f = lp.steady_clock()
        dur = median(ds)
        tflops = GEMM_FLOPS[n] / (dur * 1e-6) / 1e12
        rows.append({"loop": n, "capped": lp.capped(), "steady_mhz": f, "median_us": dur, "kcycles": dur * f / 1e3,
                     "tflops": tflops, "peak_share_at_reported": tflops / peak_tflops(f),
                     "effective_floor_mhz": tflops / peak_tflops(1.0)})
    return rows


def energy_per_flop(lp):
    """Claim 6: the loop's power while its kernels run (steady counter mean, idle power in the gaps) and the dynamic
    energy per FLOP of its GEMM: (P_busy - idle) / achieved FLOP/s."""
    busy = lp.busy_share()
    p_busy = (lp.steady_w - IDLE_W * (1 - busy)) / busy
    key = lp.dominant()
    tflops = GEMM_FLOPS[lp.name] / (median([d for _, d in lp.launches(key)]) * 1e-6) / 1e12
    return {"loop": lp.name, "steady_mhz": lp.steady_clock(), "busy_share": busy, "busy_w": p_busy, "tflops": tflops,
            "dynamic_pj_per_flop": (p_busy - IDLE_W) / tflops}


def throttle_reasons():
    """Claim 7: every throttle-reason bitmask in every H200 recording's telemetry, with its sample count."""
    seen = {}
    base = os.path.join(ROOT, "traces/recordings")
    for dirpath, _, files in os.walk(base):
        if "telemetry.csv" not in files or "h200" not in dirpath:
            continue
        with open(os.path.join(dirpath, "telemetry.csv")) as f:
            for r in csv.DictReader(f):
                if "throttle_reasons" in r and r["throttle_reasons"] != "":
                    v = int(r["throttle_reasons"])
                    seen[v] = seen.get(v, 0) + 1
    return seen


LAG_LOOPS = ("gemm-bf16-m1024", "gemm-bf16-4096", "gemm-bf16-8192", "gemm-fp16-4096", "gemm-fp16-8192", "gemm-fp8-4096",
             "gemm-fp8-8192", "gemm-tf32-4096", "gemm-tf32-8192", "attn-fwd-s2048")
LAGS_MS = (60, 80, 100, 120)


def correlation(xs, ys):
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx, syy = sum((x - mx) ** 2 for x in xs), sum((y - my) ** 2 for y in ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else 0.0


def lag_correlations(by_name, names=LAG_LOOPS):
    """Claim 8: corr(log duration, log reading at start + lag) at lag 0 and the lowest over LAGS_MS."""
    out = []
    for n in names:
        lp = by_name[n]
        ls = lp.launches(lp.dominant())
        y = [math.log(d) for _, d in ls]
        at = {lag: correlation([math.log(lp.clock_at(t + lag * 1e6)) for t, _ in ls], y) for lag in (0,) + LAGS_MS}
        best = min(LAGS_MS, key=lambda lag: at[lag])
        out.append({"loop": n, "at_0": at[0], "lag_ms": best, "at_lag": at[best]})
    return out


def model_power(binary, names, report=None):
    """Claim 5: the model's mean power at the recorded clocks (validate --models --json) for the named loops
    (`report`: as window_loops.models_report takes it)."""
    loops = models_report(binary, report, timeout=600)["power_suite"]["loops"]
    return {l["loop"]: (l["measured_mean_power_w"], l["recorded"]["mean_power_w"]) for l in loops if l["loop"] in names}


def probe_clocks(lp):
    """The SM clock each spin probe of a clock-probe loop ran at. A probe of c cycles lasts c / f + o (o: launch and
    exit); the two cycle counts of run.json `micro.probe_cycles` alternate, so o is the median over neighbouring
    short/long pairs of d_short - c_short (d_long - d_short) / (c_long - c_short), and each probe's clock is
    c / (d - o). Returns per probe (start ns, cycles, duration us, effective MHz, NVML's reading in force) and o."""
    c_short, c_long = sorted(lp.run["micro"]["probe_cycles"])
    probes = [(t, d) for n, _, t, d in lp.kernels if "spin_kernel" in n]
    if len(probes) < 2:
        raise ValueError(f"{lp.name}: fewer than two spin_kernel launches in the trace")
    lo, hi = min(d for _, d in probes), max(d for _, d in probes)
    cut = math.sqrt(lo * hi)  # the counts differ threefold: the geometric middle separates them at any clock
    cycles = [c_long if d > cut else c_short for _, d in probes]
    overheads = []
    for (t0, d0), c0, (t1, d1), c1 in zip(probes, cycles, probes[1:], cycles[1:]):
        if c0 == c1:
            continue
        (ds, cs), (dl, cl) = sorted([(d0, c0), (d1, c1)], key=lambda x: x[1])
        overheads.append(ds - cs * (dl - ds) / (cl - cs))
    o = median(overheads) if overheads else 0.0
    rows = [{"t_ns": t, "cycles": c, "dur_us": d, "effective_mhz": c / (d - o), "reported_mhz": lp.clock_at(t)}
            for (t, d), c in zip(probes, cycles)]
    return rows, o


def probe_summary(directory):
    """Per clock-probe loop: median effective clock of its probes, NVML's readings under them, the steady mean."""
    out = []
    for name in sorted(os.listdir(directory)):
        if not os.path.exists(os.path.join(directory, name, "trace.json.gz")):
            continue
        lp = Loop(name, directory)
        rows, o = probe_clocks(lp)
        out.append({"loop": name, "probes": len(rows), "overhead_us": o,
                    "effective_mhz": median([r["effective_mhz"] for r in rows]),
                    "reported_mhz": median([r["reported_mhz"] for r in rows]), "steady_mhz": lp.steady_clock(),
                    "effective_range_mhz": (min(r["effective_mhz"] for r in rows), max(r["effective_mhz"] for r in rows))})
    return out


def evidence(binary=None, report=None):
    names = loop_names()
    loops = [Loop(n) for n in names]
    by_name = {lp.name: lp for lp in loops}
    slopes = within_loop_slopes(loops)
    windows = clock_windows(loops)
    out = {
        "within_loop_slopes": slopes,
        "median_within_loop_slope": median([s["slope"] for s in slopes]),
        "clock_windows": windows,
        "nvjet_4096_family": same_kernel_rows(by_name),
        "gemm_8192": same_kernel_rows(by_name, ("duty-50ms-20pct-8192", "duty-100ms-35pct-8192", "gemm-bf16-8192"),
                                      by_name["gemm-bf16-8192"].dominant()),
        "energy_per_flop": [energy_per_flop(by_name[n]) for n in
                            ("duty-100ms-20pct", "duty-20ms-50pct", "duty-100ms-30pct", "duty-50ms-50pct", "duty-5ms-80pct",
                             "gemm-bf16-4096", "gemm-bf16-m1024", "gemm-bf16-8192", "gemm-fp16-4096", "gemm-fp16-8192")],
        "throttle_reasons": throttle_reasons(),
        "lag_correlations": lag_correlations(by_name),
    }
    if binary:
        out["model_power_at_recorded_clocks"] = model_power(binary, ("gemm-bf16-4096", "gemm-bf16-m1024"), report)
    return out


def print_report(e):
    print("1. capped loops, dominant kernel: slope of log duration on log reported clock (a kernel that slows with the"
          " clock gives < 0)")
    for s in e["within_loop_slopes"]:
        print(f"   {s['loop']:24s} {s['kernel']:40s} n {s['launches']:4d}  {s['clock_lo']:.0f}-{s['clock_hi']:.0f} MHz"
              f"  slope {s['slope']:+.2f}")
    print(f"   median {e['median_within_loop_slope']:+.2f} over {len(e['within_loop_slopes'])} loops")
    print("2. capped loops: profiled kernels' reported clock / steady window's mean")
    for w in sorted(e["clock_windows"], key=lambda w: w["ratio"]):
        print(f"   {w['loop']:24s} steady {w['steady_mhz']:6.0f}  profiled {w['profiled_mhz']:6.0f}  ratio {w['ratio']:.3f}")
    for title, rows in (("3/4. nvjet 256x128 bf16 (137.4 GFLOP) across loops", e["nvjet_4096_family"]),
                        ("     bf16 8192^3 GEMM across loops", e["gemm_8192"])):
        print(title)
        for r in rows:
            print(f"   {r['loop']:24s} {'capped' if r['capped'] else 'uncapped':8s} steady {r['steady_mhz']:6.0f} MHz"
                  f"  median {r['median_us']:7.1f} us  {r['kcycles']:6.0f} kcycles  {r['tflops']:5.0f} TFLOP/s"
                  f"  = {100 * r['peak_share_at_reported']:5.1f} % of peak at the reported clock"
                  f"  (effective >= {r['effective_floor_mhz']:.0f} MHz)")
    if "model_power_at_recorded_clocks" in e:
        print("5. model at the recorded clocks (validate --models): measured / model W")
        for n, (m, p) in e["model_power_at_recorded_clocks"].items():
            print(f"   {n:24s} {m:6.1f} / {p:6.1f} W ({100 * (p - m) / m:+.1f} %)")
    print("6. power while the GEMM runs, dynamic energy per FLOP (idle {:.1f} W)".format(IDLE_W))
    for r in e["energy_per_flop"]:
        print(f"   {r['loop']:24s} steady {r['steady_mhz']:6.0f} MHz  busy {r['busy_share']:.3f}  {r['busy_w']:6.0f} W"
              f"  {r['tflops']:5.0f} TFLOP/s  {r['dynamic_pj_per_flop']:.3f} pJ/FLOP")
    print("7. throttle-reason bitmasks in the H200 recordings (value: samples):", e["throttle_reasons"])
    print("8. corr(log duration, log NVML clock read at kernel start + lag)")
    for r in e["lag_correlations"]:
        print(f"   {r['loop']:24s} at 0 ms {r['at_0']:+.2f}   lowest over 60-120 ms {r['at_lag']:+.2f} (at {r['lag_ms']} ms)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "dvfs-sim"))
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--probes", metavar="DIR", help="a directory of clock-probe loops (record_power_suite.py --only probes)")
    a = ap.parse_args()
    if a.probes:
        for r in probe_summary(a.probes):
            lo, hi = r["effective_range_mhz"]
            print(f"{r['loop']:26s} {r['probes']:4d} probes (overhead {r['overhead_us']:.1f} us): effective {r['effective_mhz']:6.0f}"
                  f" MHz ({lo:.0f}-{hi:.0f}), NVML under them {r['reported_mhz']:6.0f}, steady mean {r['steady_mhz']:6.0f}")
        return
    e = evidence(a.bin if os.path.exists(a.bin) else None)
    if a.json:
        json.dump(e, sys.stdout, indent=1)
        print()
    else:
        print_report(e)


if __name__ == "__main__":
    main()
