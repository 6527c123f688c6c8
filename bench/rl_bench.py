#!/usr/bin/env python3
"""Power-budget control from Python: the cost of an environment step (dvfs_sim.rl.PowerBudgetEnv.step on the
16-GPU GRPO scenario, best of 3 episodes) and, with --train, the PPO training that produced the shipped
policy (python3 -m dvfs_sim.rl.train, the same command as in models/controllers/PROVENANCE.md).

    PYTHONPATH=build/python python3 bench/rl_bench.py [--train]
"""
import argparse
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIO = os.path.join(ROOT, "scenarios", "power-budget", "grpo-7b-16gpu.json")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--train", action="store_true", help="also run the full PPO training (about 2-3 minutes)")
    a = p.parse_args()
    import numpy as np
    from dvfs_sim.rl import PowerBudgetEnv
    env = PowerBudgetEnv(SCENARIO, overrides={"control.controller.name": "uncontrolled"})
    best = float("inf")
    for seed in range(3):
        env.reset(seed=seed)
        n, t0, done = 0, time.perf_counter(), False
        while not done:
            _, _, _, done, _ = env.step(np.array([0.0, 0.5]))
            n += 1
        best = min(best, (time.perf_counter() - t0) / n)
    env.close()
    print(f"environment step from Python (16 GPUs, {n} steps per episode): {1e3 * best:.3f} ms   target <= 5 ms   ratio {5e-3 / best:.1f}x")
    if a.train:
        out = os.path.join(os.environ.get("TMPDIR", "/tmp"), "dvfs-rl-bench-policy.json")
        cmd = [sys.executable, "-m", "dvfs_sim.rl.train", SCENARIO, "-o", out, "--steps", "150000", "--seed", "0", "--eval-seed", "7",
               "--eval-duration", "600", "--quiet"]
        subprocess.run(cmd, check=True)


if __name__ == "__main__":
    main()
