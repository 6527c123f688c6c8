"""Power-budget scenarios (scenarios/power-budget/) from Python: a run to its end under a C++ controller.

    r = dvfs_sim.control.run("scenarios/power-budget/grpo-7b-16gpu.json", controller="pid", seed=3)
    r["tokens_per_s"], r["budgets"][0]["windows"]        # as `dvfs-sim control --json` prints it

The step-by-step environment for learned controllers is dvfs_sim.rl.PowerBudgetEnv.
"""
import json

import math

from ._native import InputError, core, path_arg, text_arg
from .scenario import as_scenario


def scenario_text(scenario, overrides=None):
    """(JSON text, name, base directory) of a power-budget scenario (path or dict) with dotted keys of
    `overrides` set, list items by index (e.g. {"control.jobs.0.concurrency": 64}); a file keeps its own
    directory for relative paths."""
    text, name, base = as_scenario(scenario)
    if overrides:
        doc = json.loads(text)
        for key, value in overrides.items():
            *path, last = key.split(".")
            node = doc
            for p in path:
                node = node[int(p)] if isinstance(node, list) else node.setdefault(p, {})
            if isinstance(node, list):
                node[int(last)] = value
            else:
                node[last] = value
        text = json.dumps(doc)
    return text, name, base


def _duration_arg(duration_s):
    """None: the scenario's; else seconds > 0 (a -1 or nan was silently the scenario's duration)."""
    if duration_s is None:
        return 0.0
    if isinstance(duration_s, bool) or not isinstance(duration_s, (int, float)) or not math.isfinite(duration_s) or duration_s <= 0:
        raise InputError(f"duration_s: expected seconds > 0 (or None for the scenario's), got {duration_s!r}")
    return float(duration_s)


def _seed_arg(seed):
    """None: the scenario's; else an integer >= 0 (a -1 was silently the scenario's seed)."""
    if seed is None:
        return -1
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0 or seed >= 2 ** 63:
        raise InputError(f"seed: expected an integer >= 0 (or None for the scenario's), got {seed!r}")
    return seed


def controller_names():
    """uncontrolled, static-cap, reactive, pid, rl."""
    return list(core().controller_names())


def observation_names():
    return list(core().observation_names())


def run(scenario, controller=None, policy_file=None, seed=None, duration_s=None, series=False, overrides=None):
    """Runs a power-budget scenario (path or dict) to its end under `controller` (None: the scenario's) and
    returns the result dict; `series=True` adds per-interval arrays (budget power, tokens); `overrides`: dotted
    scenario keys to change (see scenario_text)."""
    text, name, base = scenario_text(scenario, overrides)
    controller = text_arg("controller", controller) if controller is not None else ""
    policy_file = path_arg("policy_file", policy_file) if policy_file is not None else ""
    out = core().run_control_json(text, name, base, controller, policy_file, _seed_arg(seed),
                                  _duration_arg(duration_s), bool(series))
    return json.loads(out)


def compare(scenario, controllers, seed=None, duration_s=None, policy_file=None, overrides=None):
    """One row per controller (a pandas DataFrame): violations at the control interval and over 30 s, energy,
    tokens/s and tokens per MWh (generated tokens, or trained tokens where no job generates any: column
    throughput_basis), and throughput / violations relative to `uncontrolled` when it is among them."""
    import pandas as pd
    rows, durations = [], []
    for c in controllers:
        r = run(scenario, controller=c, policy_file=policy_file, seed=seed, duration_s=duration_s, overrides=overrides)
        durations.append(r["duration_s"])
        b = next((x for x in r["budgets"] if x["controlled"]), r["budgets"][0])
        w = {round(x["window_s"], 6): x for x in b["windows"]}
        rows.append({"controller": r["controller"], "violations_interval": w[round(r["interval_s"], 6)]["violation_rate"],
                     "violations_30s": w.get(30.0, {}).get("violation_rate"), "energy_mj": r["energy_j"] / 1e6,
                     "tokens_per_s": r["tokens_per_s"], "tokens_per_mwh": r["tokens_per_mwh"], "reward": r["reward"],
                     "generated_tokens": r.get("generated_tokens", 0.0), "trained_tokens": r.get("trained_tokens", 0.0)})
    df = pd.DataFrame(rows)
    # as the CLI's table: generated tokens, or trained tokens where the jobs generate none (training jobs gave
    # 0 tokens/s and 0 / 0 = nan); tokens_per_s and tokens_per_mwh are in that basis
    basis = "generated_tokens" if (df["generated_tokens"] > 0).any() else "trained_tokens"
    df["throughput_basis"] = basis.split("_")[0]
    if basis == "trained_tokens":
        df["tokens_per_s"] = [t / d if d > 0 else 0.0 for t, d in zip(df[basis], durations)]
        df["tokens_per_mwh"] = [t / (e * 1e6 / 3.6e9) if e > 0 else 0.0 for t, e in zip(df[basis], df["energy_mj"])]
    if (df["controller"] == "uncontrolled").any():
        ref = df[df["controller"] == "uncontrolled"].iloc[0]
        # no tokens at all: no ratio (None)
        df["throughput_vs_uncontrolled"] = df[basis] / ref[basis] if ref[basis] > 0 else None
        df["violations_vs_uncontrolled"] = df["violations_interval"] / ref["violations_interval"] - 1 if ref["violations_interval"] > 0 else 0.0
    return df


def fleet(path, sizes=None, duration_s=None, samples=False):
    """A fleet study (scenarios/power-budget/fleet-*.json, as `dvfs-sim fleet --json` prints it); `samples=True`
    adds each fleet's measured power samples (numpy array "samples_w", one every sample_s)."""
    import numpy as np
    out = json.loads(core().fleet_study_json(path_arg("path", path), list(sizes or []), _duration_arg(duration_s), bool(samples)))
    for f in out["fleets"]:
        if "samples_w" in f:
            f["samples_w"] = np.asarray(f["samples_w"])
    return out
