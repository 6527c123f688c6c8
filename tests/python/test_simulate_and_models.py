"""dvfs_sim.simulate (Result: summary, step and GPU tables, timeline arrays), scenario helpers and the
GPU models read from Python."""
import json
import os
import subprocess

import numpy as np
import pytest

import dvfs_sim
from repo_paths import BIN, ROOT

FIXTURE = os.path.join(ROOT, "tests", "fixtures", "kineto_current.json")


def test_simulate_gives_tables_and_the_timeline_the_cli_writes(tmp_path):
    res = dvfs_sim.simulate(dvfs_sim.default_scenario_path(), output_dir=tmp_path)
    assert res.summary == json.loads((tmp_path / "summary.json").read_text())
    assert list(res.steps["label"]) == [f"step{i}" for i in range(6)]
    assert res.steps["energy_j"].sum() <= res.totals["energy_j"]
    assert len(res.gpus) == 1 and res.gpus.loc[0, "energy_j"] == pytest.approx(res.totals["energy_j"])
    tl = res.timeline
    assert set(tl) == {"gpu", "t_s", "power_w", "sm_mhz", "mem_mhz", "energy_j"}
    assert all(isinstance(v, np.ndarray) for v in tl.values())
    # The arrays are the numbers timeline.csv prints (at its rounding), without the file.
    csv = np.genfromtxt(tmp_path / "timeline.csv", delimiter=",", names=True)
    for col, printed_to in (("t_s", 1e-6), ("power_w", 1e-3), ("sm_mhz", 0.1), ("mem_mhz", 0.1), ("energy_j", 1e-6)):
        np.testing.assert_allclose(tl[col], csv[col], atol=printed_to / 2 + 1e-9, rtol=0)
    assert tl["energy_j"][-1] == pytest.approx(res.totals["energy_j"])
    assert list(res.timeline_frame().columns) == ["gpu", "t_s", "power_w", "sm_mhz", "mem_mhz", "energy_j"]
    assert dvfs_sim.simulate({"trace": FIXTURE, "gpu": "h200", "policy": "max"}, timeline=False).timeline is None


def test_run_keeps_returning_the_summary_dict_and_synthetic_results_have_stages():
    s = dvfs_sim.run({"trace": FIXTURE, "gpu": "h200", "policy": "max"})
    assert isinstance(s, dict) and s["policy"] == "max"
    res = dvfs_sim.simulate({"synthetic": {"model": "gpt3-xl", "pp": 2, "microbatches": 2}, "gpu": "a100-sxm4",
                             "policy": "native"})
    assert res.synthetic and len(res.stages) == 2 and res.steps.empty and res.timeline is None


def test_load_scenario_resolves_relative_paths_and_runs_from_anywhere(tmp_path, monkeypatch):
    doc = dvfs_sim.load_scenario(os.path.join(ROOT, "scenarios", "default.json"))
    assert doc["trace"] == os.path.join(ROOT, "traces", "recordings", "h200-gpt3xl")
    assert doc["output"]["dir"] == os.path.join(ROOT, "out", "default") and doc["gpu"] == "h200"
    monkeypatch.chdir(tmp_path)
    doc["output"] = {"timeline_interval_s": 0.01}
    assert dvfs_sim.run(doc)["scenario"] == "gpt3xl-h200-native"
    (tmp_path / "bad.json").write_text("{\"trace\": ")
    with pytest.raises(dvfs_sim.InputError, match=r"bad.json: malformed JSON"):
        dvfs_sim.load_scenario(tmp_path / "bad.json")
    with pytest.raises(dvfs_sim.InputError, match="cannot open scenario file"):
        dvfs_sim.load_scenario(tmp_path / "missing.json")


def test_dotted_keys_set_nested_scenario_values():
    base = {"trace": "t", "gpu": "h200", "policy": "per-kernel"}
    point = dvfs_sim.with_changes(base, {"policy.budget_pct": 1, "switch_latency.sm.mean_s": 1e-3, "seed": 3})
    assert point == {"trace": "t", "gpu": "h200", "policy": {"name": "per-kernel", "budget_pct": 1},
                     "switch_latency": {"sm": {"mean_s": 1e-3}}, "seed": 3}
    assert base["policy"] == "per-kernel"  # the base is not changed
    assert "seed" not in dvfs_sim.with_changes(point, {"seed": None})
    with pytest.raises(dvfs_sim.InputError, match=r"gpu.x: cannot set a key inside gpu, which is str"):
        dvfs_sim.with_changes(base, {"gpu.x": 1})
    with pytest.raises(dvfs_sim.InputError, match="no empty part"):
        dvfs_sim.with_changes(base, {"policy..budget_pct": 1})
    with pytest.raises(TypeError, match="base must be a scenario dict, a path or None, not int"):
        dvfs_sim.with_changes(5, {})
    # a path is read as load_scenario reads it (its relative paths made absolute)
    from_path = dvfs_sim.with_changes(dvfs_sim.default_scenario_path(), {"policy": "max"})
    assert from_path["policy"] == "max" and from_path["trace"] == dvfs_sim.load_scenario()["trace"]


def test_models_expose_clock_tables_and_the_cpp_time_and_power_functions():
    h200 = dvfs_sim.model("h200")
    assert h200.name == "h200" and h200.status == "calibrated" and h200.power_cap_w == 700
    assert h200.idle_w == json.load(open(os.path.join(ROOT, "models", "gpus", "h200.json")))["power"]["idle_w"]
    assert h200.sm_clocks_mhz[-1] == 1980 and h200.mem_clocks_mhz == sorted(h200.mem_clocks_mhz)
    assert h200.max_clocks == (1980, 3201)
    assert h200.provenance["summary"] and set(h200.switch_latency) >= {"sm", "mem", "firmware_s"}
    gemm = {"class": "gemm", "duration_s": 2e-3, "recorded_sm_mhz": 1980, "recorded_mem_mhz": 3201}
    assert h200.kernel_time_s(gemm, 1980, 3201) == pytest.approx(2e-3)
    # time = d_rec * shape(f) / shape(f_rec), shape(f) = b_sm f_max/f + b_mem m_max/m + 1 - b_sm - b_mem
    c = h200.coefficients("gemm")
    shape = c["time_sm"] * 1980 / 990 + c["time_mem"] + 1 - c["time_sm"] - c["time_mem"]
    assert h200.kernel_time_s(gemm, 990, 3201) == pytest.approx(2e-3 * shape)
    assert h200.kernel_power_w("gemm", 990) < h200.kernel_power_w("gemm", 1980)
    assert h200.kernel_power_w({"class": "gemm", "sm_fill": 0.5}, 1980) < h200.kernel_power_w("gemm", 1980)
    assert h200.idle_power_w(345) <= h200.idle_power_w() < h200.kernel_power_w("elementwise", 1980)
    assert h200.kernel_energy_j(gemm, 1410) == pytest.approx(h200.kernel_time_s(gemm, 1410) * h200.kernel_power_w(gemm, 1410))
    assert set(dvfs_sim.kernel_classes()) >= {"gemm", "attention", "elementwise"}


def test_models_reject_unknown_gpus_clocks_and_kernels_naming_the_field():
    with pytest.raises(dvfs_sim.InputError, match=r'gpu: unknown GPU "h900" \(expected one of: .*h200'):
        dvfs_sim.model("h900")
    h200 = dvfs_sim.model("h200")
    with pytest.raises(dvfs_sim.InputError, match=r'model\("h200"\).kernel_time_s: sm_mhz: SM clock 1234 MHz is not supported'):
        h200.kernel_time_s("gemm", 1234)
    with pytest.raises(dvfs_sim.InputError, match=r"mem_mhz: memory clock 1000 MHz is not supported by h200 \(expected one of"):
        h200.kernel_power_w("gemm", 1980, 1000)
    with pytest.raises(dvfs_sim.InputError, match=r'kernel.class: unknown kernel class "matmul"'):
        h200.kernel_time_s("matmul", 1980)
    with pytest.raises(dvfs_sim.InputError, match=r"kernel.dur: unknown key"):
        h200.kernel_time_s({"class": "gemm", "dur": 1}, 1980)
    with pytest.raises(dvfs_sim.InputError, match=r"idle_power_w: sm_mhz: SM clock 2000 MHz"):
        h200.idle_power_w(2000)


def test_models_match_the_cli_listing():
    listed = {m["name"] for m in json.loads(subprocess.run([BIN, "models", "--json"], capture_output=True, text=True).stdout)}
    assert set(dvfs_sim.available_models()) == listed
    for name in listed:
        assert dvfs_sim.model(name).name == name


def test_available_models_raises_naming_the_folder_when_it_holds_no_model(tmp_path, monkeypatch):
    # it returned [] where `dvfs-sim models` refuses
    (tmp_path / "models" / "gpus").mkdir(parents=True)
    monkeypatch.setenv("DVFS_SIM_DATA", str(tmp_path))
    with pytest.raises(dvfs_sim.InputError, match=r"models/gpus.*no model files \(\*\.json\) in it"):
        dvfs_sim.available_models()


def test_perseus_runs_refuse_a_latency_beyond_a_second():
    # float('inf') reached SimGrid and came back as a RuntimeError
    runs = os.path.join(ROOT, "traces", "perseus-runs", "a100_gpt3-xl_pp4")
    for bad in (float("inf"), 1e308, float("nan"), -1.0):
        with pytest.raises(dvfs_sim.InputError, match="p2p_latency_s: expected a latency from 0 to 1 s"):
            dvfs_sim.validate_perseus_runs(runs, plans=(0,), p2p_latency_s=bad)


def test_arguments_of_the_wrong_type_are_input_errors_naming_the_argument():
    # They were bare TypeErrors (os.fspath's, naming no argument) or pybind11's "incompatible function arguments";
    # now an InputError that is also a TypeError, so `except dvfs_sim.InputError` catches every bad input.
    runs = os.path.join(ROOT, "traces", "perseus-runs", "a100_gpt3-xl_pp4")
    cases = [
        (lambda: dvfs_sim.run(5), "scenario must be a dict, a path or None, not int"),
        (lambda: dvfs_sim.model(None), "not NoneType"),
        (lambda: dvfs_sim.validate(None, None), "recording_dir: expected a path"),
        (lambda: dvfs_sim.validate(runs, None), "gpu: expected a string, got NoneType"),
        (lambda: dvfs_sim.calibrate("/nonexistent.json"), "calibrate: expected exactly one of profile="),
        (lambda: dvfs_sim.compare(3, policies=["per-kernel"]), "scenario: expected a path"),
        (lambda: dvfs_sim.control.run(os.path.join(ROOT, "scenarios", "power-budget", "grpo-7b-16gpu.json"), controller=5),
         "controller: expected a string, got int"),
    ]
    for call, message in cases:
        with pytest.raises(dvfs_sim.InputTypeError, match=message) as caught:
            call()
        assert isinstance(caught.value, dvfs_sim.InputError) and isinstance(caught.value, TypeError)
    for plans, message in (((2 ** 40,), "plans: expected an integer from 0 to 999999999"), ((1.5,), "plans: expected an integer, got 1.5"),
                           ((), "plans: expected at least one plan number"), ("0", "plans: expected a list")):
        with pytest.raises(dvfs_sim.InputError, match=message):
            dvfs_sim.validate_perseus_runs(runs, plans=plans)


def test_compare_errors_name_the_python_arguments_not_the_command_line_options():
    with pytest.raises(dvfs_sim.InputError, match=r'^policies: unknown policy "nosuch"'):
        dvfs_sim.compare(None, policies=["nosuch"])
    with pytest.raises(dvfs_sim.InputError, match=r"^policies: policy \"per-kernel\" is listed twice"):
        dvfs_sim.compare(None, policies=["per-kernel", "per-kernel"])
