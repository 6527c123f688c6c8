"""Predicted vs measured: recordings, calibrated models, measured pipelines (as `dvfs-sim validate`)."""
import json
import os

from ._native import InputError, core, int_arg, path_arg, text_arg


def validate(recording_dir, gpu):
    """Replay a recording's profiled steps on a GPU model and compare with the measurements."""
    return json.loads(core().validate_json(path_arg("recording_dir", recording_dir), text_arg("gpu", gpu)))


def validate_models(sections=None):
    """The calibrated models against data their fits did not see (as `dvfs-sim validate --models --json`).
    `sections`: some of "stage_profiles", "retarget", "recordings", "power_suite" (default: all); the Perseus
    stage-profile and retarget checks take seconds, the H200 recordings and power suite minutes."""
    known = list(core().model_check_sections())
    if sections is None:
        sections = known
    if not isinstance(sections, (list, tuple)):  # a str, bytes, set or dict would be taken apart or lose its order
        raise InputError(f"sections: expected a list of some of {', '.join(known)}, got {type(sections).__name__}")
    sections = [text_arg("sections", s) for s in sections]
    if not sections:
        raise InputError(f"sections: expected at least one of {', '.join(known)}")
    return json.loads(core().validate_models_json(sections))


def validate_perseus_runs(run_dir, plans=(0, 1), p2p_latency_s=0.0):
    """Measured Perseus pipeline runs vs a 1F1B replay on SimGrid of their measured per-micro-batch
    times (as `dvfs-sim validate --perseus-runs DIR --json`). `plans`: plan numbers of the run directory
    (0 and 1 run every instruction at the highest clock)."""
    if isinstance(plans, (str, bytes)) or not hasattr(plans, "__iter__"):
        raise InputError(f"plans: expected a list of plan numbers, got {type(plans).__name__}")
    plans = [int_arg("plans", p, 0, 999999999) for p in plans]  # a 2**40 fell through pybind's argument matching
    if not plans:
        raise InputError("plans: expected at least one plan number")
    if isinstance(p2p_latency_s, bool) or not isinstance(p2p_latency_s, (int, float)):
        raise InputError(f"p2p_latency_s: expected a number of seconds, got {type(p2p_latency_s).__name__}")
    if not (0 <= p2p_latency_s <= 1):
        raise InputError(f"p2p_latency_s: expected a latency from 0 to 1 s, got {p2p_latency_s}")
    return json.loads(core().validate_perseus_runs_json(path_arg("run_dir", run_dir), plans, float(p2p_latency_s)))
