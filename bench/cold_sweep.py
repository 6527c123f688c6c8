#!/usr/bin/env python3
"""A cold sweep of the default scenario on one worker process vs two (issue 18 target: >= 1.5x on 2 processes).

    DVFS_SIM_NO_CACHE=1 /usr/bin/python3 bench/cold_sweep.py [--points 200] [--repeats 2]

"Cold": fresh workers, each loading (importing) the trace once for its share of the points, with no workload
cache (DVFS_SIM_NO_CACHE=1 is set here when not given). Best of --repeats per process count, with the machine
ceiling (two CPU-bound processes vs one, no dvfs_sim) printed beside it: on a shared machine it bounds the gain.
"""
import argparse
import os
import sys
import time

os.environ.setdefault("DVFS_SIM_NO_CACHE", "1")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "build", "python"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import dvfs_sim  # noqa: E402
from python_bench import grid, machine_ceiling  # noqa: E402


def cold(points, n):
    dvfs_sim.stop_workers()
    t = time.perf_counter()
    df = dvfs_sim.sweep(None, grid(points), processes=n, progress=False, reuse_trace=True)
    elapsed = time.perf_counter() - t
    assert df["error"].isna().all(), df["error"].dropna().iloc[0]
    dvfs_sim.stop_workers()
    return elapsed


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--points", type=int, default=200)
    p.add_argument("--repeats", type=int, default=2)
    a = p.parse_args()
    ceiling = machine_ceiling(2)
    best = {n: min(cold(a.points, n) for _ in range(a.repeats)) for n in (1, 2)}
    print(f"cold sweep of the default scenario, {a.points} points, no workload cache "
          f"(DVFS_SIM_NO_CACHE={os.environ['DVFS_SIM_NO_CACHE']}), best of {a.repeats}:")
    for n, s in best.items():
        print(f"  {n} process{'es' if n > 1 else '  '}: {s:6.2f} s ({a.points / s:6.1f} points/s)")
    print(f"  2 processes / 1: {best[1] / best[2]:.2f}x   target >= 1.5x   (machine ceiling now {ceiling:.2f}x, "
          f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
