"""Policies side by side on one scenario (as `dvfs-sim compare`)."""
import json
import math
import os

from ._native import InputError, core, path_arg
from .scenario import default_scenario_path

def default_policies():
    """What `dvfs-sim compare` replays when no policies are named (the C++ policy registry decides):
    max, static-best, pass-level, per-kernel, per-kernel-online, latency-aware."""
    return list(core().default_comparison())


def compare(scenario, policies=None, budgets_pct=(0.0,), latencies_s=(None,)):
    """Replays a scenario file (None: the default scenario) under each policy (None: default_policies()) for every slowdown budget (%)
    and switch latency (s; None keeps the scenario's / model's), native always included as the reference.
    Returns {"rows": [...], "wall_s": ...}; each row: gpu, policy, budget, latency, energy, time, energy
    saved and slowdown vs native, clock switches, switching time. Same code as `dvfs-sim compare`."""
    if policies is None:
        policies = default_policies()
    if isinstance(policies, str):
        policies = [p.strip() for p in policies.split(",") if p.strip()]
    budgets = [float(b) for b in budgets_pct]
    if not budgets or any(not math.isfinite(b) or b < 0 or b > 1000 for b in budgets):
        raise InputError("budgets_pct: expected at least one slowdown budget, each from 0 to 1000 (%)")
    lats = list(latencies_s)
    if any(x is None for x in lats):
        if len(lats) != 1:
            raise InputError("latencies_s: None (the scenario's or model's latency) cannot be mixed with explicit latencies")
        lats = []
    else:
        lats = [float(x) for x in lats]
        if not lats or any(not math.isfinite(x) or x < 0 for x in lats):
            raise InputError("latencies_s: expected switch latencies, each a finite number >= 0 (s)")
    if not all(isinstance(p, str) for p in policies):
        raise InputError("policies: expected policy names (strings), e.g. ['per-kernel', 'pass-level']")
    try:
        return json.loads(core().compare_grid_json(path_arg("scenario", default_scenario_path() if scenario is None else scenario), list(policies), budgets, lats))
    except InputError as e:
        # The C++ comparison names the command line's options; here they are this function's arguments.
        msg = str(e)
        for option, argument in (("--policies", "policies"), ("--budget", "budgets_pct")):
            if msg.startswith(option + ":"):
                raise InputError(argument + msg[len(option):]) from None
        raise
