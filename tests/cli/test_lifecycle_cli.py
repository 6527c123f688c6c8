"""`dvfs-sim run` on the shipped lifecycle scenarios (issue 20): the two recorded H200 jobs phase by phase."""
import json
import os

from cli_errors import assert_one_line_error
from conftest import ROOT


def test_the_recorded_cnn_job_runs_phase_by_phase_with_cpu_and_gpu_energy_and_its_policies(cli, tmp_path):
    r = cli("run", os.path.join(ROOT, "scenarios", "lifecycle", "cnn-io.json"), "-o", tmp_path)
    assert r.returncode == 0, r.stderr
    assert "lifecycle cnn-io" in r.stdout and "policy GPU 1200 MHz" in r.stdout
    s = json.loads((tmp_path / "summary.json").read_text())
    assert s["kind"] == "lifecycle"
    assert [p["kind"] for p in s["phases"][:5]] == ["staging", "idle", "train", "validation", "checkpoint"]
    t = s["totals"]
    assert t["cpu_j"] > 0 and t["gpu_j"] > 0
    assert abs(t["share_of_phase_cpu_j"] + t["share_of_phase_gpu_j"] + t["share_of_phase_storage_j"]
               + t["share_of_phase_network_j"] - 1) < 1e-9
    assert abs(sum(p["time_s"] for p in s["phases"]) - t["time_s"]) < 1e-6
    staged, in_place = s["policies"][2], s["policies"][3]
    assert staged["dataset_on"] == in_place["dataset_on"] == "shared" and in_place["staging"] == "skip"
    # On shared storage with a per-file latency, decoding straight from it is slower than staging first.
    assert in_place["totals"]["time_s"] > staged["totals"]["time_s"]


def test_a_lifecycle_scenario_with_a_bad_field_exits_2_with_one_line(cli, tmp_path):
    doc = json.load(open(os.path.join(ROOT, "scenarios", "lifecycle", "llm-finetune.json")))
    doc["lifecycle"]["node"] = os.path.join(ROOT, "models", "lifecycle", "h200-node.json")
    for p in doc["lifecycle"]["phases"]:
        if "trace" in p:
            p["trace"] = os.path.join(ROOT, "traces", "recordings", "h200-lifecycle", "llm-finetune", "recording")
    doc["lifecycle"]["phases"][2]["workers"] = -1
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    assert_one_line_error(cli("run", path), "bad.json", "lifecycle.phases[2].workers")


def test_a_lifecycle_output_folder_that_is_a_file_exits_2_instead_of_writing_nothing(cli, tmp_path):
    # the summary went nowhere, yet the run exited 0 and printed "results: .../empty.json/summary.json"
    empty = tmp_path / "empty.json"
    empty.write_text("")
    r = cli("run", os.path.join(ROOT, "scenarios", "lifecycle", "day2-save-probe.json"), "-o", empty)
    assert_one_line_error(r, str(empty), "cannot write result files")
    assert empty.read_text() == ""
