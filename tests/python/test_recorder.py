"""The recorder (`python3 -m dvfs_sim.record`, dvfs_sim.record.Recorder) on a machine without a GPU:
a fake NVML module (fake_nvml/fake_pynvml.py) and a PyTorch double stand in for the card, so that the
step bounds, phases, files, read-only NVML use and errors are checked here; the real card is exercised
by the H200 recording shipped in traces/recordings/."""
import csv
import gzip
import json
import os
import subprocess
import sys

import pytest

from dvfs_sim.record import Recorder, RecorderError
from dvfs_sim.record.__main__ import parse_command

from recorder_doubles import FakeBackend
from repo_paths import BIN, ROOT

FAKE_NVML_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_nvml")


@pytest.fixture
def fake_nvml(monkeypatch, tmp_path):
    """The fake NVML importable here and in the sampler process; returns the setter log's path."""
    monkeypatch.syspath_prepend(FAKE_NVML_DIR)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([FAKE_NVML_DIR, os.environ.get("PYTHONPATH", "")]))
    log = tmp_path / "setters.log"
    monkeypatch.setenv("FAKE_NVML_SETTER_LOG", str(log))
    return log


def record_cli(tmp_path, *args, env=None, script="print('trained')"):
    train = tmp_path / "train.py"
    train.write_text(script)
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([FAKE_NVML_DIR, e.get("PYTHONPATH", "")])
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "dvfs_sim.record", "-o", str(tmp_path / "rec"), *args, "--",
                           "python3", str(train)], capture_output=True, text=True, env=e, timeout=120)


def test_recorder_without_nvml_bindings_exits_2_with_one_line(tmp_path):
    r = record_cli(tmp_path, "--nvml-module", "no_such_nvml_module")
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "NVML bindings (no_such_nvml_module" in lines[0] and "nvidia-ml-py" in lines[0], lines
    assert not (tmp_path / "rec").exists()


def test_recorder_without_a_gpu_or_with_a_wrong_index_exits_2(tmp_path):
    r = record_cli(tmp_path, "--nvml-module", "fake_pynvml", env={"FAKE_NVML_GPUS": "0"})
    assert r.returncode == 2 and r.stderr.strip() == "dvfs_sim.record: NVML sees no NVIDIA GPU on this machine"
    r = record_cli(tmp_path, "--nvml-module", "fake_pynvml", "--gpu", "3")
    assert r.returncode == 2 and "--gpu 3: expected an NVML GPU index in 0..0" in r.stderr


def test_recorder_cli_rejects_bad_arguments(tmp_path):
    r = subprocess.run([sys.executable, "-m", "dvfs_sim.record", "-o", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 2 and "expected the training command after --" in r.stderr
    r = record_cli(tmp_path, "--steps", "0:3")
    assert r.returncode == 2 and "at least 1 warm-up and 1 profiled step" in r.stderr
    assert parse_command(["python3", "-m", "pkg.train", "--lr", "1"]) == ("module", "pkg.train", ["pkg.train", "--lr", "1"])
    with pytest.raises(RecorderError, match="no such training script"):
        parse_command(["python3", str(tmp_path / "missing.py")])
    with pytest.raises(RecorderError, match="interpreter options"):
        parse_command(["python3", "-u", "train.py"])


def run_fake_training(rec, steps, step_s=0.06):
    import time
    for _ in range(steps):
        time.sleep(step_s)  # the "training step"
        if not rec.step():
            break


@pytest.mark.parametrize("profiler_drops_markers", [False, True])
def test_recorder_writes_the_recording_layout_and_validate_reads_it(fake_nvml, tmp_path, profiler_drops_markers):
    out = tmp_path / "rec"
    backend = FakeBackend(drop_markers=profiler_drops_markers)
    with Recorder(out, warmup=2, profiled=4, sample_ms=2, idle_s=0.2, nvml_module="fake_pynvml", backend=backend,
                  quiet=True) as rec:
        run_fake_training(rec, steps=20)
    assert rec.done and rec.steps_seen == 6  # stopped asking for steps once the profiled ones were recorded
    assert sorted(os.listdir(out)) == ["host.csv", "host.json", "run.json", "telemetry.csv", "trace.json.gz"]
    # The profiler starts after the warm-up and stops after the last profiled step; a mark at each step bound,
    # no range left open across steps (it would not nest with the optimizer's own range).
    assert backend.calls.index("start_profiler") < backend.calls.index("stop_profiler")
    assert [m[0] for m in backend.marks] == [f"dvfs_sim.step_bound#{i}" for i in range(5)]
    assert backend.ranges == []

    doc = json.loads((out / "run.json").read_text())
    steps = doc["run"]["profiled_steps"]
    assert len(steps) == 4
    for a, b in zip(steps, steps[1:]):
        assert a["t0_ns"] < a["t1_ns"] == b["t0_ns"] < b["t1_ns"]
    assert [p["name"] for p in doc["phases"]] == ["idle:start", "train:until_profiled", "train:profiled",
                                                  "train:after_profiled", "idle:end"]
    assert doc["device"]["name"] == "NVIDIA H200 (fake)" and doc["device"]["supported_mem_mhz"] == [3201, 2201]
    # which card it was: identity getters read where the bindings have them, null where NVML says not supported
    dev = doc["device"]
    assert dev["uuid"] == "GPU-00000000-fake-0000-0000-000000000000" and dev["serial"] == "1650000000000"
    assert dev["vbios"] is None and dev["board_part_number"] is None and dev["pci_bus_id"] is None
    # The trace was checked against the steps: every step holds its 20 kernels, whichever way it was placed.
    check = doc["run"]["trace_check"]
    assert check["kernels_per_step"] == [20] * 4 and check["kernels_outside"] == 0
    assert check["placed_by"] == ("bounds" if profiler_drops_markers else "markers")
    # 500 W over ~0.24 s of 60 ms steps, through a counter that updates every 100 ms: the window is resolved
    # (>= 2 updates), its steps are not.
    ec = doc["run"]["energy_counter"]
    assert ec["update_interval_s"] == pytest.approx(0.1, rel=0.05)
    assert ec["window_resolved"] and not ec["per_step_resolved"] and ec["per_step_energy_j"] is None
    assert ec["window_mean_power_w"] == pytest.approx(500, rel=0.2)
    assert doc["run"]["profiled_energy_j"] == ec["window_energy_j"]

    with open(out / "telemetry.csv") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["t_ns", "energy_mj", "power_mw", "power_instant_mw", "sm_mhz", "mem_mhz", "util_gpu",
                             "util_mem", "temp_c", "throttle_reasons"]
    assert int(rows[0]["t_ns"]) < steps[0]["t0_ns"] and int(rows[-1]["t_ns"]) > steps[-1]["t1_ns"]
    with gzip.open(out / "trace.json.gz") as f:
        trace = json.load(f)
    assert "baseTimeNanoseconds" in trace
    assert sorted(e["name"] for e in trace["traceEvents"] if e["name"].startswith("step")) == [f"step{i}" for i in range(4)]

    r = subprocess.run([BIN, "validate", str(out), "--gpu", "h200", "--json"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    native = rep["clock_sources"][0]
    assert len(native["steps"]) == 4
    # validate holds epoch nanoseconds (~1.8e18) in doubles, whose step there is 256 ns: four steps' bounds agree to ~1 us
    assert native["total"]["measured_time_s"] == pytest.approx((steps[-1]["t1_ns"] - steps[0]["t0_ns"]) / 1e9, abs=2e-6)
    assert rep["energy_counter"]["steps_resolved"] == 0 and rep["energy_counter"]["window_resolved"]
    assert not fake_nvml.exists(), "the recorder called an NVML setter: " + fake_nvml.read_text()


def test_recorder_refuses_a_trace_that_disagrees_with_its_steps(fake_nvml, tmp_path):
    """A step whose GPU work is not in the trace: one line naming the step, the files kept for a look."""
    with pytest.raises(RecorderError) as e:
        with Recorder(tmp_path / "rec", warmup=1, profiled=3, idle_s=0, nvml_module="fake_pynvml",
                      backend=FakeBackend(empty_steps={1}), quiet=True) as rec:
            run_fake_training(rec, steps=10, step_s=0.01)
    msg = str(e.value)
    assert "not usable" in msg and "step1 launched no GPU work (1 of 3 steps empty)" in msg and "\n" not in msg
    assert (tmp_path / "rec" / "run.json").exists() and (tmp_path / "rec" / "trace.json.gz").exists()


def test_recorder_needs_a_profiled_step_and_keeps_a_partial_run(fake_nvml, tmp_path):
    with pytest.raises(RecorderError, match=r"the training made 2 step\(s\); a recording needs warm-up \(3\)"):
        with Recorder(tmp_path / "short", warmup=3, profiled=2, idle_s=0, nvml_module="fake_pynvml",
                      backend=FakeBackend(), quiet=True) as rec:
            run_fake_training(rec, steps=2, step_s=0.01)
    with Recorder(tmp_path / "partial", warmup=1, profiled=5, idle_s=0, nvml_module="fake_pynvml",
                  backend=FakeBackend(), quiet=True) as rec:
        run_fake_training(rec, steps=3, step_s=0.01)
    partial = json.loads((tmp_path / "partial" / "run.json").read_text())
    assert len(partial["run"]["profiled_steps"]) == 2
    profiled = next(p for p in partial["phases"] if p["name"] == "train:profiled")
    assert profiled["t1_ns"] == partial["run"]["profiled_steps"][-1]["t1_ns"]
    for bad in ({"warmup": 0}, {"profiled": 0}, {"sample_ms": 0}):
        with pytest.raises(RecorderError):
            Recorder(tmp_path / "x", **bad)


def test_recorder_stops_sampling_and_writes_no_run_json_when_training_fails(fake_nvml, tmp_path):
    with pytest.raises(ZeroDivisionError):
        with Recorder(tmp_path / "failed", warmup=1, profiled=3, idle_s=0, nvml_module="fake_pynvml",
                      backend=FakeBackend(), quiet=True) as rec:
            rec.step()
            1 / 0
    assert not (tmp_path / "failed" / "run.json").exists()
    assert rec.finished and rec._sampler.proc is None  # the sampler process was stopped


def test_recorder_with_pytorch_on_the_cpu(fake_nvml, tmp_path):
    """The real PyTorch backend (profiler, ranges, trace export) where PyTorch is installed; a CPU trace
    has no kernels, so validate rejects it for that reason only."""
    torch = pytest.importorskip("torch")
    from dvfs_sim.examples import train_gpt
    out = tmp_path / "cpu"
    with Recorder(out, warmup=1, profiled=2, idle_s=0, nvml_module="fake_pynvml", quiet=True) as rec:
        a = train_gpt.parse_args(["--preset", "tiny"])
        model = train_gpt.build_model(torch, a)
        opt = torch.optim.AdamW(model.parameters())
        idx = torch.randint(0, a.vocab, (a.batch, a.seq))
        while not rec.done:
            with torch.profiler.record_function("forward"):
                loss = model(idx, idx)
            loss.backward()
            opt.step()
            rec.step()
    with gzip.open(out / "trace.json.gz") as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc  # PyTorch < 2 writes a bare list
    names = {e.get("name") for e in events}
    assert {"step0", "step1", "forward", "layer0.attn", "layer1.mlp", "lm_head"} <= names
    r = subprocess.run([BIN, "validate", str(out), "--gpu", "h200"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "trace.json.gz: traceEvents: no device activity" in r.stderr, r.stderr


def test_recorder_cli_runs_the_example_script_and_marks_its_optimizer_steps(tmp_path):
    """`python3 -m dvfs_sim.record -- python3 train_gpt.py` on the CPU: steps come from PyTorch's global
    optimizer hook (2.0 and later) or, on Debian's 1.13, from Optimizer._optimizer_step_code."""
    pytest.importorskip("torch")
    example = os.path.join(ROOT, "python", "dvfs_sim", "examples", "train_gpt.py")
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([FAKE_NVML_DIR, e.get("PYTHONPATH", "")])
    out = tmp_path / "rec"
    r = subprocess.run([sys.executable, "-m", "dvfs_sim.record", "-o", str(out), "--steps", "1:2", "--idle-s", "0",
                        "--nvml-module", "fake_pynvml", "--", "python3", example, "--preset", "tiny", "--steps", "50"],
                       capture_output=True, text=True, env=e, timeout=120)
    assert r.returncode == 0, r.stderr
    doc = json.loads((out / "run.json").read_text())
    assert len(doc["run"]["profiled_steps"]) == 2 and doc["run"]["steps_seen"] == 3  # stopped the 50-step script
    assert doc["run"]["step_source"] == "optimizer"
    assert doc["run"]["recorder"].startswith("python3 -m dvfs_sim.record -o ")
