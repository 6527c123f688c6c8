#!/usr/bin/env python3
"""A cold sweep of the default scenario on one worker process vs two (issue 18 target: >= 1.5x on 2 processes).

    /usr/bin/python3 bench/cold_sweep.py [--points 200] [--repeats 5] [--package-dir build/python] [--start-method forkserver]

"Cold" = the first sweep of a fresh Python process with no workload cache: every measurement runs in a new
interpreter (started by this script, `import dvfs_sim` done before the clock starts) with DVFS_SIM_NO_CACHE=1, so
no workload cache entry is read or written, no fork server runs yet and no process has the trace loaded. The
figure is the `dvfs_sim.sweep(...)` call alone: starting the worker processes (the default start method "auto"
forks them from this single-threaded caller after it loaded the trace, so they inherit it; "forkserver" starts a
fork server beside the load and the workers adopt the trace the caller loaded meanwhile; before session 5, each
worker loaded it), the points,
the DataFrame; once with pandas first imported by the sweep itself (~0.2 s of the figure, the same on 1 and 2
processes) and once with pandas imported before the clock. Best of --repeats each, all runs interleaved, with the machine
ceiling (two CPU-bound processes vs one, no dvfs_sim) and the load average printed beside it: on a shared machine
they bound the gain. --package-dir picks the dvfs_sim package to time (e.g. a copy of an older build).
"""
import argparse
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def child(points, n, package_dir, pandas_first, start_method):
    """In the fresh process: one sweep, timed; prints its seconds."""
    sys.path.insert(0, package_dir)
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import dvfs_sim
    if pandas_first:
        import pandas  # noqa: F401
    from python_bench import grid
    pts = grid(points)
    t = time.perf_counter()
    df = dvfs_sim.sweep(None, pts, processes=n, progress=False, reuse_trace=True, start_method=start_method)
    elapsed = time.perf_counter() - t
    assert df["error"].isna().all(), df["error"].dropna().iloc[0]
    print(f"{elapsed:.6f}")


def cold(points, n, package_dir, pandas_first, start_method):
    env = dict(os.environ, DVFS_SIM_NO_CACHE="1")
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", str(n), "--points", str(points),
                          "--package-dir", package_dir, "--start-method", start_method]
                         + (["--pandas-first"] if pandas_first else []),
                         env=env, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise SystemExit(f"cold_sweep: the sweep on {n} process(es) failed:\n{out.stderr}")
    return float(out.stdout.split()[-1])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--points", type=int, default=200)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--package-dir", default=os.path.join(ROOT, "build", "python"))
    p.add_argument("--start-method", default="auto", help="sweep(start_method=...): auto (the default), forkserver, fork")
    p.add_argument("--child", type=int, help=argparse.SUPPRESS)
    p.add_argument("--pandas-first", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child is not None:
        return child(a.points, a.child, a.package_dir, a.pandas_first, a.start_method)
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    from python_bench import machine_ceiling
    load_before = os.getloadavg()[0]
    runs = [(pandas_first, n) for pandas_first in (False, True) for n in (1, 2)]
    times = {r: [] for r in runs}
    for _ in range(a.repeats):
        for r in runs:
            times[r].append(cold(a.points, r[1], a.package_dir, r[0], a.start_method))
    ceiling = machine_ceiling(2)
    print(f"cold sweep of the default scenario, {a.points} points, each the first sweep of a fresh Python process, "
          f"no workload cache (DVFS_SIM_NO_CACHE=1), {a.package_dir}, start method {a.start_method}; best of "
          f"{a.repeats} (median):")
    for pandas_first in (False, True):
        best = {n: min(times[(pandas_first, n)]) for n in (1, 2)}
        print("  pandas imported before the sweep (as in a notebook that uses it):" if pandas_first else
              "  pandas imported by the sweep (its first import, ~0.2 s, is part of the figure):")
        for n, s in best.items():
            ts = sorted(times[(pandas_first, n)])
            print(f"    {n} process{'es' if n > 1 else '  '}: {s:6.3f} s ({ts[len(ts) // 2]:6.3f} s)  "
                  f"{a.points / s:6.1f} points/s")
        print(f"    2 processes / 1: {best[1] / best[2]:.2f}x   target >= 1.5x")
    print(f"  machine ceiling now {ceiling:.2f}x (two CPU-bound processes vs one); load {load_before:.2f} before, "
          f"{os.getloadavg()[0]:.2f} after, on {os.cpu_count()} cores")

if __name__ == "__main__":
    main()
