"""Parameter sweeps: one scenario, many points, one DataFrame.

    df = dvfs_sim.sweep("scenarios/kernel-dvfs/h200.json",
                        {"policy.budget_pct": [0, 1], "switch_latency.sm.mean_s": [0, 1e-3]})

`grid` is a dict of dotted scenario keys -> lists of values (every combination is a point) or a list of
dicts (explicit points). Points run in local worker processes (all cores by default; each worker
imports dvfs_sim once and keeps the traces it loaded; the first point's trace is loaded once, by the calling
process, and the workers inherit it (forked from a single-threaded caller) or adopt it (started from a fork server)
instead of importing it each), or on a Dask cluster when `scheduler` is an
address ("tcp://host:8786") or a distributed.Client. A failing point gets its one-line message in the
`error` column; the other points are unaffected, even when a worker process dies.
"""
import atexit
import contextlib
import itertools
import json
import math
import multiprocessing
import os
import sys
import tempfile

from ._native import InputError, core, InputTypeError
from .scenario import load_scenario, resolve_paths, with_changes

_TOTALS = ("time_s", "energy_j", "mean_power_w", "mean_sm_mhz", "busy_s", "host_gap_s", "clock_switches", "switches_applied",
           "switch_latency_s", "switch_energy_j")
_SYNTHETIC = ("iteration_s", "energy_j", "energy_per_gpu_j", "gpus", "intrinsic_wait_gpu_s", "extrinsic_wait_gpu_s",
              "kernel_events")


def default_metrics(summary):
    """Flat metrics of a summary: totals (time_s, energy_j, mean_power_w, ...), the policy, energy by phase
    (energy_j.forward, ...) and by kernel class (energy_j.gemm, ...); for synthesised runs the iteration
    figures."""
    if "totals" not in summary:
        return {k: summary[k] for k in _SYNTHETIC if k in summary}
    row = {k: summary["totals"][k] for k in _TOTALS if k in summary["totals"]}
    row["policy"] = summary.get("policy")
    for group in ("energy_by_phase_j", "energy_by_class_j"):
        for k, v in summary.get(group, {}).items():
            row[f"energy_j.{k}"] = v
    return row


def _pick(summary, dotted):
    node = summary
    for part in dotted.split("."):
        if isinstance(node, list):
            node = node[int(part)]
        else:
            node = node[part]
    return node


def _metrics_of(summary, metrics):
    if metrics is None:
        return default_metrics(summary)
    if callable(metrics):
        return dict(metrics(summary))
    return {k: _pick(summary, k) for k in metrics}


def points_of(grid):
    """The list of points (dicts of dotted key -> value) of a grid dict (cartesian product) or list."""
    if grid is None:
        return [{}]
    if isinstance(grid, dict):
        values = {}
        for k, v in grid.items():
            if isinstance(v, (str, bytes, dict)) or not hasattr(v, "__iter__") or not list(v):
                raise InputError(f"grid: {k}: expected a non-empty list of values, got {v!r}")
            values[k] = list(v)
        keys = list(values)
        return [dict(zip(keys, combo)) for combo in itertools.product(*(values[k] for k in keys))]
    if isinstance(grid, (list, tuple)):
        for i, p in enumerate(grid):
            if not isinstance(p, dict):
                raise InputError(f"grid[{i}]: expected a dict of dotted scenario keys -> values, got {type(p).__name__}")
        return [dict(p) for p in grid]
    raise InputError(f"grid: expected a dict of dotted keys -> lists of values, or a list of dicts, got {type(grid).__name__}")


def _one_line(e):
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}".rstrip(": ")


def run_point(base, base_dir, index, point, metrics=None, policy=None, reuse_trace=True):
    """One point, in whatever process runs it: a flat row of metrics, or {"error": message}."""
    try:
        doc = with_changes(base, point)
        summary, _ = core().simulate(json.dumps(doc), f"<sweep point {index}>", base_dir, "", False, policy, reuse_trace)
        row = _metrics_of(json.loads(summary), metrics)
        row["error"] = None
        return row
    except Exception as e:  # one bad point must not stop the sweep
        return {"error": _one_line(e)}


def _run_chunk(payload, chunk):
    base, base_dir, metrics, policy, reuse_trace, shared = payload
    if shared is not None:
        _adopt_trace(shared)
    return [(i, run_point(base, base_dir, i, p, metrics, policy, reuse_trace)) for i, p in chunk]


def _share_trace(base, point, encode=True):
    """The trace of a point's scenario, loaded here once (and kept in this process's trace cache), as
    core().share_trace's (key, retargeted, bytes); None when it replays no trace or does not load (each point
    then reports that itself), or without `encode` (workers forked from here inherit it loaded)."""
    try:
        doc = with_changes(base, point)
        shared = core().share_trace(json.dumps(doc), "<sweep point 0>", os.getcwd(), encode)
    except Exception:
        return None
    return shared if encode else None


@contextlib.contextmanager
def _trace_file(shared):
    """share_trace's bytes in a temporary file (in memory where /dev/shm is) for the length of one sweep: every
    worker reads it once, instead of a copy travelling with every chunk of points; yields (key, retargeted, path)."""
    if shared is None:
        yield None
        return
    key, retargeted, data = shared
    folder = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    fd, path = tempfile.mkstemp(prefix="dvfs-sim-sweep-", suffix=".trace", dir=folder)
    try:
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        except OSError:  # e.g. a full /dev/shm (64 MiB in a default container): the workers load the trace themselves
            yield None
            return
        yield key, retargeted, path
    finally:
        os.unlink(path)


def _adopt_trace(shared):
    """In a worker: the sweep's shared trace kept in this process's trace cache (decoded, not imported), unless it
    is there already; when the file cannot be read or decoded, the points load the trace themselves."""
    key, retargeted, path = shared
    if core().has_trace(key):
        return
    try:
        with open(path, "rb") as f:
            core().adopt_trace(key, retargeted, f.read())
    except OSError:
        pass


def _init_worker():
    core()  # import the core once per worker, before the first point


def _chunks(items, workers):
    """~4 chunks per worker: few round trips, and the last chunks still balance the load."""
    size = max(1, math.ceil(len(items) / (4 * workers)))
    return [items[i:i + size] for i in range(0, len(items), size)]


class _NoBar:
    """The progress bar of a sweep that shows none."""
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, n=1):
        pass


def _progress_bar(total, progress):
    if progress is None:
        progress = sys.stderr.isatty()
    if not progress:
        return _NoBar()  # without importing tqdm (~20 ms of a first sweep)
    from tqdm import tqdm
    return tqdm(total=total, file=sys.stderr, desc="sweep", unit="point", dynamic_ncols=True)


# The worker pool outlives one sweep: its processes keep dvfs_sim imported and the traces they loaded, so a
# second sweep of the same scenario starts at once. One pool at a time; stop_workers() ends it. "key": the
# (processes, start_method) asked for; "method": how its workers were started (start_method "auto" resolved).
_pool = {"key": None, "executor": None, "method": None}


def stop_workers():
    """Ends the sweep worker processes kept between sweeps (they also end with this interpreter)."""
    ex = _pool["executor"]
    _pool["key"] = _pool["executor"] = _pool["method"] = None
    if ex is not None:
        ex.shutdown(wait=True, cancel_futures=True)


atexit.register(stop_workers)


def _start_forkserver(ctx):
    """Starts the fork server with dvfs_sim (and its core) imported, so that every worker is forked with them loaded
    instead of loading them itself (the dynamic loader binding SimGrid's libraries: a serial start of every cold
    sweep). The server is a fresh interpreter that does not apply this process's sys.path (CPython's forkserver
    receives it but ignores it), so a dvfs_sim found through sys.path.insert (docs/python.md, the notebooks, bench/)
    would fail to import there, silently; the server gets the package's folder on its PYTHONPATH instead."""
    from multiprocessing import forkserver
    ctx.set_forkserver_preload(["dvfs_sim"])
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = here if not old else here + os.pathsep + old
    try:
        forkserver.ensure_running()  # a no-op when it runs already
    finally:
        if old is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = old


def _single_threaded():
    """Whether this process runs one thread only (Linux's /proc/self/task lists every thread, also those no Python
    code started: BLAS pools, a notebook kernel's, the core's): then fork() copies no lock that another thread
    holds. False where it cannot tell."""
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


def _resolve_start_method(start_method):
    """start_method "auto": "fork" while this process runs one thread only (new workers inherit the loaded trace
    and nothing else has to start), else "forkserver"; any other value as it is."""
    if start_method != "auto":
        return start_method
    if "fork" in multiprocessing.get_all_start_methods() and _single_threaded():
        return "fork"
    return "forkserver"


def _start_method_of(processes, start_method):
    """How the workers of a sweep run: the kept pool's method, or the method a new pool would start them with."""
    return _pool["method"] if not _pool_is_new(processes, start_method) else _resolve_start_method(start_method)


def _pool_is_new(processes, start_method):
    """Whether _executor will start a new pool (none kept, another size or start method, or a broken one)."""
    return _pool["key"] != (processes, start_method) or getattr(_pool["executor"], "_broken", False)


def _executor(processes, start_method, method):
    """The kept pool, or a new one whose workers start by `method` (_start_method_of; "fork" is checked again here,
    as the pool forks its workers: where this process runs other threads by now, they start from a fork server)."""
    from concurrent.futures import ProcessPoolExecutor
    key = (processes, start_method)
    if _pool_is_new(processes, start_method):
        stop_workers()
        if method == "fork" and start_method == "auto" and not _single_threaded():
            method = "forkserver"
        ctx = multiprocessing.get_context(method)
        if ctx.get_start_method() == "forkserver":
            _start_forkserver(ctx)
        _pool["executor"] = ProcessPoolExecutor(max_workers=processes, mp_context=ctx, initializer=_init_worker)
        _pool["key"], _pool["method"] = key, method
    return _pool["executor"]


def _load_while_workers_start(base, point, processes, start_method, method):
    """The trace of a point's scenario loaded here, once, for the workers to adopt instead of each importing
    it (the import is most of a cold sweep's time; a point then takes ~1 ms): _share_trace's result. With a fork
    server, the workers are started meanwhile (a no-op each), so that the server's start, the workers' and the load
    overlap; the load runs on a thread, the core releasing the GIL. New forked workers ("fork") are started after the
    load: they inherit the loaded trace (nothing to encode), and no thread may hold the core's lock while this
    process forks. `method`: _start_method_of(processes, start_method)."""
    if multiprocessing.get_context(method).get_start_method() == "fork":  # "fork", or None where it is the default
        return _share_trace(base, point, encode=not _pool_is_new(processes, start_method))
    from concurrent.futures import ThreadPoolExecutor
    # The pool (and the fork server, whose start sets PYTHONPATH for a moment) exists before the loader thread runs:
    # the loader's core reads the environment, which must not change under it. The workers start after it.
    ex = _executor(processes, start_method, method)
    with ThreadPoolExecutor(max_workers=1) as loader:
        loading = loader.submit(_share_trace, base, point)
        for _ in range(processes):  # each submit forks a worker while none is idle
            ex.submit(_init_worker)
        return loading.result()


def _run_local(tasks, payload, processes, start_method, method, bar):
    """Runs tasks on the process pool; returns {index: row}. Points of a chunk whose worker died are re-run
    one at a time in a one-worker pool, so that only the point that kills its worker is marked."""
    from concurrent.futures import ProcessPoolExecutor, as_completed
    rows, orphans = {}, []
    ex = _executor(processes, start_method, method)
    try:
        futures = {ex.submit(_run_chunk, payload, c): c for c in _chunks(tasks, processes)}
        import pandas  # noqa: F401  (for the DataFrame: a first import, ~0.2 s, overlaps the workers' points)
        for f in as_completed(futures):
            try:
                done = f.result()
            except Exception:  # BrokenProcessPool: a worker died (crash, out of memory, os._exit)
                orphans.extend(futures[f])
                continue
            for i, row in done:
                rows[i] = row
            bar.update(len(done))
    except BaseException:  # interrupted: leave no queued work behind in the kept pool
        stop_workers()
        raise
    if orphans:
        stop_workers()  # the pool is broken
    ctx = multiprocessing.get_context(_resolve_start_method(start_method))
    orphans.sort(key=lambda t: t[0])
    while orphans:
        with ProcessPoolExecutor(max_workers=1, mp_context=ctx, initializer=_init_worker) as ex:
            futures = [(t, ex.submit(_run_chunk, payload, [t])) for t in orphans]
            rest = []
            culprit = None
            for t, f in futures:
                try:
                    (i, row), = f.result()
                    rows[i] = row
                    bar.update(1)
                except Exception as e:
                    if culprit is None:  # the first failure is the point that ran; later ones never started
                        culprit = t
                        rows[t[0]] = {"error": f"the worker process died while running this point ({_one_line(e)})"}
                        bar.update(1)
                    else:
                        rest.append(t)
            orphans = rest
    return rows


def _run_dask(tasks, payload, scheduler, bar):
    from distributed import Client, as_completed
    client = scheduler if isinstance(scheduler, Client) else Client(scheduler)
    try:
        workers = max(1, sum(client.nthreads().values()))
        chunks = _chunks(tasks, workers)
        futures = {client.submit(_run_chunk, payload, c, pure=False): c for c in chunks}
        rows = {}
        for f in as_completed(list(futures)):
            try:
                done = f.result()
            except Exception as e:  # the task itself failed on the cluster (e.g. KilledWorker)
                done = [(i, {"error": f"the Dask task of this point failed ({_one_line(e)})"}) for i, _ in futures[f]]
            for i, row in done:
                rows[i] = row
            bar.update(len(done))
        return rows
    finally:
        if client is not scheduler:
            client.close()


def sweep(base=None, grid=None, processes=None, scheduler=None, progress=None, metrics=None, policy=None,
          reuse_trace=True, start_method="auto"):
    """Runs every point of `grid` on `base` (a scenario dict, file or None for the default) and returns a
    DataFrame: one row per point, in grid order, with the grid keys as columns, the metrics
    (default_metrics, a list of dotted summary keys such as "totals.energy_j" or "steps.0.time_s", or a
    function summary -> dict) and `error` (None, or the point's one-line message).

    processes: local worker processes (default: every core; 0 runs in this process; the workers stay for the
    next sweep until stop_workers()). scheduler: a Dask
    scheduler address or distributed.Client (then processes is ignored). progress: a tqdm bar on stderr
    (default: when stderr is a terminal). policy: a Python policy object used at every point (it must
    pickle). reuse_trace: each worker keeps the traces it loaded for its next points, and local workers adopt
    the first point's trace from this process, which loads it once and keeps it (False: every point loads its
    trace, as a separate `dvfs-sim run` would). start_method: how local workers start: "auto" (the default) forks
    them from this process while it runs a single thread (they inherit the loaded trace; fork is unsafe beside other
    threads, e.g. in a notebook kernel) and starts them from a fork server otherwise; "forkserver"; "fork" (also
    beside threads: at your risk); "spawn".
    Result files are not written (the base's output.dir is dropped)."""
    if base is None or isinstance(base, (str, os.PathLike)):
        base = load_scenario(base)
    elif isinstance(base, dict):
        base = resolve_paths(base, os.getcwd())
    else:
        raise InputTypeError(f"base must be a scenario dict, a path or None, not {type(base).__name__}")
    base = dict(base)
    if isinstance(base.get("output"), dict):
        base["output"] = {k: v for k, v in base["output"].items() if k != "dir"}
    points = points_of(grid)
    if not points:
        raise InputError("grid: expected at least one point")
    tasks = list(enumerate(points))
    payload = (base, os.getcwd(), metrics, policy, reuse_trace, None)
    with _progress_bar(len(tasks), progress) as bar:
        if scheduler is not None:
            rows = _run_dask(tasks, payload, scheduler, bar)
        elif processes == 0 or len(tasks) == 1:
            rows = {}
            for i, p in tasks:
                rows[i] = run_point(base, os.getcwd(), i, p, metrics, policy, reuse_trace)
                bar.update(1)
        else:
            n = min(processes or os.cpu_count() or 1, len(tasks))
            method = _start_method_of(n, start_method)
            shared = _load_while_workers_start(base, points[0], n, start_method, method) if reuse_trace else None
            with _trace_file(shared) as trace:
                rows = _run_local(tasks, payload[:-1] + (trace,), n, start_method, method, bar)
    keys = list(dict.fromkeys(k for p in points for k in p))
    records = []
    for i, p in tasks:
        rec = {k: p.get(k) for k in keys}
        row = rows[i]
        for k, v in row.items():
            if k != "error":
                rec[k] = v
        rec["error"] = row.get("error")
        records.append(rec)
    import pandas as pd
    df = pd.DataFrame.from_records(records)
    return df[[c for c in df.columns if c != "error"] + ["error"]]
