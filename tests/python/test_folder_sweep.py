"""The day-3 folder sweep (split.json day3): its probe job's marks on a machine without a GPU, and the fits of the
staging copy's folder-size growth and recently-freed-inode scan (models/lifecycle/folder_sweep_fit.py)."""
import json
import os
import subprocess
import sys

import pytest

from repo_paths import ROOT

sys.path.insert(0, os.path.join(ROOT, "models", "lifecycle"))
import folder_sweep_fit as fsf  # noqa: E402

pytest.importorskip("torch")


def scanned_one_by_one(n, k, per_group):
    return sum(per_group - j % per_group for j in range(k, k + n))


@pytest.mark.parametrize("n,k,per_group", [(0, 0, 8), (1, 0, 8), (8, 0, 8), (20, 3, 8), (5, 7, 8), (44000, 0, 8192),
                                           (5000, 44001, 8192), (3, 10, 1)])
def test_the_inodes_scanned_add_up_file_by_file_group_by_group(n, k, per_group):
    assert fsf.recent_free_inodes_scanned(n, k, per_group) == pytest.approx(scanned_one_by_one(n, k, per_group))


def _copy(condition, files, cpu_s, file_bytes=12170, created=None):
    c = {"phase": f"staging {condition} {files}", "condition": condition, "files": files, "bytes": files * file_bytes,
         "start": {"t_ns": 0, "cpu_ns": 0}, "copied": {"t_ns": round(cpu_s * 1e9), "cpu_ns": round(cpu_s * 1e9)}, "inner": []}
    if created is not None:
        c["created_since_deletion"] = created
    return c


def test_growth_and_scan_are_recovered_from_copies_made_of_known_terms():
    per_gb, per_file, growth, scan, g = 0.5, 60e-6, 2e-9, 80e-9, 8192
    freed = 157000
    job = {"deletion": {"inodes_freed": freed}, "copies": []}
    for n in (5000, 20000, 44000, 88000):
        job["copies"].append(_copy("clean", n, per_gb * n * 12170 / 1e9 + per_file * n + growth * n * (n - 1) / 2))
    for n, k in ((44000, 0), (5000, 44001)):
        s = scanned_one_by_one(n, k, g)
        job["copies"].append(_copy("recent", n, per_gb * n * 12170 / 1e9 + per_file * n + growth * n * (n - 1) / 2 + scan * s, created=k))
    fitted_growth = fsf.growth_fit(job, per_gb, per_file)
    assert fitted_growth == pytest.approx(growth, rel=1e-4)
    assert fsf.scan_fit(job, per_gb, per_file, fitted_growth, g) == pytest.approx(scan, rel=1e-4)
    # a copy that pays less than the linear price gives no negative term
    job["copies"] = [_copy("clean", 1000, 0.01), _copy("recent", 1000, 0.01, created=0)]
    assert fsf.growth_fit(job, per_gb, per_file) == 0.0 and fsf.scan_fit(job, per_gb, per_file, 0.0, g) == 0.0


def test_only_the_files_the_freed_pool_still_holds_scan():
    job = {"deletion": {"inodes_freed": 100}, "copies": []}
    c = _copy("recent", 50, 0.0, created=80)  # 20 inodes of the pool left: 20 files scan, from inode 80
    assert fsf.scan_count(c, 100, 64) == scanned_one_by_one(20, 80, 64)
    c["created_since_deletion"] = 100
    assert fsf.scan_count(c, 100, 64) == 0


def test_the_logs_give_the_removal_and_the_groups_or_a_clear_error():
    log = "files: 338000\nfolders: 40\nfree_inodes_before: 16000000\nt_before_ns: 1\nt_synced_ns: 2\nfree_inodes_after: 16338040\n"
    rm = fsf.removal(log)
    assert rm["inodes_freed"] == 338040 and rm["files"] == 338000
    with pytest.raises(SystemExit, match="removal.log lacks free_inodes_after"):
        fsf.removal("free_inodes_before: 5\n")
    assert fsf.inodes_per_group("Inode count:  16777216\nInodes per group:         8192\n") == (8192, "dumpe2fs -h (fs.log)")
    value, source = fsf.inodes_per_group("dumpe2fs: Operation not permitted while trying to open /dev/vda\n")
    assert value == fsf.DEFAULT_INODES_PER_GROUP and "default geometry" in source
    with pytest.raises(SystemExit, match="no 'recent' copy"):
        fsf.scan_fit({"deletion": {"inodes_freed": 1}, "copies": [_copy("clean", 10, 0.1)]}, 0, 0, 0, 8)


def _run(out, *args):
    env = dict(os.environ, DVFS_NVML="fake_pynvml")
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "python"), os.path.join(ROOT, "tests", "python", "fake_nvml"),
                                         env.get("PYTHONPATH", "")])
    subprocess.run([sys.executable, os.path.join(ROOT, "traces", "recorder", "lifecycle", "folder_sweep_job.py"), "--out", str(out),
                    "--files-scale", "0.004", "--every", "10", "--rest-s", "0.05", "--idle-s", "0.1", "--matrix", "16",
                    "--steps", "1:1", *args], check=True, env=env, capture_output=True, timeout=240)
    return json.loads((out / "job.json").read_text())


def test_the_sweep_marks_clean_recent_and_aged_copies_and_the_removal(tmp_path):
    from dvfs_sim import lifecycle_analysis as la
    job = _run(tmp_path / "sweep")
    assert [(c["condition"], c["files"]) for c in job["copies"]] == [("clean", 20), ("clean", 80), ("clean", 176), ("clean", 352),
                                                                     ("recent", 176), ("recent", 20)]
    for c in job["copies"]:
        for k in ("t_ns", "cpu_ns"):
            assert c["start"][k] <= c["copied"][k] <= c["synced"][k]
        assert [m[0] for m in c["inner"]] == list(range(10, c["files"] + 1, 10))  # a mark every 10 files
        assert all(c["start"]["t_ns"] <= m[1] <= c["copied"]["t_ns"] and m[3] > 0 for m in c["inner"])
        if c["condition"] == "clean":  # removed after the clean copies
            assert not os.path.exists(c["target"])
        else:
            assert sorted(os.listdir(c["target"])) == sorted(os.listdir(c["source"]))
            assert all(os.path.getsize(os.path.join(c["target"], n)) == 12170 for n in os.listdir(c["target"]))
    d = job["deletion"]
    assert d["files"] == 20 + 80 + 176 + 352 and d["folders"] == 4
    assert d["start"]["t_ns"] <= d["removed"]["t_ns"] <= d["synced"]["t_ns"] <= job["copies"][4]["start"]["t_ns"]
    assert [c["created_since_deletion"] for c in job["copies"][4:]] == [0, 177]
    a = la.analyse(str(tmp_path / "sweep" / "recording"))
    assert [r["name"] for r in a["top"] if r["kind"] == "staging"] == [c["phase"] for c in job["copies"]]
    aged = _run(tmp_path / "aged", "--aged", str(tmp_path / "sweep"), "--min-age-s", "0.5")
    (c,) = aged["copies"]
    assert c["condition"] == "aged" and c["files"] == 176 and c["age_s"] >= 0.5 and c["created_since_deletion"] == 177 + 21
    assert c["source"] == job["copies"][2]["source"] and aged["deletion"] == job["deletion"]
    rates = fsf.inner_rates(c)
    assert [f for f, _ in rates] == list(range(10, 177, 10)) and all(us >= 0 for _, us in rates)


def _fit_lifecycle():
    import importlib.util
    spec = importlib.util.spec_from_file_location("fit_lifecycle_sweep", os.path.join(ROOT, "models", "lifecycle", "fit_lifecycle.py"))
    mod = importlib.util.module_from_spec(spec)
    path = list(sys.path)
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.path[:] = path
    return mod


def test_the_staging_phase_is_todays_without_the_day3_terms_and_carries_them_when_fitted():
    fl = _fit_lifecycle()
    cc = {"staging_per_gb": 0.5, "staging_per_file": 6e-5, "copy_fit": None}
    plain = fl.staging({"dataset_bytes": 1e6}, 100, cc, "recorded")
    assert not {"core_s_per_file_growth", "recently_freed_inodes", "reused_before"} & set(plain)
    day3 = fl.staging({"dataset_bytes": 1e6}, 100, dict(cc, staging_growth=2e-9, recent=(338000, 44002)), "recorded")
    assert day3["core_s_per_file_growth"] == 2e-9 and (day3["recently_freed_inodes"], day3["reused_before"]) == (338000, 44002)
    assert {k: v for k, v in day3.items() if k not in ("core_s_per_file_growth", "recently_freed_inodes", "reused_before")} == plain


def test_the_sweep_scenario_gives_the_freed_inodes_to_recent_and_aged_copies_whatever_their_age():
    fl = _fit_lifecycle()
    copies = [_copy("clean", 5000, 0.3), _copy("recent", 44000, 3.0, created=0), _copy("recent", 5000, 0.4, created=44001),
              _copy("aged", 44000, 3.0, created=0), _copy("aged", 44000, 3.0, created=0)]
    copies[3]["age_s"], copies[4]["age_s"] = 80.0, 30.0
    copies[4]["phase"] += " (young)"
    top = []
    for c in copies:
        top += [{"name": "rest before " + c["phase"], "kind": "idle", "time_s": 1.0}, {"name": c["phase"], "kind": "staging", "time_s": 1.0}]
    cc = {"staging_per_gb": 0.5, "staging_per_file": 6e-5, "copy_fit": None, "staging_growth": 1e-9}
    doc = fl.sweep_doc({"job": {"copies": copies}, "top": top}, cc, "node.json", "day3-folder-sweep", "folder-sweep", 157000)
    st = [p for p in doc["lifecycle"]["phases"] if p["kind"] == "staging"]
    assert [p.get("recently_freed_inodes") for p in st] == [None, 157000, 157000, 157000, 157000]
    assert [p.get("reused_before") for p in st] == [None, 0, 44001, 0, 0]
    assert all(p["core_s_per_file_growth"] == 1e-9 for p in st)
    assert sum(p["kind"] == "idle" for p in doc["lifecycle"]["phases"]) == 5


def test_a_later_sweep_day_names_its_own_folder_and_rule():
    fl = _fit_lifecycle()
    top = [{"name": "staging clean 5000", "kind": "staging", "time_s": 1.0}]
    cc = {"staging_per_gb": 0.5, "staging_per_file": 6e-5, "copy_fit": None}
    sw = {"job": {"copies": [_copy("clean", 5000, 0.3)]}, "top": top}
    doc = fl.sweep_doc(sw, cc, "node.json", "day4-folder-sweep", "folder-sweep", 157000, "day4")
    assert "day-4 folder sweep (traces/recordings/h200-lifecycle/day4/folder-sweep)" in doc["description"]
    assert doc["description"].endswith("(split.json day4)")
    assert fl.sweep_doc(sw, cc, "node.json", "day3-folder-sweep", "folder-sweep", 157000)["description"].endswith("(split.json day3)")


def test_every_recorded_sweep_day_is_analysed_with_its_own_node_scenarios_and_report():
    """Each recording day with a folder sweep (split.json day3, and day4: its rule unchanged) has its rule, its node
    (h200-node-DAY.json), a DAY-PART scenario on that node for every complete recording, and a DAY entry in
    validation.json; the lifecycle_model_matches_its_fit CTest keeps their contents equal to the fit's."""
    fl = _fit_lifecycle()
    rec = os.path.join(ROOT, "traces", "recordings", "h200-lifecycle")
    days = sorted(d for d in os.listdir(rec) if os.path.isdir(os.path.join(rec, d, "folder-sweep")))
    assert days == list(fl.SWEEP_DAYS) and "day4" in days
    with open(os.path.join(ROOT, "models", "lifecycle", "split.json")) as f:
        split = json.load(f)
    with open(os.path.join(rec, "validation.json")) as f:
        report = json.load(f)
    for day in days:
        assert day in split and day in report
        node = f"../../models/lifecycle/h200-node-{day}.json"
        assert os.path.isfile(os.path.join(ROOT, "scenarios", "lifecycle", node))
        parts = [p for p in ("staging-copies", "save-probe", "folder-sweep", "folder-sweep-aged", "cnn-io", "llm-finetune")
                 if os.path.isfile(os.path.join(rec, day, p, "recording", "run.json"))]
        assert {"staging-copies", "save-probe", "folder-sweep"} <= set(parts)
        assert sorted(report[day]["jobs"]) == sorted(parts)
        for p in parts:
            with open(os.path.join(ROOT, "scenarios", "lifecycle", f"{day}-{p}.json")) as f:
                doc = json.load(f)
            assert doc["name"] == f"{day}-{p}" and doc["lifecycle"]["node"] == node
