"""The policy registry guard: every policy the C++ registry holds parses from a scenario, runs on a small
fixture, is listed by dvfs_sim.policy_names() and is named in `dvfs-sim help policies`; a name outside it is
refused with the registry's list. And the one scenario entry point: dvfs_sim.run takes every kind of scenario
`dvfs-sim run` takes (a fleet study included) and gives the same result."""
import json
import os
import subprocess

import pytest

import dvfs_sim
from repo_paths import BIN, ROOT

FIXTURE = os.path.join(ROOT, "tests", "fixtures", "kineto_current.json")
# A pipeline small enough for the critical-path planner (2 stages x 2 micro-batches).
SMALL_PIPELINE = {"model": "gpt3-xl", "pp": 2, "microbatches": 2}
# What each policy-object key needs to be valid (static: clocks of the h200 model).
KEY_VALUES = {"sm_mhz": 1410, "mem_mhz": 3201, "power_cap_w": 600, "budget_pct": 1}


def scenario_for(entry):
    policy = {"name": entry["name"], **{k: KEY_VALUES[k] for k in entry["keys"]}}
    if entry["kind"] == "pipeline":
        return {"synthetic": SMALL_PIPELINE, "gpu": "h200", "policy": policy}
    if entry["name"] == "recorded":  # needs recorded clocks: a small kernel-loop recording (trace beside its telemetry)
        return {"trace": os.path.join(ROOT, "traces", "recordings", "h200-power", "add-bf16"), "gpu": "h200", "policy": policy}
    return {"trace": FIXTURE, "gpu": "h200", "policy": policy}


def test_every_registered_policy_parses_runs_and_is_listed():
    entries = dvfs_sim.policy_entries()
    names = dvfs_sim.policy_names()
    assert names == [e["name"] for e in entries] and len(set(names)) == len(names)
    # Every family is there, the two critical-path policies included (they were missing from policy_names()).
    assert {"max", "static", "native", "recorded", "per-kernel", "per-kernel-online", "pass-level", "static-best",
            "latency-aware", "critical-path", "critical-path+per-kernel"} <= set(names)
    assert {e["kind"] for e in entries} == {"online", "planned", "pipeline"}
    for e in entries:
        assert e["summary"] and "\n" not in e["summary"], e
        assert set(e["keys"]) <= set(KEY_VALUES), e
        s = dvfs_sim.run(scenario_for(e))
        assert s["policy"] == e["name"] or (e["name"] == "latency-aware" and s["plan"][0]["chosen"]), (e["name"], s.get("policy"))
        if e["kind"] == "pipeline":
            assert s["iteration_s"] > 0 and s["critical_path"]
        else:
            assert s["totals"]["energy_j"] > 0


def test_the_cli_lists_the_registry_and_refuses_other_names(tmp_path):
    r = subprocess.run([BIN, "help", "policies"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    listed = [line.split()[0] for line in r.stdout.splitlines()[1:] if line.startswith("  ") and not line.strip().startswith("keys:")]
    assert listed == dvfs_sim.policy_names()
    with pytest.raises(dvfs_sim.InputError) as err:
        dvfs_sim.run({"trace": FIXTURE, "gpu": "h200", "policy": "turbo"})
    assert "unknown policy \"turbo\" (expected one of: " + ", ".join(dvfs_sim.policy_names()) + ")" in str(err.value)
    # A key given to a policy that does not take it names the policies that do.
    with pytest.raises(dvfs_sim.InputError, match="only the native policy takes a power cap"):
        dvfs_sim.run({"trace": FIXTURE, "gpu": "h200", "policy": {"name": "max", "power_cap_w": 500}})


def strip_wall_clock(out):
    for k in [k for k in out if k.startswith("wall")]:
        del out[k]


def rounded(x):
    if isinstance(x, float):
        return float(f"{x:.9g}")
    if isinstance(x, dict):
        return {k: rounded(v) for k, v in x.items()}
    if isinstance(x, list):
        return [rounded(v) for v in x]
    return x


def small_fleet(tmp_path):
    with open(os.path.join(ROOT, "scenarios", "power-budget", "fleet-mixed.json")) as f:
        doc = json.load(f)
    doc["fleet"]["sizes"] = [16]
    doc["fleet"]["duration_s"] = 60
    doc["fleet"]["windows_s"] = [0.5, 30]  # a window longer than the run is refused (the shipped 300 s)
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps(doc))
    return doc, path


def test_run_takes_a_fleet_scenario_as_dvfs_sim_run_does(tmp_path):
    doc, path = small_fleet(tmp_path)
    from_file = dvfs_sim.run(path)
    from_dict = dvfs_sim.run(doc)  # used to fail with "fleet: unknown key"
    r = subprocess.run([BIN, "run", str(path), "--json"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    cli = json.loads(r.stdout)
    for out in (from_file, from_dict, cli):
        strip_wall_clock(out)
        out.pop("file", None)
    # Equal up to the last bits (the CLI and the module are separately optimised builds; the dict's run
    # reuses the jobs' power traces the file's run made, summed in another order).
    assert rounded(from_file) == rounded(cli) == rounded(from_dict)
    assert [f["gpus"] for f in cli["fleets"]] == [16]
    assert dvfs_sim.simulate(path).timeline is None


def test_run_takes_a_power_budget_scenario_as_dvfs_sim_run_does(tmp_path):
    with open(os.path.join(ROOT, "scenarios", "power-budget", "grpo-7b-16gpu.json")) as f:
        doc = json.load(f)
    doc["control"]["duration_s"] = 30
    controller = doc["control"]["controller"]
    if "policy_file" in controller:  # relative to the shipped file's directory
        controller["policy_file"] = os.path.normpath(os.path.join(ROOT, "scenarios", "power-budget", controller["policy_file"]))
    path = tmp_path / "control.json"
    path.write_text(json.dumps(doc))
    r = subprocess.run([BIN, "run", str(path), "--json"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    cli, py = json.loads(r.stdout), dvfs_sim.run(path)
    for out in (cli, py):
        strip_wall_clock(out)
    assert rounded(py) == rounded(cli)
    with pytest.raises(dvfs_sim.InputError, match="Python policy drives replayed traces only"):
        dvfs_sim.run(path, policy=object())


def test_a_python_policy_is_refused_by_every_registered_scenario_kind_by_name():
    # A lifecycle job has no kernel replay for a policy to drive: said, not ignored.
    path = os.path.join(ROOT, "scenarios", "lifecycle", "llm-finetune.json")
    with pytest.raises(dvfs_sim.InputError, match=r"lifecycle: a Python policy drives replayed traces only; a lifecycle scenario"):
        dvfs_sim.run(path, policy=object())
