"""The recorder on scripts written as a user would, without dvfs-sim in mind (traces/recorder/user_scripts/),
run unchanged on the CPU with this machine's PyTorch (Debian's 1.13 here, 2.x elsewhere) and a fake NVML: the
steps it finds (optimizer steps, gradient accumulation, an inference loop with no optimizer) and the trace
it writes, checked against run.json. The same scripts recorded on an H200 are in traces/recordings/h200-user-scripts."""
import collections
import gzip
import json
import os
import subprocess
import sys

import pytest

from repo_paths import ROOT

FAKE_NVML_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_nvml")
SCRIPTS = os.path.join(ROOT, "traces", "recorder", "user_scripts")


def record(tmp_path, script, *script_args, recorder_args=()):
    pytest.importorskip("torch")
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([FAKE_NVML_DIR, e.get("PYTHONPATH", "")])
    out = tmp_path / "rec"
    r = subprocess.run([sys.executable, "-m", "dvfs_sim.record", "-o", str(out), "--idle-s", "0.2", "--nvml-module",
                        "fake_pynvml", *recorder_args, "--", "python3", os.path.join(SCRIPTS, script), *script_args],
                       capture_output=True, text=True, env=e, timeout=300)
    return r, out


def ops_per_step(out, op):
    """How many `op` events start inside each host `step<i>` range of the written trace."""
    with gzip.open(out / "trace.json.gz") as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    steps = {e["name"]: (e["ts"], e["ts"] + e["dur"]) for e in events
             if e.get("cat") == "user_annotation" and e["name"].startswith("step") and e["name"][4:].isdigit()}
    count = collections.Counter()
    for e in events:
        if e.get("name") == op and e.get("ph") == "X":
            for name, (a, b) in steps.items():
                if a <= e["ts"] < b:
                    count[name] += 1
    return [count[f"step{i}"] for i in range(len(steps))]


def test_a_cnn_training_script_records_one_step_per_optimizer_step(tmp_path):
    r, out = record(tmp_path, "cnn_train.py", "--epochs", "1", "--batch-size", "16", "--width", "4", "--samples", "320")
    assert r.returncode == 0, r.stderr
    run = json.loads((out / "run.json").read_text())["run"]
    assert run["step_source"] == "optimizer" and len(run["profiled_steps"]) == 6
    assert run["trace_check"]["placed_by"] == "markers"
    assert "6 steps checked against the trace" in r.stderr
    assert ops_per_step(out, "aten::convolution") == [6] * 6  # six conv layers per forward, one forward per step


def test_gradient_accumulation_makes_one_step_of_several_forward_passes(tmp_path):
    r, out = record(tmp_path, "lm_grad_accum.py", "--layers", "1", "--hidden", "32", "--heads", "2", "--seq-len", "16",
                    "--vocab", "100", "--per-device-batch", "2", "--gradient-accumulation-steps", "3", "--max-steps",
                    "10", "--warmup-steps", "2", recorder_args=("--steps", "2:3"))
    assert r.returncode == 0, r.stderr
    run = json.loads((out / "run.json").read_text())["run"]
    assert run["step_source"] == "optimizer" and len(run["profiled_steps"]) == 3
    assert ops_per_step(out, "aten::embedding") == [2 * 3] * 3  # token + position embedding, 3 micro-batches


def test_an_inference_loop_without_an_optimizer_records_its_forwards_as_steps(tmp_path):
    r, out = record(tmp_path, "infer_loop.py", "--batches", "40", "--batch", "2", "--seq", "8", "--d-model", "64",
                    "--layers", "1")
    assert r.returncode == 0, r.stderr
    run = json.loads((out / "run.json").read_text())["run"]
    assert run["step_source"] == "forward" and len(run["profiled_steps"]) == 6
    assert ops_per_step(out, "aten::embedding") == [1] * 6


def test_a_loop_with_gradients_on_and_no_optimizer_says_how_to_mark_its_steps(tmp_path):
    script = tmp_path / "eval_with_grad.py"
    script.write_text("import torch\nm = torch.nn.Linear(4, 4)\nfor _ in range(20):\n    m(torch.randn(2, 4)).sum()\n")
    pytest.importorskip("torch")
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([FAKE_NVML_DIR, e.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, "-m", "dvfs_sim.record", "-o", str(tmp_path / "rec"), "--idle-s", "0",
                        "--nvml-module", "fake_pynvml", "--", "python3", str(script)],
                       capture_output=True, text=True, env=e, timeout=120)
    assert r.returncode == 2
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("dvfs_sim.record: the training made 0 step(s)") and "--step-on forward" in last
    r = subprocess.run([sys.executable, "-m", "dvfs_sim.record", "-o", str(tmp_path / "rec"), "--idle-s", "0",
                        "--step-on", "forward", "--nvml-module", "fake_pynvml", "--", "python3", str(script)],
                       capture_output=True, text=True, env=e, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "rec" / "run.json").read_text())["run"]["step_source"] == "forward"


@pytest.mark.parametrize("name,steps,window_resolved", [("vit-b32", 6, True), ("vit-b256", 6, True), ("cnn", 6, False),
                                                        ("infer", 6, True)])
def test_the_h200_recordings_of_the_user_scripts_validate(name, steps, window_resolved):
    """The scripts above recorded unchanged on an H200 (PyTorch 2.11): trace, run.json and validate agree."""
    from dvfs_sim.record.trace_file import check_steps
    from repo_paths import BIN
    d = os.path.join(ROOT, "traces", "recordings", "h200-user-scripts", name)
    run = json.load(open(os.path.join(d, "run.json")))["run"]
    with gzip.open(os.path.join(d, "trace.json.gz")) as f:
        check = check_steps(json.load(f), len(run["profiled_steps"]))
    assert check["device"] and min(check["kernels_per_step"]) > 100 and check["kernels_outside"] == 0
    r = subprocess.run([BIN, "validate", d, "--gpu", "h200", "--json"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert len(rep["clock_sources"][0]["steps"]) == steps == len(run["profiled_steps"])
    assert rep["energy_counter"]["steps_resolved"] == 0  # 20-76 ms steps against ~100 ms counter updates
    assert rep["energy_counter"]["window_resolved"] == window_resolved == run["energy_counter"]["window_resolved"]
