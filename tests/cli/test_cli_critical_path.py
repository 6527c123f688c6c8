"""Command-line contract of the critical-path module (issue 6): validate --perseus and plan files."""
import gzip
import json
import os
import shutil

from cli_errors import assert_one_line_error


def _copy_runs(root, tmp_path, plans):
    src = os.path.join(root, "traces", "perseus-runs", "a100_gpt3-xl_pp4")
    dst = tmp_path / "a100_custom"
    dst.mkdir()
    for n in plans:
        for kind in ("sched", "prof"):
            shutil.copy(os.path.join(src, f"{n}.{kind}.json.gz"), dst)
    return dst


def test_validate_perseus_prints_every_plan_and_its_mape(cli, root, tmp_path):
    runs = _copy_runs(root, tmp_path, [0, 1, 2, 3, 36, 37])
    r = cli("validate", "--perseus", runs, "--no-frontier")
    assert r.returncode == 0, r.stderr
    assert "6 plans" in r.stdout and "MAPE over all 6 plans" in r.stdout and "held out" in r.stdout
    out = tmp_path / "v.json"
    r = cli("validate", "--perseus", runs, "--no-frontier", "--json", "-o", out)
    rep = json.loads(r.stdout)
    assert json.loads(out.read_text()) == rep
    assert [row["plan"] for row in rep["variants"][0]["rows"]] == [0, 1, 2, 3, 36, 37]
    assert rep["anchor_plans"] == [0, 1]


def test_validate_perseus_bad_input_is_one_line_and_exit_code_2(cli, root, tmp_path):
    assert_one_line_error(cli("validate", "--perseus", tmp_path), "expected plans N.sched.json")
    runs = _copy_runs(root, tmp_path, [0, 2])
    # A plan whose rank has the wrong number of instructions.
    with gzip.open(runs / "2.sched.json.gz", "rt") as f:
        plan = json.load(f)
    plan[1]["power_states"] = plan[1]["power_states"][:-3]
    with gzip.open(runs / "2.sched.json.gz", "wt") as f:
        json.dump(plan, f)
    assert_one_line_error(cli("validate", "--perseus", runs, "--no-frontier"), "2.sched.json.gz", "[1].power_states",
                    "expected 256 entries", "got 517")
    # A clock the model does not have.
    plan[1]["power_states"] = [1411] * 520
    with gzip.open(runs / "2.sched.json.gz", "wt") as f:
        json.dump(plan, f)
    assert_one_line_error(cli("validate", "--perseus", runs, "--no-frontier"), "[1].power_states", "1411", "not an SM clock")
    # Malformed JSON.
    (runs / "2.sched.json.gz").unlink()
    (runs / "2.sched.json").write_text('[{"rank": 0, "power_st')
    assert_one_line_error(cli("validate", "--perseus", runs, "--no-frontier"), "2.sched.json", "malformed JSON")
    assert_one_line_error(cli("validate", "--perseus", runs, "--quantum", "0"), "--quantum")
    # Each ran before: a frontier "internal error", a cap of 0 read as none, 1e308 W, a 13,084 % energy MAPE, a
    # "computation curve" error naming no option.
    assert_one_line_error(cli("validate", "--perseus", runs, "--quantum", "1e-20"), "--quantum", "expected a time quantum from 1e-9 to 1 s")
    assert_one_line_error(cli("validate", "--perseus", runs, "--power-cap", "0"), "--power-cap", "expected a power limit > 0 W")
    assert_one_line_error(cli("validate", "--perseus", runs, "--power-cap", "1e308"), "--power-cap", "and at most its cap")
    assert_one_line_error(cli("validate", "--perseus", runs, "--p-blocking", "1e6"), "--p-blocking", "expected at most")
    assert_one_line_error(cli("validate", "--perseus", runs, "--min-clock", "1411"), "--min-clock", "highest SM clock")
    other = tmp_path / "h100_runs"
    other.mkdir()
    assert_one_line_error(cli("validate", "--perseus", other), "expected plans")


def test_validate_perseus_models_only_first_and_fitted_variants_labelled(cli, root, tmp_path):
    # A run set named as in traces/perseus-baselines/workloads.json gets the models-only prediction first.
    src = os.path.join(root, "traces", "perseus-runs", "a100_gpt3-xl_pp4")
    runs = tmp_path / "a100_gpt3-xl_pp4"
    runs.mkdir()
    for n in (0, 1, 2, 3, 4, 5):
        for kind in ("sched", "prof"):
            shutil.copy(os.path.join(src, f"{n}.{kind}.json.gz"), runs)
    r = cli("validate", "--perseus", runs, "--no-frontier")
    assert r.returncode == 0, r.stderr
    assert r.stdout.index("== models only") < r.stdout.index("== measured anchor") < r.stdout.index("== board fit")
    assert "none of them seen by any fit" in r.stdout and "fitted on plans [2,4]" in r.stdout
    assert "run set in models/calibration/perseus-split.json: held_out" in r.stdout
    r = cli("validate", "--perseus", runs, "--no-frontier", "--no-fits", "--json")
    rep = json.loads(r.stdout)
    assert [v["name"] for v in rep["variants"]] == ["models only"]
    assert rep["gpu"] == "a100-pcie"
    bad = tmp_path / "w.json"
    bad.write_text('{"run_sets": {"a100_gpt3-xl_pp4": {"board": "a100-pcie"}}, "pipeline_model": {}}')
    assert_one_line_error(cli("validate", "--perseus", runs, "--no-frontier", "--workloads", bad), "w.json")


def test_perseus_runs_latency_beyond_a_second_is_one_line(cli, root):
    # --p2p-latency 1e308 overflowed SimGrid's clock and aborted (exit 134)
    runs = os.path.join(root, "traces", "perseus-runs", "a100_gpt3-xl_pp4")
    for v in ("1e308", "2", "-1"):
        assert_one_line_error(cli("validate", "--perseus-runs", runs, "--p2p-latency", v), "--p2p-latency", "from 0 to 1 s")


def test_validate_perseus_write_plans_makes_its_directory_or_names_the_option(cli, root, tmp_path):
    runs = _copy_runs(root, tmp_path, [0, 1, 2])
    out = tmp_path / "plans" / "nested"  # missing, two levels: made, as -o's directory is
    r = cli("validate", "--perseus", runs, "--write-plans", out)
    assert r.returncode == 0, r.stderr
    assert (out / "no-slowdown.sched.json").is_file()
    not_a_dir = tmp_path / "a-file"
    not_a_dir.write_text("x")
    assert_one_line_error(cli("validate", "--perseus", runs, "--write-plans", not_a_dir), "a-file", "--write-plans", "expected a directory")
