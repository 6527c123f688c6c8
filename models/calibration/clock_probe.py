#!/usr/bin/env python3
"""Evidence, writes no model: is the SM clock NVML reports the clock kernels run at? (issue 16, fifth session)

    python3 models/calibration/clock_probe.py

Reads traces/recordings/h200-clock-probe (README there; recorder traces/recorder/probe_effective_clock.py): after
every batch of a workload's kernel a one-thread PTX probe measured the SM clock it ran at (%clock64 cycles over
%globaltimer ns, 100 us); NVML was sampled every 5 ms beside it. Prints per workload, over its steady part (after the
first second): the probe clock's spread, the mean difference to the NVML sample before it, the share of probes more
than 20 MHz from that sample, the NVML mean clock and power, and for GEMMs the throughput of the batch before each
probe against the dense bf16/fp16 peak at the probe's clock (4,096 FLOP per clock per SM, 132 SMs: the H100/H200 SXM
datasheet's 989.4 TFLOP/s at 1,830 MHz) and its correlation with the probe clock.
"""
import csv
import gzip
import json
import os

import numpy as np

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DIR = os.path.join(ROOT, "traces", "recordings", "h200-clock-probe")
DENSE_FLOP_PER_CLOCK = 4096 * 132  # H100/H200 SXM dense bf16/fp16 tensor FLOP per SM clock, whole chip


def read_csv(path):
    with gzip.open(path, "rt") as f:
        return list(csv.DictReader(f))


def host_minus_globaltimer_ns():
    """Median offset host time_ns - %globaltimer, from probes bracketed by synchronised host reads."""
    rows = read_csv(os.path.join(DIR, "clock_sync.csv.gz"))
    return float(np.median([(int(r["host_before_ns"]) + int(r["host_after_ns"])) / 2 - int(r["globaltimer_ns"]) for r in rows]))


def workload(name, offset_ns, settle_s=1.0):
    """Steady-part figures of one workload (see the module doc)."""
    probes, tel = read_csv(os.path.join(DIR, name, "probes.csv.gz")), read_csv(os.path.join(DIR, name, "telemetry.csv.gz"))
    g = np.array([float(r["globaltimer_ns"]) for r in probes]) + offset_ns
    mhz = np.array([float(r["mhz"]) for r in probes])
    t = np.array([float(r["t_ns"]) for r in tel])
    nv = np.array([float(r["sm_mhz"]) for r in tel])
    steady = g > g[0] + settle_s * 1e9
    prev = np.clip(np.searchsorted(t, g[steady]) - 1, 0, len(t) - 1)
    diff = mhz[steady] - nv[prev]
    st = t > t[0] + settle_s * 1e9
    out = {"probes": int(steady.sum()), "probe_mhz_p10": float(np.percentile(mhz[steady], 10)),
           "probe_mhz_median": float(np.median(mhz[steady])), "probe_mhz_p90": float(np.percentile(mhz[steady], 90)),
           "mean_probe_minus_nvml_mhz": float(diff.mean()), "share_off_by_20_mhz": float(np.mean(np.abs(diff) > 20)),
           "nvml_mhz_mean": float(nv[st].mean()), "nvml_power_w": float(np.mean([float(r["power_mw"]) for r, s in zip(tel, st) if s]) / 1e3),
           "capped": bool(any(int(r["clocks_event_reasons"]) & 4 for r in tel))}
    batches_path = os.path.join(DIR, name, "batches.csv.gz")
    batches = read_csv(batches_path) if os.path.exists(batches_path) else []
    if batches and batches[0]["unit"] == "flop":
        n = min(len(batches), len(mhz))
        rate = np.array([float(b["work"]) / (float(b["ms"]) * 1e-3) for b in batches[:n]])
        keep = slice(n // 6, n)  # the first sixth: warming up to the cap
        eff = rate[keep] / (DENSE_FLOP_PER_CLOCK * mhz[:n][keep] * 1e6)
        out.update({"tflops_median": float(np.median(rate[keep]) / 1e12), "efficiency_at_probe_clock": float(np.median(eff)),
                    "rate_clock_correlation": float(np.corrcoef(rate[keep], mhz[:n][keep])[0, 1])})
    return out


def all_workloads():
    offset = host_minus_globaltimer_ns()
    names = json.load(open(os.path.join(DIR, "run.json")))["workloads"]
    return {n: workload(n, offset) for n in names}


def main():
    print("SM clock measured by the probe (cycles / ns) vs NVML's report, steady part of each workload (h200-clock-probe):")
    print("%-16s %6s %16s %9s %8s %8s %7s %s" % ("workload", "probes", "probe p10/50/90", "mean diff", "off>20", "NVML", "power", "GEMM"))
    for n, w in all_workloads().items():
        gemm = ""
        if "tflops_median" in w:
            gemm = "%.0f TFLOP/s, %.3f of peak at the probe clock, corr %.2f" % (w["tflops_median"], w["efficiency_at_probe_clock"], w["rate_clock_correlation"])
        print("%-16s %6d %5.0f/%4.0f/%4.0f %+8.1f %7.0f%% %8.0f %6.0f W %s%s" % (
            n, w["probes"], w["probe_mhz_p10"], w["probe_mhz_median"], w["probe_mhz_p90"], w["mean_probe_minus_nvml_mhz"],
            100 * w["share_off_by_20_mhz"], w["nvml_mhz_mean"], w["nvml_power_w"], "capped " if w["capped"] else "", gemm))


if __name__ == "__main__":
    main()
