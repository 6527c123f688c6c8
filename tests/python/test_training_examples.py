"""The example training script's multi-GPU modes (what a 2-GPU recording would run, issue 9), run here on
the CPU with gloo: two processes launched as torchrun would (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_*)."""
import os
import re
import socket
import subprocess
import sys

import pytest
from repo_paths import ROOT

torch = pytest.importorskip("torch")

SCRIPT = os.path.join(ROOT, "python", "dvfs_sim", "examples", "train_gpt.py")


def two_ranks(*args):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = []
    for r in range(2):
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(r), WORLD_SIZE="2", LOCAL_RANK=str(r),
                   OMP_NUM_THREADS="1")
        procs.append(subprocess.Popen([sys.executable, SCRIPT, "--preset", "tiny", "--steps", "3", "--device", "cpu", *args],
                                      env=env, stderr=subprocess.PIPE, text=True))
    losses = []
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        losses.append(float(re.search(r"loss ([0-9.]+)", err).group(1)))
    return losses


def single(*args):
    r = subprocess.run([sys.executable, SCRIPT, "--preset", "tiny", "--steps", "3", "--device", "cpu", *args],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return float(re.search(r"loss ([0-9.]+)", r.stderr).group(1))


def test_data_parallel_ranks_train_the_same_model_as_one_process():
    a, b = two_ranks("--ddp")
    assert a == b == pytest.approx(single(), rel=1e-5)  # same data on both ranks: DDP's average is the same step


def test_tensor_parallel_ranks_agree_on_the_loss():
    a, b = two_ranks("--tp")
    assert a == pytest.approx(b, rel=1e-6)


def test_ddp_and_tp_together_is_refused():
    r = subprocess.run([sys.executable, SCRIPT, "--preset", "tiny", "--ddp", "--tp", "--device", "cpu"], capture_output=True, text=True)
    assert r.returncode != 0 and "choose one" in r.stderr
