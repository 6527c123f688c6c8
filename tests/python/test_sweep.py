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
    assert df.loc[1, "error"].startswith('InputError: <sweep point 1>: policy: unknown policy "bogus"')
    assert "switch_latency.sm.mean_s: expected a number >= 0" in df.loc[2, "error"]
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
        f"    df = dvfs_sim.sweep({BASE!r}, [{{'seed': 0}}, {{'seed': 1}}], processes=2, progress=False, metrics=where)\n"
        "    assert df['error'].isna().all(), df['error'].dropna().iloc[0]\n"
        "    print('forked-loaded' if (df['loaded_in'] != df['pid']).all() else 'worker-loaded')\n"
        "    print('parent-env', os.environ.get('PYTHONPATH'))\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "forked-loaded" in out.stdout.splitlines()
    assert "parent-env None" in out.stdout.splitlines()  # the caller's environment is left as it was
