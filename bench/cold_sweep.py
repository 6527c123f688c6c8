#!/usr/bin/env python3
"""A cold sweep of the default scenario on one worker process vs two (issue 18 target: >= 1.5x on 2 processes).

    /usr/bin/python3 bench/cold_sweep.py [--points 200] [--repeats 5] [--package-dir build/python]

"Cold" = the first sweep of a fresh Python process with no workload cache: every measurement runs in a new
interpreter (started by this script, `import dvfs_sim` done before the clock starts) with DVFS_SIM_NO_CACHE=1, so
no workload cache entry is read or written, no fork server runs yet and no process has the trace loaded. The
figure is the `dvfs_sim.sweep(...)` call alone: starting the fork server and the worker processes, loading the
trace (once in the calling process, which its workers adopt; before that change, once per worker), the points,
the DataFrame. Best of --repeats per process count, the 1- and 2-process runs interleaved, with the machine
ceiling (two CPU-bound processes vs one, no dvfs_sim) and the load average printed beside it: on a shared machine
they bound the gain. --package-dir picks the dvfs_sim package to time (e.g. a copy of an older build).
"""
import argparse
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def child(points, n, package_dir):
    """In the fresh process: one sweep, timed; prints its seconds."""
    sys.path.insert(0, package_dir)
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import dvfs_sim
    from python_bench import grid
    pts = grid(points)
    t = time.perf_counter()
    df = dvfs_sim.sweep(None, pts, processes=n, progress=False, reuse_trace=True)
    elapsed = time.perf_counter() - t
    assert df["error"].isna().all(), df["error"].dropna().iloc[0]
    print(f"{elapsed:.6f}")


def cold(points, n, package_dir):
    env = dict(os.environ, DVFS_SIM_NO_CACHE="1")
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", str(n), "--points", str(points),
                          "--package-dir", package_dir], env=env, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise SystemExit(f"cold_sweep: the sweep on {n} process(es) failed:\n{out.stderr}")
    return float(out.stdout.split()[-1])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--points", type=int, default=200)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--package-dir", default=os.path.join(ROOT, "build", "python"))
    p.add_argument("--child", type=int, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child is not None:
        return child(a.points, a.child, a.package_dir)
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    from python_bench import machine_ceiling
    load_before = os.getloadavg()[0]
    times = {1: [], 2: []}
    for _ in range(a.repeats):
        for n in (1, 2):
            times[n].append(cold(a.points, n, a.package_dir))
    ceiling = machine_ceiling(2)
    best = {n: min(t) for n, t in times.items()}
    print(f"cold sweep of the default scenario, {a.points} points, each the first sweep of a fresh Python process, "
          f"no workload cache (DVFS_SIM_NO_CACHE=1), {a.package_dir}; best of {a.repeats} (median):")
    for n, s in best.items():
        med = sorted(times[n])[len(times[n]) // 2]
        print(f"  {n} process{'es' if n > 1 else '  '}: {s:6.3f} s ({med:6.3f} s)  {a.points / s:6.1f} points/s")
    print(f"  2 processes / 1: {best[1] / best[2]:.2f}x   target >= 1.5x   (machine ceiling now {ceiling:.2f}x; "
          f"load {load_before:.2f} before, {os.getloadavg()[0]:.2f} after, on {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
