"""Running scenarios: `run` returns the summary dict (as `dvfs-sim run --json` prints it), `simulate`
a Result with tables and the timeline. Both accept a Python policy object instead of the scenario's."""
import json
import os

from ._native import core
from .result import Result
from .scenario import as_scenario


def _simulate(scenario, output_dir, policy, timeline, cache_trace=False):
    text, name, base = as_scenario(scenario)
    summary, tl = core().simulate(text, name, base, os.fspath(output_dir or ""), timeline, policy, cache_trace)
    return json.loads(summary), tl


def run(scenario=None, output_dir=None, policy=None):
    """Run a scenario (dict, path to a JSON file, or None for the default) and return its summary dict.

    Relative paths inside a dict scenario resolve against the current directory; inside a file,
    against the file's directory. Result files are written only when `output_dir` is given or the
    scenario names one (`output.dir`). `policy`: a Python policy object (see dvfs_sim.Policy) that
    replaces the scenario's policy.
    """
    return _simulate(scenario, output_dir, policy, False)[0]


def simulate(scenario=None, output_dir=None, policy=None, timeline=True):
    """Like run, but returns a Result: .summary (dict), .steps and .gpus (DataFrames), .timeline
    (numpy arrays, when `timeline`), .timeline_frame()."""
    summary, tl = _simulate(scenario, output_dir, policy, timeline)
    return Result(summary, tl)
