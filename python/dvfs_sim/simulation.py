"""Running scenarios: `run` returns the summary dict (as `dvfs-sim run --json` prints it), `simulate`
a Result with tables and the timeline. Both accept a Python policy object instead of the scenario's."""
import json
import os

from ._native import core
from .result import Result
from .scenario import as_scenario


def _simulate(scenario, output_dir, policy, timeline, reuse_trace):
    text, name, base = as_scenario(scenario)
    summary, tl = core().simulate(text, name, base, os.fspath(output_dir or ""), timeline, policy, reuse_trace)
    return json.loads(summary), tl


def run(scenario=None, output_dir=None, policy=None, reuse_trace=False):
    """Run a scenario (dict, path to a JSON file, or None for the default) and return its summary dict.

    Relative paths inside a dict scenario resolve against the current directory; inside a file,
    against the file's directory. Result files are written only when `output_dir` is given or the
    scenario names one (`output.dir`). `policy`: a Python policy object (see dvfs_sim.Policy) that
    replaces the scenario's policy. `reuse_trace`: keep the loaded trace in this process for later runs
    of the same trace (reloaded when its files change); loading is most of a short run's time.
    """
    return _simulate(scenario, output_dir, policy, False, reuse_trace)[0]


def simulate(scenario=None, output_dir=None, policy=None, timeline=True, reuse_trace=False):
    """Like run, but returns a Result: .summary (dict), .steps and .gpus (DataFrames), .timeline
    (numpy arrays, when `timeline`), .timeline_frame()."""
    summary, tl = _simulate(scenario, output_dir, policy, timeline, reuse_trace)
    return Result(summary, tl)
