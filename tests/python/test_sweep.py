"""dvfs_sim.sweep: grids over dotted scenario keys, on local processes or Dask, one DataFrame back,
failing points reported per point."""
import os

import pytest

import dvfs_sim
from repo_paths import ROOT

FIXTURE = os.path.join(ROOT, "tests", "fixtures", "kineto_current.json")
BASE = {"name": "fixture", "trace": FIXTURE, "gpu": "h200", "policy": "native"}


def test_a_grid_is_the_cartesian_product_and_each_row_is_that_points_run():
    grid = {"policy.name": ["max", "native"], "seed": [0, 1], "gpu": ["h200", "a100-sxm4"]}
    df = dvfs_sim.sweep(BASE, grid, processes=2, progress=False)
    assert len(df) == 8 and list(df.columns[:3]) == ["policy.name", "seed", "gpu"] and df.columns[-1] == "error"
    assert df["error"].isna().all()
    assert {"time_s", "energy_j", "mean_power_w", "energy_j.forward", "energy_j.gemm"} <= set(df.columns)
    for _, row in df.iterrows():
        alone = dvfs_sim.run(dvfs_sim.with_changes(BASE, {"policy.name": row["policy.name"], "seed": row["seed"],
                                                          "gpu": row["gpu"]}))
        assert row["energy_j"] == alone["totals"]["energy_j"] and row["policy"] == row["policy.name"]


def test_one_failing_point_gets_its_message_and_the_others_their_results():
    points = [{"seed": 0}, {"policy.name": "bogus"}, {"switch_latency.sm.mean_s": -1}, {"seed": 2}]
    df = dvfs_sim.sweep(BASE, points, processes=2, progress=False)
    assert list(df["error"].isna()) == [True, False, False, True]
    assert df.loc[1, "error"].startswith('InputError: <sweep point 1>: policy.name: unknown policy "bogus"')
    assert "switch_latency.sm.mean_s: expected 0 to 10 s" in df.loc[2, "error"]
    assert "\n" not in df.loc[1, "error"] and df.loc[3, "energy_j"] > 0


def die_at_point_2(summary):
    """A metrics function that kills its worker process at one point (seed 2)."""
    if summary["seed"] == 2:
        os._exit(3)
    return {"energy_j": summary["totals"]["energy_j"], "seed": summary["seed"]}


def test_a_point_that_kills_its_worker_process_loses_no_other_point():
    df = dvfs_sim.sweep(BASE, {"seed": [0, 1, 2, 3, 4, 5]}, processes=2, progress=False, metrics=die_at_point_2)
    assert list(df["error"].isna()) == [True, True, False, True, True, True]
    assert "worker process died while running this point" in df.loc[2, "error"]
    assert list(df.loc[df["error"].isna(), "seed"]) == [0, 1, 3, 4, 5]


def test_metrics_can_be_dotted_summary_keys_and_processes_0_runs_here():
    df = dvfs_sim.sweep(BASE, {"policy.name": ["max", "native"]}, processes=0, progress=False,
                        metrics=["totals.energy_j", "steps.0.time_s"])
    assert list(df.columns) == ["policy.name", "totals.energy_j", "steps.0.time_s", "error"]
    assert df.loc[0, "totals.energy_j"] > 0


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # tornado, inside distributed
def test_sweeps_run_on_a_dask_cluster_by_address_or_client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster:
        local = dvfs_sim.sweep(BASE, {"seed": [0, 1], "policy.name": ["max", "bogus"]}, processes=0, progress=False)
        by_address = dvfs_sim.sweep(BASE, {"seed": [0, 1], "policy.name": ["max", "bogus"]},
                                    scheduler=cluster.scheduler_address, progress=False)
        with distributed.Client(cluster) as client:
            by_client = dvfs_sim.sweep(BASE, [{"seed": 5}], scheduler=client, progress=False)
    assert by_address.equals(local)
    assert by_address["error"].notna().sum() == 2 and by_client.loc[0, "energy_j"] > 0


def test_bad_grids_raise_input_errors():
    with pytest.raises(dvfs_sim.InputError, match=r"grid: seed: expected a non-empty list"):
        dvfs_sim.sweep(BASE, {"seed": 3})
    with pytest.raises(dvfs_sim.InputError, match=r"grid: expected at least one point"):
        dvfs_sim.sweep(BASE, [], progress=False)
    with pytest.raises(dvfs_sim.InputError, match=r"grid\[1\]: expected a dict"):
        dvfs_sim.sweep(BASE, [{"seed": 1}, 2])


def worker_pid(summary):
    return {"pid": os.getpid()}


def test_worker_processes_stay_between_sweeps_until_stopped():
    grid = {"seed": [0, 1, 2, 3]}
    first = set(dvfs_sim.sweep(BASE, grid, processes=2, progress=False, metrics=worker_pid)["pid"])
    second = set(dvfs_sim.sweep(BASE, grid, processes=2, progress=False, metrics=worker_pid)["pid"])
    assert len(first | second) <= 2 and os.getpid() not in first
    dvfs_sim.stop_workers()
    third = set(dvfs_sim.sweep(BASE, grid, processes=2, progress=False, metrics=worker_pid)["pid"])
    assert not third & (first | second)


def test_forkserver_workers_start_with_the_core_loaded_also_when_dvfs_sim_is_on_sys_path_only(tmp_path):
    """A cold sweep's workers are forked from a server that imported dvfs_sim already (no worker loads the core
    itself), also for the usual `sys.path.insert(0, "build/python")` with no PYTHONPATH (docs/python.md)."""
    import subprocess
    import sys
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(dvfs_sim.__file__)))
    script = tmp_path / "sweep_on_sys_path.py"
    script.write_text(
        "import os, sys\n"
        f"sys.path.insert(0, {package_parent!r})\n"
        "import dvfs_sim\n"
        "from dvfs_sim import _native\n"
        "def where(summary):\n"
        "    return {'loaded_in': _native._loaded_in_pid, 'pid': os.getpid()}\n"
        "if __name__ == '__main__':\n"
        f"    df = dvfs_sim.sweep({BASE!r}, [{{'seed': 0}}, {{'seed': 1}}], processes=2, progress=False, metrics=where,\n"
        "                        start_method='forkserver')\n"
        "    assert df['error'].isna().all(), df['error'].dropna().iloc[0]\n"
        "    print('forked-loaded' if (df['loaded_in'] != df['pid']).all() else 'worker-loaded')\n"
        "    print('parent-env', os.environ.get('PYTHONPATH'))\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "forked-loaded" in out.stdout.splitlines()
    assert "parent-env None" in out.stdout.splitlines()  # the caller's environment is left as it was


def trace_loads_here(summary):
    """A metrics function: how the worker running this point came by its traces (its trace cache's counters)."""
    from dvfs_sim._native import core
    stats = core().trace_cache_stats()
    return {"pid": os.getpid(), "loads": stats["loads"], "adopted": stats["adopted"],
            "energy_j": summary["totals"]["energy_j"]}


def test_a_cold_sweeps_workers_adopt_the_trace_the_caller_loaded_once_instead_of_importing_it():
    """The caller loads the first point's trace once and hands it over as bytes: no worker loads (imports) it.
    Counted, not timed: each process's trace cache counts its loads (misses) and adoptions."""
    from dvfs_sim._native import core
    dvfs_sim.stop_workers()
    core().clear_trace_cache()
    before = core().trace_cache_stats()["loads"]
    grid = {"seed": [0, 1, 2, 3, 4, 5, 6, 7], "policy.name": ["max", "native"]}
    df = dvfs_sim.sweep(BASE, grid, processes=2, progress=False, metrics=trace_loads_here, start_method="forkserver")
    assert df["error"].isna().all(), df["error"].dropna().iloc[0]
    assert os.getpid() not in set(df["pid"])  # every point ran in a worker
    assert (df["loads"] == 0).all() and (df["adopted"] == 1).all()
    assert core().trace_cache_stats()["loads"] == before + 1  # the one load, here
    again = dvfs_sim.sweep(BASE, grid, processes=2, progress=False, metrics=trace_loads_here, start_method="forkserver")
    assert (again["loads"] == 0).all() and (again["adopted"] == 1).all()  # kept workers adopt nothing twice
    assert core().trace_cache_stats()["loads"] == before + 1  # nor does the caller load it again
    dvfs_sim.stop_workers()


@pytest.mark.parametrize("start_method", ["forkserver", "auto"])
def test_a_sweep_on_workers_that_adopted_or_inherited_the_trace_equals_the_same_sweep_run_here(start_method):
    from dvfs_sim._native import core
    grid = {"seed": [0, 1, 2], "policy.name": ["max", "native", "per-kernel"], "switch_latency.firmware_s": [0, 1e-3]}
    dvfs_sim.stop_workers()
    core().clear_trace_cache()
    pooled = dvfs_sim.sweep(BASE, grid, processes=2, progress=False, start_method=start_method)
    core().clear_trace_cache()
    here = dvfs_sim.sweep(BASE, grid, processes=0, progress=False, reuse_trace=False)
    assert pooled["error"].isna().all() and pooled.equals(here)


def test_points_with_another_trace_or_gpu_than_the_first_load_theirs_in_the_worker(tmp_path):
    other = tmp_path / "other.json"
    other.write_text(open(FIXTURE).read())
    points = [{"seed": 0}, {"trace": str(other)}, {"gpu": "a100-sxm4"}, {"seed": 1}]
    dvfs_sim.stop_workers()
    pooled = dvfs_sim.sweep(BASE, points, processes=2, progress=False, metrics=trace_loads_here)
    assert pooled["error"].isna().all(), pooled["error"].dropna().iloc[0]
    assert pooled["loads"].max() >= 1  # the other trace and the other GPU's load were done by a worker
    for i, p in enumerate(points):
        assert pooled.loc[i, "energy_j"] == dvfs_sim.run(dvfs_sim.with_changes(BASE, p))["totals"]["energy_j"]
    dvfs_sim.stop_workers()


def test_a_first_trace_that_does_not_load_is_each_points_error_not_the_callers():
    points = [{"seed": 0}, {"seed": 1}, {"seed": 2}]
    df = dvfs_sim.sweep(dict(BASE, trace=os.path.join(ROOT, "tests", "fixtures", "missing.json")), points,
                        processes=2, progress=False)
    assert df["error"].notna().all() and all("missing.json" in e for e in df["error"])
    bad_first = dvfs_sim.sweep(BASE, [{"seed.x": 1}, {"seed": 1}, {"seed": 2}], processes=2, progress=False)
    assert list(bad_first["error"].isna()) == [False, True, True]


def test_shared_trace_bytes_adopt_only_under_their_own_key_and_intact():
    import json
    from dvfs_sim._native import core
    key, retargeted, data = core().share_trace(json.dumps(BASE), "<test>", ROOT)
    core().clear_trace_cache()
    assert not core().has_trace(key)
    assert not core().adopt_trace(key + "x", retargeted, data)
    assert not core().adopt_trace(key, retargeted, data[:-1])
    flipped = bytearray(data)
    flipped[len(flipped) // 2] ^= 1
    assert not core().adopt_trace(key, retargeted, bytes(flipped))
    assert not core().has_trace(key) and core().trace_cache_stats()["entries"] == 0
    assert core().adopt_trace(key, retargeted, data) and core().has_trace(key)
    loads = core().trace_cache_stats()["loads"]
    adopted = dvfs_sim.sweep(BASE, [{"seed": 3}], processes=0, progress=False)  # runs on the adopted trace
    assert core().trace_cache_stats()["loads"] == loads
    assert adopted.loc[0, "energy_j"] == dvfs_sim.run(dvfs_sim.with_changes(BASE, {"seed": 3}))["totals"]["energy_j"]
    assert core().share_trace(json.dumps({"name": "s", "synthetic": {}}), "<test>", ROOT) is None


def test_the_shared_trace_file_lives_for_one_sweep_only():
    import importlib
    module = importlib.import_module("dvfs_sim.sweep")  # dvfs_sim.sweep is the function
    with module._trace_file(("k", "null", b"abc")) as (key, retargeted, path):
        assert open(path, "rb").read() == b"abc" and key == "k"
    assert not os.path.exists(path)
    with pytest.raises(RuntimeError):
        with module._trace_file(("k", "null", b"abc")) as (_, _, path):
            raise RuntimeError("a sweep interrupted")
    assert not os.path.exists(path)


def test_loaded_traces_are_told_apart_by_every_file_of_a_multi_rank_job(tmp_path):
    """The per-process trace cache keys on every rank's file, not the first one only."""
    import json
    rank0 = os.path.join(ROOT, "tests", "fixtures", "pytorch", "ddp_rank0_wait.json")
    rank1 = os.path.join(ROOT, "tests", "fixtures", "pytorch", "ddp_rank1_wait.json")
    doc = json.load(open(rank1))
    for e in doc["traceEvents"]:
        if e.get("cat") == "kernel" and e["name"].startswith("sm90_xmma_gemm"):
            e["dur"] *= 3
    slower = tmp_path / "rank1_slower.json"
    slower.write_text(json.dumps(doc))
    base = {"name": "ddp", "trace": [rank0, rank1], "gpu": "h200", "policy": "max"}
    points = [{}, {"trace": [rank0, str(slower)]}]
    df = dvfs_sim.sweep(base, points, processes=0, progress=False)
    alone = [dvfs_sim.run(dvfs_sim.with_changes(base, p))["totals"]["energy_j"] for p in points]
    assert list(df["energy_j"]) == alone and alone[0] != alone[1]
    dvfs_sim.stop_workers()  # a merged multi-rank trace adopted by the workers runs as it does here
    pooled = dvfs_sim.sweep(base, points + [{"seed": 1}, {"seed": 2}], processes=2, progress=False, metrics=trace_loads_here,
                            start_method="forkserver")
    # equal up to the last printed digit: this process may have run other scenarios first, and a run here reuses
    # what earlier ones cached (summed in another order: the fleet test in test_policy_registry.py says the same)
    assert list(pooled["energy_j"])[:2] == pytest.approx(alone, rel=1e-8) and (pooled["adopted"] == 1).all()


def test_forked_workers_inherit_the_trace_the_caller_loaded(tmp_path):
    """start_method="fork": the caller loads the trace before its workers are forked, so they neither load nor
    adopt it (run in a fresh interpreter: forking this test process, which may hold threads, is not safe)."""
    import subprocess
    import sys
    script = tmp_path / "fork_sweep.py"
    script.write_text(
        "import os\n"
        "import dvfs_sim\n"
        "from dvfs_sim._native import core\n"
        "def counts(summary):\n"
        "    s = core().trace_cache_stats()\n"
        "    return {'pid': os.getpid(), 'loads': s['loads'], 'adopted': s['adopted'], 'entries': s['entries']}\n"
        "if __name__ == '__main__':\n"
        f"    df = dvfs_sim.sweep({BASE!r}, {{'seed': list(range(8))}}, processes=2, progress=False, metrics=counts,\n"
        "                        start_method='fork')\n"
        "    assert df['error'].isna().all(), df['error'].dropna().iloc[0]\n"
        "    assert os.getpid() not in set(df['pid'])\n"
        "    print('workers', int(df['loads'].max()), int(df['adopted'].max()), int(df['entries'].min()))\n"
        "    print('caller', core().trace_cache_stats()['loads'])\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    # a forked worker's counters start as the caller's were: its 1 load is the caller's, none of its own
    assert out.stdout.splitlines() == ["workers 1 0 1", "caller 1"]


def test_the_default_start_method_forks_a_single_threaded_caller_and_uses_a_fork_server_beside_other_threads(tmp_path):
    """start_method="auto": a caller running one thread forks its workers (they inherit the trace it loaded: no load
    of their own, nothing adopted); once it runs another thread, fork would be unsafe and the workers are forked
    by a fork server instead (they adopt the trace). Run in a fresh interpreter, whose threads are known."""
    import subprocess
    import sys
    script = tmp_path / "auto_sweep.py"
    script.write_text(
        "import os, threading\n"
        "import dvfs_sim\n"
        "from dvfs_sim._native import core\n"
        "module = __import__('dvfs_sim.sweep', fromlist=['_single_threaded'])\n"
        "def counts(summary):\n"
        "    s = core().trace_cache_stats()\n"
        "    return {'ppid': os.getppid(), 'loads': s['loads'], 'adopted': s['adopted']}\n"
        "def sweep():\n"
        f"    df = dvfs_sim.sweep({BASE!r}, {{'seed': list(range(6))}}, processes=2, progress=False, metrics=counts)\n"
        "    assert df['error'].isna().all(), df['error'].dropna().iloc[0]\n"
        "    parent = 'caller' if set(df['ppid']) == {os.getpid()} else 'other'\n"
        "    return f\"{parent} loads {int(df['loads'].max())} adopted {int(df['adopted'].max())}\"\n"
        "if __name__ == '__main__':\n"
        "    print('single', module._single_threaded())\n"
        "    print(sweep())\n"
        "    dvfs_sim.stop_workers()\n"
        "    core().clear_trace_cache()\n"
        "    stop = threading.Event()\n"
        "    t = threading.Thread(target=stop.wait)\n"
        "    t.start()\n"
        "    print('single', module._single_threaded())\n"
        "    print(sweep())\n"
        "    stop.set()\n"
        "    t.join()\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    # forked from the caller: its one load is the caller's (counters copied); from the server: adopted, not loaded
    assert out.stdout.splitlines() == ["single True", "caller loads 1 adopted 0", "single False", "other loads 0 adopted 1"]
