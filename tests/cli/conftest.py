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
