"""dvfs-sim from Python: run scenarios on the C++ core and get plain dicts back.

    import dvfs_sim
    summary = dvfs_sim.run()                       # the default scenario
    summary = dvfs_sim.run("scenarios/default.json")
    summary = dvfs_sim.run({"trace": "...", "gpu": "h200", "policy": "native"})
"""
import json
import os

from . import _core
from ._core import InputError, available_models, data_dir, default_scenario_path

__all__ = ["run", "validate", "validate_models", "calibrate", "compare", "available_models", "default_scenario_path", "data_dir",
           "InputError"]


def run(scenario=None, output_dir=None):
    """Run a scenario (dict, path to a JSON file, or None for the default) and return its summary dict.

    Relative paths inside a dict scenario resolve against the current directory; inside a file,
    against the file's directory. Result files are written only when `output_dir` is given or the
    scenario names one (`output.dir`).
    """
    if scenario is None:
        scenario = default_scenario_path()
    if isinstance(scenario, (str, os.PathLike)):
        path = os.fspath(scenario)
        try:
            with open(path) as f:
                text = f.read()
        except OSError as e:
            raise InputError(f"{path}: cannot open scenario file ({e.strerror})") from None
        base = os.path.dirname(os.path.abspath(path))
        return json.loads(_core.run_json(text, path, base, os.fspath(output_dir or "")))
    if isinstance(scenario, dict):
        return json.loads(_core.run_json(json.dumps(scenario), "<scenario dict>", os.getcwd(), os.fspath(output_dir or "")))
    raise TypeError(f"scenario must be a dict, a path or None, not {type(scenario).__name__}")


def validate(recording_dir, gpu):
    """Replay a recording's profiled steps on a GPU model and compare with the measurements."""
    return json.loads(_core.validate_json(os.fspath(recording_dir), gpu))


def validate_models():
    """The calibrated models against data their fits did not see (as `dvfs-sim validate --models --json`)."""
    return json.loads(_core.validate_models_json())


def calibrate(base, profile=None, recording=None, date=None, output=None):
    """Fit a GPU model from a stage-profile CSV or a recording directory (exactly one), starting from
    `base` (a model name or file). Returns {"model": model dict, "report": fit report}; writes the model
    to `output` when given. Same code as `dvfs-sim calibrate`."""
    if (profile is None) == (recording is None):
        raise TypeError("calibrate needs exactly one of profile= or recording=")
    import datetime
    date = date or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    from_profile = profile is not None
    path = os.fspath(profile if from_profile else recording)
    res = json.loads(_core.calibrate_json(from_profile, path, os.fspath(base), date))
    if output is not None:
        with open(output, "w") as f:
            f.write(json.dumps(res["model"], indent=2) + "\n")
    return res


def compare(scenario, policies=("max", "static-best", "pass-level", "per-kernel", "per-kernel-online", "latency-aware"),
            budgets_pct=(0.0,), latencies_s=(None,)):
    """Replays a scenario file under each policy for every slowdown budget (%) and switch latency (s;
    None keeps the scenario's / model's), native always included as the reference. Returns
    {"rows": [...], "wall_s": ...}; each row: gpu, policy, budget, latency, energy, time, energy saved
    and slowdown vs native, clock switches, switching time. Same code as `dvfs-sim compare`."""
    import math
    if isinstance(policies, str):
        policies = [p.strip() for p in policies.split(",") if p.strip()]
    budgets = [float(b) for b in budgets_pct]
    if not budgets or any(not math.isfinite(b) or b < 0 for b in budgets):
        raise InputError("budgets_pct: expected at least one slowdown budget, each a finite number >= 0 (%)")
    lats = list(latencies_s)
    if any(x is None for x in lats):
        if len(lats) != 1:
            raise InputError("latencies_s: None (the scenario's or model's latency) cannot be mixed with explicit latencies")
        lats = []
    else:
        lats = [float(x) for x in lats]
        if not lats or any(not math.isfinite(x) or x < 0 for x in lats):
            raise InputError("latencies_s: expected switch latencies, each a finite number >= 0 (s)")
    return json.loads(_core.compare_grid_json(os.fspath(scenario), list(policies), budgets, lats))
