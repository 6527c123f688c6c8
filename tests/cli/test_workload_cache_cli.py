"""The workload cache on the command line: `run` fills it, `--no-cache` and DVFS_SIM_NO_CACHE=1 leave it alone,
a cached run writes the same files as an uncached one, `cache info` / `cache clear` show and empty it."""
import json
import os
import re
import subprocess

import pytest

ROOT = os.environ.get("DVFS_SIM_ROOT", os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BIN = os.environ.get("DVFS_SIM_BIN", os.path.join(ROOT, "build", "dvfs-sim"))

TRACE = os.path.join(ROOT, "tests", "fixtures", "kineto_current.json")


def run(cache_dir, *args, **env):
    full = dict(os.environ, DVFS_SIM_CACHE_DIR=str(cache_dir))
    full.pop("DVFS_SIM_NO_CACHE", None)
    full.update(env)
    return subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, timeout=300, env=full, cwd=ROOT)


def entries(cache_dir):
    r = run(cache_dir, "cache", "info")
    assert r.returncode == 0, r.stderr
    assert str(cache_dir) in r.stdout
    return int(re.search(r"entries: (\d+)", r.stdout).group(1))


@pytest.fixture
def scenario(tmp_path):
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"name": "cache-cli", "trace": TRACE, "gpu": "h200", "policy": "native"}))
    return path


def summary_without_wall_clock(out_dir):
    s = json.loads((out_dir / "summary.json").read_text())
    wall = re.compile(r"(wall|elapsed|runtime_s|import_s|load_s|peak_rss|_mib$)")

    def strip(v):
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items() if not wall.search(k)}
        if isinstance(v, list):
            return [strip(x) for x in v]
        return v
    return strip(s)


def test_run_fills_the_cache_and_a_cached_run_writes_the_same_results(tmp_path, scenario):
    cache = tmp_path / "cache"
    assert entries(cache) == 0
    cold = run(cache, "run", scenario, "-o", tmp_path / "cold")
    assert cold.returncode == 0, cold.stderr
    assert entries(cache) == 1
    warm = run(cache, "run", scenario, "-o", tmp_path / "warm")
    assert warm.returncode == 0, warm.stderr
    assert entries(cache) == 1
    plain = run(cache, "run", scenario, "-o", tmp_path / "plain", "--no-cache")
    assert plain.returncode == 0, plain.stderr
    assert summary_without_wall_clock(tmp_path / "cold") == summary_without_wall_clock(tmp_path / "warm")
    assert summary_without_wall_clock(tmp_path / "plain") == summary_without_wall_clock(tmp_path / "warm")
    for name in ("warm", "plain"):
        assert (tmp_path / name / "timeline.csv").read_bytes() == (tmp_path / "cold" / "timeline.csv").read_bytes()


@pytest.mark.parametrize("how", ["--no-cache", "env"])
def test_no_cache_neither_reads_nor_writes_the_cache(tmp_path, scenario, how):
    cache = tmp_path / "cache"
    if how == "--no-cache":
        r = run(cache, "--no-cache", "run", scenario, "-o", tmp_path / "out")
    else:
        r = run(cache, "run", scenario, "-o", tmp_path / "out", DVFS_SIM_NO_CACHE="1")
    assert r.returncode == 0, r.stderr
    assert entries(cache) == 0
    assert not cache.exists() or not any(p.suffix == ".wlc" for p in cache.iterdir())


def test_a_corrupt_entry_is_rebuilt(tmp_path, scenario):
    cache = tmp_path / "cache"
    assert run(cache, "run", scenario, "-o", tmp_path / "a").returncode == 0
    (entry,) = [p for p in cache.iterdir() if p.suffix == ".wlc"]
    good = entry.read_bytes()
    entry.write_bytes(good[: len(good) // 3])
    r = run(cache, "run", scenario, "-o", tmp_path / "b")
    assert r.returncode == 0, r.stderr
    assert entry.read_bytes() == good
    assert summary_without_wall_clock(tmp_path / "a") == summary_without_wall_clock(tmp_path / "b")


def test_cache_clear_empties_it(tmp_path, scenario):
    cache = tmp_path / "cache"
    assert run(cache, "run", scenario, "-o", tmp_path / "a").returncode == 0
    assert entries(cache) == 1
    r = run(cache, "cache", "clear")
    assert r.returncode == 0, r.stderr
    assert "removed 1 entry" in r.stdout
    assert entries(cache) == 0


def test_cache_with_an_unknown_action_is_a_usage_error(tmp_path):
    r = run(tmp_path / "cache", "cache", "drop")
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1
    assert "info or clear" in r.stderr


def test_a_fifo_at_the_entry_path_is_imported_past_not_waited_on(tmp_path, scenario):
    # open() on the FIFO blocked before fstat: the run hung. Now a miss, and the entry is written over it.
    cache = tmp_path / "cache"
    assert run(cache, "run", scenario, "-o", tmp_path / "a").returncode == 0
    (entry,) = [p for p in cache.iterdir() if p.suffix == ".wlc"]
    entry.unlink()
    os.mkfifo(entry)
    r = run(cache, "run", scenario, "-o", tmp_path / "b")
    assert r.returncode == 0, r.stderr
    assert entry.is_file() and entries(cache) == 1


def test_cache_info_counts_only_entries_that_clear_removes(tmp_path, scenario):
    cache = tmp_path / "cache"
    assert run(cache, "run", scenario, "-o", tmp_path / "a").returncode == 0
    (cache / "x.wlc").mkdir()  # was counted as an entry, and left by clear
    r = run(cache, "cache", "info")
    assert "entries: 1" in r.stdout and "not entries: 1 named *.wlc but not regular files" in r.stdout
    assert "removed 1 entry" in run(cache, "cache", "clear").stdout
    assert entries(cache) == 0 and (cache / "x.wlc").is_dir()


def test_cache_info_warns_when_the_cache_directory_is_unusable(tmp_path):
    # DVFS_SIM_CACHE_DIR naming a file (or a path under one) said "enabled: yes", no warning; nothing was ever stored.
    (tmp_path / "file").write_text("x")
    for where, why in ((tmp_path / "file", "not a directory"),
                       (tmp_path / "file" / "sub", f"cannot be created: {tmp_path / 'file'} is not a directory")):
        r = run(where, "cache", "info")
        assert r.returncode == 0, r.stderr
        assert f"enabled: yes, but the directory is unusable: {why}" in r.stdout
        assert r.stderr.strip() == f"dvfs-sim: warning: workload cache {where}: {why} (set DVFS_SIM_CACHE_DIR to a writable directory)"
    r = run(tmp_path / "fresh", "cache", "info")
    assert "enabled: yes\n" in r.stdout and r.stderr == "" and not (tmp_path / "fresh").exists()


def test_cache_clear_of_a_file_is_refused_naming_it(tmp_path):
    (tmp_path / "file").write_text("x")
    r = run(tmp_path / "file", "cache", "clear")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert f"{tmp_path / 'file'}: not a directory: expected the workload cache directory" in r.stderr
    assert (tmp_path / "file").read_text() == "x"
