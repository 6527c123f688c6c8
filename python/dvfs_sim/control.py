"""Power-budget scenarios (scenarios/power-budget/) from Python: a run to its end under a C++ controller.

    r = dvfs_sim.control.run("scenarios/power-budget/grpo-7b-16gpu.json", controller="pid", seed=3)
    r["tokens_per_s"], r["budgets"][0]["windows"]        # as `dvfs-sim control --json` prints it

The step-by-step environment for learned controllers is dvfs_sim.rl.PowerBudgetEnv.
"""
import json

import math

from ._native import InputError, InputTypeError, core, path_arg, text_arg
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
    """One row per controller (a pandas DataFrame), the table `dvfs-sim control --controller a,b` prints:
    violations at the control interval and over 30 s (None where the run is shorter than 30 s), energy,
    tokens/s and tokens per MWh (generated tokens, or trained tokens where no job generates any: column
    throughput_basis), and throughput, violations and tokens per MWh relative to `uncontrolled` when it is
    among them (throughput None where uncontrolled made no tokens)."""
    import pandas as pd
    text, name, base = scenario_text(scenario, overrides)
    if isinstance(controllers, (str, bytes)) or not hasattr(controllers, "__iter__"):
        raise InputTypeError(f"controllers: expected a list of controller names, got {type(controllers).__name__}")
    controllers = [text_arg("controllers", c) for c in controllers]
    if not controllers:
        raise InputError("controllers: expected at least one controller name")
    policy_file = path_arg("policy_file", policy_file) if policy_file is not None else ""
    table = json.loads(core().compare_controllers_json(text, name, base, controllers,
                                                       policy_file, _seed_arg(seed), _duration_arg(duration_s)))
    rows = []
    for row, run in zip(table["rows"], table["runs"]):
        out = {"controller": row["controller"], "violations_interval": row["violation_rate_interval"],
               "violations_30s": None if row["violation_rate_30s"] < 0 else row["violation_rate_30s"],
               "energy_mj": row["energy_j"] / 1e6, "tokens_per_s": row["tokens_per_s"],
               "tokens_per_mwh": row["tokens_per_mwh"], "reward": row["reward"],
               "generated_tokens": run["generated_tokens"], "trained_tokens": run["trained_tokens"],
               "throughput_basis": row["tokens"]}
        for key in ("throughput_vs_uncontrolled", "violations_vs_uncontrolled", "tokens_per_mwh_vs_uncontrolled"):
            if key in row:
                out[key] = row[key]
        rows.append(out)
    return pd.DataFrame(rows)


def fleet(path, sizes=None, duration_s=None, samples=False):
    """A fleet study (scenarios/power-budget/fleet-*.json, as `dvfs-sim fleet --json` prints it); `samples=True`
    adds each fleet's measured power samples (numpy array "samples_w", one every sample_s)."""
    import numpy as np
    out = json.loads(core().fleet_study_json(path_arg("path", path), list(sizes or []), _duration_arg(duration_s), bool(samples)))
    for f in out["fleets"]:
        if "samples_w" in f:
            f["samples_w"] = np.asarray(f["samples_w"])
    return out
