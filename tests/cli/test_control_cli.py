"""`dvfs-sim control` and `dvfs-sim fleet`: power-budget scenarios from the command line."""
import json
import os

from cli_errors import assert_one_line_error


def scenario(root, name):
    return os.path.join(root, "scenarios", "power-budget", name)


def test_control_compares_controllers_in_one_table(cli, root):
    r = cli("control", scenario(root, "grpo-7b-16gpu.json"), "--controller", "uncontrolled,static-cap,pid", "--duration", "30")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "controllers on grpo-7b-16gpu" in lines[0] and "model output" in lines[0]
    rows = [l.split()[0] for l in lines[2:]]
    assert rows == ["uncontrolled", "static-cap", "pid"]


def test_run_dispatches_a_power_budget_scenario(cli, root):
    r = cli("run", scenario(root, "grpo-7b-16gpu.json"), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["controller"] == "rl" and out["gpus"] == 16 and out["tokens_per_s"] > 0  # the shipped policy
    assert out["budgets"][0]["budget_w"] == 16 * 700 * 0.9


def test_bad_control_input_is_one_line_and_exit_code_2(cli, root, tmp_path):
    r = cli("control", scenario(root, "grpo-7b-16gpu.json"), "--controller", "oracle")
    assert_one_line_error(r, "controller", "oracle")
    doc = json.load(open(scenario(root, "grpo-7b-16gpu.json")))
    doc["control"]["budgets"][0] = {"name": "x", "budget_w": 0}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    r = cli("control", bad)
    assert_one_line_error(r, "bad.json", "control.budgets[0].budget_w")
    doc["control"]["budgets"][0] = {"name": "x", "budget_frac_of_tdp": 0.9}
    doc["control"]["jobs"][0]["concurrency"] = 1000
    bad.write_text(json.dumps(doc))
    r = cli("control", bad)
    assert_one_line_error(r, "control.jobs[0].concurrency")


def test_control_and_fleet_timing_beyond_the_limits_is_refused_not_run(cli, root, tmp_path):
    # a simulated year ran for hours; a 1e-12 s telemetry bin ended in std::bad_alloc; a sample that is no multiple of
    # the governor's period was named "session: interval_s"
    r = cli("control", scenario(root, "grpo-7b-16gpu.json"), "--duration", "3e7")
    assert_one_line_error(r, "--duration", "86400")
    r = cli("fleet", scenario(root, "fleet-mixed.json"), "--duration", "1e12")
    assert_one_line_error(r, "--duration", "86400")
    doc = json.load(open(scenario(root, "fleet-mixed.json")))
    for key, value in (("bin_s", 1e-12), ("sample_s", 0.013)):
        bad_doc = json.loads(json.dumps(doc))
        bad_doc["fleet"][key] = value
        bad = tmp_path / "fleet.json"
        bad.write_text(json.dumps(bad_doc))
        r = cli("fleet", bad)
        assert_one_line_error(r, "fleet.json", "fleet." + key)


def test_fleet_reports_peak_share_by_window(cli, root, tmp_path):
    doc = json.load(open(scenario(root, "fleet-mixed.json")))
    doc["fleet"]["windows_s"] = [0.5, 5, 30]  # the shipped 300 s window is longer than the 60 s run
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps(doc))
    r = cli("fleet", path, "--duration", "60", "--sizes", "16,64", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert [f["gpus"] for f in out["fleets"]] == [16, 64]
    for f in out["fleets"]:
        peaks = [w["peak_share"] for w in f["windows"]]
        assert peaks == sorted(peaks, reverse=True)  # longer windows average the peaks away
        assert all(0 < p <= 1 for p in peaks)


def test_control_caps_outside_the_gpus_idle_to_board_limit_exit_2_naming_the_field(cli, root):
    # max_w 1e9 ran and the fleet peaked at 110.9 % of nameplate; 1e-6 W was clamped without a word
    for caps, field in (('{"max_w":1e9}', "control.caps.max_w"), ('{"min_w":1e-6}', "control.caps.min_w")):
        r = cli("control", scenario(root, "grpo-7b-16gpu.json"), "--controller", "uncontrolled", "--duration", "60",
                "--set", "control.caps=" + caps)
        assert_one_line_error(r, "grpo-7b-16gpu.json", field, "board limit (700 W)")


def test_a_comma_list_with_a_space_inside_an_item_exits_2_instead_of_gluing_the_item(cli, root):
    # split_commas deleted every space: --sizes "16 32" ran one fleet of 1632 GPUs
    r = cli("fleet", scenario(root, "fleet-mixed.json"), "--duration", "10", "--sizes", "16 32")
    assert_one_line_error(r, "--sizes", 'no space inside one', '"16 32"')
    r = cli("control", scenario(root, "grpo-7b-16gpu.json"), "--duration", "10", "--controller", "uncontrolled, static cap")
    assert_one_line_error(r, "--controller", '"uncontrolled, static cap"')
    # spaces around items are still dropped
    r = cli("control", scenario(root, "grpo-7b-16gpu.json"), "--duration", "1", "--controller", " uncontrolled , static-cap ")
    assert r.returncode == 0, r.stderr
    assert [l.split()[0] for l in r.stdout.splitlines()[2:]] == ["uncontrolled", "static-cap"]


def test_fleet_windows_longer_than_the_run_or_of_no_whole_samples_exit_2_naming_the_window(cli, root, tmp_path):
    # [0.5, 1e6] over 120 s dropped the 1e6 row without a word; [0.7] with 0.5 s samples was labelled 0.7 s, computed 0.5 s
    doc = json.load(open(scenario(root, "fleet-mixed.json")))
    doc["fleet"]["duration_s"] = 120
    bad = tmp_path / "fleet.json"
    for windows, i, expected in (([0.5, 1e6], 1, "at most the simulated duration"), ([0.7], 0, "a whole number of samples")):
        doc["fleet"]["windows_s"] = windows
        bad.write_text(json.dumps(doc))
        assert_one_line_error(cli("fleet", bad), "fleet.json", "fleet.windows_s[%d]" % i, expected)
    # the shipped 300 s window under a 60 s --duration
    r = cli("fleet", scenario(root, "fleet-mixed.json"), "--duration", "60")
    assert_one_line_error(r, "--duration", "at least the longest window", "fleet.windows_s[2]: 300 s")


def test_fleet_size_in_which_no_job_fits_exits_2_instead_of_an_all_idle_fleet(cli, root):
    # --sizes 1 ran a fleet of one idle GPU ("jobs 0") with exit 0
    r = cli("fleet", scenario(root, "fleet-mixed.json"), "--sizes", "1")
    assert_one_line_error(r, "fleet-mixed.json", "fleet.sizes", "the smallest needs 8 GPUs", "got 1 GPUs")
