"""Policy files: a PPO actor as plain data (JSON), loadable by the C++ `rl` controller (sim/control/mlp_policy.hpp)
and evaluated here with numpy alone (no torch needed to use a shipped policy).

    {"format": "dvfs-sim-mlp-policy/1", "observation": [...], "action": [...], "obs_mean": [...], "obs_std": [...],
     "layers": [{"weight": [[...]], "bias": [...], "activation": "tanh"}, ...], "action_span": {...}, "provenance": {...}}
"""
import json

import numpy as np

from .._native import InputError

FORMAT = "dvfs-sim-mlp-policy/1"


def write_policy(path, layers, obs_mean, obs_std, observation, action, action_span, provenance):
    """`layers`: [(weight [out][in], bias [out], activation)], activations tanh | relu | linear."""
    doc = {"format": FORMAT, "observation": list(observation), "action": list(action),
           "obs_mean": [float(x) for x in obs_mean], "obs_std": [float(max(x, 1e-6)) for x in obs_std],
           "layers": [{"weight": np.asarray(w, dtype=float).round(7).tolist(), "bias": np.asarray(b, dtype=float).round(7).tolist(),
                       "activation": a} for (w, b, a) in layers],
           "action_span": dict(action_span), "provenance": provenance}
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    return doc


class PolicyFile:
    """A policy file evaluated with numpy: act(observation) -> action in [-1, 1] (the deterministic mean)."""

    def __init__(self, path, observation=None, action=None):
        self.path = str(path)
        try:
            with open(self.path) as f:
                doc = json.load(f)
        except OSError as e:
            raise InputError(f"{self.path}: cannot open policy file ({e.strerror})") from None
        except json.JSONDecodeError as e:
            raise InputError(f"{self.path}: malformed JSON ({e.msg} at line {e.lineno})") from None
        if doc.get("format") != FORMAT:
            raise InputError(f"{self.path}: format: expected \"{FORMAT}\"")
        for key, want in (("observation", observation), ("action", action)):
            if want is not None and list(doc.get(key, [])) != list(want):
                raise InputError(f"{self.path}: {key}: the policy was trained for {len(doc.get(key, []))} {key} values that are not "
                                 f"this environment's {len(want)} ({', '.join(want)})")
        self.doc = doc
        self.mean = np.asarray(doc["obs_mean"], dtype=float)
        self.std = np.asarray(doc["obs_std"], dtype=float)
        self.layers = [(np.asarray(l["weight"], dtype=float), np.asarray(l["bias"], dtype=float), l.get("activation", "linear"))
                       for l in doc["layers"]]
        self.provenance = doc.get("provenance", {})

    def act(self, obs):
        x = (np.asarray(obs, dtype=float) - self.mean) / self.std
        for w, b, a in self.layers:
            x = w @ x + b
            x = np.tanh(x) if a == "tanh" else np.maximum(x, 0) if a == "relu" else x
        return np.clip(x, -1.0, 1.0)
