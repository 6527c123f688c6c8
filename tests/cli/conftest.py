import importlib.util
import json
import os
import subprocess

import pytest

ROOT = os.environ.get("DVFS_SIM_ROOT", os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BIN = os.environ.get("DVFS_SIM_BIN", os.path.join(ROOT, "build", "dvfs-sim"))


@pytest.fixture
def cli():
    def run(*args, cwd=None):
        return subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=300)
    return run


@pytest.fixture
def root():
    return ROOT


@pytest.fixture(scope="session")
def models_report(tmp_path_factory):
    """`dvfs-sim validate --models -o FILE`, run once for the whole session (about a minute): (the completed process,
    with the text report on stdout; the JSON report). Every test that reads the report shares this one run."""
    out = tmp_path_factory.mktemp("validate-models") / "models.json"
    r = subprocess.run([BIN, "validate", "--models", "-o", str(out)], capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stderr
    with open(out) as f:
        return r, json.load(f)


def loops_report(script, recording, tmp_path_factory):
    """A round's analysis script (models/calibration/<script>) run on traces/recordings/<recording> with this build's
    binary: the JSON it writes."""
    out = tmp_path_factory.mktemp(recording) / "loops.json"
    rec = os.path.join(ROOT, "traces", "recordings", recording)
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "models", "calibration", script), rec, "--dvfs-sim", BIN,
                    "--json", str(out)], check=True, capture_output=True)
    with open(out) as f:
        return json.load(f)


def load_script(relative_path):
    """A script of the repository (e.g. models/calibration/*.py) loaded as a module, for tests of its functions."""
    name = os.path.splitext(os.path.basename(relative_path))[0]
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, relative_path))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
