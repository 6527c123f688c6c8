#!/usr/bin/env python3
"""Hardware counters of the power suite's kernel loops, read by Nsight Compute (issue 16, twentieth round).

    ncu --clock-control none --profile-from-start off --csv --page raw --metrics M1,M2,... \\
        python3 traces/recorder/ncu_counters.py [--filter RE] > counters.csv

For every kernel loop of traces/recorder/record_power_suite.py (the loops the activity model is fit on and held out
on, models/calibration/h200-power-split.json; duty cycles, idle, host copies and clock probes left out: their
kernels are other loops' or none), the loop is built as the suite builds it (seed 0), called three times unprofiled,
then once between cudaProfilerStart/Stop, so that ncu profiles the kernels of exactly one call. A loop's kernels
follow one `spin_kernel` marker (torch.cuda._sleep) in launch order; stderr lists the loops in order, which
models/calibration/ncu_counters.py reads to name each kernel's loop.

Nothing here sets a clock, power limit or other card setting: ncu runs with `--clock-control none` (its default
would lock the clocks to base), and the loops only compute. ncu replays each kernel once per counter pass, with
the memory it touches restored between passes: durations are of one kernel alone, not of the loop's steady state.
"""
import argparse
import os
import re
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import record_power_suite as suite  # noqa: E402

SKIP = re.compile(r"^(idle|duty-|copy-h2d|copy-d2h|probe-)")


def loops():
    out = {}
    for table in (suite.MICRO, suite.ROUND12, suite.ROUND15, suite.ROUND16, suite.ROUND16B):
        out.update(table)
    return {name: v for name, v in out.items() if not SKIP.match(name)}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--filter", default=None, help="regular expression on the loop names")
    a = p.parse_args()
    cudart = torch.cuda.cudart()
    for name, (build, _info) in loops().items():
        if a.filter and not re.search(a.filter, name):
            continue
        try:
            torch.manual_seed(0)
            call, _ = build()
            for _ in range(3):
                call()
            torch.cuda.synchronize()
        except Exception as e:  # a loop that cannot be built here is named, and the rest still run
            print(f"failed {name}: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
            call = None
            torch.cuda.empty_cache()
            continue
        cudart.cudaProfilerStart()
        torch.cuda._sleep(1000)  # the marker: this loop's kernels follow it
        print(f"loop {name}", file=sys.stderr, flush=True)
        try:
            call()
            torch.cuda.synchronize()
        except Exception as e:  # its kernels so far stay in the file; the reader drops the loop
            print(f"failed {name}: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        finally:
            cudart.cudaProfilerStop()
            call = None
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
