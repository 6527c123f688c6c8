"""A gym-style environment (reset / step returning observation, reward, terminated, truncated, info) over a
power-budget scenario, without depending on gym (not packaged for Debian). One step advances the C++
simulation by one control interval (0.5 s in the shipped scenarios).

Observation, action and reward are defined in C++ (sim/control/observation.hpp) and shared with the
`rl` controller of `dvfs-sim control`:
  observation (10 floats): measured power / budget (this interval, the one before, mean of the last 10),
      sum of power limits / budget, shares of GPUs generating / training / waiting, generation progress,
      concurrency level in [0, 1], share of GPUs throttled by their limit;
  action (floats in [-1, 1]): power target = budget x (1 + target_span x a0), split into per-GPU power
      limits (water-filling); a1 (when the scenario's controller lists it) the jobs' concurrency;
  reward: tokens (generated + trained) / tokens_scale - violation_penalty x [measured > budget]
      - excess_penalty x max(0, measured / budget - 1).
The episode ends (truncated, not terminated: nothing fails) at the scenario's duration.
"""
import json

import numpy as np

from .._native import InputError, core
from ..control import scenario_text


class PowerBudgetEnv:
    def __init__(self, scenario, seed=None, duration_s=None, overrides=None):
        """`scenario`: a path or dict; `overrides`: dotted keys to change (dvfs_sim.control.scenario_text). The
        scenario's controller is not run: the environment's caller is the controller (its `actions` say which)."""
        text, name, base = scenario_text(scenario, overrides)
        self.scenario_file = name
        self._core = core().ControlEnvCore(text, name, base)
        self._seed = self._core.seed if seed is None else int(seed)
        self._duration = duration_s
        self.observation_size = self._core.observation_size
        self.action_size = self._core.action_size
        self.action_names = list(self._core.action_names)
        self.observation_names = list(core().observation_names())
        self.action_spec = dict(self._core.action_spec)
        self.interval_s = self._core.interval_s
        self.duration_s = float(duration_s or self._core.duration_s)
        self._rng = np.random.default_rng(self._seed)
        self._open = False

    def reset(self, seed=None):
        """Starts an episode (a fresh simulation); returns (observation, info)."""
        if seed is not None:
            self._seed = int(seed)
        obs = np.asarray(self._core.reset(self._seed, float(self._duration or 0)), dtype=np.float64)
        self._open = True
        return obs, {"seed": self._seed}

    def step(self, action):
        """Advances one control interval with `action`; returns (observation, reward, terminated, truncated, info)."""
        if not self._open:
            raise InputError("env.step: call reset() first")
        a = np.asarray(action, dtype=np.float64).reshape(-1)
        if a.size != self.action_size:
            raise InputError(f"env.step: action: expected {self.action_size} values ({', '.join(self.action_names)}), got {a.size}")
        obs, reward, done, info = self._core.step(a.tolist())
        return np.asarray(obs, dtype=np.float64), float(reward), False, bool(done), dict(info)

    def action_space_sample(self):
        return self._rng.uniform(-1.0, 1.0, size=self.action_size)

    def summary(self, series=False):
        """The episode's result, as `dvfs-sim control --json` reports a run (violations by window, tokens/s, ...)."""
        return json.loads(self._core.summary(series))

    def close(self):
        self._core.close()
        self._open = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
