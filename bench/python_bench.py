#!/usr/bin/env python3
"""Benchmark of the Python layer (not a test: it prints figures, it asserts nothing).

    /usr/bin/python3 bench/python_bench.py [--points 200] [--loading-points 24] [--repeats 5]

1. Sweep throughput: a sweep of the default scenario (grid: seed x firmware switch latency) on one worker
   process vs on every core. With the trace kept per worker (the default): "cold" includes starting the
   workers and each worker loading the trace, "warm" is the next sweep on the kept workers. With
   reuse_trace=False every point loads its trace, as a separate `dvfs-sim run` would (--loading-points).
   Best of 3 cold and 9 warm sweeps (cold: this process loads the trace once, the new workers adopt it; the fork
   server and pandas are already up after the first, see bench/cold_sweep.py for the first sweep of a fresh process). Target: all cores >= 1.7x one process. The "machine ceiling"
   (CPU-bound processes, no dvfs_sim) is the parallel speed the machine offers at that moment; on a shared
   machine it can be far below the core count.
2. `dvfs_sim.run()` vs `dvfs-sim run` on the default scenario (both write summary.json and timeline.csv):
   the whole process (interpreter start and import included) and the call alone, median of --repeats.
   Target: Python overhead <= 10 %.
3. Python policy callbacks: a replay of the default trace under a Python before_kernel policy that asks
   for nothing (the same replay as the C++ `max` policy), one that requests clocks, and an on_tick policy,
   against C++ `max`; ns per callback (trace already loaded, medians).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "build", "python"))
import dvfs_sim  # noqa: E402

BIN = os.path.join(ROOT, "build", "dvfs-sim")
PY = "/usr/bin/python3"


def median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def grid(points):
    lat = [0.0005, 0.001, 0.002, 0.005]
    seeds = list(range((points + len(lat) - 1) // len(lat)))
    pts = [{"seed": s, "switch_latency.firmware_s": f} for s in seeds for f in lat]
    return pts[:points]


def timed_sweep(pts, n, reuse):
    t = time.perf_counter()
    df = dvfs_sim.sweep(None, pts, processes=n, progress=False, reuse_trace=reuse)
    assert df["error"].isna().all(), df["error"].dropna().iloc[0]
    return time.perf_counter() - t


def _burn(n):
    x = 0
    for i in range(n):
        x += i * i
    return x


def machine_ceiling(cores):
    """How much faster `cores` CPU-bound processes finish the same work than one, on this machine right now
    (other load on a shared machine lowers it): the most a sweep can gain."""
    import multiprocessing
    n = 5_000_000
    with multiprocessing.get_context("fork").Pool(cores) as pool:
        pool.map(_burn, [1000] * cores)  # start the workers
        t = time.perf_counter()
        pool.map(_burn, [n] * cores)
        par = time.perf_counter() - t
    t = time.perf_counter()
    for _ in range(cores):
        _burn(n)
    return (time.perf_counter() - t) / par


def bench_sweep(points, loading_points):
    cores = os.cpu_count()
    print(f"1. sweep of the default scenario (seed x switch_latency.firmware_s), {cores} cores; machine ceiling now: "
          f"{cores} CPU-bound processes finish {machine_ceiling(cores):.2f}x as fast as one")
    pts = grid(points)
    res = {}
    for n in (1, cores):
        # Best of several runs: on a shared machine other work steals whole cores for seconds at a time.
        colds, warms = [], []
        for _ in range(3):
            dvfs_sim.stop_workers()
            dvfs_sim._core_module().clear_trace_cache()  # cold: neither the workers nor this process hold the trace
            colds.append(timed_sweep(pts, n, True))
            warms += [timed_sweep(pts, n, True) for _ in range(3)]
        dvfs_sim.stop_workers()
        fresh = timed_sweep(grid(loading_points), n, False)
        dvfs_sim.stop_workers()
        cold, warm = min(colds), min(warms)
        res[n] = (cold, warm, fresh)
        print(f"   {n} process{'es' if n > 1 else '  '}: {points} points, trace kept per worker: cold {cold:6.2f} s "
              f"({points / cold:6.1f} points/s), warm {warm:5.2f} s ({points / warm:6.1f} points/s);  {loading_points} points "
              f"each loading its trace: {fresh:6.2f} s ({loading_points / fresh:5.2f} points/s)")
    print(f"   {cores} processes / 1 process: trace kept: cold {res[1][0] / res[cores][0]:.2f}x, warm "
          f"{res[1][1] / res[cores][1]:.2f}x;  each point loading its trace: {res[1][2] / res[cores][2]:.2f}x  "
          f"(target >= 1.7x)")
    print(f"   machine ceiling after the sweeps: {machine_ceiling(cores):.2f}x")
    base = dvfs_sim.with_changes(dvfs_sim.load_scenario(), {"output": None})
    dvfs_sim.run(base, reuse_trace=True)  # load the trace once
    t = time.perf_counter()
    sample = pts[:50]
    for p in sample:
        dvfs_sim.run(dvfs_sim.with_changes(base, p), reuse_trace=True)
    point = (time.perf_counter() - t) / len(sample)
    load = median_time(lambda: dvfs_sim.run(base), 1)
    print(f"   for scale, in this process: one point {point * 1e3:.1f} ms with the trace loaded, {load:.2f} s with "
          f"loading it")


def bench_run_overhead(repeats):
    print(f"2. default scenario, dvfs_sim.run() vs dvfs-sim run (median of {repeats})")
    with tempfile.TemporaryDirectory() as tmp:
        cli = median_time(lambda: subprocess.run([BIN, "run", "-o", os.path.join(tmp, "cli")], check=True,
                                                 stdout=subprocess.DEVNULL), repeats)
        code = ("import sys; sys.path.insert(0, %r); import dvfs_sim; dvfs_sim.run(output_dir=%r)"
                % (os.path.join(ROOT, "build", "python"), os.path.join(tmp, "py")))
        py_process = median_time(lambda: subprocess.run([PY, "-c", code], check=True), repeats)
        py_call = median_time(lambda: dvfs_sim.run(output_dir=os.path.join(tmp, "call")), repeats)
        py_import = median_time(lambda: subprocess.run([PY, "-c", code.split("; dvfs_sim.run")[0]], check=True), repeats)
    print(f"   dvfs-sim run (process)                 {cli:.3f} s")
    print(f"   python3 -c 'dvfs_sim.run()' (process)  {py_process:.3f} s   overhead {100 * (py_process / cli - 1):+.1f} %"
          f"   (target <= 10 %; interpreter start + import alone {py_import:.3f} s)")
    print(f"   dvfs_sim.run() call in a warm process  {py_call:.3f} s   {100 * (py_call / cli - 1):+.1f} % vs the CLI process")


class Nothing:
    def before_kernel(self, kernel, telemetry):
        return None


class Alternate:
    """Asks for a clock pair before every kernel (the conversion and check of a request each call)."""

    def before_kernel(self, kernel, telemetry):
        return (1980, 3201) if kernel.kernel_class == "gemm" else (1410, 3201)


class Ticks:
    tick_period_s = 0.001

    def on_tick(self, telemetry):
        return None


def bench_policy_cost(repeats):
    print(f"3. Python policy callbacks on the default trace (median of {repeats}, trace loaded once)")
    sc = dvfs_sim.load_scenario()
    sc.pop("output")
    dvfs_sim.run(dict(sc, policy="max"), reuse_trace=True)
    cpp = median_time(lambda: dvfs_sim.run(dict(sc, policy="max"), reuse_trace=True), repeats)
    print(f"   C++ max                                       {cpp * 1e3:7.2f} ms")
    for label, make in (("Python before_kernel -> None", Nothing), ("Python before_kernel -> (sm, mem)", Alternate),
                        ("Python on_tick every 1 ms -> None", Ticks)):
        calls = dvfs_sim.run(sc, policy=make(), reuse_trace=True)["python_policy"]["callbacks"]
        t = median_time(lambda: dvfs_sim.run(sc, policy=make(), reuse_trace=True), repeats)
        print(f"   {label:<36} {calls:6d} calls {t * 1e3:7.2f} ms   {(t - cpp) / calls * 1e9:6.0f} ns per callback "
              f"over C++ max")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--points", type=int, default=200)
    p.add_argument("--loading-points", type=int, default=24, help="points of the sweep where each point loads its trace")
    p.add_argument("--repeats", type=int, default=5)
    a = p.parse_args()
    bench_sweep(a.points, a.loading_points)
    bench_run_overhead(a.repeats)
    bench_policy_cost(a.repeats)


if __name__ == "__main__":
    main()
