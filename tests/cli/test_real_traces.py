"""Real PyTorch traces through `dvfs-sim run` (issue 17): what a user sees for a ROCm trace, a DDP trace with
non-collective records and ranks of unrelated jobs. Fixtures: tests/fixtures/pytorch/."""
import json
import os

from cli_errors import assert_one_line_error


def fixture(root, name):
    return os.path.join(root, "tests", "fixtures", "pytorch", name)


def scenario(tmp_path, trace, name="real-trace"):
    path = tmp_path / (name + ".json")
    path.write_text(json.dumps({"name": name, "trace": trace, "gpu": "h200", "policy": "max"}))
    return path


def test_a_rocm_trace_replayed_on_an_nvidia_model_warns_naming_the_device(cli, root, tmp_path):
    r = cli("run", scenario(tmp_path, fixture(root, "rocm_mi300x.json")), "-o", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    warnings = [l for l in r.stderr.splitlines() if l.startswith("dvfs-sim: warning:")]
    assert len(warnings) == 1 and "AMD Instinct MI300X" in warnings[0] and "h200" in warnings[0], r.stderr
    notes = json.loads((tmp_path / "out" / "summary.json").read_text())["notes"]
    assert len(notes) == 1 and "AMD Instinct MI300X (ROCm)" in notes[0]
    c = cli("compare", scenario(tmp_path, fixture(root, "rocm_mi300x.json")), "--policies", "max", "-o", tmp_path / "cmp")
    assert c.returncode == 0, c.stderr
    assert "dvfs-sim: warning: the trace was recorded on AMD Instinct MI300X" in c.stderr


def test_a_ddp_trace_with_wait_records_runs_and_notes_the_calls_kept_at_their_recorded_duration(cli, root, tmp_path):
    r = cli("run", scenario(tmp_path, fixture(root, "ddp_rank0_wait.json")), "--json", "-o", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["trace"]["activities"] == 4 and summary["trace"]["steps"] == 1
    assert any("coalesced x1, gather x1" in n for n in summary["notes"])
    assert "coalesced x1, gather x1" in r.stderr


def test_the_shipped_default_scenario_has_no_notes_and_prints_no_warning(cli, tmp_path):
    r = cli("run", "--json", "-o", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert "notes" not in json.loads(r.stdout)
    assert r.stderr == ""


def test_a_trace_of_another_nvidia_chip_replayed_as_recorded_warns_unless_the_scenario_names_its_gpu(cli, root, tmp_path):
    doc = json.load(open(os.path.join(root, "tests", "fixtures", "kineto_current.json")))
    doc["deviceProperties"][0]["name"] = "NVIDIA A100-SXM4-80GB"
    trace = tmp_path / "a100.json"
    trace.write_text(json.dumps(doc))
    runs = {"h200 as recorded": {"gpu": "h200"}, "h200 retargeted": {"gpu": "h200", "trace_gpu": "a100-sxm4"},
            "its own chip": {"gpu": "a100-sxm4"}}
    for label, keys in runs.items():
        path = tmp_path / "s.json"
        path.write_text(json.dumps({"name": "chip", "trace": str(trace), "policy": "max", **keys}))
        r = cli("run", path, "--json", "-o", tmp_path / "out")
        assert r.returncode == 0, r.stderr
        notes = json.loads(r.stdout).get("notes", [])
        if label == "h200 as recorded":
            assert len(notes) == 1 and "recorded on NVIDIA A100-SXM4-80GB" in notes[0], notes
            assert '"trace_gpu" ("a100-sxm4" for this chip)' in notes[0], notes  # the SXM board's model, not the PCIe one
            assert r.stderr.startswith("dvfs-sim: warning: the trace was recorded on NVIDIA A100-SXM4-80GB"), r.stderr
        else:
            assert notes == [] and r.stderr == "", (label, notes, r.stderr)


def test_ranks_of_jobs_of_different_sizes_are_refused_in_one_line(cli, root, tmp_path):
    other = tmp_path / "rank1_of_4.json"
    other.write_text(open(fixture(root, "ddp_rank1_wait.json")).read().replace('"world_size": 2', '"world_size": 4'))
    r = cli("run", scenario(tmp_path, [fixture(root, "ddp_rank0_wait.json"), str(other)]), "-o", tmp_path / "out")
    assert_one_line_error(r, "rank1_of_4.json", "distributedInfo.world_size", "world size 4 here, 2 in", "different jobs")


def test_ranks_recorded_an_hour_apart_run_with_a_warning_saying_why(cli, root, tmp_path):
    later = tmp_path / "rank1_later.json"
    later.write_text(open(fixture(root, "ddp_rank1_wait.json")).read().replace("1790857026000000000", "1790860626000000000"))
    r = cli("run", scenario(tmp_path, [fixture(root, "ddp_rank0_wait.json"), str(later)]), "--json", "-o", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert len(summary["per_gpu"]) == 2
    assert any("timelines do not overlap" in n for n in summary["notes"])
    assert "dvfs-sim: warning: rank 1 (" in r.stderr
