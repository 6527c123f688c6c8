"""The eighth and ninth blind sets' scripts (traces/recorder/unseen_scripts/, splits unseen_workloads_8 and
unseen_workloads_9) run on a CPU at tiny sizes, as the folder's README promises, so that a change to a script or to PyTorch shows before a device call."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "traces", "recorder", "unseen_scripts")

TINY = {
    "nbody_fp32.py": ["--steps", "2", "--bodies", "256", "--tile", "64"],
    "dit_sample.py": ["--runs", "1", "--sampling-steps", "2", "--dim", "32", "--depth", "1", "--heads", "2", "--latent", "8",
                      "--classes", "10"],
    "monte_carlo_paths.py": ["--runs", "1", "--paths", "2048", "--chunk", "1024", "--time-steps", "16"],
    "gpu_augment_train.py": ["--steps", "1", "--batch", "2", "--source", "32", "--size", "24", "--classes", "4", "--pool", "4",
                             "--width", "4"],
    "longctx_decode.py": ["--batch", "1", "--prompt", "16", "--new-tokens", "33", "--dim", "32", "--layers", "1", "--heads", "4",
                          "--kv-heads", "2", "--ffn", "64", "--vocab", "50"],
    "ppo_cartpole.py": ["--updates", "1", "--envs", "16", "--horizon", "8", "--minibatches", "2", "--epochs", "1"],
    "lbm_channel.py": ["--steps", "2", "--nx", "64", "--ny", "32", "--substeps", "2"],
    "cg_poisson_fp64.py": ["--steps", "2", "--n", "64", "--iters", "5"],
    "word2vec_sgns.py": ["--steps", "2", "--vocab", "1000", "--dim", "16", "--batch", "64"],
    "edsr_sr_train.py": ["--steps", "2", "--batch", "2", "--patch", "24", "--channels", "8", "--blocks", "2", "--pool", "4",
                         "--source", "64"],
    "dqn_nature.py": ["--steps", "3", "--envs", "4", "--batch", "4", "--buffer", "100", "--learning-starts", "5"],
    "style_transfer_lbfgs.py": ["--steps", "2", "--size", "64", "--max-iter", "2", "--width", "4"],
}


@pytest.mark.parametrize("script", sorted(TINY))
def test_a_blind_set_script_runs_on_a_cpu_at_tiny_sizes(script):
    pytest.importorskip("torch")
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    done = subprocess.run([sys.executable, os.path.join(SCRIPTS, script)] + TINY[script], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip(), "the script printed no progress line"
