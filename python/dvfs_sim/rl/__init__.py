"""Learned power-budget control: a gym-style environment over the C++ control session, a small PPO in
Debian's PyTorch, and policy files the C++ `rl` controller loads.

    env = dvfs_sim.rl.PowerBudgetEnv("scenarios/power-budget/grpo-7b-16gpu.json")
    obs, info = env.reset(seed=1)
    obs, reward, terminated, truncated, info = env.step(env.action_space_sample())

Training (python3 -m dvfs_sim.rl.train --help) needs python3-torch; the environment does not.
"""
from .env import PowerBudgetEnv

__all__ = ["PowerBudgetEnv"]
