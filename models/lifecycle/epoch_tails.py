#!/usr/bin/env python3
"""Where a cnn-io epoch's time goes, from the recording's own samples (issue 20; a diagnosis, nothing is fitted):
each training epoch cut into its decoding part (the DataLoader workers busy: the 250 ms mean of busy CPUs >= 6
cores) and its tail (from the last such instant to the epoch's end: the loop delivers the last batches while fewer
workers are busy), with the workers' decoding CPU (training process tree less its main process), disk reads, the
GPU's clock and throttle reasons, and per tail the CPU of the workers and of the main process.

    python3 models/lifecycle/epoch_tails.py [RECORDING_DIR]     # default: traces/recordings/h200-lifecycle/cnn-io/recording

Every figure is measured (host.csv every 50 ms, telemetry.csv every 5 ms, lifecycle.json phase marks).
"""
import bisect
import csv
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.append(os.path.join(ROOT, "python"))  # the pure-Python parts; a built package on the path (build/python) wins
from dvfs_sim import lifecycle_analysis as la  # noqa: E402

BUSY_CORES = 6.0   # 8 decoding workers: at least 6 of them busy
WINDOW = 5         # host samples (250 ms)


def busy_cores(rows, i):
    return sum(float(rows[i][k]) for k in ("cpu_user_ticks", "cpu_system_ticks", "cpu_other_ticks")) / 100.0


def gpu_clock(tel, t0, t1):
    ts = [int(r["t_ns"]) for r in tel]
    rows = tel[bisect.bisect_left(ts, t0):bisect.bisect_right(ts, t1)]
    sm = [float(r["sm_mhz"]) for r in rows]
    return min(sm), max(sm), sorted({r["throttle_reasons"] for r in rows})


def epochs(rec):
    d = la.load(rec)
    a = la.analyse(rec)
    c = d["counters"]
    with open(os.path.join(rec, "host.csv")) as f:
        host = list(csv.DictReader(f))
    with open(os.path.join(rec, "telemetry.csv")) as f:
        tel = list(csv.DictReader(f))
    ht = [int(r["t_ns"]) for r in host]
    out = []
    for r in (r for r in a["top"] if r["kind"] == "train"):
        t0, t1 = r["t0_ns"], r["t1_ns"]
        i0, i1 = bisect.bisect_left(ht, t0), bisect.bisect_right(ht, t1) - 1
        last = max((ht[i] for i in range(i0 + WINDOW, i1 + 1)
                    if (busy_cores(host, i) - busy_cores(host, i - WINDOW)) / ((ht[i] - ht[i - WINDOW]) / 1e9) >= BUSY_CORES), default=t0)
        tail = (t1 - last) / 1e9
        waits = [p for p in d["life"]["phases"] if p["kind"] == "data_wait" and t0 <= p["t0_ns"] and p["t1_ns"] <= t1]
        work, main = c["proc_cpu_core_s"].delta(last, t1), c["main_cpu_core_s"].delta(last, t1)
        lo, hi, thr = gpu_clock(tel, t0, t1)
        out.append({"phase": r["name"], "time_s": r["time_s"], "decode_core_s": r["proc_cpu_core_s"] - r["main_cpu_core_s"],
                    "decode_s": (last - t0) / 1e9, "tail_s": tail,
                    "tail_steps": sum(1 for p in waits if p["t1_ns"] > last),
                    "tail_wait_s": sum((p["t1_ns"] - max(p["t0_ns"], last)) / 1e9 for p in waits if p["t1_ns"] > last),
                    "tail_worker_cores": (work - main) / tail if tail else 0.0, "tail_main_cores": main / tail if tail else 0.0,
                    "disk_read_mb": r["disk_read_bytes"] / 1e6, "iowait_core_s": r["cpu_iowait_core_s"],
                    "sm_mhz": (lo, hi), "throttle": thr})
    return out


def main():
    rec = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "traces", "recordings", "h200-lifecycle", "cnn-io", "recording")
    print("| epoch | time s | decoding CPU core-s | decoding part s | tail s | tail steps | loop waits in tail s "
          "| workers / main busy in tail (cores) | disk reads MB | iowait core-s | GPU SM MHz | throttle |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for e in epochs(rec):
        print(f"| {e['phase']} | {e['time_s']:.2f} | {e['decode_core_s']:.1f} | {e['decode_s']:.2f} | {e['tail_s']:.2f} | "
              f"{e['tail_steps']} | {e['tail_wait_s']:.2f} | {e['tail_worker_cores']:.2f} / {e['tail_main_cores']:.2f} | "
              f"{e['disk_read_mb']:.1f} | {e['iowait_core_s']:.2f} | {e['sm_mhz'][0]:.0f}-{e['sm_mhz'][1]:.0f} | {','.join(e['throttle'])} |")


if __name__ == "__main__":
    main()
