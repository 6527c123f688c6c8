"""dvfs-sim from Python: the C++ core (pybind11) plus small pure-Python helpers.

    import dvfs_sim
    summary = dvfs_sim.run()                                   # the default scenario -> summary dict
    res = dvfs_sim.simulate("scenarios/default.json")          # Result: .summary .steps .gpus .timeline
    res = dvfs_sim.simulate({"trace": "...", "gpu": "h200", "policy": "native"})
    h200 = dvfs_sim.model("h200")                              # clock tables, kernel time and power
    df = dvfs_sim.sweep(None, {"seed": [0, 1], "switch_latency.sm.mean_s": [0, 1e-3]})
    dvfs_sim.run(policy=MyPolicy())                            # a Python policy (see dvfs_sim.policy)

The recorder (`python3 -m dvfs_sim.record`, dvfs_sim.record.Recorder) is pure Python and works without
the compiled core; everything that simulates needs it (build with ./setup.sh, then put build/python on
sys.path).
"""
from ._native import InputError, InputTypeError, core as _core_module
from .calibration import calibrate
from .comparison import compare
from .models import GpuModel, available_models, kernel_classes, model
from .policy import Policy, policy_entries, policy_names
from .result import Result
from .scenario import default_scenario_path, load_scenario, set_key, with_changes
from .simulation import run, simulate
from .sweep import default_metrics, stop_workers, sweep
from .validation import validate, validate_models, validate_perseus_runs
from . import control  # power-budget scenarios (dvfs_sim.rl, the environment and PPO, loads on first use: numpy)

__all__ = ["run", "simulate", "Result", "load_scenario", "with_changes", "set_key", "sweep", "stop_workers", "default_metrics",
           "model", "GpuModel", "available_models", "kernel_classes", "Policy", "policy_names", "policy_entries", "validate", "validate_models",
           "validate_perseus_runs", "calibrate", "compare", "default_scenario_path", "data_dir", "InputError", "InputTypeError", "control", "rl"]


def data_dir():
    """Where the shipped models/ and traces/ are (the source tree, or $DVFS_SIM_DATA)."""
    return _core_module().data_dir()


def __getattr__(name):
    # dvfs_sim.rl needs numpy; `import dvfs_sim` alone must not (the recorder runs without it).
    if name == "rl":
        import importlib
        return importlib.import_module(".rl", __name__)
    raise AttributeError(f"module 'dvfs_sim' has no attribute {name!r}")
