"""Issue 20's recorder parts on a machine without a GPU: host counters (host.csv / host.json from /proc and sysfs,
read-only), phase markers (lifecycle.json: the context manager and the automatic DataLoader-wait, validation and
checkpoint marks, with Debian's PyTorch on the CPU) and the per-phase analysis of a recording."""
import csv
import json
import os

import pytest

from dvfs_sim import lifecycle_analysis as la
from dvfs_sim.record import Recorder, host
from dvfs_sim.record.lifecycle import PhaseLog

from recorder_doubles import FakeBackend
from test_recorder import fake_nvml  # noqa: F401 (the fixture)

torch = pytest.importorskip("torch")


def test_proc_parsers_read_cumulative_counters():
    stat = "cpu  100 5 20 300 7 1 2 3 0 0\ncpu0 1 2 3 4 5 6 7 8\n"
    assert host.cpu_ticks(stat) == [105, 23, 300, 7, 3]
    disk = ("   8       0 sda 10 0 800 0 20 0 1600 0 0 0 0\n   8       1 sda1 5 0 400 0 10 0 800 0 0 0 0\n"
            "   7       0 loop0 99 0 9900 0 0 0 0 0 0 0 0\n")
    assert host.disk_bytes(disk, {"sda"}) == (800 * 512, 1600 * 512)  # partitions and loop devices left out
    net = ("Inter-|   Receive\n face |bytes packets\n    lo: 500 1 0 0 0 0 0 0 500 1 0 0 0 0 0 0\n"
           "  eth0: 1000 2 0 0 0 0 0 0 2000 3 0 0 0 0 0 0\n")
    assert host.net_bytes(net) == (1000, 2000)  # loopback left out


def test_the_samplers_cpu_is_summed_and_kept_when_a_sampler_ends_before_the_last_sample(tmp_path):
    def stat(pid, utime, stime):
        os.makedirs(tmp_path / str(pid), exist_ok=True)
        (tmp_path / str(pid) / "stat").write_text(f"{pid} (python3 -m x) S 1 1 1 0 -1 0 0 0 0 0 {utime} {stime} 2 1 20 0 1 0\n")
    stat(11, 30, 10)
    stat(12, 5, 5)
    ticks = host.SamplerTicks([11, 12], proc=str(tmp_path))
    assert ticks() == [30 + 10 + 2 + 1 + 5 + 5 + 2 + 1]
    stat(11, 50, 20)
    os.remove(tmp_path / "12" / "stat")  # the NVML sampler stopped before the host sampler's last sample
    assert ticks() == [50 + 20 + 2 + 1 + 5 + 5 + 2 + 1]


def test_rapl_zones_are_found_read_only_and_unreadable_ones_reported(tmp_path):
    z = tmp_path / "intel-rapl:0"
    (z / "intel-rapl:0:0").mkdir(parents=True)
    (z / "name").write_text("package-0\n")
    (z / "energy_uj").write_text("123456\n")
    (z / "max_energy_range_uj").write_text("262143328850\n")
    sub = tmp_path / "intel-rapl:0:0"
    sub.mkdir()
    (sub / "name").write_text("dram\n")
    (sub / "energy_uj").mkdir()  # a zone whose counter cannot be read as a file
    found, unreadable = host.rapl_domains(str(tmp_path))
    assert found == [("rapl_package_0", str(z / "energy_uj"), 262143328850)]
    assert len(unreadable) == 1 and "intel-rapl:0:0/energy_uj" in unreadable[0]
    probe = host.HostProbe(os.getpid(), powercap=str(tmp_path))
    assert probe.columns()[-1] == "rapl_package_0_uj" and probe.sample()[-1] == 123456
    assert "CPU energy not measured" not in (probe.describe()["rapl_note"] or "")
    assert "not measured" in host.HostProbe(os.getpid(), powercap=str(tmp_path / "none")).describe()["rapl_note"]


def test_phase_log_nests_and_marks_dataloader_waits_validation_and_checkpoints(tmp_path):
    log = PhaseLog()
    remove = log.install_auto(torch)
    model = torch.nn.Linear(4, 2)
    data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(12, 4)), batch_size=4)
    try:
        with log.phase("epoch 0", "train"):
            for (x,) in data:
                model(x).sum().backward()
        model.eval()
        with torch.no_grad():
            for (x,) in data:
                model(x)
        model.train()
        torch.save(model.state_dict(), tmp_path / "ckpt.pt")
    finally:
        remove()
    doc = log.to_json()
    kinds = [p["kind"] for p in doc["phases"]]
    assert doc["counts"] == {"data_wait": 8, "train": 1, "validation": 1, "checkpoint": 1}  # 3 batches + the end, twice
    train = next(p for p in doc["phases"] if p["kind"] == "train")
    waits = [p for p in doc["phases"] if p["kind"] == "data_wait"]
    assert all(p["depth"] == 1 for p in waits[:4]) and train["depth"] == 0
    assert all(p["t0_ns"] <= p["t1_ns"] for p in doc["phases"]) and "checkpoint" in kinds
    assert torch.save is not None and torch.nn.Module.train.__name__ == "train"  # hooks removed
    with pytest.raises(ValueError, match="phase kind"):
        log.begin("x", "download")


def test_exclusive_segments_give_each_instant_to_the_innermost_phase():
    ph = [{"name": "epoch", "kind": "train", "t0_ns": 0, "t1_ns": 100, "depth": 0},
          {"name": "data_wait", "kind": "data_wait", "t0_ns": 10, "t1_ns": 30, "depth": 1},
          {"name": "validation", "kind": "validation", "t0_ns": 100, "t1_ns": 150, "depth": 0},
          {"name": "data_wait", "kind": "data_wait", "t0_ns": 110, "t1_ns": 120, "depth": 1}]
    segs = la.exclusive_segments(ph, (0, 160))
    by = {}
    for a, b, k, _ in segs:
        by[k] = by.get(k, 0) + b - a
    assert by == {"train": 80, "data_wait": 20, "validation": 50, "other": 10}  # a wait inside validation is validation


def test_a_counter_updated_every_100_ms_is_spread_over_its_update_intervals_with_a_bound_at_phase_bounds():
    # read every 5 ms; the device adds 10 J every 100 ms (100 W), then 30 J every 100 ms (300 W) from t = 300 ms
    t = list(range(0, 600, 5))
    v = [10.0 * min(k // 100, 3) + 30.0 * max(0, k // 100 - 3) for k in t]
    c = la.Counter.from_updates(t, v)
    assert c.t == [0, 100, 200, 300, 400, 500]
    assert c.delta(150, 250) == pytest.approx(10.0)  # half of two 100 W intervals: their mean power, not a step
    assert c.delta(350, 450) == pytest.approx(15.0 + 15.0)
    assert la.Counter(t, v).delta(150, 250) == pytest.approx(10.0)  # read samples alone: a whole increment or none ...
    assert la.Counter(t, v).delta(160, 190) == 0.0  # ... so a short phase may see nothing
    assert c.delta(160, 190) == pytest.approx(3.0)
    # worst case: the interval (300, 400] holds 30 J, at least 100 W (0.1 J/ms) all along; a phase with 60 % of it
    # inside holds between 6 J and 26 J of it, the estimate 18 J: error at most 12 J
    assert c.bound_error(340, 1000, floor_rate=0.1) == pytest.approx(0.6 * 20.0)
    assert c.bound_error(300, 400, floor_rate=0.1) == 0.0  # bounds on update instants: exact
    assert c.bound_error(310, 320, floor_rate=0.1) == pytest.approx(0.9 * 20.0)  # both bounds in one interval
    assert c.min_rate(50) == pytest.approx(0.1)


def test_a_recording_with_host_counters_and_phases_is_analysed_per_phase(fake_nvml, tmp_path):  # noqa: F811
    import time
    out = tmp_path / "rec"
    with Recorder(out, warmup=1, profiled=2, sample_ms=2, idle_s=0.15, nvml_module="fake_pynvml", backend=FakeBackend(),
                  quiet=True, host_sample_ms=10) as rec:
        with rec.phase("copy", "staging"):
            (tmp_path / "blob").write_bytes(os.urandom(1 << 20))
        with rec.phase("epoch", "train"):
            for _ in range(4):
                time.sleep(0.05)
                rec.step()
    assert {"host.csv", "host.json", "lifecycle.json"} <= set(os.listdir(out))
    with open(out / "host.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) > 10 and int(rows[-1]["cpu_idle_ticks"]) >= int(rows[0]["cpu_idle_ticks"])
    sampler = [int(r["sampler_cpu_ticks"]) for r in rows]
    assert sampler == sorted(sampler)  # the samplers' own CPU, cumulative to the end
    meta = json.loads((out / "host.json").read_text())
    assert meta["pid"] == os.getpid() and meta["samples"] == len(rows)
    a = la.analyse(str(out))
    names = [r["name"] for r in a["top"]]
    assert names[:3] == ["idle:start", "copy", "epoch"]
    epoch = a["top"][2]
    assert epoch["time_s"] == pytest.approx(0.2, abs=0.1) and epoch["gpu_j"] > 0  # the fake card draws 500 W
    assert sum(v["time_s"] for v in a["by_kind"].values()) == pytest.approx(a["total"]["time_s"])


def _synthetic_recording(rec, spans, period_s=0.1):
    """A recording directory made of host samples every period_s over spans [(name, kind, seconds, cores of the job's
    process tree, cores of the samplers, cores of kernel threads working for the job)] (16 CPUs, 100 ticks/s)."""
    os.makedirs(rec)
    step = round(period_s * 1e9)
    ticks = {"sys": 0, "idle": 0, "tree": 0}
    host_rows, tel_rows, phases, t = [], [], [], 0
    for name, kind, seconds, tree, samplers, kernel in spans:
        phases.append({"name": name, "kind": kind, "t0_ns": t, "t1_ns": t + round(seconds * 1e9), "depth": 0})
        for _ in range(round(seconds / period_s)):
            host_rows.append([t, 0, ticks["sys"], ticks["idle"], 0, 0] + [0] * 8 + [ticks["tree"], 1, ticks["tree"]])
            tel_rows.append([t, t // 10 ** 7])  # 100 W
            busy = round((tree + samplers + kernel) * 100 * period_s)
            ticks["sys"] += busy
            ticks["idle"] += round(16 * 100 * period_s) - busy
            ticks["tree"] += round(tree * 100 * period_s)
            t += step
    host_rows.append([t, 0, ticks["sys"], ticks["idle"], 0, 0] + [0] * 8 + [ticks["tree"], 1, ticks["tree"]])
    tel_rows.append([t, t // 10 ** 7])
    for name, cols, body in (("host.csv", ["t_ns"] + host.CPU_COLUMNS + host.IO_COLUMNS + host.PROC_COLUMNS, host_rows),
                             ("telemetry.csv", ["t_ns", "energy_mj"], tel_rows)):
        with open(os.path.join(rec, name), "w", newline="") as f:
            csv.writer(f).writerows([cols] + body)
    idle = phases.pop(0)
    json.dump({"clk_tck": 100, "cpus": 16, "rapl_domains": []}, open(os.path.join(rec, "host.json"), "w"))
    json.dump({"phases": [idle]}, open(os.path.join(rec, "run.json"), "w"))
    json.dump({"phases": phases, "counts": {}}, open(os.path.join(rec, "lifecycle.json"), "w"))


def test_the_job_cpu_never_loses_its_own_processes_cpu_when_the_samplers_cost_less_than_at_rest(tmp_path):
    # at rest (no CUDA context) the NVML sampler costs 0.9 core; once the job holds the GPU it costs 0.7 core. A
    # checkpoint: the job's process 0.7 core for 4 s. A staging sync: the process 1 core, the kernel's writeback 0.5
    # core for the job, the samplers back at 0.9.
    _synthetic_recording(str(tmp_path / "job" / "recording"), [("idle:start", "idle", 2.0, 0.0, 0.9, 0.0),
                                                               ("ckpt", "checkpoint", 4.0, 0.7, 0.7, 0.0),
                                                               ("stage", "staging", 4.0, 1.0, 0.9, 0.5)])
    (tmp_path / "job" / "job.json").write_text("{}")
    fl = _load_fit_lifecycle()
    a = fl.job("job", str(tmp_path))
    assert a["sampler_core_per_s"] == pytest.approx(0.9)
    ck, st = (next(r for r in a["top"] if r["name"] == n) for n in ("ckpt", "stage"))
    # the reduction before split.json's cpu_measure: all CPUs less the samplers' rest rate, 2.0 core-s, below the
    # 2.8 core-s the job's own process used in the same samples
    assert ck["cpu_busy_core_s"] - 0.9 * ck["time_s"] == pytest.approx(2.0)
    assert ck["proc_cpu_core_s"] == pytest.approx(2.8)
    assert la.job_cpu_core_s(ck, a["sampler_core_per_s"]) == pytest.approx(2.8)
    assert fl.job_cpu(a, ck) == pytest.approx(2.8)
    # kernel work beyond the samplers' rest rate still counts: 4 core-s of the process + 2 of writeback
    assert fl.job_cpu(a, st) == pytest.approx(6.0)


def _load_fit_lifecycle():
    import importlib.util
    from repo_paths import ROOT
    import sys
    spec = importlib.util.spec_from_file_location("fit_lifecycle", os.path.join(ROOT, "models", "lifecycle", "fit_lifecycle.py"))
    mod = importlib.util.module_from_spec(spec)
    path = sys.path[:]
    try:
        spec.loader.exec_module(mod)
    finally:  # the script puts the source tree's python/ first: later tests' sweep workers would import from there
        sys.path[:] = path
    return mod


def test_the_staging_copies_job_marks_every_copy_and_its_sync_and_the_fit_separates_per_gb_from_per_file(fake_nvml, tmp_path):  # noqa: F811
    import subprocess
    import sys
    from repo_paths import ROOT
    out = tmp_path / "job"
    env = dict(os.environ, DVFS_NVML="fake_pynvml")
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "python"), env.get("PYTHONPATH", "")])
    subprocess.run([sys.executable, os.path.join(ROOT, "traces", "recorder", "lifecycle", "staging_copies_job.py"), "--out", str(out),
                    "--scale", str(1 / 4096), "--files-scale", "0.01", "--repeats", "2", "--rest-s", "0.05", "--idle-s", "0.1",
                    "--matrix", "16", "--steps", "1:1"], check=True, env=env, capture_output=True, timeout=240)
    job = json.loads((out / "job.json").read_text())
    sets = {s["name"]: s for s in job["sets"]}
    assert [c["set"] for c in job["copies"]] == ["big-1", "mid-8", "small-2k", "tiny-20k", "tiny-20k", "small-2k", "mid-8", "big-1"]
    for c in job["copies"]:
        s = sets[c["set"]]
        assert c["bytes"] == s["files"] * s["file_bytes"] and c["call"] == ("copyfile" if c["set"] == "big-1" else "copytree")
        for k in ("t_ns", "cpu_ns"):
            assert c["start"][k] <= c["copied"][k] <= c["synced"][k]
        dst = out / "local" / f"{c['set']}-{c['repeat']}"
        assert sum(os.path.getsize(dst / n) for n in os.listdir(dst)) == c["bytes"]
    a = la.analyse(str(out / "recording"))
    assert [r["name"] for r in a["top"] if r["kind"] == "staging"] == [c["phase"] for c in job["copies"]]
    assert all(r["kind"] == "idle" for r, n in zip(a["top"], a["top"][1:]) if n["kind"] == "staging")  # a rest before each copy
    # the fit: CPU times made of a known per GB and per file are recovered from the job's (GB, files)
    for c in job["copies"]:
        c["copied"]["cpu_ns"] = c["start"]["cpu_ns"] + round((0.4 * c["bytes"] / 1e9 + 60e-6 * c["files"]) * 1e9)
    cf = _load_fit_lifecycle().copy_fit({"job": job, "dir": str(out / "recording")})
    assert cf["per_gb"] == pytest.approx(0.4, rel=1e-3) and cf["per_file"] == pytest.approx(60e-6, rel=1e-3)


def _run_job(script, out, *args):
    import subprocess
    import sys
    from repo_paths import ROOT
    env = dict(os.environ, DVFS_NVML="fake_pynvml")
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "python"), env.get("PYTHONPATH", "")])
    subprocess.run([sys.executable, os.path.join(ROOT, "traces", "recorder", "lifecycle", script), "--out", str(out), *args,
                    "--repeats", "2", "--rest-s", "0.05", "--idle-s", "0.1", "--matrix", "16", "--steps", "1:1"],
                   check=True, env=env, capture_output=True, timeout=240)
    return json.loads((out / "job.json").read_text())


def test_the_save_probe_marks_every_save_and_its_fsync_and_a_day_node_is_fitted_on_the_day_probe(fake_nvml, tmp_path):  # noqa: F811
    sp_job = _run_job("save_probe_job.py", tmp_path / "sp", "--scale", "0.0005", "--files-scale", "0.005")
    assert [s["set"] for s in sp_job["saves"]] == ["save-50M", "save-200M", "save-800M", "save-2200M",
                                                   "save-2200M", "save-800M", "save-200M", "save-50M"]
    for s in sp_job["saves"]:
        for k in ("t_ns", "cpu_ns"):
            assert s["start"][k] <= s["saved"][k] <= s["synced"][k]
        assert s["bytes"] >= next(x["tensor_bytes"] for x in sp_job["sets"] if x["name"] == s["set"]) and s["files"] == 1
    assert [c["sources_synced"] for c in sp_job["diagnostic_copies"]] == [True, False]
    sp = la.analyse(str(tmp_path / "sp" / "recording"))
    assert [r["name"] for r in sp["top"] if r["kind"] == "checkpoint"] == [s["phase"] for s in sp_job["saves"]]
    assert [r["name"] for r in sp["top"] if r["kind"] == "staging"] == [c["phase"] for c in sp_job["diagnostic_copies"]]
    sc_job = _run_job("staging_copies_job.py", tmp_path / "sc", "--scale", str(1 / 4096), "--files-scale", "0.01")
    fl = _load_fit_lifecycle()
    sc = fl.job("sc", str(tmp_path))
    sp = fl.job("sp", str(tmp_path))
    # known figures: torch.save 0.5 core-s/GB with 0.1 s/GB off the CPU; syncs at 2 GB/s + 5 us per file
    for s in sp["job"]["saves"]:
        gb = s["bytes"] / 1e9
        s["saved"]["cpu_ns"] = s["start"]["cpu_ns"] + round(0.5 * gb * 1e9)
        s["saved"]["t_ns"] = s["start"]["t_ns"] + round(0.6 * gb * 1e9)
        s["synced"]["t_ns"] = s["saved"]["t_ns"] + round((s["bytes"] / 2e9 + 5e-6) * 1e9)
    for c in sc["job"]["copies"]:
        c["synced"]["t_ns"] = c["copied"]["t_ns"] + round((c["bytes"] / 2e9 + 5e-6 * c["files"]) * 1e9)
    with open(fl.NODE) as f:
        node1 = json.load(f)
    node2, cc = fl.fit_node_day(node1, sc, sp)
    local = node2["storage"][0]
    assert local["write_bps"] == pytest.approx(2e9, rel=1e-3) and local["sync_s_per_file"] == pytest.approx(5e-6, rel=1e-3)
    assert cc["checkpoint_per_gb"] == pytest.approx(0.5, rel=1e-3) and node2["gpu_d2h_bps"] == pytest.approx(10e9, rel=1e-3)
    assert node2["gpu_idle_w"] == round(sc["gpu_deep_idle_w"], 1) and node2["cpu_pstates"] == node1["cpu_pstates"]
    assert node2["storage"][1] == node1["storage"][1]  # what the probe does not measure stays day 1's
    assert cc["copy_fit"]["per_gb"] == fl.copy_fit(sc)["per_gb"]
